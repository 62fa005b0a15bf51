"""Sign-in as ACP offers it: the `terminal` auth method, `logout`, and the auth-required answer.

The keys come from `ctx.get(LLM).credentials` (`acp_agent.credentials`): the model rows register the
keys they need, `acp-agent login` stores them, the adapters look them up at each call. A
composition whose models need no key offers neither the method nor `logout`.
"""

from __future__ import annotations

from acp_agent.acp import errors
from acp_agent.acp.jsonrpc import JsonRpcError
from acp_agent.acp.schema import AgentAuthCapabilities, ClientCapabilities, Supported, TerminalAuthMethod
from acp_agent.credentials.keys import Credentials, MissingKey
from acp_agent.credentials.store import CredentialsError

LOGIN_METHOD_ID = "login"
LOGIN_ARGS = ["login"]
"""Appended by the client to the agent's command: `acp-agent [--config ...] login`."""


def auth_methods(credentials: Credentials, client: ClientCapabilities) -> list[TerminalAuthMethod]:
    """The terminal sign-in, for a client that can run one and a composition that needs a key."""
    keys = credentials.required()
    if not (client.auth.terminal and keys):
        return []
    names = ", ".join(f"{key.provider} ({key.name})" for key in keys)
    return [
        TerminalAuthMethod(
            id=LOGIN_METHOD_ID,
            name="Sign in with an API key",
            description=(
                f"Type your API key for {names} in a terminal; it is checked, then kept in"
                f" {credentials.store.path} (an environment variable of the same name wins over it)"
            ),
            args=LOGIN_ARGS,
        )
    ]


def auth_capabilities(credentials: Credentials) -> AgentAuthCapabilities | None:
    """`logout` is offered when there is something to sign out of."""
    return AgentAuthCapabilities(logout=Supported()) if credentials.required() else None


def logout(credentials: Credentials) -> None:
    """Delete the stored keys; keys set in the environment stay in effect."""
    try:
        credentials.store.forget()
    except CredentialsError as exc:
        raise errors.internal_error(str(exc)) from None


def not_for_authenticate(method_id: str, offered: list[TerminalAuthMethod]) -> str:
    """Why `authenticate` refuses `method_id`: every method offered is a terminal one."""
    for method in offered:
        if method.id == method_id:
            return (
                f"methodId {method_id!r} is a terminal sign-in: run the agent's command with the"
                f" arguments {' '.join(method.args)!r} in a terminal instead of calling authenticate"
            )
    return f"methodId {method_id!r} is not an advertised authentication method"


def require_key(credentials: Credentials, provider: str, offered: list[TerminalAuthMethod]) -> None:
    """Answer a prompt that could not reach its model before its turn starts (so the session's
    log keeps no turn that could not run): auth-required when `provider` has no key."""
    try:
        credentials.check(provider)
    except MissingKey as exc:
        raise auth_required(str(exc), offered) from None


def auth_required(message: str, offered: list[TerminalAuthMethod]) -> JsonRpcError:
    """The answer to a prompt that found no key: `message` names the variable; the method the
    client was offered, if any, is named after it."""
    if offered:
        message += f" (the {', '.join(repr(method.id) for method in offered)} authentication method)"
    return JsonRpcError(errors.AUTH_REQUIRED, message)
