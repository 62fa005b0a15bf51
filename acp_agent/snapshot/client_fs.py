"""The harness client's file system: `fs/read_text_file` and `fs/write_text_file`, served from the
run's cwd as an editor serves them from its buffers (here the buffers are the files).

A path must be absolute and inside the cwd; a read honours `line` (1-based) and `limit`; a write
creates missing parent directories. Failures are JSON-RPC errors: bad params -32602, a missing
file -32002, anything else -32603.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError

from acp_agent.kernel.models import Model

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002


class RequestFailed(Exception):
    """The answer to an agent request is this JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Params(Model):
    model_config = ConfigDict(extra="ignore")

    session_id: str
    path: str


class ReadParams(_Params):
    line: int | None = None
    limit: int | None = None


class WriteParams(_Params):
    content: str


def parse(model: type[Any], params: Any) -> Any:
    """`params` as `model`, or the -32602 error an editor would answer."""
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise RequestFailed(INVALID_PARAMS, f"Invalid params: {exc.errors()[0]['msg']}") from None


class FileServer:
    """Serves the files under `root` (the run's cwd)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def read(self, params: Any) -> dict[str, Any]:
        request: ReadParams = parse(ReadParams, params)
        path = self._inside(request.path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RequestFailed(RESOURCE_NOT_FOUND, f"Resource not found: {request.path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RequestFailed(INTERNAL_ERROR, f"Internal error: cannot read {request.path}: {exc}") from None
        if request.line is not None or request.limit is not None:
            lines = text.split("\n")
            ends = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
            start = max((request.line or 1) - 1, 0)
            stop = None if request.limit is None else start + request.limit
            text = "".join(ends[start:stop])
        return {"content": text}

    def write(self, params: Any) -> dict[str, Any]:
        request: WriteParams = parse(WriteParams, params)
        path = self._inside(request.path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(request.content, encoding="utf-8", newline="")
        except OSError as exc:
            raise RequestFailed(INTERNAL_ERROR, f"Internal error: cannot write {request.path}: {exc}") from None
        return {}

    def _inside(self, path: str) -> Path:
        if not os.path.isabs(path):
            raise RequestFailed(INVALID_PARAMS, f"Invalid params: path must be absolute, got {path!r}")
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(self.root):
            raise RequestFailed(INVALID_PARAMS, f"Invalid params: {path} is outside the workspace")
        return real
