"""The memory budget of the models a session keeps for its whole life (its log's events, its
conversation's messages): how they are made and held smaller than pydantic makes them.

Everything here writes pydantic's own slots directly and leans on CPython's split dicts; what it
relies on is listed in `RELIED_ON` (a test holds each name present) and in kernel/README.md. With
a pydantic that lacks one, nothing is compacted and `assembled` is `model_construct`: the same
models, without the savings. A compacted model is a record: nothing assigns to it (a changed one
is made with `model_copy`, which copies what it shares first).

Figures, CPython 3.11 (`sys.getsizeof`):

- a model's `model_fields_set` is a set of 216 bytes, as much as the rest of a small model: models
  that set the same names share one (`shared_fields`);
- its `__dict__`: 184 bytes for five fields, 112 as a split dict whose keys its class's other
  compacted instances share; a class whose instances were made and kept before its first
  compaction gets larger split dicts (272 bytes), and on 3.13 they are never smaller: a model
  whose split dict would be no smaller keeps its own;
- an empty `model_extra` (a model that allows extra fields and has none) is 80 bytes: compacted
  ones share one.

So a model a session keeps costs some 70 and 80 bytes less on CPython 3.11 and 3.12 for its
dict and extras, and 216 for its set of names; a session of one prompt held 27.9 KB instead of
38.5 KB once the sets were shared (`bench/soak.py`), a 100k-event load peaked at 68 MB instead
of 76 (`bench/load.py`).

A loaded log's events get the shared sets and extras but keep their dicts (`split=False`): making
the split dicts made reading a 100k-event log (`persistence.read_log`) take 12% more CPU time
than sharing them at validation had (608 ms against 546), for 3 MB less at the load's peak (65 MB
against 68); sharing alone takes 5% more (538 ms against 513).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from sys import getsizeof
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

RELIED_ON = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
"""pydantic's slots of `BaseModel` this module writes through their descriptors (`__dict__` is
also deleted, so that setting the fields again makes a split dict)."""


class Slots(NamedTuple):
    """The descriptors' own setters (what `object.__setattr__` finds for each slot, without looking
    it up), and `__dict__`'s deleter."""

    set_dict: Callable[[Any, dict[str, Any]], None]
    del_dict: Callable[[Any], None]
    set_fields_set: Callable[[Any, set[str]], None]
    set_extra: Callable[[Any, dict[str, Any] | None], None]
    set_private: Callable[[Any, dict[str, Any] | None], None]


def slots_of(namespace: Mapping[str, Any]) -> Slots | None:
    """The slots' writers from a class's namespace (`vars(BaseModel)`); None when one of
    `RELIED_ON` is missing or is no descriptor (a pydantic release that renamed it)."""
    found: list[Any] = [namespace.get(name) for name in RELIED_ON]
    if not all(hasattr(descriptor, "__set__") and hasattr(descriptor, "__delete__") for descriptor in found):
        return None
    dict_slot, fields_set, extra, private = found
    return Slots(dict_slot.__set__, dict_slot.__delete__, fields_set.__set__, extra.__set__, private.__set__)


_SLOTS = slots_of(vars(BaseModel))


def shared_fields(fields: set[str]) -> set[str]:
    """The one set of these names that every model setting exactly them holds (never added to)."""
    return _SHARED.setdefault(frozenset(fields), fields)


_SHARED: dict[frozenset[str], set[str]] = {}


def assembled(cls: type[M], values: dict[str, Any], fields: set[str]) -> M:
    """A model of `cls` holding `values` (every field, already of its type) with `fields` as its
    set fields (a set from `shared_fields`): what `model_construct` makes, without validation or
    defaults, in a little over half the time validating takes: for the one model made per
    streamed chunk."""
    slots = _SLOTS
    if slots is None:  # pragma: no cover - only under a pydantic without the slots (see the module)
        return cls.model_construct(fields, **values)
    model = _new(cls)
    slots.set_dict(model, values)
    slots.set_fields_set(model, fields)
    slots.set_extra(model, None)
    slots.set_private(model, None)
    return model


_new = object.__new__


def compacted(model: M, *, split: bool = True) -> M:
    """`model`, and every model it holds (in a field or a list field), holding its fields in a
    split dict (when that is smaller; `split=False`: the dict it has), its set of field names
    shared with every model that set the same names, and an empty `model_extra` shared with every
    compacted model (see the module). The values stay the same objects."""
    slots = _SLOTS
    if slots is None:  # pragma: no cover - only under a pydantic without the slots (see the module)
        return model
    values = model.__dict__
    if split:
        slots.del_dict(model)  # set again attribute by attribute, the instance dict is made split
    for name, value in values.items():
        if split:
            object.__setattr__(model, name, value)
        if isinstance(value, BaseModel):
            compacted(value, split=split)
        elif type(value) is list:
            for item in value:
                if isinstance(item, BaseModel):
                    compacted(item, split=split)
    if split and getsizeof(model.__dict__) >= getsizeof(values):
        slots.set_dict(model, values)
    slots.set_fields_set(model, shared_fields(model.__pydantic_fields_set__))
    if model.__pydantic_extra__ == {}:
        slots.set_extra(model, _NO_EXTRA)
    return model


_NO_EXTRA: dict[str, Any] = {}
"""The `model_extra` compacted models without extra fields share (never added to)."""
