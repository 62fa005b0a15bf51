"""The import rules the README's developer section states, checked over the source: code imports a
name from the module that defines it, never through a package's face (`__init__`), and nothing
below `acp/` imports `acp/` (only the command line and the snapshot harness stand above it)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import acp_agent

SOURCE = Path(acp_agent.__file__).parent
ABOVE_ACP = ("cli.py", "snapshot/", "acp/")
"""Where `acp_agent.acp` may be imported: the protocol's own package and what drives it."""


def imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """Each `from acp_agent... import names` of a module: (line, module, names)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("acp_agent"):
            yield node.lineno, node.module or "", [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("acp_agent"):
                    yield node.lineno, alias.name, []


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(SOURCE.rglob("*.py")):
        yield path.relative_to(SOURCE).as_posix(), path


def is_package(module: str) -> bool:
    return SOURCE.joinpath(*module.split(".")[1:], "__init__.py").is_file()


def is_module(module: str, name: str) -> bool:
    where = SOURCE.joinpath(*module.split(".")[1:])
    return (where / f"{name}.py").is_file() or (where / name / "__init__.py").is_file()


def test_code_imports_each_name_from_the_module_that_defines_it() -> None:
    through_a_face = [
        f"{relative}:{line}: {name} from {module}"
        for relative, path in modules()
        if not relative.endswith("__init__.py")
        for line, module, names in imports(path)
        if is_package(module)
        for name in names
        if name != "__version__" and not is_module(module, name)
    ]
    assert through_a_face == []


def test_nothing_below_the_protocol_imports_it() -> None:
    upward = [
        f"{relative}:{line}: {module}"
        for relative, path in modules()
        if not relative.startswith(ABOVE_ACP)
        for line, module, _ in imports(path)
        if module == "acp_agent.acp" or module.startswith("acp_agent.acp.")
    ]
    assert upward == []


def test_the_tools_import_nothing_of_the_agents() -> None:
    """`tools/` sits below `agent/`: what a tool needs of its caller comes through `CallingAgent`
    and `ToolCallContext`, and an event it listens to is keyed in `tools/` (`BEFORE_MODEL_CALL`).
    Every import counts, a lazy one inside a function or under `TYPE_CHECKING` too."""
    upward = [
        f"{relative}:{line}: {module}"
        for relative, path in modules()
        if relative.startswith("tools/")
        for line, module, names in imports(path)
        if module == "acp_agent.agent"
        or module.startswith("acp_agent.agent.")
        or (module == "acp_agent" and "agent" in names)
    ]
    assert upward == []
