"""Sign-in as ACP offers it (the whole flow runs through the real server in tests/e2e/test_sign_in.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonrpcserver.exceptions import JsonRpcError

from acp_agent.acp import auth
from acp_agent.acp.schema import AuthCapabilities, ClientCapabilities
from acp_agent.credentials import ApiKey, Credentials, CredentialStore

TERMINAL = ClientCapabilities(auth=AuthCapabilities(terminal=True))


def test_nothing_is_offered_when_no_model_row_needs_a_key(tmp_path: Path) -> None:
    credentials = Credentials(CredentialStore(tmp_path / "credentials"))
    assert auth.auth_methods(credentials, TERMINAL) == []
    assert auth.auth_capabilities(credentials) is None
    credentials.require(ApiKey("K", "local", "http://127.0.0.1:1"))
    assert [m.id for m in auth.auth_methods(credentials, TERMINAL)] == ["login"]
    assert auth.auth_methods(credentials, ClientCapabilities()) == []


def test_a_logout_that_cannot_delete_is_an_internal_error(tmp_path: Path) -> None:
    (tmp_path / "credentials").mkdir()
    with pytest.raises(JsonRpcError) as caught:
        auth.logout(Credentials(CredentialStore(tmp_path / "credentials")))
    assert caught.value.code == -32603
    assert caught.value.message == f"Internal error: cannot delete {tmp_path / 'credentials'}: Is a directory"


def test_authenticate_names_what_it_refuses(tmp_path: Path) -> None:
    credentials = Credentials(CredentialStore(tmp_path / "credentials"))
    credentials.require(ApiKey("K", "local", "http://127.0.0.1:1"))
    offered = auth.auth_methods(credentials, TERMINAL)
    assert auth.not_for_authenticate("other", offered) == "methodId 'other' is not an advertised authentication method"
    assert auth.auth_required("Authentication required: set K", []).message == "Authentication required: set K"
