"""The hooks row must come before the permissions row: its gate decides first."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.kernel.errors import LoaderError
from acp_agent.kernel.loader import compose


def test_the_hooks_row_after_the_permissions_row_fails_the_load(tmp_path: Path) -> None:
    config = tmp_path / "cordis.yml"
    config.write_text(
        "- {id: sessions, name: acp_agent.session.plugin}\n"
        "- {id: tools, name: acp_agent.tools.plugin}\n"
        "- {id: permissions, name: acp_agent.permissions.plugin}\n"
        "- {id: hooks, name: acp_agent.hooks.plugin}\n",
        encoding="utf-8",
    )
    with pytest.raises(LoaderError, match="the hooks row must come before the permissions row"):
        compose(config)
