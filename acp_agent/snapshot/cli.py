"""`python -m acp_agent.snapshot`: run a scenario (print its transcript) or record its fixtures.

    run SCENARIO_DIR [--out FILE] [--normalize] [--config PATH] [--jitter N]
    record SCENARIO_DIR [--script FILE | --live] [--config PATH]

Both report failures on stderr and exit 1 when there is any.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import anyio

from acp_agent.snapshot.errors import SnapshotError
from acp_agent.snapshot.normalize import normalize_run
from acp_agent.snapshot.record import SCRIPT, fixture_names, record_scenario
from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.runner import run_scenario


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acp_agent.snapshot", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="replay a scenario through the real server; print its stdout")
    run.add_argument("scenario", type=Path)
    run.add_argument("--out", type=Path, help="write the transcript here (default: stdout)")
    run.add_argument("--normalize", action="store_true", help="normalize the transcript as snapshots do")
    run.add_argument("--config", type=Path, help="loader config (default: the packaged cordis.snapshot.yml)")
    run.add_argument("--jitter", type=int, help="seed of the replay model's random pauses")
    record = commands.add_parser("record", help="run a scenario with the scripted model; write its fixtures")
    record.add_argument("scenario", type=Path)
    source = record.add_mutually_exclusive_group()
    source.add_argument("--script", type=Path, help=f"the model script (default: SCENARIO/{SCRIPT})")
    source.add_argument(
        "--live", action="store_true", help="record from the real model of the packaged cordis.yml (needs its API key)"
    )
    record.add_argument(
        "--config", type=Path, help="loader config (default: cordis.record.yml, or cordis.yml with --live)"
    )
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="acp-snapshot-") as workdir:
            if args.command == "run":
                return _run(args, Path(workdir))
            return _record(args, Path(workdir))
    except SnapshotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, workdir: Path) -> int:
    result = anyio.run(lambda: run_scenario(args.scenario, workdir, config=args.config, jitter=args.jitter))
    text = normalize_run(result).text() if args.normalize else "".join(line + "\n" for line in result.stdout)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return _report(result)


def _record(args: argparse.Namespace, workdir: Path) -> int:
    script = None if args.live else args.script or args.scenario / SCRIPT
    result = anyio.run(lambda: record_scenario(args.scenario, workdir, script, config=args.config))
    if not result.failures:
        written = ", ".join(f"{name} ({route})" for route, name in fixture_names(result.logs).items())
        print(f"recorded {args.scenario}: {written}", file=sys.stderr)
    return _report(result)


def _report(result: RunResult) -> int:
    for failure in result.failures:
        print(f"failure: {failure}", file=sys.stderr)
    return 1 if result.failures else 0
