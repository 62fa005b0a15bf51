"""Record a scenario's fixtures: run it with the scripted model and keep the logs it writes.

The recorded logs are the replay source (DESIGN §8): `session.jsonl` for the first top-level
session (route `s1`), `session.<n>.jsonl` for the others in route order. What a log cannot hold
(a thrown request, a hang until cancelled) goes to `replay.override.json`: for every route whose
script throws or hangs, that route's whole compiled script. Logs are kept as written, except
that the run's temp cwd becomes `{{cwd}}`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from acp_agent.llm.replay import OVERRIDE, PRIMARY, ReplayEntry
from acp_agent.llm.scripted import compile_script
from acp_agent.snapshot.normalize import CWD, dumps, map_strings
from acp_agent.snapshot.runner import RECORD_CONFIG, RunResult, packaged, run_scenario

SCRIPT = "script.json"
SCRIPT_ENV = "ACP_AGENT_SCRIPT"
NO_SESSION = "the run created no session, so there is no session.jsonl to replay: add a newSession step"


async def record_scenario(directory: Path, workdir: Path, script: Path, *, config: Path | None = None) -> RunResult:
    """Record `directory` from `script`; the fixtures are written only when the run has no failure.
    A script from elsewhere is copied beside them as `script.json`, so they can be re-recorded."""
    scripts = compile_script(json.loads(script.read_text(encoding="utf-8")))  # a bad script fails here, not mid-run
    result = await run_scenario(
        directory, workdir, config=config or packaged(RECORD_CONFIG), env={SCRIPT_ENV: str(script.resolve())}
    )
    if not result.logs:
        result.failures.append(NO_SESSION)
    if result.failures:
        return result
    for old in [*directory.glob("session*.jsonl"), directory / OVERRIDE]:
        old.unlink(missing_ok=True)
    for name, lines in fixture_names(result.logs).items():
        text = "".join(dumps(map_strings(line, lambda s: s.replace(str(result.cwd), CWD))) + "\n" for line in lines)
        (directory / name).write_text(text, encoding="utf-8")
    overrides = {route: [entry.dump() for entry in entries] for route, entries in scripts.items() if _unloggable(entries)}
    if overrides:
        (directory / OVERRIDE).write_text(json.dumps(overrides, indent=2) + "\n", encoding="utf-8")
    if script.resolve() != (directory / SCRIPT).resolve():
        shutil.copyfile(script, directory / SCRIPT)
    return result


def fixture_names(logs: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The file name of each log (given in route order): the first is the primary."""
    names = [PRIMARY, *(f"session.{n}.jsonl" for n in range(1, len(logs)))]
    return dict(zip(names, logs.values()))


def _unloggable(entries: list[ReplayEntry]) -> bool:
    return any(entry.kind in ("throw", "hang") for entry in entries)
