"""`ctx.get(COMMANDS)`: registrations, the list a session offers, what a typed command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.agent.keys import AGENTS
from acp_agent.commands import COMMANDS, INIT, Announcer, Command, CommandRegistry, Invocation
from acp_agent.commands.texts import INIT_PROMPT
from acp_agent.kernel import Context, Row, compose
from acp_agent.session import TextContent
from acp_agent.session.content import ResourceLink
from tests.unit.agent.conftest import spied

pytestmark = pytest.mark.anyio


def text(value: str) -> list[TextContent]:
    return [TextContent(text=value)]


def with_commands(tmp_path: Path, script: Any) -> tuple[Context, list[Any]]:
    ctx, requests = spied(tmp_path, script)
    compose([Row(id="commands", name="acp_agent.commands.plugin")], ctx)
    return ctx, requests


def test_the_init_prompt_is_exactly_this() -> None:
    assert INIT_PROMPT == (
        "Write an AGENTS.md file in the current working directory: the instructions a coding agent "
        "needs to work well in this repository. First look around: read the README, the build, test "
        "and CI configuration, and any instructions already written for agents or contributors "
        "(AGENTS.md, CLAUDE.md, CONTRIBUTING.md, .cursorrules, .github/copilot-instructions.md). "
        "Then write down, briefly and specifically for this repository: how to install, build, test "
        "and lint (the exact commands, including how to run a single test); how the code is "
        "organized; the conventions a change must follow (style, naming, tests, commit messages); "
        "and anything surprising a newcomer would trip over. Leave out generic advice that holds for "
        "any project. If an AGENTS.md already exists, improve it instead of starting over. Say what "
        "you wrote when you are done."
    )


async def test_init_and_file_commands_are_model_turns_with_their_prompt(tmp_path: Path) -> None:
    ctx, requests = with_commands(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    (tmp_path / ".acp-agent" / "commands").mkdir(parents=True)
    (tmp_path / ".acp-agent" / "commands" / "fix.md").write_text("Fix $ARGUMENTS.\n")
    link = ResourceLink(uri="file:///a.py", name="a.py")
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await ctx.get(COMMANDS).start(agent, text("/init")).wait()
        await ctx.get(COMMANDS).start(agent, [TextContent(text="/init  mind the docs\n"), link]).wait()
        await ctx.get(COMMANDS).start(agent, [TextContent(text="/fix the\nbug"), link]).wait()
    prompts = [request.messages[-1].content for request in requests]
    assert prompts[0] == text(INIT_PROMPT)
    assert prompts[1] == [TextContent(text=f"{INIT_PROMPT}\n\nmind the docs"), link]
    assert prompts[2] == [TextContent(text="Fix the\nbug."), link]


async def test_an_unknown_name_or_a_prompt_not_starting_with_text_goes_as_typed(tmp_path: Path) -> None:
    ctx, requests = with_commands(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    link = ResourceLink(uri="file:///a.py", name="a.py")
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await ctx.get(COMMANDS).start(agent, text("/nosuch thing")).wait()
        await ctx.get(COMMANDS).start(agent, [link, TextContent(text="/init")]).wait()
        await ctx.get(COMMANDS).start(agent, text(" /init")).wait()
    assert [r.messages[-1].content for r in requests] == [
        text("/nosuch thing"),
        [link, TextContent(text="/init")],
        text(" /init"),
    ]


async def test_registrations_shadow_files_the_latest_wins_and_owners_keep_theirs(tmp_path: Path) -> None:
    ctx, _ = with_commands(tmp_path, [])
    config = tmp_path / "config"
    (config / "commands").mkdir(parents=True)
    (config / "commands" / "init.md").write_text("My own init.")
    (config / "commands" / "zz.md").write_text("Last by name.")
    registry = CommandRegistry(lambda: config)
    changes: list[None] = []
    stop = registry.on_change(lambda: changes.append(None))
    async with ctx.running():
        one = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        two = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        registry.add(INIT)
        init, last = registry.commands(one)
        assert (init, last.name, last.description) == (INIT, "zz", "Last by name.")  # the built-in shadows init.md
        replaced = Command("init", "another init", INIT.run)
        remove = registry.add(replaced)
        assert registry.commands(one)[0] is replaced
        remove()
        remove()  # once only
        assert registry.commands(one)[0] is INIT
        mcp = Command("mcp", "MCP servers", INIT.run)
        registry.add(mcp, owner=one.scope)
        assert [c.name for c in registry.commands(one)] == ["init", "mcp", "zz"]
        assert [c.name for c in registry.commands(two)] == ["init", "zz"]
        await one.dispose()
        assert len(changes) == 5  # add, add, remove, add, and the owner's scope going
        stop()
        stop()
        registry.add(INIT)
        assert len(changes) == 5


async def test_the_announcer_sends_after_start_and_only_what_changed(tmp_path: Path) -> None:
    ctx, _ = with_commands(tmp_path, [])
    sent: list[list[str]] = []
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        announcer = Announcer(ctx.get(COMMANDS), agent, lambda commands: sent.append([c.name for c in commands]))
        announcer.refresh()
        assert sent == []  # not started: the client does not know the session yet
        announcer.start()
        announcer.refresh()
        assert sent == [["init", "rename"]]
        (tmp_path / ".acp-agent" / "commands").mkdir(parents=True)
        (tmp_path / ".acp-agent" / "commands" / "go.md").write_text("Go.")
        announcer.refresh()
        assert sent[-1] == ["go", "init", "rename"]
        (tmp_path / ".acp-agent" / "commands" / "go.md").write_text("Go on.")  # another description
        announcer.refresh()
        announcer.refresh()
        assert len(sent) == 3
        # A command of the agent's own goes with its scope: a disposing agent announces nothing.
        ctx.get(COMMANDS).on_change(announcer.refresh)  # as the client layer listens
        ctx.get(COMMANDS).add(Command("mine", "Mine", lambda invocation: agent.followup([])), owner=agent.scope)
        assert sent[-1] == ["go", "init", "mine", "rename"]
        await agent.dispose()
        assert len(sent) == 4


async def test_a_turn_body_that_fails_ends_the_turn_failed(tmp_path: Path) -> None:
    ctx, _ = with_commands(tmp_path, [])

    async def body(agent: Any, turn: int) -> Any:
        raise RuntimeError("no luck")

    def run(invocation: Invocation) -> Any:
        return invocation.followup(invocation.content, "command", body)

    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        ctx.get(COMMANDS).add(Command("boom", "fails", run))
        reason = await ctx.get(COMMANDS).start(agent, text("/boom")).wait()
        assert (reason.kind, reason.message) == ("error", "RuntimeError: no luck")
        with anyio.fail_after(5):
            assert (await agent.followup(text("/boom")).wait()).kind == "error"  # no model left: the script is empty
