from __future__ import annotations

from acp_agent.agent.prompt import Section, SystemPrompt
from acp_agent.kernel import Scope
from acp_agent.llm.request import ToolSchema


def test_sections_render_in_order_with_placeholders_and_the_tool_list() -> None:
    prompt = SystemPrompt()
    prompt.add(Section(order=10, name="rules", text="Work in {{cwd}}."))
    prompt.add(Section(order=0, name="persona", text="You run on {{model}}."))
    tools = [ToolSchema(name="bash", description="Run a command.", parameters={})]
    rendered = prompt.render(None, {"model": "m1", "cwd": "/w"}, tools)
    assert rendered == "You run on m1.\n\nWork in /w.\n\nTools you can call:\n- bash: Run a command."
    assert prompt.render(None, {}, []) == "You run on {{model}}.\n\nWork in {{cwd}}."


def test_an_agents_own_section_shadows_the_global_one_and_leaves_with_its_scope() -> None:
    prompt = SystemPrompt()
    prompt.add(Section(order=0, name="persona", text="global"))
    child, sibling = Scope(), Scope()
    prompt.add(Section(order=0, name="persona", text="child"), owner=child)
    prompt.add(Section(order=190, name="structured", text="child only"), owner=child)
    assert [s.text for s in prompt.sections(child)] == ["child", "child only"]
    assert [s.text for s in prompt.sections(sibling)] == ["global"]
    assert [s.text for s in prompt.sections(None)] == ["global"]
    child.dispose()
    assert [s.text for s in prompt.sections(None)] == ["global"]


def test_removing_a_section_twice_is_harmless() -> None:
    prompt = SystemPrompt()
    remove = prompt.add(Section(order=0, name="a", text="a"))
    remove()
    remove()
    assert prompt.sections(None) == []
