"""A session's roots: its cwd, where relative paths start, and the additional directories its
client named (ACP `additionalDirectories`), which the file tools, the search tools and a
`workspace-write` command reach beside it.

`Roots.check` takes what a client sent (absolute, existing directories, resolved); `use_roots`
gives them to an agent (logged as `session/roots`, `session/roots.py`, when the set differs
from the one the log holds last); `roots_of` is what an agent has now (its cwd alone until
something gave it more). A child gets its parent's roots (`inherit_roots`, a subagents
`INHERIT` listener).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from acp_agent.kernel.scope import Disposer
from acp_agent.kernel.tables import take
from acp_agent.session.roots import RootsData, RootsEvent, logged_directories
from acp_agent.tools import texts

if TYPE_CHECKING:
    from acp_agent.tools.base import CallingAgent


class InvalidRoot(ValueError):
    """An additional directory a client named cannot be a root: the message names it and why."""


@dataclass(frozen=True)
class Roots:
    """The cwd (as the client gave it) and the additional directories (absolute, resolved, each
    once, none of them the cwd)."""

    cwd: Path
    additional: tuple[Path, ...] = ()

    @classmethod
    def check(cls, cwd: str | Path, directories: Sequence[str]) -> Roots:
        """The roots a request names; `InvalidRoot` for an entry that is not an absolute path to
        an existing directory (named by its index in `additionalDirectories`)."""
        found: dict[Path, None] = {}
        cwd_real = Path(os.path.realpath(cwd))
        for index, directory in enumerate(directories):
            if not os.path.isabs(directory):
                raise InvalidRoot(f"additionalDirectories[{index}] must be an absolute path, got {directory!r}")
            if not os.path.isdir(directory):
                raise InvalidRoot(f"additionalDirectories[{index}]: {directory!r} is not an existing directory")
            real = Path(os.path.realpath(directory))
            if real != cwd_real:
                found.setdefault(real, None)
        return cls(Path(cwd), tuple(found))

    @property
    def all(self) -> tuple[Path, ...]:
        """The cwd first, then the additional directories."""
        return (self.cwd, *self.additional)


ROOTS_ORDER: Final = 5
"""The section naming the additional directories comes right after the persona (which names the cwd)."""

_ROOTS: dict[CallingAgent, tuple[Roots, Disposer]] = {}
"""The roots of the agents given more than their cwd, with their prompt section, while their scope lives."""


def roots_of(agent: CallingAgent) -> Roots:
    """The roots `agent` works in: those it was given, else its session's cwd alone."""
    given = _ROOTS.get(agent)
    return given[0] if given is not None else Roots(Path(agent.session.cwd or "."))


def use_roots(agent: CallingAgent, roots: Roots) -> None:
    """Give `agent` these roots for as long as it lives (a reopened session gets the ones its
    request names), with a system prompt section naming the additional directories; logged
    when they differ from the set its log holds last."""
    directories = [str(path) for path in roots.additional]
    if directories != logged_directories(agent.session.events):
        agent.session.append(RootsEvent, RootsData(directories=directories))
    had = take(_ROOTS, agent)
    if had is not None:
        had[1]()
    if roots.additional:
        if had is None:
            agent.scope.add(lambda: _forget(agent))
        section = agent.add_prompt_section(ROOTS_ORDER, "roots", texts.roots_section(directories))
        _ROOTS[agent] = (roots, section)


def _forget(agent: CallingAgent) -> None:
    take(_ROOTS, agent)


def inherit_roots(parent: CallingAgent) -> Callable[[CallingAgent], None] | None:
    """A child of `parent` works in the parent's roots (subagents' `INHERIT`)."""
    given = _ROOTS.get(parent)
    if given is None:
        return None
    roots = given[0]
    return lambda child: use_roots(child, roots)
