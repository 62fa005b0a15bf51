"""The user's API keys: what the composition needs, where the stored ones live, how one signs in."""

from __future__ import annotations

from acp_agent.credentials.keys import UNUSABLE, ApiKey, Credentials, KeyCheck, MissingKey, scrub, usable
from acp_agent.credentials.store import CredentialsError, CredentialStore

__all__ = [
    "UNUSABLE",
    "ApiKey",
    "CredentialStore",
    "Credentials",
    "CredentialsError",
    "KeyCheck",
    "MissingKey",
    "scrub",
    "usable",
]
