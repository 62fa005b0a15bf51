"""The saved trust: private, replaced whole, and a damaged file trusts nothing."""

from __future__ import annotations

import stat
from pathlib import Path

from acp_agent.trust import TrustStore, texts


def test_saving_and_revoking(tmp_path: Path) -> None:
    store = TrustStore(lambda: tmp_path / "config")
    project = Path("/work/project")
    assert not store.trusted(project) and not store.revoke(project)
    store.save(project)
    assert store.trusted(project)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert store.revoke(project) and not store.trusted(project)


def test_a_damaged_file_trusts_nothing(tmp_path: Path) -> None:
    store = TrustStore(lambda: tmp_path)
    for damaged in ("{not json", "[]", '{"projects": []}'):
        store.path.write_text(damaged, encoding="utf-8")
        assert not store.trusted(Path("/p"))
    store.save(Path("/p"))  # replaces it
    assert store.trusted(Path("/p"))


def test_texts() -> None:
    project = Path("/p")
    assert texts.status(project, None, False) == "The project /p waits for your answer to the trust question."
    assert texts.status(project, True, False) == "The project /p is trusted for this session."
    assert texts.revoked(project, False) == "The project /p had no saved trust."
