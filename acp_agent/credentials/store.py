"""The user's stored API keys: one private JSON file, `<config dir>/credentials`.

The file is a JSON object from a key's name (the `apiKeyEnv` of the model row that needs it, such
as `DEEPSEEK_API_KEY`) to the key. It is written whole and atomically (a private temporary file
in the same directory, then a rename), mode 0600 in a directory of mode 0700, and read again at
each lookup, so a sign-in or a sign-out in another process takes effect at the next model call.
No message of this module ever quotes the file's content.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path

from acp_agent.config_dir import config_dir

FILE_NAME = "credentials"
FILE_MODE = 0o600
DIR_MODE = 0o700
FILE_LIMIT = 64 * 1024
"""Bytes the file may hold: a few keys, never more (a larger file is damaged, and is not read)."""


class CredentialsError(Exception):
    """The credentials file cannot be read or written. The message names the file, never a key."""


class CredentialsDamaged(CredentialsError):
    """The credentials file holds something else than an object of key names to keys."""


class CredentialStore:
    """The stored keys, at `path` (default: `<config dir>/credentials`)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else config_dir() / FILE_NAME

    def read(self) -> dict[str, str]:
        """Every stored key by name; empty when nothing is stored."""
        try:
            with open(self.path, "rb", opener=_nonblocking) as file:
                if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                    raise CredentialsDamaged(f"{self.path} is damaged (not a regular file)")
                raw = file.read(FILE_LIMIT + 1)
        except (FileNotFoundError, NotADirectoryError):  # no such file: nothing stored
            return {}
        except OSError as exc:
            raise CredentialsError(f"cannot read {self.path}: {exc.strerror}") from None
        if len(raw) > FILE_LIMIT:
            raise CredentialsDamaged(f"{self.path} is damaged (more than {FILE_LIMIT} bytes)")
        try:
            data = json.loads(raw)
        except Exception:  # any failure (a RecursionError too), and not its message: it could quote a key
            raise CredentialsDamaged(f"{self.path} is damaged (not JSON)") from None
        if not isinstance(data, dict) or not all(isinstance(value, str) for value in data.values()):
            raise CredentialsDamaged(f"{self.path} is damaged (not an object of key names to keys)")
        return data

    def lookup(self, name: str, environ: Mapping[str, str] | None = None) -> str | None:
        """The key to use for `name`: the environment variable of that name when it is set and not
        empty (it wins), else the stored key, else None."""
        env = os.environ if environ is None else environ
        return env.get(name) or self.read().get(name) or None

    def save(self, keys: Mapping[str, str]) -> None:
        """Store `keys` over the stored ones (a damaged file is replaced), all or nothing."""
        try:
            stored = self.read()
        except CredentialsDamaged:
            stored = {}
        self._write({**stored, **keys})

    def forget(self) -> bool:
        """Delete every stored key (the file); whether there was one."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise CredentialsError(f"cannot delete {self.path}: {exc.strerror}") from None
        return True

    def _write(self, keys: Mapping[str, str]) -> None:
        directory = self.path.parent
        # os.urandom, as secrets.token_hex is (whose import, with hashlib, is a cost of every start-up).
        temporary = directory / f".{self.path.name}.{os.urandom(8).hex()}.tmp"
        try:
            directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            os.chmod(directory, DIR_MODE)  # an existing, wider directory is made private
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
            with open(fd, "wb") as file:
                os.fchmod(fd, FILE_MODE)  # exactly 0600, whatever the umask
                file.write(json.dumps(dict(keys), indent=2).encode() + b"\n")
                file.flush()
                os.fsync(fd)
            os.replace(temporary, self.path)
        except OSError as exc:
            with suppress(OSError):  # not made, or already renamed
                temporary.unlink()
            raise CredentialsError(f"cannot write {self.path}: {exc.strerror}") from None


def _nonblocking(path: str, flags: int) -> int:
    # A FIFO put in the file's place must not hold the reader until someone writes to it.
    return os.open(path, flags | os.O_NONBLOCK)
