"""What a plugin module looks like: the Plugin protocol, plugin_problem and PluginConfig."""

from __future__ import annotations

from types import ModuleType

import pytest
from pydantic import ValidationError

from acp_agent.kernel import Plugin, PluginConfig
from acp_agent.kernel.plugin import plugin_problem
from tests.unit.kernel.plugins import config_not_model, not_a_plugin, passive, provider, recorder


@pytest.mark.parametrize("module", [recorder, provider])
def test_a_plugin_module_has_no_problem_and_satisfies_the_protocol(module: ModuleType) -> None:
    assert plugin_problem(module) is None
    assert isinstance(module, Plugin)


def test_inject_is_optional_to_the_loader_but_part_of_the_protocol() -> None:
    assert plugin_problem(passive) is None
    assert not isinstance(passive, Plugin)


def test_modules_that_are_not_plugins_say_why() -> None:
    assert plugin_problem(not_a_plugin) == (
        "module 'tests.unit.kernel.plugins.not_a_plugin' is not a plugin: it has no 'apply'"
    )
    assert plugin_problem(config_not_model) == (
        "module 'tests.unit.kernel.plugins.config_not_model' is not a plugin: its Config is not a pydantic model"
    )
    assert not isinstance(not_a_plugin, Plugin)


@pytest.mark.parametrize(
    ("attributes", "missing"),
    [((), "name"), (("name",), "Config"), (("name", "Config"), "apply")],
)
def test_the_first_missing_attribute_is_named(attributes: tuple[str, ...], missing: str) -> None:
    module = ModuleType("partial")
    for attribute in attributes:
        setattr(module, attribute, PluginConfig if attribute == "Config" else "x")
    assert plugin_problem(module) == f"module 'partial' is not a plugin: it has no {missing!r}"


def test_plugin_config_forbids_unknown_keys() -> None:
    class Config(PluginConfig):
        label: str

    assert Config.model_validate({"label": "x"}).label == "x"
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Config.model_validate({"label": "x", "lable": "typo"})
