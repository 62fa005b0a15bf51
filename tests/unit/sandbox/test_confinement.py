"""Real commands under each backend's prefix: every way out of the writable roots the task names
is tried, and the test fails if the write lands. Landlock must be offered by the kernel the suite
runs on; bubblewrap is skipped (saying why) where no working `bwrap` is installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from acp_agent.sandbox import bubblewrap, landlock
from acp_agent.sandbox.backends import Backend, choose
from acp_agent.sandbox.policy import READ_ONLY, WORKSPACE_WRITE, Kind
from acp_agent.sandbox.service import Sandbox


class Place(NamedTuple):
    work: Path
    outside: Path
    config: Path
    scratch: Path


@pytest.fixture(params=["landlock", "bubblewrap"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "landlock":
        assert landlock.abi() >= 1, "the suite's machine must offer Landlock (Linux >= 5.13)"
    elif bubblewrap.probe() is None:
        pytest.skip("bubblewrap (bwrap) is not installed or does not work on this machine")
    chosen = choose(request.param)
    assert chosen.name == request.param
    return chosen


@pytest.fixture
def place(tmp_path: Path) -> Place:
    paths = Place(*(tmp_path / name for name in ("work", "outside", "config", "scratch")))
    for path in paths:
        path.mkdir()
    (paths.config / "credentials").write_text("sk-secret\n")
    (paths.outside / "target").write_text("original\n")
    return paths


def run(backend: Backend, place: Place, command: str, kind: Kind = WORKSPACE_WRITE) -> subprocess.CompletedProcess[str]:
    sandbox = Sandbox(backend.name, hidden=[place.config])
    sandbox.__dict__["backend"] = backend  # the backend under test, whatever `auto` would pick
    argv = sandbox.prefix(kind, place.work, place.scratch) + ["bash", "-c", command]
    return subprocess.run(argv, cwd=place.work, capture_output=True, text=True, timeout=30)


def untouched(place: Place) -> None:
    assert sorted(os.listdir(place.outside)) == ["target"]
    assert (place.outside / "target").read_text() == "original\n"
    assert (place.config / "credentials").read_text() == "sk-secret\n"


ESCAPES = {
    "redirect": "echo x > {out}/new",
    "append": "echo x >> {out}/target",
    "cp": "cp /etc/hostname {out}/new",
    "mv": "echo x > here && mv here {out}/new",
    "tee": "echo x | tee {out}/new",
    "dd": "echo x | dd of={out}/target conv=notrunc",
    "truncate": "truncate -s 0 {out}/target",
    "python": "python3 -c \"open('{out}/new', 'w').write('x')\"",
    "symlink": "ln -s {out}/target link && echo x > link",
    "hard link": "ln {out}/target hard; echo x >> hard",
    "rm": "rm -f {out}/target",
    "background": "(sleep 0.2; echo x > {out}/new) & wait",
    "setsid": "setsid bash -c 'echo x > {out}/new' ; sleep 0.3",
    "credentials overwrite": "echo x > {cfg}/credentials",
}


@pytest.mark.parametrize("command", ESCAPES.values(), ids=ESCAPES.keys())
def test_no_write_escapes_the_writable_roots(backend: Backend, place: Place, command: str) -> None:
    run(backend, place, command.format(out=place.outside, cfg=place.config))
    untouched(place)


LATER = {
    "daemon": "setsid bash -c '{attempt}' > /dev/null 2>&1 &",
    "background job": "({attempt}) > /dev/null 2>&1 &",
    "nohup": "nohup bash -c '{attempt}' > /dev/null 2>&1 &",
}


@pytest.mark.parametrize("shape", LATER.values(), ids=LATER.keys())
def test_a_process_that_outlives_its_command_stays_confined(backend: Backend, place: Place, shape: str) -> None:
    # The command returns at once; what it left behind tries to write after it, then leaves a
    # marker in the writable root, which the test waits for (no timing: the marker says it tried).
    done = place.work / "done"
    ran = run(backend, place, shape.format(attempt=f"sleep 0.3; echo x > {place.outside}/late; touch {done}"))
    assert ran.returncode == 0  # the command itself has ended, leaving it behind
    for _ in range(200):
        if done.exists():
            break
        subprocess.run(["sleep", "0.05"])
    assert done.exists()
    untouched(place)


def test_the_workspace_the_scratch_directory_and_dev_null_are_writable(backend: Backend, place: Place) -> None:
    ran = run(
        backend,
        place,
        f"echo a > here && echo b > {place.scratch}/tmp && echo c > /dev/null && mv here there && cat there",
    )
    assert (ran.returncode, ran.stdout) == (0, "a\n")
    assert (place.scratch / "tmp").read_text() == "b\n"


def test_read_only_writes_only_the_scratch_directory(backend: Backend, place: Place) -> None:
    ran = run(backend, place, f"echo b > {place.scratch}/tmp; echo a > here", kind=READ_ONLY)
    assert ran.returncode != 0 and not (place.work / "here").exists()
    assert (place.scratch / "tmp").read_text() == "b\n"


def test_the_configuration_directory_cannot_be_read(backend: Backend, place: Place) -> None:
    ran = run(backend, place, f"cat {place.config}/credentials")
    assert ran.returncode != 0 and "sk-secret" not in ran.stdout
    # Everything else stays readable, the workspace's parent too.
    ran = run(backend, place, f"cat {place.outside}/target && ls {place.work.parent} >/dev/null")
    assert (ran.returncode, ran.stdout) == (0, "original\n")


def test_a_link_to_the_configuration_directory_does_not_reveal_it(backend: Backend, place: Place) -> None:
    (place.outside / "cfg-link").symlink_to(place.config)
    ran = run(backend, place, f"cat {place.outside}/cfg-link/credentials")
    assert ran.returncode != 0 and "sk-secret" not in ran.stdout


@pytest.mark.parametrize("command", ESCAPES.values(), ids=ESCAPES.keys())
def test_each_escape_writes_when_nothing_confines_it(place: Place, command: str) -> None:
    # The other tests mean something only if each command does write without a sandbox.
    subprocess.run(
        ["bash", "-c", command.format(out=place.outside, cfg=place.config)],
        cwd=place.work,
        capture_output=True,
        timeout=30,
    )
    with pytest.raises(AssertionError):
        untouched(place)
