"""The sign-in's decisions, with the terminal replaced by a list of answers (the real terminal,
through a pty, is driven by tests/e2e/test_sign_in.py)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Literal

import pytest

from acp_agent.credentials import ApiKey, CredentialStore, KeyCheck
from acp_agent.credentials.signin import FAILED, INTERRUPTED, SIGNED_IN, sign_in, sign_out

Verdict = Literal["accepted", "rejected", "unchecked"]


class Answers:
    """The user at the terminal: each reply in turn (an exception type is raised instead)."""

    def __init__(self, *replies: str | type[BaseException]) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            return reply
        raise reply


class Checker:
    """An endpoint's answer to every key tried."""

    def __init__(self, verdict: Verdict, detail: str = "") -> None:
        self.answer = KeyCheck(verdict, detail)
        self.tried: list[str] = []

    async def __call__(self, key: str) -> KeyCheck:
        self.tried.append(key)
        return self.answer


def run(
    keys: list[ApiKey], store: CredentialStore, ask: Answers, environ: dict[str, str] | None = None
) -> tuple[int, str]:
    out = io.StringIO()
    return sign_in(keys, store, ask=ask, out=out, environ=environ or {}), out.getvalue()


@pytest.fixture
def store(tmp_path: Path) -> CredentialStore:
    return CredentialStore(tmp_path / "cfg" / "credentials")


def test_every_key_is_asked_checked_and_stored_at_once(store: CredentialStore) -> None:
    accepted, unchecked = Checker("accepted"), Checker("unchecked", "http://b/models answered HTTP 404")
    keys = [
        ApiKey("A_KEY", "deepseek", "http://a", accepted),
        ApiKey("B_KEY", "local", "http://b", unchecked),
        ApiKey("C_KEY", "other", "http://c"),
    ]
    ask = Answers(" sk-a \n", "sk-b", "sk-c")
    status, said = run(keys, store, ask, {"B_KEY": "from-env"})
    assert status == SIGNED_IN
    assert store.read() == {"A_KEY": "sk-a", "B_KEY": "sk-b", "C_KEY": "sk-c"}
    assert ask.prompts == [
        "deepseek API key (A_KEY, for http://a): ",
        "local API key (B_KEY, for http://b): ",
        "other API key (C_KEY, for http://c): ",
    ]
    assert accepted.tried == ["sk-a"]
    assert said.splitlines() == [
        "acp-agent: http://a accepted the key",
        "acp-agent: the key could not be checked (http://b/models answered HTTP 404); it is kept unchecked",
        f"acp-agent: signed in; A_KEY, B_KEY, C_KEY stored in {store.path}",
        "acp-agent: note: B_KEY is set in the environment, and wins over the stored key",
    ]
    assert "sk-" not in said


@pytest.mark.parametrize(
    ("replies", "status", "last"),
    [
        (("sk-a", "sk-b"), FAILED, "acp-agent: http://b refused the key (HTTP 401: bad key); nothing stored"),
        (("sk-a", "  "), FAILED, "acp-agent: no key entered; nothing stored"),
        (("sk-a", EOFError), FAILED, "acp-agent: input ended; nothing stored"),
        (("sk-a", KeyboardInterrupt), INTERRUPTED, "acp-agent: sign-in interrupted; nothing stored"),
    ],
)
def test_a_refusal_an_empty_answer_or_an_interrupt_stores_nothing(
    store: CredentialStore, replies: tuple[str | type[BaseException], ...], status: int, last: str
) -> None:
    keys = [
        ApiKey("A_KEY", "deepseek", "http://a", Checker("accepted")),
        ApiKey("B_KEY", "local", "http://b", Checker("rejected", "HTTP 401: bad key")),
    ]
    got, said = run(keys, store, Answers(*replies))
    assert (got, said.splitlines()[-1]) == (status, last)
    assert not store.path.exists()


def test_a_store_that_cannot_be_written_fails(tmp_path: Path) -> None:
    (tmp_path / "cfg").write_text("a file where the directory should be")
    store = CredentialStore(tmp_path / "cfg" / "credentials")
    status, said = run([ApiKey("K", "p", "http://a")], store, Answers("sk-k"))
    assert (status, said) == (FAILED, f"acp-agent: cannot write {store.path}: File exists\n")


def test_nothing_to_sign_in_to(store: CredentialStore) -> None:
    assert run([], store, Answers()) == (
        SIGNED_IN,
        "acp-agent: the models of this composition need no API key; nothing to sign in to\n",
    )
    assert not store.path.exists()


def test_sign_out(store: CredentialStore, tmp_path: Path) -> None:
    out = io.StringIO()
    assert sign_out(store, out=out) == SIGNED_IN
    store.save({"K": "v"})
    assert sign_out(store, out=out) == SIGNED_IN
    assert not store.path.exists()
    (tmp_path / "dir").mkdir()
    assert sign_out(CredentialStore(tmp_path / "dir"), out=out) == FAILED
    assert out.getvalue().splitlines() == [
        f"acp-agent: no stored key at {store.path}",
        f"acp-agent: signed out; removed {store.path}",
        f"acp-agent: cannot delete {tmp_path / 'dir'}: Is a directory",
    ]
