"""What a composition's model endpoints need: the API keys to ask for, and how to try one."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Literal, NamedTuple

from acp_agent.credentials.store import CredentialsError, CredentialStore
from acp_agent.kernel.scope import Disposer


class KeyCheck(NamedTuple):
    """What the endpoint said of a key: it took it, it refused it, or it could not tell."""

    verdict: Literal["accepted", "rejected", "unchecked"]
    detail: str = ""
    """Why (a refusal's HTTP status and message, or why the key could not be checked)."""


class ApiKey(NamedTuple):
    """A key a model row needs, under the name of its `apiKeyEnv`."""

    name: str
    """The environment variable read first, and the name the key is stored under."""
    provider: str
    base_url: str
    check: Callable[[str], Awaitable[KeyCheck]] | None = None
    """One cheap request that tries a key (None: it cannot be tried before use)."""


class MissingKey(Exception):
    """A model row has no key: the message says what to do (the variable to set, or sign in)."""


UNUSABLE = "holds a character an HTTP header cannot carry (a space, a line break, a control or non-ASCII character)"
"""Why a key is refused before it is sent; said of the key, never with it."""


def usable(key: str) -> bool:
    """Whether `key` can be sent as `Authorization: Bearer <key>`: visible ASCII only. Anything
    else (a pasted line break, a space, a non-ASCII character) makes the HTTP library refuse the
    header with a message quoting it, so such a key is refused first, without being quoted."""
    return key.isascii() and key.isprintable() and not any(c.isspace() for c in key)


def scrub(text: str, key: str) -> str:
    """`text` without `key` in any form it may be quoted in: as it is, stripped of the blanks
    around it, escaped as `repr` and JSON write it, and as `repr` writes its UTF-8 bytes."""
    forms = {key, key.strip(), repr(key)[1:-1], json.dumps(key)[1:-1], repr(key.encode("utf-8", "surrogatepass"))[2:-1]}
    for form in sorted(forms - {""}, key=len, reverse=True):  # a longer form first: a shorter one is in it
        text = text.replace(form, "***")
    return text


class Credentials:
    """`ctx.get(LLM).credentials`: the keys the composition's model rows need, and the user's store.

    Model adapters `require` their key when they are applied and get it with `key` at each call;
    the ACP server `check`s a session's provider before it starts a turn; the sign-in asks for
    every `required` key; sign-out empties the `store`."""

    def __init__(self, store: CredentialStore | None = None) -> None:
        self.store = store if store is not None else CredentialStore()
        self._required: list[ApiKey] = []

    def require(self, key: ApiKey) -> Disposer:
        self._required.append(key)
        return lambda: self._required.remove(key)

    def required(self) -> list[ApiKey]:
        """The keys to sign in with, one per name (the first row to need a name checks its key)."""
        named: dict[str, ApiKey] = {}
        for key in self._required:
            named.setdefault(key.name, key)
        return list(named.values())

    def key(self, wanted: ApiKey) -> str:
        """The key to send for `wanted`: its environment variable when set and not empty, else the
        stored key. `MissingKey` when there is neither, or the credentials file is damaged."""
        try:
            found = self.store.lookup(wanted.name)
        except CredentialsError as exc:
            raise MissingKey(f"Authentication required: {exc}; sign in again") from None
        if found is None:
            raise MissingKey(
                f"Authentication required: no {wanted.provider} API key (the model at {wanted.base_url}"
                f" needs one): set the environment variable {wanted.name}, or sign in (`acp-agent login`)"
                " to store one"
            )
        if not usable(found):
            where = f"the environment variable {wanted.name}" if os.environ.get(wanted.name) else f"{self.store.path}"
            raise MissingKey(
                f"Authentication required: the {wanted.provider} API key in {where} {UNUSABLE}: set it"
                " again, or sign in (`acp-agent login`)"
            )
        return found

    def check(self, provider: str) -> None:
        """`MissingKey` when a model row serving `provider` has no key: a call would fail."""
        for wanted in self._required:
            if wanted.provider == provider:
                self.key(wanted)
