"""Where the tests find the repository's data and the shared reference scenarios."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# Recorded by the TypeScript original; read in place and never copied. May be absent.
UPSTREAM = (ROOT.parent / "shared" / "upstream").resolve()
SCHEMA_FILE = Path("shared", "acp-schema", "schema.json")
UNSTABLE_SCHEMA_FILE = SCHEMA_FILE.with_name("schema.unstable.json")


def _beside(file: Path) -> Path:
    """Beside the checkout, or beside a directory holding it (a worktree of it)."""
    return next((parent / file for parent in ROOT.parents if (parent / file).is_file()), ROOT.parent / file).resolve()


ACP_SCHEMA = _beside(SCHEMA_FILE)
ACP_UNSTABLE_SCHEMA = _beside(UNSTABLE_SCHEMA_FILE)
"""The protocol with its unstable parts (child sessions): what the official package has no models for."""
