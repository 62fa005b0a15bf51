"""The YAML loader: rows, environment expansion, validation errors and plugin disposal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.kernel import Context, LoaderError, Row, ServiceKey, compose, read_rows
from tests.unit.kernel.plugins import recorder

PLUGINS = "tests.unit.kernel.plugins"
VALUE = ServiceKey[str]("llm")
"""What the `provider` test plugin provides in these tests."""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plugins.yml"
    path.write_text(text, encoding="utf-8")
    return path


def logged_context() -> tuple[Context, list[Any]]:
    ctx = Context()
    log: list[Any] = []
    ctx.provide(recorder.LOG, log)
    return ctx, log


def applied(log: list[Any]) -> list[recorder.Config]:
    return [config for kind, config in log if kind == "apply"]


def test_read_rows_parses_a_yaml_list_with_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"""
- id: first
  name: {PLUGINS}.recorder
  config:
    label: one
- id: second
  name: {PLUGINS}.passive
  disabled: true
""",
    )
    assert read_rows(path) == [
        Row(id="first", name=f"{PLUGINS}.recorder", config={"label": "one"}),
        Row(id="second", name=f"{PLUGINS}.passive", config={}, disabled=True),
    ]
    assert read_rows(str(path)) == read_rows(path)


@pytest.mark.parametrize("text", ["", "id: a\nname: b\n", "just text\n"])
def test_a_file_that_is_not_a_list_of_rows_is_refused(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LoaderError) as caught:
        read_rows(path)
    assert str(caught.value) == f"loader row '<file>': {path}: a loader config is a list of rows"
    assert caught.value.row_id == "<file>"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "cannot be read: No such file or directory"),
        (b"\xff\xfe- id: a\n", "cannot be read: not UTF-8 text (byte 0)"),
        (b"- {id: a\n", "not YAML: line 2, column 1: did not find expected ',' or '}'"),
        (b"- id: a\n\tname: x\n", "not YAML: line 2, column 1: found a tab character that violates indentation"),
        (b"- id: a\x00\n", "not YAML: character 8: unacceptable character #x0000: control characters are not allowed"),
        (b"- {id: a, config: {d: 2024-02-30}}\n", "not YAML: ValueError: day is out of range for month"),
        (b"- {id: a, config: {x: !!float abc}}\n", "not YAML: ValueError: could not convert string to float: 'abc'"),
    ],
)
def test_a_file_that_cannot_be_read_or_parsed_is_refused_saying_why(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    """What `acp-agent --config` prints for it, instead of a traceback."""
    path = tmp_path / "cordis.yml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(LoaderError) as caught:
        read_rows(path)
    assert str(caught.value) == f"loader row '<file>': {path}: {reason}"


def test_a_missing_include_and_a_directory_are_refused_naming_them(tmp_path: Path) -> None:
    (tmp_path / "dir.yml").mkdir()
    for name in ("gone.yml", "dir.yml"):
        with pytest.raises(LoaderError, match=f"{tmp_path / name}: cannot be read: "):
            read_rows(write(tmp_path, f"- include: {name}\n"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "- id: a\n  name: x\n  colour: red\n",
            "loader row 'a': colour: Extra inputs are not permitted",
        ),
        (
            "- id: a\n  name: x\n- name: y\n",
            "loader row '#1': id: Field required",
        ),
        (
            "- just a string\n",
            "loader row '#0': <row>: Input should be a valid dictionary or instance of Row",
        ),
        (
            "- id: a\n  name: x\n  disabled: maybe\n",
            "loader row 'a': disabled: Input should be a valid boolean, unable to interpret input",
        ),
    ],
)
def test_a_bad_row_fails_at_read_naming_the_row(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(LoaderError) as caught:
        read_rows(write(tmp_path, text))
    assert str(caught.value) == message


def test_compose_applies_rows_in_order_and_disposal_unwinds_them_in_reverse(tmp_path: Path) -> None:
    ctx, log = logged_context()
    path = write(
        tmp_path,
        f"""
- {{id: a, name: {PLUGINS}.recorder, config: {{label: a}}}}
- {{id: quiet, name: {PLUGINS}.passive}}
- {{id: b, name: {PLUGINS}.recorder, config: {{label: b, count: 2}}}}
""",
    )
    assert compose(path, ctx) is ctx
    assert [(config.label, config.count) for config in applied(log)] == [("a", 1), ("b", 2)]
    ctx.scope.dispose()
    assert log[2:] == [("dispose", "b"), ("dispose", "a")]


def test_compose_accepts_a_path_string_rows_and_makes_a_context_when_none_is_given(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, f"- {{id: p, name: {PLUGINS}.provider, config: {{service: llm, value: x}}}}\n")
    assert compose(str(path)).get(VALUE) == "x"
    rows = [Row(id="p", name=f"{PLUGINS}.provider", config={"service": "llm", "value": "y"})]
    assert compose(rows).get(VALUE) == "y"


def test_the_disposer_apply_returns_runs_when_the_context_scope_is_disposed() -> None:
    ctx = compose([Row(id="p", name=f"{PLUGINS}.provider", config={"service": "llm", "value": "x"})])
    assert ctx.has(VALUE)
    ctx.scope.dispose()
    assert not ctx.has(VALUE)


@pytest.mark.anyio
async def test_plugin_disposers_run_when_the_running_context_stops() -> None:
    ctx, log = logged_context()
    compose([Row(id="a", name=f"{PLUGINS}.recorder", config={"label": "a"})], ctx)
    async with ctx.running():
        assert log[1:] == []
    assert log[1:] == [("dispose", "a")]


def test_disabled_rows_are_skipped() -> None:
    ctx, log = logged_context()
    compose(
        [
            Row(id="a", name=f"{PLUGINS}.recorder", config={"label": "a"}, disabled=True),
            Row(id="b", name=f"{PLUGINS}.recorder", config={"label": "b"}),
            Row(id="missing", name=f"{PLUGINS}.nope", disabled=True),  # never even imported
        ],
        ctx,
    )
    assert [config.label for config in applied(log)] == ["b"]


def test_environment_variables_are_expanded_in_config_strings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_LABEL", "from-env")
    monkeypatch.setenv("ACP_COUNT", "7")
    monkeypatch.setenv("ACP_EMPTY", "")
    monkeypatch.delenv("ACP_UNSET", raising=False)
    ctx, log = logged_context()
    path = write(
        tmp_path,
        f"""
- id: env
  name: {PLUGINS}.recorder
  config:
    label: "<${{ACP_LABEL}}|${{ACP_LABEL:-unused}}>"
    count: "${{ACP_COUNT}}"
    tags: ["${{ACP_UNSET:-fallback}}", "${{ACP_EMPTY:-empty-default}}", "[${{ACP_EMPTY}}]", "$ACP_LABEL"]
    extra:
      nested: "${{ACP_UNSET:-}}x"
""",
    )
    compose(path, ctx)
    (config,) = applied(log)
    assert config.label == "<from-env|from-env>"
    assert config.count == 7
    assert config.tags == ["fallback", "empty-default", "[]", "$ACP_LABEL"]
    assert config.extra == {"nested": "x"}


def test_environment_is_read_when_rows_are_applied_not_when_they_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACP_LATE", raising=False)
    rows = read_rows(write(tmp_path, f"- {{id: late, name: {PLUGINS}.recorder, config: {{label: '${{ACP_LATE}}'}}}}\n"))
    assert rows[0].config == {"label": "${ACP_LATE}"}
    monkeypatch.setenv("ACP_LATE", "now")
    ctx, log = logged_context()
    compose(rows, ctx)
    assert applied(log)[0].label == "now"


def test_an_unset_variable_without_default_names_the_row_and_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ACP_MISSING", raising=False)
    ctx, log = logged_context()
    row = Row(id="needs-env", name=f"{PLUGINS}.recorder", config={"extra": {"k": "${ACP_MISSING}"}})
    with pytest.raises(LoaderError) as caught:
        compose([row], ctx)
    assert str(caught.value) == "loader row 'needs-env': environment variable ACP_MISSING is not set"
    assert (caught.value.row_id, caught.value.reason) == (
        "needs-env",
        "environment variable ACP_MISSING is not set",
    )
    assert log == []


def test_an_unknown_module_names_the_row() -> None:
    with pytest.raises(LoaderError) as caught:
        compose([Row(id="ghost", name=f"{PLUGINS}.nope")])
    assert str(caught.value) == (
        f"loader row 'ghost': cannot import plugin module '{PLUGINS}.nope': No module named '{PLUGINS}.nope'"
    )


@pytest.mark.parametrize("name", ["", ".relative", "two..dots", "has space", "trailing."])
def test_a_name_that_is_not_a_module_path_names_the_row(name: str) -> None:
    with pytest.raises(LoaderError) as caught:
        compose([Row(id="odd", name=name)])
    assert str(caught.value) == f"loader row 'odd': plugin name {name!r} is not a dotted module path"


@pytest.mark.parametrize(
    ("module", "problem"),
    [
        ("not_a_plugin", "it has no 'apply'"),
        ("config_not_model", "its Config is not a pydantic model"),
        ("config_not_type", "its Config is not a pydantic model"),
    ],
)
def test_a_module_that_is_not_a_plugin_names_the_row(module: str, problem: str) -> None:
    with pytest.raises(LoaderError) as caught:
        compose([Row(id="fake", name=f"{PLUGINS}.{module}")])
    assert str(caught.value) == (f"loader row 'fake': module '{PLUGINS}.{module}' is not a plugin: {problem}")


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        (
            {"label": "x", "count": "many"},
            "count: Input should be a valid integer, unable to parse string as an integer",
        ),
        ({"label": "x", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ({}, "label: Field required"),
        ({"label": "x", "tags": ["ok", 3]}, "tags.1: Input should be a valid string"),
    ],
)
def test_a_config_failing_validation_names_the_row_and_the_field(config: dict[str, Any], reason: str) -> None:
    ctx, log = logged_context()
    with pytest.raises(LoaderError) as caught:
        compose([Row(id="rec", name=f"{PLUGINS}.recorder", config=config)], ctx)
    assert str(caught.value) == f"loader row 'rec': invalid config: {reason}"
    assert log == []


def test_a_missing_injected_service_names_the_row_and_the_service() -> None:
    with pytest.raises(LoaderError) as caught:
        compose([Row(id="rec", name=f"{PLUGINS}.recorder", config={"label": "x"})])
    assert str(caught.value) == ("loader row 'rec': needs service 'log', which no earlier row provides")


def test_a_service_from_a_later_or_disabled_row_does_not_satisfy_inject() -> None:
    provider = Row(id="log", name=f"{PLUGINS}.provider", config={"service": "log", "value": "[]"})
    consumer = Row(id="rec", name=f"{PLUGINS}.recorder", config={"label": "x"})
    with pytest.raises(LoaderError, match="needs service 'log'"):
        compose([consumer, provider])  # order matters: the provider comes too late
    with pytest.raises(LoaderError, match="needs service 'log'"):
        compose([provider.model_copy(update={"disabled": True}), consumer])


def test_an_injected_service_that_is_present_lets_the_row_apply() -> None:
    ctx, log = logged_context()
    compose([Row(id="rec", name=f"{PLUGINS}.recorder", config={"label": "x"})], ctx)
    assert [config.label for config in applied(log)] == ["x"]


def test_a_plugin_whose_apply_fails_names_the_row_and_keeps_the_cause() -> None:
    with pytest.raises(LoaderError, match="loader row 'f': FileNotFoundError: no such fixture") as raised:
        compose([Row(id="f", name="tests.unit.kernel.plugins.failing")])
    assert isinstance(raised.value.__cause__, FileNotFoundError)


# -- include ---------------------------------------------------------------------------------


def test_an_include_row_brings_the_rows_of_another_file_which_later_rows_replace_amend_or_extend(
    tmp_path: Path,
) -> None:
    (tmp_path / "base").mkdir()
    write(
        tmp_path / "base",
        f"- {{id: a, name: {PLUGINS}.recorder, config: {{label: a}}}}\n"
        f"- {{id: b, name: {PLUGINS}.recorder, config: {{label: b, count: 2}}}}\n"
        f"- {{id: c, name: {PLUGINS}.recorder, config: {{label: c}}}}\n",
    )
    path = tmp_path / "top.yml"
    path.write_text(
        "- include: base/plugins.yml\n"  # relative to the including file
        f"- {{id: b, name: {PLUGINS}.passive}}\n"  # replaced in place
        "- {id: c, config: {label: c2}, disabled: false}\n"  # amended: the fields given
        "- {id: a, disabled: true}\n"
        f"- {{id: d, name: {PLUGINS}.recorder, config: {{label: d}}}}\n",  # added at the end
        encoding="utf-8",
    )
    rows = read_rows(path)
    assert [(r.id, r.name, r.config, r.disabled) for r in rows] == [
        ("a", f"{PLUGINS}.recorder", {"label": "a"}, True),
        ("b", f"{PLUGINS}.passive", {}, False),
        ("c", f"{PLUGINS}.recorder", {"label": "c2"}, False),
        ("d", f"{PLUGINS}.recorder", {"label": "d"}, False),
    ]
    ctx, log = logged_context()
    compose(rows, ctx)
    assert [config.label for config in applied(log)] == ["c2", "d"]


def test_a_row_without_a_plugin_must_name_an_earlier_row(tmp_path: Path) -> None:
    path = write(tmp_path, f"- {{id: a, name: {PLUGINS}.passive}}\n- {{id: nope, disabled: true}}\n")
    with pytest.raises(LoaderError, match="^loader row 'nope': no earlier or included row has this id"):
        read_rows(path)
    with pytest.raises(LoaderError, match="^loader row 'x': the row names no plugin module$"):
        compose([Row(id="x")])
    with pytest.raises(LoaderError, match="^loader row '#0': include: Input should be a valid string"):
        read_rows(write(tmp_path, "- {include: [a, b]}\n"))


def test_includes_that_form_a_cycle_are_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "a.yml").write_text("- include: b.yml\n", encoding="utf-8")
    (tmp_path / "b.yml").write_text("- include: a.yml\n", encoding="utf-8")
    with pytest.raises(LoaderError, match=r"includes form a cycle: .*a\.yml -> .*b\.yml -> .*a\.yml$"):
        read_rows(tmp_path / "a.yml")


def test_the_shipped_test_compositions_start_from_the_packaged_one() -> None:
    from tests.paths import ROOT

    packaged = {row.id: row for row in read_rows(ROOT / "acp_agent" / "cordis.yml")}
    for name, model in (
        ("cordis.snapshot.yml", "acp_agent.llm.replay"),
        ("cordis.record.yml", "acp_agent.llm.scripted"),
    ):
        rows = {row.id: row for row in read_rows(ROOT / name)}  # through the symlink at the root
        assert rows.keys() == packaged.keys()
        assert rows["model"].name == model and rows["agents"].config["provider"] == "replay"
        same = [i for i in rows if i not in ("agents", "model", "permissions", "connection", "sandbox", "titles")]
        assert all(rows[i] == packaged[i] for i in same)
        # Runs confine commands the same way wherever they run: Landlock, unless a test picks another.
        assert rows["sandbox"].config == {"backend": "${ACP_AGENT_SANDBOX:-landlock}"}
        assert rows["titles"].disabled and not packaged["titles"].disabled  # a recorded stream has no title call
        # Replayed chunk times are the replaying machine's: a child's answer card changes at block ends only.
        assert rows["connection"].config == {**packaged["connection"].config, "childAnswerEveryMs": None}
