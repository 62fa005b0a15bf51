"""Record a scenario's fixtures: run it with the scripted (or a live) model and keep its logs.

The recorded logs are the replay source (DESIGN §8): `session.jsonl` for the first top-level
session (route `s1`), `session.<n>.jsonl` for the others in route order. What a log cannot hold
(a thrown request, a hang until cancelled) goes to `replay.override.json`: for every route whose
script throws or hangs, that route's whole compiled script. Logs are kept as written, except
that the run's temp cwd becomes `{{cwd}}`, its user configuration directory `{{config}}` and the
directory both are in `{{workdir}}` (where a scenario's other roots are: `roots/<name>/`). The
replay model streams each placeholder back as the replaying run's path.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from acp_agent.llm.replay import OVERRIDE, PRIMARY, ReplayEntry
from acp_agent.llm.scripted import compile_script
from acp_agent.snapshot.errors import InvalidScenario
from acp_agent.snapshot.frames import encode
from acp_agent.snapshot.normalize import CONFIG, CWD, WORKDIR, map_strings
from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.runner import RECORD_CONFIG, packaged, run_scenario

SCRIPT = "script.json"
LIVE_CONFIG = "cordis.yml"
"""The packaged composition: the real model adapter, configured from the environment."""
SCRIPT_ENV = "ACP_AGENT_SCRIPT"
NO_SESSION = "the run created no session, so there is no session.jsonl to replay: add a newSession step"


async def record_scenario(
    directory: Path, workdir: Path, script: Path | None, *, config: Path | None = None
) -> RunResult:
    """Record `directory` from `script` (the scripted model) or, with no script, live from the
    configured real model (the packaged `cordis.yml`); the fixtures are written only when the run
    has no failure. A script from elsewhere is copied beside them as `script.json`, so they can be
    re-recorded."""
    scripts: dict[str, list[ReplayEntry]] = {}
    env: dict[str, str] = {}
    if script is not None:
        try:  # a bad script fails here, not mid-run
            scripts = compile_script(json.loads(script.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            raise InvalidScenario(script, str(exc)) from exc
        env = {SCRIPT_ENV: str(script.resolve())}
    default = RECORD_CONFIG if script is not None else LIVE_CONFIG
    # The old fixtures are about to be replaced: holding the run against them would refuse any change.
    result = await run_scenario(directory, workdir, config=config or packaged(default), env=env, check_fixtures=False)
    if not result.logs:
        result.failures.append(NO_SESSION)
    if result.failures:
        return result
    for old in [*directory.glob("session*.jsonl"), directory / OVERRIDE]:
        old.unlink(missing_ok=True)
    places = [(str(result.cwd), CWD)] + ([(str(result.config), CONFIG)] if result.config is not None else [])
    places.append((str(result.cwd.parent), WORKDIR))  # last: it holds the others

    def placeholders(text: str) -> str:
        for path, placeholder in places:
            text = text.replace(path, placeholder)
        return text

    for route, name in fixture_names(result.logs).items():
        lines = (encode(map_strings(line, placeholders)) for line in result.logs[route])
        (directory / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    overrides = {
        route: [entry.dump() for entry in entries] for route, entries in scripts.items() if _unloggable(entries)
    }
    if overrides:
        (directory / OVERRIDE).write_text(json.dumps(overrides, indent=2) + "\n", encoding="utf-8")
    if script is not None and script.resolve() != (directory / SCRIPT).resolve():
        shutil.copyfile(script, directory / SCRIPT)
    return result


def fixture_names(routes: Iterable[str]) -> dict[str, str]:
    """The fixture file name of each route (given in route order): the first is the primary."""
    return {route: PRIMARY if n == 0 else f"session.{n}.jsonl" for n, route in enumerate(routes)}


def _unloggable(entries: list[ReplayEntry]) -> bool:
    return any(entry.kind in ("throw", "hang") for entry in entries)
