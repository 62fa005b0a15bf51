from __future__ import annotations

import pytest

from acp_agent.kernel.scope import Scope
from acp_agent.tools import DuplicateTool, ToolRegistry, ToolsError

from .helpers import EchoTool


def names(registry: ToolRegistry, owner: Scope | None) -> list[str]:
    return [tool.name for tool in registry.visible(owner)]


def test_global_tools_are_visible_to_everyone_in_registration_order() -> None:
    registry = ToolRegistry()
    registry.register(EchoTool("b"))
    registry.register(EchoTool("a"))
    assert names(registry, None) == ["b", "a"]
    assert names(registry, Scope()) == ["b", "a"]


def test_owned_tools_are_visible_only_to_their_owner() -> None:
    registry = ToolRegistry()
    parent = Scope()
    child = parent.child()
    sibling = parent.child()
    registry.register(EchoTool("global"))
    registry.register(EchoTool("mine"), owner=child)
    assert names(registry, child) == ["global", "mine"]
    assert names(registry, parent) == ["global"]  # a parent does not see its child's tools
    assert names(registry, sibling) == ["global"]
    assert names(registry, None) == ["global"]
    assert registry.get("mine", child) is not None
    assert registry.get("mine", sibling) is None


def test_child_scope_does_not_inherit_parent_tools() -> None:
    registry = ToolRegistry()
    parent = Scope()
    registry.register(EchoTool("parents"), owner=parent)
    assert names(registry, parent.child()) == []


def test_duplicate_name_for_same_owner_is_refused() -> None:
    registry = ToolRegistry()
    owner = Scope()
    registry.register(EchoTool("x"))
    registry.register(EchoTool("x"), owner=owner)  # another visibility: allowed
    with pytest.raises(DuplicateTool, match="'x'") as raised:
        registry.register(EchoTool("x"))
    assert isinstance(raised.value, ToolsError)
    assert raised.value.name == "x"
    with pytest.raises(DuplicateTool):
        registry.register(EchoTool("x"), owner=owner)


def test_owned_tool_shadows_global_of_same_name() -> None:
    registry = ToolRegistry()
    owner = Scope()
    global_x = EchoTool("x")
    own_x = EchoTool("x")
    registry.register(global_x)
    registry.register(EchoTool("y"))
    registry.register(own_x, owner=owner)
    assert registry.visible(owner)[1:] == [own_x]
    assert names(registry, owner) == ["y", "x"]
    assert registry.get("x", owner) is own_x
    assert registry.get("x", None) is global_x


def test_global_disposer_unregisters_once() -> None:
    registry = ToolRegistry()
    dispose = registry.register(EchoTool("x"))
    dispose()
    dispose()  # idempotent
    assert names(registry, None) == []
    registry.register(EchoTool("x"))  # the name is free again


def test_disposing_owner_scope_unregisters_its_tools_and_filters() -> None:
    registry = ToolRegistry()
    owner = Scope()
    registry.register(EchoTool("global"))
    registry.register(EchoTool("mine"), owner=owner)
    registry.restrict(owner, lambda name: False)
    owner.dispose()
    assert names(registry, owner) == ["global"]


def test_owned_disposer_unregisters_early() -> None:
    registry = ToolRegistry()
    owner = Scope()
    dispose = registry.register(EchoTool("mine"), owner=owner)
    dispose()
    assert names(registry, owner) == []
    owner.dispose()  # the registration already left the scope: nothing runs twice


def test_restrict_filters_what_the_owner_sees_and_combines() -> None:
    registry = ToolRegistry()
    owner = Scope()
    for name in ("read", "write", "bash"):
        registry.register(EchoTool(name))
    registry.register(EchoTool("own"), owner=owner)
    lift_a = registry.restrict(owner, lambda name: name != "bash")
    lift_b = registry.restrict(owner, lambda name: name != "write")
    assert names(registry, owner) == ["read", "own"]
    assert registry.get("bash", owner) is None
    assert names(registry, None) == ["read", "write", "bash"]  # other owners are unaffected
    lift_a()
    assert names(registry, owner) == ["read", "bash", "own"]
    lift_b()
    assert names(registry, owner) == ["read", "write", "bash", "own"]


def test_restrict_global_view() -> None:
    registry = ToolRegistry()
    registry.register(EchoTool("a"))
    registry.register(EchoTool("b"))
    lift = registry.restrict(None, lambda name: name == "a")
    assert names(registry, None) == ["a"]
    assert names(registry, Scope()) == ["a", "b"]
    lift()
    lift()
    assert names(registry, None) == ["a", "b"]
