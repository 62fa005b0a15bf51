"""The credentials file: private modes, atomic whole-file writes, damage named without the content."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from acp_agent.config_dir import ENV_CONFIG
from acp_agent.credentials import ApiKey, Credentials, CredentialsError, CredentialStore, MissingKey, scrub, usable
from acp_agent.credentials.store import FILE_LIMIT


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_default_file_is_in_the_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_CONFIG, str(tmp_path / "cfg"))
    assert CredentialStore().path == tmp_path / "cfg" / "credentials"


def test_save_writes_a_private_file_in_a_private_directory_and_merges(tmp_path: Path) -> None:
    directory = tmp_path / "cfg"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    store = CredentialStore(directory / "credentials")
    assert store.read() == {}
    store.save({"A_KEY": "sk-a"})
    store.save({"B_KEY": "sk-b", "A_KEY": "sk-a2"})
    assert store.read() == {"A_KEY": "sk-a2", "B_KEY": "sk-b"}
    assert (mode(directory), mode(store.path)) == (0o700, 0o600)
    assert [p.name for p in directory.iterdir()] == ["credentials"]  # no temporary file left


def test_a_new_directory_is_made_private(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "a" / "cfg" / "credentials")
    store.save({"K": "v"})
    assert mode(store.path.parent) == 0o700


def test_lookup_the_environment_wins_an_empty_variable_does_not(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "credentials")
    store.save({"K": "stored"})
    assert store.lookup("K", {"K": "from-env"}) == "from-env"
    assert store.lookup("K", {"K": ""}) == "stored"
    assert store.lookup("OTHER", {}) is None


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"K": "sk-secret-half', "not JSON"),
        (b"\xff\xfe", "not JSON"),
        ('["sk-secret"]', "not an object"),
        ('{"K": 1}', "not an object"),
        ('{"K": "sk-secret", "x": ' + "[" * 10_000 + "]" * 10_000 + "}", "not JSON"),
        ('{"K": "sk-secret", "x": "' + "x" * FILE_LIMIT + '"}', f"more than {FILE_LIMIT} bytes"),
    ],
)
def test_a_damaged_file_is_named_never_quoted(tmp_path: Path, content: str | bytes, problem: str) -> None:
    store = CredentialStore(tmp_path / "credentials")
    store.path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(CredentialsError, match=problem) as caught:
        store.read()
    assert str(store.path) in str(caught.value) and "secret" not in str(caught.value)
    store.save({"K": "fresh"})  # signing in again replaces it
    assert store.read() == {"K": "fresh"}


def test_a_fifo_in_the_files_place_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "credentials")
    os.mkfifo(store.path)
    with pytest.raises(CredentialsError, match=r"credentials is damaged \(not a regular file\)"):
        store.read()


def test_io_failures_are_credentials_errors(tmp_path: Path) -> None:
    (tmp_path / "credentials").mkdir()  # a directory where the file should be
    store = CredentialStore(tmp_path / "credentials")
    for operation in (store.read, store.forget, lambda: store.save({"K": "v"})):
        with pytest.raises(CredentialsError, match="cannot (read|delete) .*credentials: Is a directory"):
            operation()
    (tmp_path / "credentials" / "x").write_text("a file where the directory should be")
    blocked = CredentialStore(tmp_path / "credentials" / "x" / "credentials")
    assert blocked.read() == {}
    with pytest.raises(CredentialsError, match="cannot write .*: File exists"):
        blocked.save({"K": "v"})
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["credentials", "x"]  # no temporary file left


def test_forget_deletes_the_file(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "credentials")
    assert store.forget() is False
    store.save({"K": "v"})
    assert store.forget() is True
    assert not store.path.exists() and store.read() == {}


def test_credentials_list_each_required_name_once_and_forget_a_disposed_row(tmp_path: Path) -> None:
    credentials = Credentials(CredentialStore(tmp_path / "credentials"))
    first, second, other = (
        ApiKey("K", "one", "http://a"),
        ApiKey("K", "two", "http://b"),
        ApiKey("L", "three", "http://c"),
    )
    dispose = credentials.require(first)
    credentials.require(second)
    credentials.require(other)
    assert credentials.required() == [first, other]
    dispose()
    assert credentials.required() == [second, other]
    credentials.store.save({"L": "sk-l"})
    assert credentials.key(other) == "sk-l"


def test_a_missing_key_says_what_to_do_and_check_finds_it_by_provider(tmp_path: Path) -> None:
    credentials = Credentials(CredentialStore(tmp_path / "credentials"))
    wanted = ApiKey("K", "deepseek", "http://a")
    credentials.require(wanted)
    credentials.require(ApiKey("L", "local", "http://b"))
    credentials.store.save({"L": "sk-l"})
    credentials.check("local")
    credentials.check("replay")  # no row of that provider needs a key
    with pytest.raises(MissingKey) as caught:
        credentials.check("deepseek")
    assert str(caught.value) == (
        "Authentication required: no deepseek API key (the model at http://a needs one): set the environment"
        " variable K, or sign in (`acp-agent login`) to store one"
    )
    credentials.store.path.write_text("{")
    with pytest.raises(
        MissingKey, match=r"^Authentication required: .*credentials is damaged \(not JSON\); sign in again$"
    ):
        credentials.key(wanted)


def test_only_a_key_a_header_can_carry_is_usable() -> None:
    assert usable("sk-0123456789abcdef_-.~+/=")
    for bad in ("sk-a\r", "sk-a\n", " sk-a", "sk a", "sk-\x00", "sk-clé", "sk-\t", "sk-\u2028"):
        assert not usable(bad), repr(bad)


def test_scrub_takes_the_key_out_in_every_form_it_may_be_quoted_in() -> None:
    key = "sk-canary-\u00e9\r"
    quoted = [key, key.strip(), repr(key), json.dumps(key), repr(key.encode()), f"Bearer {key.strip()}\\r"]
    scrubbed = scrub(" | ".join(quoted), key)
    assert "canary" not in scrubbed and scrubbed.count("***") == len(quoted)
    assert scrub("nothing of it here", key) == "nothing of it here"
