"""Skills through the real server: found in the project and the home directory, listed to the
model, loaded by it with the `skill` tool, and run by the user as `/<name>`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_hooks import Run, of_type, open_session, text
from tests.e2e.wire import spawn_server

pytestmark = pytest.mark.anyio


def skill(directory: Path, front_matter: str, body: str) -> None:
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(f"---\n{front_matter}\n---\n{body}\n", encoding="utf-8")


async def test_skills_are_listed_loaded_by_the_model_and_run_as_commands(tmp_path: Path) -> None:
    script = [
        {
            "toolCalls": [
                {"id": "call_review", "name": "skill", "arguments": {"name": "review"}},
                {"id": "call_deploy", "name": "skill", "arguments": {"name": "deploy"}},
            ]
        },
        {"text": "Reviewed."},
        {"text": "Deployed."},
        {"text": "Still here."},
    ]
    run = Run(tmp_path, script)
    skill(
        run.cwd / ".claude" / "skills" / "review",
        "name: review\ndescription: Review a change for bugs",
        "Read the diff, then list bugs.",
    )
    skill(
        run.cwd / ".agents" / "skills" / "deploy",
        "description: Deploy the app\ndisable-model-invocation: true",
        "Deploy to $ARGUMENTS.",
    )
    skill(run.home / ".claude" / "skills" / "notes", "description: Keep notes\nuser-invocable: false", "Write notes.")
    skill(run.home / ".claude" / "skills" / "review", "description: Another review", "Shadowed by the project's.")
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd)
        await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Review my change.")]})
        ran = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("/deploy staging")]})
        await wire.request("session/load", {"sessionId": session_id, "cwd": str(run.cwd), "mcpServers": []})
        await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Again.")]})
    assert ran["result"] == {"stopReason": "end_turn"}
    [listed, _] = [
        f["params"]["update"]["availableCommands"]
        for f in wire.received
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "available_commands_update"
    ]
    assert {c["name"]: c["description"] for c in listed if c["name"] in ("review", "deploy", "notes")} == {
        "deploy": "Deploy the app",
        "review": "Review a change for bugs",
    }
    events = of_type(run.events(session_id), "skills/update")
    assert events == [
        {  # once: the loaded session's catalog is the one its log holds
            "text": "# Skills\n\nLoad one with the `skill` tool when it fits the task:\n"
            "- notes: Keep notes\n- review: Review a change for bugs",
            "skills": ["deploy", "notes", "review"],
        }
    ]
    results = {r["callId"]: r for r in of_type(run.events(session_id), "tool/result")}
    review_dir = run.cwd / ".claude" / "skills" / "review"
    assert results["call_review"]["content"][0]["text"] == (
        f"Skill `review` (its files are in {review_dir}):\n\nRead the diff, then list bugs."
    )
    assert (
        results["call_deploy"]["content"][0]["text"]
        == "Error: there is no skill 'deploy'; the skills are: notes, review"
    )
    prompts = [m["content"][0]["text"] for m in of_type(run.events(session_id), "user/message")]
    assert prompts[-2].endswith("Deploy to staging.")
