"""Looks like a plugin but has no `apply`."""

from __future__ import annotations

from acp_agent.kernel import PluginConfig

name = "not_a_plugin"
Config = PluginConfig
