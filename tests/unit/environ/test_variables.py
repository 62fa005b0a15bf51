"""Credential variables: hidden from child processes while a registration holds them, never taken
from the server's own environment; the model rows and the bash row hide theirs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.environ import CREDENTIAL_VARIABLES, child_environment, credential_names, hide_variables
from acp_agent.kernel import Context, Row, compose


def test_a_hidden_variable_stays_hidden_while_one_registration_holds_it() -> None:
    ctx = Context()
    assert credential_names(ctx) == frozenset() and not ctx.has(CREDENTIAL_VARIABLES)
    first = hide_variables(ctx, ["KEY", ""])  # an empty name (a row without a key) hides nothing
    second = hide_variables(ctx, ["KEY", "TOKEN"])
    assert credential_names(ctx) == {"KEY", "TOKEN"}
    first()
    first()  # once only
    assert credential_names(ctx) == {"KEY", "TOKEN"}
    second()
    assert credential_names(ctx) == frozenset()
    ctx.scope.dispose()
    assert not ctx.has(CREDENTIAL_VARIABLES)


def test_the_child_environment_lacks_them_and_the_servers_keeps_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_TEST_KEY", "sk-canary")
    ctx = Context()
    hide_variables(ctx, ["ACP_TEST_KEY"])
    child = child_environment(ctx)
    assert "ACP_TEST_KEY" not in child and child["PATH"] == os.environ["PATH"]
    assert os.environ["ACP_TEST_KEY"] == "sk-canary"
    assert child_environment(ctx, {"ACP_TEST_KEY": "x", "HOME": "/h"}) == {"HOME": "/h"}


def test_the_model_rows_and_the_bash_row_hide_their_variables(tmp_path: Path) -> None:
    ctx = compose(
        [
            Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path)}),
            Row(id="llm", name="acp_agent.llm.service"),
            Row(id="tools", name="acp_agent.tools.plugin"),
            Row(id="a", name="acp_agent.llm.openai_compat", config={"provider": "a", "apiKeyEnv": "A_KEY"}),
            Row(id="b", name="acp_agent.llm.openai_compat", config={"provider": "b", "apiKeyEnv": ""}),
            Row(id="bash", name="acp_agent.tools.bash", config={"hideEnv": ["GITHUB_TOKEN", "A_KEY"]}),
        ]
    )
    assert credential_names(ctx) == {"A_KEY", "GITHUB_TOKEN"}
    ctx.scope.dispose()
    assert credential_names(ctx) == frozenset()
