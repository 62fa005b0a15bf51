"""The environment of the processes the server starts: its own, without its credential variables.

A plugin that reads a credential from the environment names the variable once (`hide_variables`:
the model adapters their `apiKeyEnv`, the `bash` row its `hideEnv`); `child_environment(ctx)` is
then the environment for any child process (commands, MCP stdio servers): the server's, less every
variable named so far. The server's own environment keeps them all: an adapter reads its key there
at each call.
"""

from __future__ import annotations

from acp_agent.environ.variables import (
    CREDENTIAL_VARIABLES,
    CredentialVariables,
    child_environment,
    credential_names,
    hide_variables,
)

__all__ = [
    "CREDENTIAL_VARIABLES",
    "CredentialVariables",
    "child_environment",
    "credential_names",
    "hide_variables",
]
