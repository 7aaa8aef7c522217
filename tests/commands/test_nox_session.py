"""The harness's end of a nox session: prepared once in nox's install step, launched in its run
step."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.commands import nox_session
from harness.commands.nox_session import Launch, Places, launched

from ..conftest import REPO

POSARGS = ["--case", "scan_sync"]


@pytest.fixture
def prepared(monkeypatch):
    """Every preparation, counted, each giving a command on the release venv's interpreter."""
    calls = []

    def prepare(session, posargs, places, jax="", say=None):
        calls.append((session, list(posargs), jax))
        return Launch(["run", *posargs], "/venv/bin/python")

    monkeypatch.setattr(nox_session, "prepare", prepare)
    return calls


def test_launch_runs_what_prepare_made_without_preparing_again(tmp_path, prepared):
    places = Places(tmp_path, tmp_path / ".cache")
    assert launched("prepare", "run", POSARGS, places) is None, "nox's install step runs nothing"
    found = launched("launch", "run", POSARGS, places)
    assert found == Launch(["run", *POSARGS], "/venv/bin/python")
    assert found.command() == ["/venv/bin/python", "-m", "harness", "run", *POSARGS]
    assert prepared == [("run", POSARGS, "")], "prepared once"


def test_launch_prepares_when_prepare_did_not_run_for_these_posargs(tmp_path, prepared):
    """``nox -R`` skips the install step; a record of other posargs (or another release) is not
    theirs."""
    places = Places(tmp_path, tmp_path / ".cache")
    launched("launch", "run", POSARGS, places)
    launched("prepare", "repro", POSARGS, places, jax="0.4.26")
    launched("launch", "repro", POSARGS, places, jax="0.4.30")
    launched("launch", "repro", [*POSARGS, "--processes", "3"], places, jax="0.4.26")
    assert [call[2] for call in prepared] == ["", "0.4.26", "0.4.30", "0.4.26"]
    record = json.loads((places.cache / "repro-launch.json").read_text())
    assert record["for"] == {"posargs": POSARGS, "jax": "0.4.26"}


def test_what_cannot_be_prepared_is_one_line_with_the_harness_s_exit_code(tmp_path):
    """Bad input is one line and exit 2, as the harness's command line answers, before the index is
    listed."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.commands.nox_session",
            "prepare",
            "sweep",
            str(tmp_path),
            str(tmp_path / ".cache"),
            "--",
            "scan_sync",
            "--from",
            "0.4.35",
            "--to",
            "0.4.26",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("harness: error:") and "from an older release to a newer one" in line


# A stand-in for preparing a script venv: an installer's command (as compileall -j 0 is) that starts
# a worker of its own, both run through ``run_whole`` in a group of their own, as the real
# preparation runs them.
PREPARING = """
import sys
from harness.commands import nox_session
from harness.install.venvs import run_whole

INSTALLER = (
    "import subprocess, sys, time; "
    "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); "
    "open(sys.argv[1], 'w').write(f'{__import__(\\"os\\").getpid()} {w.pid}'); time.sleep(300)"
)
nox_session.launched = lambda *a, **k: run_whole(
    [sys.executable, "-c", INSTALLER, sys.argv[1]], cwd=".", timeout_s=600
)
sys.exit(nox_session.main(["prepare", "triage", "venvs", "cache"]))
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_a_sigterm_to_nox_s_group_while_preparing_ends_the_installer_and_what_it_started(tmp_path):
    pidfile = tmp_path / "pids"
    session = subprocess.Popen(
        [sys.executable, "-c", PREPARING, str(pidfile)],
        cwd=REPO,
        start_new_session=True,  # nox's group: what `timeout` or a CI cancel signals whole
        stderr=subprocess.PIPE,
        text=True,
    )
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not pidfile.exists() or not pidfile.read_text():
            assert time.monotonic() < deadline, "the installer never started"
            time.sleep(0.1)
        pids = [int(pid) for pid in pidfile.read_text().split()]
        os.killpg(session.pid, signal.SIGTERM)
        assert session.wait(30) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in pids if alive(pid)], "the installer or its worker outlived nox"
        assert "interrupted while preparing" in session.stderr.read()
    finally:
        session.kill()
        session.wait()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_the_flags_session_runs_its_command_in_the_release_s_venv(tmp_path, monkeypatch):
    class OneRelease:
        def pair(self, version):
            return version, version

    class Venv:
        interpreter = Path("/venvs/jax-0.4.30/bin/python")

    monkeypatch.setattr(nox_session, "listing_of", lambda places: OneRelease())
    monkeypatch.setattr(nox_session, "ready", lambda places, release, profile, say: Venv())
    posargs = ["--case", "scan_sync", "--jax", "0.4.30", "--b", "jax_enable_x64=true"]
    found = nox_session.prepare("flags", posargs, Places(tmp_path, tmp_path / ".cache"))
    assert found == Launch(
        ["flags", "--case", "scan_sync", "--b", "jax_enable_x64=true", "--profile", "cpu"],
        str(Venv.interpreter),
    )
