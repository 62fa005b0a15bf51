"""Where the user's own files for the agent live: commands, instructions, stored credentials."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_CONFIG = "ACP_AGENT_CONFIG"


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$ACP_AGENT_CONFIG` if set, else `$XDG_CONFIG_HOME/acp-agent`, else `~/.config/acp-agent`.

    Only resolves the path: nothing is created here (a reader of an absent directory finds nothing,
    a writer creates it with the mode it needs)."""
    env = os.environ if environ is None else environ
    chosen = env.get(ENV_CONFIG)
    if chosen:
        return Path(chosen).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "acp-agent"
