"""`load_yaml` gives the same answers whichever parser PyYAML was built with: the nesting bound is
ours, so a document libyaml 0.2.5 would take at any depth is refused as a newer build refuses it."""

from __future__ import annotations

import pytest
import yaml

from acp_agent.kernel import yamltext
from acp_agent.kernel.yamltext import MAX_DEPTH, YamlError, load_yaml

LAUGHS = "a: &a [1, 2]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n" for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)
"""Nine documents' worth of references at each of eight levels: 9**8 lists for a naive walk."""


@pytest.fixture(params=["C", "Python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "C":
        if not hasattr(yaml, "CSafeLoader"):
            pytest.skip("this PyYAML was built without libyaml")
    else:
        monkeypatch.setattr(yamltext, "_LOADER", yaml.SafeLoader)
    return str(request.param)


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.usefixtures("parser")
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (f"x: {nested(MAX_DEPTH)}", f"nested deeper than {MAX_DEPTH} levels"),  # the mapping is a level
        (f"x: {nested(3000)}", None),  # refused by a newer libyaml, a RecursionError, or our bound
        ("a: &a [1, *a]", "a list or mapping holds itself (through an alias)"),
        ("x: 2024-02-30", "ValueError: day is out of range for month"),
        ("x: !!python/object:os.system 1", "line 1, column 4: "),
    ],
)
def test_what_no_reader_should_be_handed_is_refused_saying_why(text: str, reason: str | None) -> None:
    with pytest.raises(YamlError) as caught:
        load_yaml(text)
    assert reason is None or str(caught.value).startswith(reason)


@pytest.mark.usefixtures("parser")
def test_a_document_within_the_bounds_loads_and_shared_lists_are_measured_once() -> None:
    assert load_yaml(f"x: {nested(MAX_DEPTH - 1)}")["x"] == load_yaml(nested(MAX_DEPTH - 1))
    laughs = load_yaml(LAUGHS)
    assert laughs["i"][0] is laughs["h"] and len(laughs) == 9


@pytest.mark.usefixtures("parser")
def test_a_chain_of_aliases_counts_the_depth_a_reader_would_walk() -> None:
    links = MAX_DEPTH // 10 + 1
    text = (
        "a0: &a0 "
        + nested(10)
        + "\n"
        + "".join(f"a{i}: &a{i} {'[' * 10}*a{i - 1}{']' * 10}\n" for i in range(1, links))
    )
    with pytest.raises(YamlError, match="nested deeper than"):
        load_yaml(text)
