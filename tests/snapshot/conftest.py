from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from acp_agent.snapshot.syrupy_ext import TranscriptSnapshotExtension


@pytest.fixture
def snapshot_file(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """A snapshot stored as a readable text file under snapshots/, mirroring tests/."""
    return snapshot.use_extension(TranscriptSnapshotExtension)
