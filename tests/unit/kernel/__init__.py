"""Unit tests of acp_agent.kernel."""

from __future__ import annotations
