"""The open vocabulary of event types: core types plus whatever plugins register."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel

from acp_agent.kernel.scope import Disposer
from acp_agent.session.errors import DuplicateEventType, UnknownEventType
from acp_agent.session.events import CORE_EVENTS, EventOf, OpaqueEvent, SessionEvent, TurnStartEvent
from acp_agent.session.roots import RootsEvent
from acp_agent.session.titles import TitleEvent

# "turn": may only occur inside an open turn; "free": anywhere. Core types have their own rules
# on top (see invariants.py); their class here only says whether they need an open turn.
InvariantClass = Literal["turn", "free"]


class _Entry(NamedTuple):
    name: str
    cls: type[SessionEvent]
    invariant: InvariantClass


class EventRegistry:
    """Maps event type names to their model class and invariant class."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._classes: dict[type[Any], _Entry] = {}

    def register(self, event_cls: type[SessionEvent], invariant: InvariantClass) -> Disposer:
        """Add a type: `event_cls` narrows `type` to a literal with that default and types `data`.
        The disposer removes it again."""
        type_name = event_cls.model_fields["type"].default
        if not isinstance(type_name, str):
            raise TypeError(f"{event_cls.__name__}.type needs a string default naming the type")
        if invariant not in ("turn", "free"):
            raise ValueError(f"invariant class must be 'turn' or 'free', got {invariant!r}")
        if type_name in self._entries:
            raise DuplicateEventType(f"event type {type_name!r} is already registered")
        entry = _Entry(type_name, event_cls, invariant)
        self._entries[type_name] = entry
        self._classes[event_cls] = entry

        def unregister() -> None:
            if self._entries.get(type_name) is entry:
                del self._entries[type_name]
                del self._classes[event_cls]

        return unregister

    def _entry(self, type: str) -> _Entry:
        entry = self._entries.get(type)
        if entry is None:
            raise UnknownEventType(type)
        return entry

    def type_of(self, event_cls: type[EventOf[Any]]) -> str:
        """The type name `event_cls` is registered under (UnknownEventType for a class that is not:
        another registered under its name is not it)."""
        entry = self._classes.get(event_cls)
        if entry is None:
            raise UnknownEventType(getattr(event_cls, "__name__", event_cls))
        return entry.name

    def event_class(self, type: str) -> type[SessionEvent] | None:
        """The model class of a registered type; None for a type nobody registered."""
        entry = self._entries.get(type)
        return entry.cls if entry is not None else None

    def invariant_class(self, type: str) -> InvariantClass:
        """The invariant class of a registered type (UnknownEventType otherwise)."""
        return self._entry(type).invariant

    def parse(self, obj: Mapping[str, Any]) -> SessionEvent:
        """Validate a JSON-shaped event; an unregistered type is kept as an `OpaqueEvent` only
        when the event says it is ignorable. Malformed events raise pydantic's ValidationError."""
        type_name = obj.get("type")
        entry = self._entries.get(type_name) if isinstance(type_name, str) else None
        if entry is not None:
            return entry.cls.model_validate(obj)
        if obj.get("ignorable") is True:
            return OpaqueEvent.model_validate(obj)
        raise UnknownEventType(type_name)

    def build(
        self, type: str, seq: int, time: int, data: BaseModel | Mapping[str, Any], *, ignorable: bool = False
    ) -> SessionEvent:
        """Make an event of a registered type. Data that already is the type's model is kept as
        it is (pydantic checks only its class, no re-validation or copy); a mapping is validated,
        its values that are models likewise kept, in the one validation that makes the event (a
        streamed chunk's is not made here: `Session.append_chunk`). `ignorable`: a reader whose
        registry lacks the type may skip the event (it is informative)."""
        entry = self._entry(type)
        event = {"type": type, "seq": seq, "time": time, "data": data}
        if ignorable:
            event["ignorable"] = True
        # The validator itself: `model_validate`'s own call costs a fifth of a chunk's event.
        built: SessionEvent = entry.cls.__pydantic_validator__.validate_python(event)
        return built


def default_registry() -> EventRegistry:
    """A new registry holding the core event types, the session's title (`session/title`, free)
    and its additional roots (`session/roots`, free)."""
    registry = EventRegistry()
    for event_cls in CORE_EVENTS:
        registry.register(event_cls, "free" if event_cls is TurnStartEvent else "turn")
    registry.register(TitleEvent, "free")
    registry.register(RootsEvent, "free")
    return registry
