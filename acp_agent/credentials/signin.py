"""`acp-agent login`: the terminal sign-in an editor runs for the `terminal` auth method.

For each key the composition needs it asks in the terminal (without echo), tries the key with one
cheap request when the endpoint allows, and when every key is in, stores them all at once. Exit
status 0 means signed in; a refusal, an empty answer, end of input or Ctrl-C exit non-zero with
nothing stored. Messages go to stderr; no key is ever printed.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

import anyio

from acp_agent.credentials.keys import UNUSABLE, ApiKey, usable
from acp_agent.credentials.store import CredentialsError, CredentialStore

SIGNED_IN = 0
FAILED = 1
INTERRUPTED = 130
"""128 + SIGINT, what a shell reports for a program stopped by Ctrl-C."""


def sign_in(
    keys: Sequence[ApiKey],
    store: CredentialStore,
    *,
    ask: Callable[[str], str] = getpass.getpass,
    out: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Ask for, try and store `keys`; the exit status."""
    stream = out if out is not None else sys.stderr

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    if not keys:
        say("acp-agent: the models of this composition need no API key; nothing to sign in to")
        return SIGNED_IN
    entered: dict[str, str] = {}
    try:
        for key in keys:
            secret = ask(f"{key.provider} API key ({key.name}, for {key.base_url}): ").strip()
            if not secret:
                say("acp-agent: no key entered; nothing stored")
                return FAILED
            if not usable(secret):
                say(f"acp-agent: the key {UNUSABLE}; nothing stored")
                return FAILED
            if key.check is not None:
                checked = anyio.run(key.check, secret)
                if checked.verdict == "rejected":
                    say(f"acp-agent: {key.base_url} refused the key ({checked.detail}); nothing stored")
                    return FAILED
                if checked.verdict == "unchecked":
                    say(f"acp-agent: the key could not be checked ({checked.detail}); it is kept unchecked")
                else:
                    say(f"acp-agent: {key.base_url} accepted the key")
            entered[key.name] = secret
        store.save(entered)
    except EOFError:
        say("\nacp-agent: input ended; nothing stored")
        return FAILED
    except KeyboardInterrupt:
        say("\nacp-agent: sign-in interrupted; nothing stored")
        return INTERRUPTED
    except CredentialsError as exc:
        say(f"acp-agent: {exc}")
        return FAILED
    say(f"acp-agent: signed in; {', '.join(entered)} stored in {store.path}")
    env = os.environ if environ is None else environ
    for name in entered:
        if env.get(name):
            say(f"acp-agent: note: {name} is set in the environment, and wins over the stored key")
    return SIGNED_IN


def sign_out(store: CredentialStore, *, out: TextIO | None = None) -> int:
    """`acp-agent logout`: delete the stored keys; the exit status."""
    stream = out if out is not None else sys.stderr
    try:
        removed = store.forget()
    except CredentialsError as exc:
        print(f"acp-agent: {exc}", file=stream)
        return FAILED
    print(f"acp-agent: {'signed out; removed ' if removed else 'no stored key at '}{store.path}", file=stream)
    return SIGNED_IN
