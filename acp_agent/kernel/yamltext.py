"""YAML someone else wrote (a loader config, a command's or a skill's front-matter), read the one
way: the safe loader, and a bound on nesting that holds whichever parser PyYAML was built with
(libyaml 0.2.5 takes any depth, newer builds refuse past 1000 levels, the pure-Python parser
reaches a RecursionError)."""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 100
"""Levels of lists and mappings a document may nest: far more than any config needs, and far
below what a recursive walk of it (ours or a reader's) could fail on."""
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it: the same documents, read faster."""


class YamlError(ValueError):
    """Text that is not YAML this server reads; the message says where and why."""


def load_yaml(text: str) -> Any:
    """The document in `text`; `YamlError` for text that does not parse, a value no type can hold
    (`2024-02-30`, `!!float abc`), a tag the safe loader refuses, nesting past `MAX_DEPTH`, or a
    list or mapping that holds itself through an alias."""
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise YamlError(_yaml_reason(exc)) from None
    except Exception as exc:  # a constructor's ValueError, the pure-Python parser's RecursionError
        raise YamlError(f"{type(exc).__name__}: {_first_line(exc)}") from None
    _check_depth(data)
    return data


def _check_depth(data: Any) -> None:
    """Measures each list's and mapping's height once, children first, with an explicit stack:
    aliases share nodes, so a document of a few lines can hold an exponential tree of references
    to them, or a chain of aliases deeper than any one of them is."""
    heights: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, leaving = stack.pop()
        children = _children(node)
        if leaving:
            height = 1 + max((heights.get(id(child), 0) for child in children), default=0)
            if height > MAX_DEPTH:
                raise YamlError(f"nested deeper than {MAX_DEPTH} levels")
            heights[id(node)] = height
            open_nodes.discard(id(node))
        elif id(node) in open_nodes:
            raise YamlError("a list or mapping holds itself (through an alias)")
        elif isinstance(node, (list, dict)) and id(node) not in heights:
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in children)


def _children(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    return node if isinstance(node, list) else []


def _yaml_reason(exc: yaml.YAMLError) -> str:
    """Where and why the parser stopped, without its own quoting of the text it was given."""
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        return f"character {exc.position + 1}: {str(exc).splitlines()[0]}"
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + (getattr(exc, "problem", None) or _first_line(exc))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]
