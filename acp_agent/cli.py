"""`acp-agent`: serve ACP on stdio (default), `acp-agent demo` to watch a replayed scenario,
`acp-agent login` / `logout` to store or delete the API keys of the composition's models."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from importlib import resources
from pathlib import Path

PACKAGED_CONFIG = "cordis.yml"


def packaged(name: str) -> Path:
    return Path(str(resources.files("acp_agent") / name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acp-agent", description="An Agent Client Protocol agent on stdio.")
    parser.add_argument("--config", type=Path, help="loader config (default: the packaged cordis.yml)")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("serve", help="serve ACP on stdin/stdout (the default)")
    commands.add_parser("demo", help="replay a bundled scenario through the real server and print it")
    commands.add_parser("login", help="type the API keys the models need; they are checked and stored")
    commands.add_parser("logout", help="delete the stored API keys")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("ACP_AGENT_LOG", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command == "demo":
        from acp_agent.snapshot.demo import run_demo

        return run_demo()
    from acp_agent.kernel import LoaderError, compose

    try:
        ctx = compose(args.config or packaged(PACKAGED_CONFIG))
    except LoaderError as exc:  # a configuration problem: say it plainly, no traceback
        print(f"acp-agent: {exc}", file=sys.stderr)
        return 2
    if args.command in ("login", "logout"):
        from acp_agent.credentials.signin import sign_in, sign_out
        from acp_agent.llm.service import LLM

        credentials = ctx.get(LLM).credentials
        return sign_in(credentials.required(), credentials.store) if args.command == "login" else sign_out(credentials.store)
    from acp_agent.acp.stdio import serve_stdio

    serve_stdio(ctx)
    return 0
