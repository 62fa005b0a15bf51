"""The bash tool against real processes (no mocks)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from acp_agent.kernel.context import Context
from acp_agent.session.content import ToolCallBlock
from acp_agent.tools import (
    LOCAL,
    RUNNER_SERVICE,
    BashParams,
    BashTool,
    CommandNotStarted,
    CommandOutcome,
    CommandRunner,
    LocalRunner,
    ToolCallContext,
    ToolPresentation,
    ToolRegistry,
    ToolResult,
    prepare,
    run_command,
    run_prepared,
    runner_for,
)
from acp_agent.tools import bash as bash_plugin
from acp_agent.tools.base import parameters_schema
from acp_agent.tools.registry import TOOLS

from .helpers import call_context

# `echo $$` is the shell's pid, which is also its process group id (start_new_session).
BACKGROUNDED = "echo $$ > pgid; echo started; sleep 30 & sleep 30"


async def run(command: str, cwd: Path, **options: float) -> ToolResult:
    tool = BashTool(**options)  # type: ignore[arg-type]
    return await tool.run(BashParams(command=command), call_context(cwd=cwd))


def live_members(pgid: int) -> list[int]:
    """Processes of group `pgid` that are not zombies (an orphan's zombie waits for init)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # exited while we looked
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            members.append(int(entry.name))
    return members


def group_gone(pgid: int) -> bool:
    """Whether group `pgid` is gone within a second: SIGKILL lands asynchronously, and under load
    a killed member can still show as running for a moment."""
    deadline = time.monotonic() + 1
    while live_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return live_members(pgid) == []


@pytest.mark.anyio
async def test_runs_in_cwd_and_merges_stderr(tmp_path: Path) -> None:
    result = await run("pwd; echo out; echo err >&2", tmp_path)
    assert result.dump() == {
        "content": [{"type": "text", "text": f"{tmp_path}\nout\nerr\n"}],
        "isError": False,
    }


@pytest.mark.anyio
async def test_no_output_and_empty_stdin(tmp_path: Path) -> None:
    result = await run("cat", tmp_path)  # would hang if stdin were inherited
    assert result.plain_text() == "(no output)"
    assert not result.is_error


@pytest.mark.anyio
async def test_nonzero_exit_is_reported_as_error(tmp_path: Path) -> None:
    result = await run("echo oops; exit 3", tmp_path)
    assert result.plain_text() == "oops\n[exit code 3]"
    assert result.is_error and result.error is None
    assert (await run("printf oops; exit 4", tmp_path)).plain_text() == "oops\n[exit code 4]"
    assert (await run("exit 2", tmp_path)).plain_text() == "[exit code 2]"


@pytest.mark.anyio
async def test_killed_by_signal(tmp_path: Path) -> None:
    result = await run("echo bye; kill -KILL $$", tmp_path)
    assert result.plain_text() == "bye\n[killed by signal 9]"
    assert result.is_error


@pytest.mark.anyio
async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    began = time.monotonic()
    result = await run(BACKGROUNDED, tmp_path, timeout_seconds=0.5)
    assert time.monotonic() - began < 3
    assert result.plain_text() == "started\nCommand timed out after 0.5 s"
    assert result.is_error
    assert result.error is not None
    assert (result.error.code, result.error.message) == ("timeout", "Command timed out after 0.5 s")
    assert group_gone(int((tmp_path / "pgid").read_text()))


@pytest.mark.anyio
async def test_timeout_without_output(tmp_path: Path) -> None:
    result = await run("sleep 30", tmp_path, timeout_seconds=0.2)
    assert result.plain_text() == "Command timed out after 0.2 s"


@pytest.mark.anyio
async def test_cancellation_kills_the_group_and_propagates(tmp_path: Path) -> None:
    returned = False
    began = time.monotonic()
    with anyio.move_on_after(0.5) as scope:
        await run(BACKGROUNDED, tmp_path)
        returned = True
    assert scope.cancelled_caught and not returned
    assert time.monotonic() - began < 3
    assert group_gone(int((tmp_path / "pgid").read_text()))


@pytest.mark.anyio
async def test_large_output_is_read_while_running_and_cut_in_the_middle(tmp_path: Path) -> None:
    # 1 MB is far more than a pipe holds: without concurrent reading the command would block.
    outcome = await run_command(
        "printf HEAD; head -c 1000000 /dev/zero | tr '\\0' x; printf TAIL",
        cwd=tmp_path,
        env=dict(os.environ),
        timeout_seconds=10,
        max_output_bytes=10,
    )
    assert outcome.exit_code == 0 and not outcome.timed_out
    assert outcome.output == "HEADx\n[... 999998 bytes of output omitted ...]\nxTAIL"


@pytest.mark.anyio
async def test_character_split_between_head_and_tail_survives(tmp_path: Path) -> None:
    outcome = await run_command(
        "printf 'a\\303\\251'", cwd=tmp_path, env=dict(os.environ), timeout_seconds=10, max_output_bytes=4
    )
    assert outcome.output == "aé"


@pytest.mark.anyio
async def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    assert (await run("printf 'a\\377b'", tmp_path)).plain_text() == "a\ufffdb"


@pytest.mark.anyio
async def test_recorded_fixture_call_through_the_pipeline(tmp_path: Path) -> None:
    # The call and result of the upstream tool-call-turn scenario.
    registry = ToolRegistry()
    tool = BashTool()
    registry.register(tool)
    call = ToolCallBlock(
        id="call_00_7bmU1TAadx8ADiZJ3BqC9330",
        name="bash",
        arguments='{"command": "echo SNAPSHOT_OK", "description": "Run echo SNAPSHOT_OK"}',
    )
    prepared = prepare(call, registry, None)
    assert prepared.params is not None
    assert tool.present(prepared.params) == ToolPresentation(
        title="echo SNAPSHOT_OK", kind="execute", content=["Run echo SNAPSHOT_OK"]
    )
    [result] = await run_prepared([prepared], lambda call_id: call_context(call_id, tmp_path))
    assert result.dump() == {"content": [{"type": "text", "text": "SNAPSHOT_OK\n"}], "isError": False}
    assert tool.render_result(result) == ["```console\nSNAPSHOT_OK\n```"]


def test_presentation_without_description() -> None:
    presented = BashTool().present(BashParams(command="ls"))
    assert presented == ToolPresentation(title="ls", kind="execute", content=[])


def test_render_result_adds_newline_and_outgrows_backtick_runs() -> None:
    tool = BashTool()
    assert tool.render_result(ToolResult.text("a")) == ["```console\na\n```"]
    assert tool.render_result(ToolResult.text("x ```` y\n")) == ["`````console\nx ```` y\n`````"]


def test_schema_and_configured_description() -> None:
    tool = BashTool(timeout_seconds=2.5, max_output_bytes=100)
    schema = tool.schema()
    assert schema.name == "bash"
    assert "2.5 s" in schema.description and "100 bytes" in schema.description
    assert schema.parameters["required"] == ["command"]
    assert set(schema.parameters["properties"]) == {
        "command",
        "description",
        "escalate",
        "justification",
        "run_in_background",
    }
    assert "failed in the sandbox" in schema.parameters["properties"]["escalate"]["description"]
    assert not tool.concurrency_safe and tool.runs_commands


def test_an_escalation_needs_a_justification() -> None:
    with pytest.raises(ValueError, match="justification is required when escalate is true"):
        BashParams(command="make install", escalate=True, justification=" ")
    tool = BashTool()
    assert tool.escalation(BashParams(command="ls")) is None
    assert tool.escalation(BashParams(command="make install", escalate=True, justification="install")) == "install"


def test_a_tool_class_generates_its_parameters_schema_once(monkeypatch: pytest.MonkeyPatch) -> None:
    generated = []
    original = BashTool.Params.model_json_schema

    def counted() -> dict[str, Any]:
        generated.append(1)
        return original()

    parameters_schema.cache_clear()
    monkeypatch.setattr(BashTool.Params, "model_json_schema", counted)
    tools = [BashTool(timeout_seconds=n, max_output_bytes=10 * n) for n in (1, 2)]
    schemas = [tool.schema() for tool in tools for _ in range(3)]
    assert len(generated) == 1
    assert all(schema.parameters == original() for schema in schemas)
    assert schemas[0].description != schemas[-1].description  # what is per instance stays so


def test_plugin_registers_a_configured_bash_tool() -> None:
    ctx = Context()
    registry = ToolRegistry()
    ctx.provide(TOOLS, registry)
    assert (bash_plugin.name, bash_plugin.inject) == ("bash", ("tools",))
    dispose = bash_plugin.apply(ctx, bash_plugin.Config(timeout_seconds=7, max_output_bytes=50))
    tool = registry.get("bash", None)
    assert isinstance(tool, BashTool)
    assert (tool.timeout_seconds, tool.max_output_bytes) == (7, 50)
    dispose()
    assert registry.get("bash", None) is None


def test_plugin_config_defaults_and_validation() -> None:
    config = bash_plugin.Config()
    assert (config.timeout_seconds, config.max_output_bytes) == (120, 30000)
    with pytest.raises(ValidationError):
        bash_plugin.Config(timeout_seconds=0)
    with pytest.raises(ValidationError):
        bash_plugin.Config.model_validate({"timeout": 5})  # unknown keys fail at load


def test_a_call_runs_locally_unless_the_command_runner_service_picks_a_runner() -> None:
    call = call_context()
    assert runner_for(call) is LOCAL and isinstance(LOCAL, LocalRunner)
    picked: list[str] = []

    class Elsewhere(CommandRunner):
        async def run(
            self, command: str, *, call: ToolCallContext, timeout_seconds: float, max_output_bytes: int
        ) -> CommandOutcome:
            raise NotImplementedError

    elsewhere = Elsewhere()

    def provider(asking: ToolCallContext) -> CommandRunner:
        picked.append(asking.call_id)
        return elsewhere

    call.ctx.provide(RUNNER_SERVICE, provider)
    assert runner_for(call) is elsewhere and picked == ["call_1"]


@pytest.mark.anyio
async def test_bash_reports_what_the_picked_runner_says(tmp_path: Path) -> None:
    class Canned(CommandRunner):
        async def run(
            self, command: str, *, call: ToolCallContext, timeout_seconds: float, max_output_bytes: int
        ) -> CommandOutcome:
            assert (command, call.cwd, timeout_seconds, max_output_bytes) == ("make", tmp_path, 7, 99)
            return CommandOutcome("partial", -1, timed_out=False, signal="SIGLOST")

    call = call_context(cwd=tmp_path)
    call.ctx.provide(RUNNER_SERVICE, lambda _call: Canned())
    result = await BashTool(timeout_seconds=7, max_output_bytes=99).run(BashParams(command="make"), call)
    assert result.is_error and result.plain_text() == "partial\n[killed by signal SIGLOST]"


@pytest.mark.anyio
async def test_a_command_that_cannot_start_fails_its_call_and_says_why(tmp_path: Path) -> None:
    gone = tmp_path / "removed"
    result = await run("echo never", gone)
    message = f"the command did not start: the working directory {gone} is not usable (No such file or directory)"
    assert result.plain_text() == f"Error: {message}"
    assert result.is_error and result.error is not None
    assert (result.error.code, result.error.message) == ("not_started", message)
    # Longer than Linux takes as one argument (MAX_ARG_STRLEN, 128 KiB): a model writing a big file
    # with a here-document.
    result = await run("cat > big.txt <<'EOF'\n" + "x" * 200_000 + "\nEOF", tmp_path)
    assert result.plain_text() == "Error: the command did not start: Argument list too long"
    assert not (tmp_path / "big.txt").exists()
    (tmp_path / "file").write_text("")
    with pytest.raises(CommandNotStarted, match=r"working directory .*/file is not usable \(Not a directory\)$"):
        await run_command("true", cwd=tmp_path / "file", env={}, timeout_seconds=5, max_output_bytes=100)
