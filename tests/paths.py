"""Where the tests find the repository's data and the shared reference scenarios."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# Recorded by the TypeScript original; read in place and never copied. May be absent.
UPSTREAM = (ROOT.parent / "shared" / "upstream").resolve()
ACP_SCHEMA = (ROOT.parent / "shared" / "acp-schema" / "schema.json").resolve()
