"""The base model every boundary type derives from: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from sys import getsizeof
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Model(BaseModel):
    """A pydantic model whose JSON form uses camelCase keys and omits unset optional fields.

    Instances whose set fields are the same names share one set of them (`model_fields_set`): a set
    is 216 bytes, as much as the rest of a small model, and a session holds its whole log as models.
    Sharing is safe because nothing adds to a shared set: `model_copy` adds to a copy, and an
    assignment gives the instance a set of its own first."""

    # defer_build: a model's validator is built on first use, not at import (start-up time).
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True)

    def model_post_init(self, context: Any, /) -> None:
        set_fields_set(self, shared_fields(self.__pydantic_fields_set__))

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic adds the name to the instance's set (an extra field to its extras) in place:
        # never to one shared with others.
        set_fields_set(self, set(self.__pydantic_fields_set__))
        if self.__pydantic_extra__ is _NO_EXTRA:
            _set_extra(self, {})
        super().__setattr__(name, value)

    def dump(self) -> dict[str, Any]:
        """The JSON-ready dict: aliases, no `None` fields."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


M = TypeVar("M", bound=BaseModel)


def assembled(cls: type[M], values: dict[str, Any], fields: set[str]) -> M:
    """A model of `cls` holding `values` (every field, already of its type) with `fields` as its
    set fields (a set from `shared_fields`): what `model_construct` makes, without validation or
    defaults, for the one model made per streamed chunk (`AssistantChunkEvent.streamed`)."""
    model = _new(cls)
    _set_dict(model, values)
    set_fields_set(model, fields)
    _set_extra(model, None)
    _set_private(model, None)
    return model


def shared_fields(fields: set[str]) -> set[str]:
    """The one set of these names that every model setting exactly them holds (never added to)."""
    return _SHARED.setdefault(frozenset(fields), fields)


_SHARED: dict[frozenset[str], set[str]] = {}


def compacted(model: M) -> M:
    """`model`, and every model it holds (in a field or a list field), holding its fields in a
    dict that shares its keys with the other compacted instances of its class (CPython's split
    tables: 112 bytes against the 184 of the dict pydantic makes, for five fields on CPython 3.11)
    and an empty `model_extra` shared with them too (80 bytes): for the models a session keeps for
    its whole life, its events and its conversation's messages. The values stay the same objects.
    A model whose split dict would be no smaller keeps its own: how large one is made depends on
    the interpreter and on the class's history (272 bytes on 3.11 for a class whose instances were
    made and kept before its first compaction; never smaller on 3.13)."""
    values = model.__dict__
    _del_dict(model)  # set again attribute by attribute, the instance dict is made split
    for name, value in values.items():
        object.__setattr__(model, name, value)
        if isinstance(value, BaseModel):
            compacted(value)
        elif type(value) is list:
            for item in value:
                if isinstance(item, BaseModel):
                    compacted(item)
    if getsizeof(model.__dict__) >= getsizeof(values):
        _set_dict(model, values)
    if model.__pydantic_extra__ == {} and isinstance(model, Model):
        _set_extra(model, _NO_EXTRA)  # `Model.__setattr__` gives it its own before adding to it
    return model


_NO_EXTRA: dict[str, Any] = {}
"""The `model_extra` compacted models without extra fields share (never added to)."""

# The slots every pydantic model has, set through their descriptors (what `object.__setattr__`
# finds for each name, without looking it up).
_new = object.__new__
_set_dict = vars(BaseModel)["__dict__"].__set__
_del_dict = vars(BaseModel)["__dict__"].__delete__
set_fields_set = vars(BaseModel)["__pydantic_fields_set__"].__set__
_set_extra = vars(BaseModel)["__pydantic_extra__"].__set__
_set_private = vars(BaseModel)["__pydantic_private__"].__set__
