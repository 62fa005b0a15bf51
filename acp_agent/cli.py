"""`acp-agent`: serve ACP on stdio (default), `acp-agent demo` to watch a replayed scenario,
`acp-agent login` / `logout` to store or delete the API keys of the composition's models,
`--version`. `--help` lists these and the snapshot tools (`python -m acp_agent.snapshot`)."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import acp_agent

if TYPE_CHECKING:
    from acp_agent.kernel.context import Context

PACKAGED_CONFIG = "cordis.yml"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
SNAPSHOT_TOOLS = """snapshot tools (the README's "Scenarios and snapshots"):
  python -m acp_agent.snapshot run DIR     replay a scenario; print its transcript
  python -m acp_agent.snapshot record DIR  record a scenario's fixtures (scripted or live model)"""


def packaged(name: str) -> Path:
    return Path(str(resources.files("acp_agent") / name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="acp-agent",
        description="An Agent Client Protocol agent on stdio, for an editor to start.",
        epilog=SNAPSHOT_TOOLS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {acp_agent.__version__}")
    parser.add_argument("--config", type=Path, help="loader config (default: the packaged cordis.yml)")
    commands = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    commands.add_parser("serve", help="serve ACP on stdin/stdout (the default)")
    commands.add_parser("demo", help="watch a recorded scenario run through the real server")
    commands.add_parser("login", help="type, check and store the API keys the models need")
    commands.add_parser("logout", help="delete the stored API keys")
    args = parser.parse_args(argv)
    level = os.environ.get("ACP_AGENT_LOG", "WARNING").upper()
    if level not in LOG_LEVELS:
        print(
            f"acp-agent: ACP_AGENT_LOG={level.lower()!r} is not a log level ({', '.join(LOG_LEVELS)})", file=sys.stderr
        )
        return 2
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "demo":
        from acp_agent.snapshot.demo import run_demo

        return run_demo()
    if args.command in ("login", "logout"):
        ctx = _composed(args.config)
        if ctx is None:
            return 2
        from acp_agent.credentials.signin import sign_in, sign_out
        from acp_agent.llm.service import LLM

        credentials = ctx.get(LLM).credentials
        return (
            sign_in(credentials.required(), credentials.store)
            if args.command == "login"
            else sign_out(credentials.store)
        )
    # Start-up makes many objects that live as long as the server (modules, classes, the
    # composition) and no garbage: the cyclic collector would only walk them again and again.
    # It is off until they are made; they are then frozen (left out of every later collection,
    # which also spares the collections of each turn from walking them).
    gc.disable()
    try:
        ctx = _composed(args.config)
        if ctx is None:
            return 2
        from acp_agent.acp.stdio import serve_stdio

        gc.freeze()
    finally:
        gc.enable()
    serve_stdio(ctx)
    return 0


def _composed(config: Path | None) -> Context | None:
    """The composition of `config` (the packaged one by default); None once a configuration
    problem was said plainly, without a traceback."""
    from acp_agent.kernel.errors import LoaderError
    from acp_agent.kernel.loader import compose

    try:
        return compose(config or packaged(PACKAGED_CONFIG))
    except LoaderError as exc:
        print(f"acp-agent: {exc}", file=sys.stderr)
        return None
