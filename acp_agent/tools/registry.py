"""Which tools an agent may call: global ones plus its own scope's, through its filters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from acp_agent.kernel.context import ServiceKey
from acp_agent.kernel.scope import Disposer, Removal, Scope
from acp_agent.tools.base import Tool, ToolCallContext, ToolResult
from acp_agent.tools.errors import DuplicateTool

if TYPE_CHECKING:
    from acp_agent.tools.pipeline import Gate, PreparedCall


@dataclass(frozen=True, eq=False)
class _Entry:
    tool: Tool[Any]
    owner: Scope | None


class ToolRegistry:
    """Tools registered globally (owner None) or for one agent scope.

    An agent whose scope is `owner` sees the global tools plus those registered for exactly that
    scope: a child scope inherits nothing from its parent, and what it registers is invisible to
    every other scope. A tool owned by the scope shadows a global tool of the same name.
    """

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._filters: dict[Scope | None, list[Callable[[str], bool]]] = {}
        self._gates: dict[Scope | None, list[Gate]] = {}
        self._withheld: dict[str, str] = {}

    def register(self, tool: Tool[Any], *, owner: Scope | None = None) -> Disposer:
        """Add `tool` for `owner` until the returned disposer runs (or `owner` is disposed)."""
        if any(e.owner is owner and e.tool.name == tool.name for e in self._entries):
            raise DuplicateTool(tool.name)
        entry = _Entry(tool, owner)
        self._entries.append(entry)
        return self._owned(owner, lambda: self._entries.remove(entry))

    def withhold(self, name: str, note: str) -> Disposer:
        """What a call of the tool `name` answers from an agent that does not have it (the tool is
        offered to some agents only, and a model may call it from habit or from a conversation it
        inherited), instead of the bare "unknown tool"."""
        self._withheld[name] = note
        return Removal(self._withheld, name)

    def withheld(self, name: str) -> str | None:
        """The note for a call of `name` by an agent without the tool, if one was given."""
        return self._withheld.get(name)

    def restrict(self, owner: Scope | None, allowed: Callable[[str], bool]) -> Disposer:
        """Hide from `owner` every tool whose name `allowed` rejects; filters of one owner combine."""
        return self._per_owner(self._filters, owner, allowed)

    def gate(self, owner: Scope | None, gate: Gate) -> Disposer:
        """Ask `gate` before each call runs (see `pipeline.Gate`): `owner`'s calls only, or every
        agent's with owner None (an approval service). It may answer the call instead."""
        return self._per_owner(self._gates, owner, gate)

    def gates(self, owner: Scope | None) -> Gate:
        """The one gate the pipeline asks before each of `owner`'s calls: the owner's own gates
        first (cheap refusals, such as a closed structured-output run), then the global ones (which
        may ask the user), in registration order; the first answer wins."""

        async def ask(call: PreparedCall, context: ToolCallContext) -> ToolResult | None:
            own = self._gates.get(owner, []) if owner is not None else []
            for gate in [*own, *self._gates.get(None, [])]:
                answer = await gate(call, context)
                if answer is not None:
                    return answer
            return None

        return ask

    def visible(self, owner: Scope | None) -> list[Tool[Any]]:
        """The tools an agent of scope `owner` may call, in registration order."""
        own = {e.tool.name for e in self._entries if e.owner is owner}
        filters = self._filters.get(owner, [])
        return [
            e.tool
            for e in self._entries
            if (e.owner is owner or (e.owner is None and e.tool.name not in own))
            and all(allowed(e.tool.name) for allowed in filters)
        ]

    def get(self, name: str, owner: Scope | None) -> Tool[Any] | None:
        """The tool `name` as the agent of scope `owner` sees it, or None."""
        return next((tool for tool in self.visible(owner) if tool.name == name), None)

    @classmethod
    def _per_owner(cls, table: dict[Scope | None, list[Any]], owner: Scope | None, item: Any) -> Disposer:
        items = table.setdefault(owner, [])
        items.append(item)

        def remove() -> None:
            items.remove(item)
            if not items:
                del table[owner]

        return cls._owned(owner, remove)

    @staticmethod
    def _owned(owner: Scope | None, undo: Callable[[], None]) -> Disposer:
        # A registration for a scope is also owned by it, so disposing the agent undoes it;
        # Scope.add makes the returned disposer run-once.
        if owner is None:
            done = False

            def once() -> None:
                nonlocal done
                if not done:
                    done = True
                    undo()

            return once
        return owner.add(undo)


TOOLS: Final = ServiceKey[ToolRegistry]("tools")
"""`ctx.get(TOOLS)`: The tools, their per-scope filters and the gates before each call."""
