"""Where the tests find the repository's data and the shared reference scenarios."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# Recorded by the TypeScript original; read in place and never copied. May be absent.
UPSTREAM = (ROOT.parent / "shared" / "upstream").resolve()
SCHEMA_FILE = Path("shared", "acp-schema", "schema.json")
# Beside the checkout, or beside a directory holding it (a worktree of it).
ACP_SCHEMA = next(
    (parent / SCHEMA_FILE for parent in ROOT.parents if (parent / SCHEMA_FILE).is_file()), ROOT.parent / SCHEMA_FILE
).resolve()
