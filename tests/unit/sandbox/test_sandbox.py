"""The sandbox package's parts without a confined command: the launcher's options, the backend
choice, the fail-closed refusal, the texts."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import coverage
import pytest

from acp_agent.kernel import LoaderError, Row, compose
from acp_agent.sandbox import backends, bubblewrap, landlock, texts
from acp_agent.sandbox import exec as launcher
from acp_agent.sandbox.backends import LAUNCHER, Backend, choose
from acp_agent.sandbox.errors import SandboxUnavailable
from acp_agent.sandbox.policy import FULL_ACCESS, READ_ONLY, WORKSPACE_WRITE, Policy
from acp_agent.sandbox.service import SANDBOX, Sandbox

POLICY = Policy(WORKSPACE_WRITE, ("/w", "/s"), ("/cfg",), "deny", ("/w/.git",))


def test_the_launcher_reads_the_options_a_policy_writes() -> None:
    assert launcher.parse(POLICY.launcher_options()) == (["/w", "/s"], ["/cfg"], True)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--policy"], "has no value"),
        (["--policy", "everything"], "--policy must be"),
        (["--policy", "read-only", "--network", "maybe"], "--network must be"),
        (["--policy", "read-only", "--write", "rel"], "not an absolute path"),
        (["--policy", "read-only", "--color", "red"], "unknown option"),
    ],
)
def test_the_launcher_names_a_wrong_option(options: list[str], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        launcher.parse(options)


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--policy", "read-only"], "usage"),
        (["--policy", "read-only", "--"], "usage"),
        (["--policy", "bogus", "--", "true"], "was not run"),
    ],
)
def test_the_launcher_runs_nothing_it_cannot_confine(  # in this process: nothing gets confined
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert launcher.main(argv) == launcher.CANNOT_RUN
    assert error in capsys.readouterr().err


def test_the_launcher_as_a_script_refuses_and_says_why() -> None:
    ran = subprocess.run(
        [sys.executable, "-I", "-S", LAUNCHER, "--policy", "bogus", "--", "true"], capture_output=True, text=True
    )
    assert ran.returncode == 126 and "sandbox: the command was not run" in ran.stderr
    ran = subprocess.run(
        [sys.executable, "-I", "-S", LAUNCHER, "--policy", "read-only", "--", "/no/such/program"],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 126 and "sandbox: /no/such/program: No such file" in ran.stderr


def test_landlock_handles_what_each_abi_offers() -> None:
    assert landlock.handled(1) == ((1 << 13) - 1, 0, 0)
    fs, net, scoped = landlock.handled(6)
    assert fs & landlock.TRUNCATE and fs & landlock.IOCTL_DEV and net == 3 and scoped == landlock.SCOPE_SIGNAL
    assert landlock.partial(1)[0].startswith("no linking") and landlock.partial(7) == []
    assert "truncating" in landlock.partial(2)[0]


def test_the_way_to_a_hidden_directory_grants_its_listing_only(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "other").mkdir()
    rules = dict(landlock.rules([], [str(tmp_path / "cfg")], landlock.handled(7)[0]))
    assert rules[str(tmp_path)] == landlock.READ_DIR
    assert rules[str(tmp_path / "other")] == landlock.READ
    assert str(tmp_path / "cfg") not in rules and "/" in rules


def test_backend_none_refuses_every_confined_command() -> None:
    sandbox = Sandbox("none")
    assert sandbox.backend.name == "none"
    with pytest.raises(SandboxUnavailable, match="turned the sandbox off"):
        sandbox.prefix(WORKSPACE_WRITE, Path("/w"), Path("/s"))
    assert sandbox.prefix(FULL_ACCESS, Path("/w"), Path("/s")) == []


def test_no_backend_found_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bubblewrap, "probe", lambda: None)
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    assert "bubblewrap (bwrap) is not installed" in choose("bubblewrap").notes[0]
    assert "offers no Landlock" in choose("landlock").notes[0]
    assert "Landlock and bubblewrap" in choose("auto").notes[0]
    with pytest.raises(SandboxUnavailable, match="no sandbox backend"):
        Backend("none", "none").prefix(POLICY)


def test_landlock_below_abi_3_is_partial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(landlock, "abi", lambda: 2)
    chosen = choose("landlock")
    assert (chosen.name, chosen.enforcement, chosen.abi) == ("landlock", "partial", 2)
    assert "(ABI 2, enforcement: partial); truncating" in texts.backend_line(chosen)


def test_bubblewrap_probe_and_argv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "cfg").mkdir()
    policy = Policy(
        WORKSPACE_WRITE,
        (str(tmp_path),),
        (str(tmp_path / "cfg"), "/absent"),
        "deny",
        (str(tmp_path / ".git"), "/absent/.git"),
    )
    w, g, c = str(tmp_path), str(tmp_path / ".git"), str(tmp_path / "cfg")
    assert bubblewrap.argv("/bin/bwrap", policy) == [
        "/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--bind", w, w, "--ro-bind", g, g,
        "--tmpfs", c, "--remount-ro", c, "--unshare-net", "--",
    ]  # fmt: skip
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name: None)
    bubblewrap.probe.cache_clear()
    assert bubblewrap.probe() is None
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name: "/bin/false")
    bubblewrap.probe.cache_clear()
    assert bubblewrap.probe() is None
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name: "/no/such/bwrap")
    bubblewrap.probe.cache_clear()
    assert bubblewrap.probe() is None
    bubblewrap.probe.cache_clear()


def test_the_policies_of_a_session(tmp_path: Path) -> None:
    sandbox = Sandbox("landlock", extra_writable=["/tmp"], hidden=[tmp_path / "cfg"])
    work, scratch = tmp_path / "w", tmp_path / "s"
    assert sandbox.policy(READ_ONLY, work, scratch).writable == (str(scratch),)
    policy = sandbox.policy(WORKSPACE_WRITE, work, scratch)
    assert policy.writable == (str(work), str(scratch), "/tmp") and policy.protected == (str(work / ".git"),)
    assert sandbox.prefix(WORKSPACE_WRITE, work, scratch)[:4] == [sys.executable, "-I", "-S", backends.LAUNCHER]


@pytest.mark.parametrize(
    ("output", "line"),
    [
        ("bash: /etc/x: Permission denied\n", "writing /etc/x is not allowed"),
        ("/usr/bin/bash: line 1: /etc/x: Permission denied\n", "writing /etc/x is not allowed"),
        ("touch: cannot touch '/etc/x': Permission denied\n", "writing /etc/x is not allowed"),
        ("PermissionError: [Errno 13] Permission denied: '/etc/x'\n", "writing /etc/x is not allowed"),
        (
            "ln: failed to create hard link 'h' => '/etc/x': Invalid cross-device link\n",
            "writing /etc/x is not allowed",
        ),
        ("cp: cannot create regular file '/etc/x': Read-only file system\n", "writing /etc/x is not allowed"),
        ("something: Permission denied\n", "a write was refused (the sandbox cannot say where)"),
        ("bash: /w/x: Permission denied\n", "a write was refused (the sandbox cannot say where)"),
        ("cp: cannot create regular file '../x': Permission denied\n", "writing /x is not allowed"),
        (
            "ln: failed to create hard link 'h' => '/etc/x': Invalid cross-device link\n",
            "writing /etc/x is not allowed",
        ),
    ],
)
def test_a_denied_write_gets_a_line_the_model_can_act_on(output: str, line: str) -> None:
    hint = texts.denied_write(output, POLICY, "/w")
    assert (
        hint
        == f"[sandbox: {line} in workspace-write mode; rerun with escalate: true and a justification if it is needed]"
    )


def test_a_read_only_session_is_not_told_to_escalate() -> None:
    hint = texts.denied_write("bash: x: Permission denied", POLICY._replace(kind=READ_ONLY, writable=()), "/w")
    assert hint == (
        "[sandbox: writing /w/x is not allowed in read-only mode; "
        "the session is read-only, so describe the change instead]"
    )


def test_output_without_a_refusal_gets_no_line() -> None:
    assert texts.denied_write("ls: cannot access 'x': No such file or directory\n", POLICY, "/w") is None


def test_the_report_of_each_backend() -> None:
    for backend in (
        Backend("landlock", "full", abi=3),
        Backend("bubblewrap", "full", bwrap="/bin/bwrap"),
        Backend("none", "none", ("why",)),
    ):
        report = texts.report(backend, WORKSPACE_WRITE, ["/w"], ["/cfg"], "deny")
        assert report.startswith(f"Sandbox backend: {backend.name}") and "Writable: /w" in report
    assert "cannot be enforced" in texts.report(Backend("landlock", "partial", abi=3), WORKSPACE_WRITE, [], [], "deny")
    assert "without a sandbox" in texts.report(Backend("none", "none"), FULL_ACCESS, [], [], "allow")


def in_child(body: Callable[[], int]) -> int:
    """Run `body` in a forked child (Landlock confines the process that asks, for good) and return
    its exit status; the child's coverage is saved before it ends or execs."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's lines are measured by the child itself
        status = 1
        try:
            status = body()
        finally:
            _save_coverage()
            os._exit(status)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


COVERAGE_DATA = os.getcwd()
"""Where the confined child saves its coverage: writable for it."""


def _save_coverage() -> None:
    current = coverage.Coverage.current()
    if current is not None:
        current.stop()
        current.save()


def test_restrict_confines_the_process_that_asks(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "credentials").write_text("sk")
    (tmp_path / "cfg-link").symlink_to(tmp_path / "cfg")
    (tmp_path / "file").write_text("f")

    def body() -> int:
        writable = [str(tmp_path / "w"), str(tmp_path / "file"), COVERAGE_DATA]
        assert landlock.restrict(writable, [str(tmp_path / "cfg")], deny_network=True) >= 1
        for attempt in (
            lambda: (tmp_path / "cfg" / "credentials").read_text(),
            lambda: (tmp_path / "x").write_text("x"),
        ):
            try:
                attempt()
                return 2
            except PermissionError:
                pass
        (tmp_path / "file").write_text("g")  # a writable file (not a directory) gets a file's rights
        return 0

    (tmp_path / "w").mkdir()
    assert in_child(body) == 0
    assert not (tmp_path / "x").exists() and (tmp_path / "file").read_text() == "g"


def test_the_launcher_confines_then_execs(tmp_path: Path) -> None:
    def body() -> int:
        real = os.execvp

        def execvp(file: str, args: list[str]) -> None:
            _save_coverage()
            real(file, args)

        launcher.os.execvp = execvp  # type: ignore[assignment]  # only in this child
        return launcher.main(
            ["--policy", "read-only", "--write", COVERAGE_DATA, "--", "bash", "-c", f"echo x > {tmp_path}/x || exit 7"]
        )

    assert in_child(body) == 7
    assert not (tmp_path / "x").exists()


def test_restrict_refuses_when_the_kernel_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    with pytest.raises(landlock.LandlockError, match="offers no Landlock"):
        landlock.restrict([], [], deny_network=False)
    monkeypatch.setattr(landlock, "abi", lambda: 99)  # a ruleset this kernel cannot handle
    monkeypatch.setattr(landlock, "handled", lambda version: (1 << 63, 0, 0))
    with pytest.raises(landlock.LandlockError, match="landlock_create_ruleset failed"):
        landlock.restrict([], [], deny_network=False)


def test_the_row_provides_the_sandbox_hiding_the_configuration_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ACP_AGENT_CONFIG", str(tmp_path / "cfg"))
    ctx = compose(
        [
            Row(
                id="sandbox",
                name="acp_agent.sandbox.plugin",
                config={"backend": "none", "extraWritable": ["/tmp"], "allowFullAccess": False},
            )
        ]
    )
    sandbox = ctx.get(SANDBOX)
    assert (sandbox.setting, sandbox.extra_writable, sandbox.allow_full_access, sandbox.hidden) == (
        "none",
        ("/tmp",),
        False,
        (str(tmp_path / "cfg"),),
    )
    with pytest.raises(LoaderError, match="'tmp' is not an absolute path"):
        compose([Row(id="sandbox", name="acp_agent.sandbox.plugin", config={"extraWritable": ["tmp"]})])
