"""Where the tests find the repository's data (the ACP JSON Schema included) and the shared
reference scenarios (outside the repository, and optional)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# Recorded by the TypeScript original; read in place and never copied. May be absent.
UPSTREAM = (ROOT.parent / "shared" / "upstream").resolve()
SCHEMA_DIR = ROOT / "tests" / "data" / "acp-schema"
"""The ACP JSON Schema files, copied from a release of the protocol (its README says which)."""
ACP_SCHEMA = SCHEMA_DIR / "schema.json"
ACP_UNSTABLE_SCHEMA = SCHEMA_DIR / "schema.unstable.json"
"""The protocol with its unstable parts (child sessions): what the official package has no models for."""
