"""What a hook's exit code and output say, and how several hooks' verdicts combine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.hooks.output import Verdict, combine_verdicts, verdict_of
from acp_agent.hooks.runner import HookRun, run_hook


def said(stdout: Any, event: str = "PreToolUse", code: int = 0) -> Verdict:
    text = stdout if isinstance(stdout, str) else json.dumps(stdout)
    return verdict_of(event, HookRun(code, text, ""), 60)  # type: ignore[arg-type]  # events as literals


def test_exit_codes() -> None:
    assert verdict_of("Stop", HookRun(2, "", "  "), 60) == Verdict(decision="deny", reason="blocked by a hook")
    assert verdict_of("Stop", HookRun(None, "", "no shell"), 60).error == "did not start: no shell"
    assert verdict_of("Stop", HookRun(3, "", ""), 60).error == "exited with 3"
    assert verdict_of("Stop", HookRun(None, "", "", timed_out=True), 1.5).error == "timed out after 1.5 s"


def test_json_output() -> None:
    assert said({"decision": "approve"}).decision == "allow"
    assert said({"decision": "block"}, "Stop") == Verdict(decision="deny", reason="blocked by a hook")
    assert said({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": " why "}}) == Verdict(
        decision="ask", reason="why"
    )
    assert said({"hookSpecificOutput": {"permissionDecision": "ask"}}, "Stop").decision is None
    assert said({"continue": False}).stop == "" and said({"continue": False, "stopReason": "x"}).stop == "x"
    assert said({"hookSpecificOutput": "odd", "systemMessage": 3, "reason": None}) == Verdict()
    assert said("").contexts == () and said("plain words") == Verdict()
    assert said("plain words", "UserPromptSubmit").contexts == ("plain words",)
    assert said("[1]").error == "its output is not a JSON object"


def test_deny_beats_ask_beats_allow_and_contexts_accumulate() -> None:
    combined = combine_verdicts(
        [
            Verdict(decision="allow", reason="fine", contexts=("a",), updated_input={"x": 1}, messages=("m",)),
            Verdict(decision="deny", reason="no", stop="s1"),
            Verdict(decision="ask", contexts=("b",), updated_input={"x": 2}, stop="s2"),
            Verdict(decision="deny", reason="never"),
        ]
    )
    assert combined == Verdict(
        decision="deny", reason="no\nnever", contexts=("a", "b"), updated_input={"x": 2}, stop="s1", messages=("m",)
    )
    assert combine_verdicts([]) == Verdict()


@pytest.mark.anyio
async def test_a_hook_that_cannot_start_says_why(tmp_path: Path) -> None:
    ran = await run_hook("true", b"{}", cwd=tmp_path / "gone", env={}, timeout=5)
    assert ran.exit_code is None and ran.stderr.startswith("the hook did not start: ")


@pytest.mark.anyio
async def test_a_hook_may_ignore_its_input_and_its_output_is_bounded(tmp_path: Path) -> None:
    ran = await run_hook("head -c 100000 /dev/zero | tr '\\0' x", b"x" * 1_000_000, cwd=tmp_path, env={}, timeout=30)
    assert ran.exit_code == 0 and len(ran.stdout) == 64 * 1024
