"""The YAML loader: a list of plugin rows applied in order to one context."""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from acp_agent.kernel.context import Context
from acp_agent.kernel.errors import LoaderError
from acp_agent.kernel.plugin import plugin_problem
from acp_agent.kernel.yamltext import YamlError, load_yaml

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class Row(BaseModel):
    """One row of a loader config: which plugin module, with what config.

    In a file, a row whose `id` an earlier (or included) row has replaces that row in place; a row
    without `name` changes only the fields it gives of such a row (its `config`, `disabled`)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str | None = None
    config: dict[str, Any] = {}
    disabled: bool = False


class Include(BaseModel):
    """`- include: <path>`: the rows of another loader config, in its order (a relative path is
    read from the including file's directory)."""

    model_config = ConfigDict(extra="forbid")

    include: str


def expand(value: Any, row_id: str) -> Any:
    """Expand `${VAR}` and `${VAR:-default}` in every string inside `value`."""
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = os.environ.get(name)
            if found is not None and (found or default is None):
                return found
            if default is None:
                raise LoaderError(row_id, f"environment variable {name} is not set")
            return default

        return _VAR.sub(substitute, value)
    if isinstance(value, dict):
        return {key: expand(item, row_id) for key, item in value.items()}
    if isinstance(value, list):
        return [expand(item, row_id) for item in value]
    return value


def read_rows(path: str | Path) -> list[Row]:
    """Parse a loader config file into rows, its includes resolved (the environment is expanded
    at apply time)."""
    return _read(Path(path).resolve(), ())


def _read(path: Path, including: tuple[Path, ...]) -> list[Row]:
    if path in including:
        chain = " -> ".join(str(p) for p in (*including, path))
        raise LoaderError("<include>", f"the includes form a cycle: {chain}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LoaderError("<file>", f"{path}: cannot be read: {_reason(exc)}") from None
    try:
        data = load_yaml(text)
    except YamlError as exc:
        raise LoaderError("<file>", f"{path}: not YAML: {exc}") from None
    if not isinstance(data, list):
        raise LoaderError("<file>", f"{path}: a loader config is a list of rows")
    rows: list[Row] = []
    for i, raw in enumerate(data):
        if isinstance(raw, dict) and "include" in raw:
            try:
                include = Include.model_validate(raw)
            except ValidationError as exc:
                raise LoaderError(f"#{i}", _brief(exc)) from None
            for row in _read((path.parent / include.include).resolve(), (*including, path)):
                _place(rows, row)
            continue
        row_id = raw.get("id", f"#{i}") if isinstance(raw, dict) else f"#{i}"
        try:
            row = Row.model_validate(raw)
        except ValidationError as exc:
            raise LoaderError(str(row_id), _brief(exc)) from None
        _place(rows, row)
    return rows


def _place(rows: list[Row], row: Row) -> None:
    """Add `row`, or let it replace (or, without a `name`, amend) the row of the same id."""
    for index, earlier in enumerate(rows):
        if earlier.id == row.id:
            rows[index] = row if row.name is not None else earlier.model_copy(update=row.model_dump(exclude_unset=True))
            return
    if row.name is None:
        raise LoaderError(row.id, "no earlier or included row has this id, and the row names no plugin")
    rows.append(row)


def apply_row(ctx: Context, row: Row) -> None:
    """Import the row's plugin, validate its config and apply it in a scope of its own."""
    if row.name is None:
        raise LoaderError(row.id, "the row names no plugin module")
    if not all(part.isidentifier() for part in row.name.split(".")):
        raise LoaderError(row.id, f"plugin name {row.name!r} is not a dotted module path")
    try:
        module = importlib.import_module(row.name)
    except ImportError as exc:
        raise LoaderError(row.id, f"cannot import plugin module {row.name!r}: {exc}") from None
    problem = plugin_problem(module)
    if problem:
        raise LoaderError(row.id, problem)
    try:
        config = module.Config.model_validate(expand(row.config, row.id))
    except ValidationError as exc:
        raise LoaderError(row.id, f"invalid config: {_brief(exc)}") from None
    for service in getattr(module, "inject", ()):
        if not ctx.has(service):
            raise LoaderError(row.id, f"needs service {service!r}, which no earlier row provides")
    scope = ctx.scope.child()
    try:
        disposer = module.apply(ctx, config)
    except Exception as exc:
        raise LoaderError(row.id, f"{type(exc).__name__}: {exc}") from exc
    if disposer is not None:
        scope.add(disposer)


def compose(config: str | Path | Sequence[Row], ctx: Context | None = None) -> Context:
    """Build a context from a loader config path (or rows), skipping disabled rows."""
    ctx = ctx or Context()
    rows = read_rows(config) if isinstance(config, (str, Path)) else config
    for row in rows:
        if not row.disabled:
            apply_row(ctx, row)
    return ctx


def _reason(exc: OSError | UnicodeDecodeError) -> str:
    """An error reading a file, as a person says it (no errno, no repeated path)."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    return exc.strerror or str(exc)


def _brief(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, err['loc'])) or '<row>'}: {err['msg']}" for err in exc.errors())
