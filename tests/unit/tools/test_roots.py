"""Roots: what a client's additional directories become, what an agent is given and logs, what a
child inherits; the file tools' and the sandbox's view of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.agent.keys import PROMPT
from acp_agent.agent.prompt import SystemPrompt
from acp_agent.kernel.context import Context
from acp_agent.sandbox.policy import WORKSPACE_WRITE
from acp_agent.sandbox.service import SANDBOX, Sandbox
from acp_agent.session.events import SessionHeader
from acp_agent.session.log import Session
from acp_agent.session.registry import default_registry
from acp_agent.tools import ToolCallContext
from acp_agent.tools.errors import OutsideWorkspace
from acp_agent.tools.files import on_disk, resolve_for_reading, resolve_writable
from acp_agent.tools.roots import InvalidRoot, Roots, inherit_roots, roots_of, use_roots
from acp_agent.tools.sandboxing import writable_roots
from acp_agent.tools.scratch import scratch_dir
from tests.unit.tools.helpers import caller


def test_check_takes_absolute_existing_directories_resolved_each_once(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "cwd").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    roots = Roots.check(tmp_path / "cwd", [str(tmp_path / "a"), str(tmp_path / "link"), str(tmp_path / "cwd/..")])
    assert roots == Roots(tmp_path / "cwd", (tmp_path / "a", tmp_path))
    assert roots.all == (tmp_path / "cwd", tmp_path / "a", tmp_path)
    assert Roots.check(tmp_path, [str(tmp_path)]).additional == ()  # the cwd is no additional root


def test_check_names_the_entry_it_refuses(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(InvalidRoot, match=r"^additionalDirectories\[0\] must be an absolute path, got 'rel'$"):
        Roots.check(tmp_path, ["rel"])
    for bad in ("missing", "file"):
        with pytest.raises(InvalidRoot, match=rf"^additionalDirectories\[1\]: '{tmp_path}/{bad}' is not an existing"):
            Roots.check(tmp_path, [str(tmp_path), str(tmp_path / bad)])


def agent_in(cwd: Path, ctx: Context | None = None) -> ToolCallContext:
    session = Session(SessionHeader(id="s", created_at=0, cwd=str(cwd)), registry=default_registry())
    if ctx is None:
        ctx = Context()
        ctx.provide(PROMPT, SystemPrompt())
    return ToolCallContext(call_id="c", cwd=cwd, agent=caller(session, ctx))


def test_an_agent_is_given_roots_logged_once_named_to_the_model_and_inherited(tmp_path: Path) -> None:
    call = agent_in(tmp_path / "cwd")
    agent = call.agent
    assert roots_of(agent) == Roots(tmp_path / "cwd") and call.roots.additional == ()
    roots = Roots(tmp_path / "cwd", (tmp_path / "a",))
    use_roots(agent, roots)
    use_roots(agent, roots)  # the same set again: not logged again, one section
    assert call.roots == roots and writable_roots(call) == (tmp_path / "cwd", tmp_path / "a")  # no sandbox
    assert [event.data.directories for event in agent.session.events] == [[str(tmp_path / "a")]]
    prompt = agent.ctx.get(PROMPT).render(agent.scope, {}, [])
    assert prompt.count("additional directories. The file and search tools reach them by absolute path") == 1
    assert prompt.endswith(f"\n- {tmp_path / 'a'}")
    child = caller(
        Session(SessionHeader(id="c", created_at=0, cwd=str(tmp_path / "cwd")), registry=agent.session.registry),
        agent.ctx,
    )
    install = inherit_roots(agent)
    assert install is not None
    install(child)
    assert roots_of(child) == roots and child.session.events[0].data.directories == [str(tmp_path / "a")]
    use_roots(agent, Roots(tmp_path / "cwd"))  # a reopened session's request named none
    assert roots_of(agent) == Roots(tmp_path / "cwd") and inherit_roots(agent) is None
    assert agent.ctx.get(PROMPT).render(agent.scope, {}, []) == ""
    assert [event.data.directories for event in agent.session.events] == [[str(tmp_path / "a")], []]
    use_roots(child, roots)
    child.scope.dispose()  # the session closed: its roots go with it
    assert roots_of(child) == Roots(tmp_path / "cwd")


def test_the_file_tools_reach_the_roots_through_the_workspace_and_the_sandbox_lets_commands_write(
    tmp_path: Path,
) -> None:
    ctx = Context()
    ctx.provide(PROMPT, SystemPrompt())
    ctx.provide(SANDBOX, Sandbox(extra_writable=[str(tmp_path / "cache")]))
    for name in ("cwd", "a", "cache"):
        (tmp_path / name).mkdir()
    call = agent_in(tmp_path / "cwd", ctx)
    use_roots(call.agent, Roots(tmp_path / "cwd", (tmp_path / "a",)))
    scratch = scratch_dir(call)
    assert writable_roots(call) == (tmp_path / "cwd", tmp_path / "a", scratch.resolve(), tmp_path / "cache")
    target, disk = resolve_for_reading(call, str(tmp_path / "a" / "f"))
    assert (target.cwd, target.shown, disk) == (tmp_path / "a", str(tmp_path / "a" / "f"), False)
    cache = resolve_for_reading(call, str(tmp_path / "cache" / "f"))[0]
    assert on_disk(call, cache)  # a deployment's root: the editor does not hold it
    policy = ctx.get(SANDBOX).policy(WORKSPACE_WRITE, call.cwd, scratch, call.roots.additional)
    assert policy.protected == (str(tmp_path / "cwd" / ".git"), str(tmp_path / "a" / ".git"))
    call.agent.scope.dispose()


def test_a_path_outside_every_root_is_refused_naming_them_all(tmp_path: Path) -> None:
    cwd, lib, outside = tmp_path / "cwd", tmp_path / "lib", tmp_path / "outside"
    for directory in (cwd, lib, outside):
        directory.mkdir()
    (cwd / "leak").symlink_to(outside)
    (lib / "leak").symlink_to(outside)
    call = agent_in(cwd)
    with pytest.raises(OutsideWorkspace) as alone:
        resolve_writable(call, f"{outside}/f")
    assert str(alone.value) == f"{outside}/f is outside the working directory {cwd}"  # the cwd alone: as ever
    use_roots(call.agent, Roots(cwd, (lib,)))
    for path, message in (
        (f"{outside}/f", f"{outside}/f is outside the session's roots: {cwd}, {lib}"),
        ("../outside/f", f"../outside/f is outside the session's roots: {cwd}, {lib}"),
        ("leak/f", f"leak/f leads through a symbolic link outside the session's roots: {cwd}, {lib}"),
        (f"{lib}/leak/f", f"{lib}/leak/f leads through a symbolic link outside the session's roots: {cwd}, {lib}"),
    ):
        for resolve in (resolve_writable, resolve_for_reading):
            with pytest.raises(OutsideWorkspace) as refused:
                resolve(call, path)
            assert str(refused.value) == message
    call.agent.scope.dispose()
