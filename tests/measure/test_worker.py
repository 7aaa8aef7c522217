"""No process a case starts outlives it, however the case ends: for real, with a case that starts
``sleep 300``.

The case (``fixtures/cases/spawns.py``) writes its grandchild's pid to a file; each test ends
the case one way and then waits a few seconds for the grandchild to be gone.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from harness import main as cli
from harness.measure.launch import Worker, WorkerGone
from tests.conftest import FIXTURES, alive, harness_command

CASES = FIXTURES / "cases"
# Seconds a grandchild may take to vanish once its case has ended.
GONE_WITHIN_S = 5.0


def wait_until(predicate, timeout):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def grandchild(tmp_path, monkeypatch):
    """The grandchild's pid, once the case has started it (read through the file the case
    writes)."""
    pidfile = tmp_path / "grandchild.pid"
    monkeypatch.setenv("HARNESS_TEST_GRANDCHILD_PIDFILE", str(pidfile))
    started = []

    def pid():
        assert wait_until(pidfile.exists, 60), "the case did not start its grandchild"
        started.append(int(pidfile.read_text()))
        return started[-1]

    yield pid
    for leftover in started:  # a test that failed must not leave its sleep behind either
        if alive(leftover):
            os.kill(leftover, signal.SIGKILL)


def run_args(tmp_path, *extra):
    """A run of the case in one process; spawn isolation unless ``extra`` says otherwise (its worker
    is ready at once, where a fork worker first imports JAX)."""
    common = ["--processes", "1", "--repeats", "2", "--warmup", "1"]
    isolation = [] if "--isolation" in extra else ["--isolation", "spawn"]
    return [
        "run",
        "--cases-dir",
        str(CASES),
        "--results",
        str(tmp_path / "r"),
        "--case",
        "spawns",
        *common,
        *isolation,
        *extra,
    ]


def assert_gone(pid):
    assert wait_until(lambda: not alive(pid), GONE_WITHIN_S), (
        f"the grandchild {pid} outlived its case"
    )


@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_case_that_finishes_takes_its_grandchild_with_it(isolation, tmp_path, grandchild, capsys):
    assert cli.main(run_args(tmp_path, "--isolation", isolation)) == 0
    assert "→ ok" in capsys.readouterr().err
    assert_gone(grandchild())


def test_a_grandchild_in_a_session_of_its_own_is_ended_too(
    tmp_path, grandchild, monkeypatch, capsys
):
    monkeypatch.setenv("HARNESS_TEST_SPAWNS_MODE", "escape")
    assert cli.main(run_args(tmp_path)) == 0
    assert "→ ok" in capsys.readouterr().err
    pid = grandchild()
    if sys.platform != "linux":  # only a child subreaper reaches a process that left the group
        pytest.skip("no PR_SET_CHILD_SUBREAPER here")
    assert_gone(pid)


def test_a_case_that_times_out_takes_its_grandchild_with_it(
    tmp_path, grandchild, monkeypatch, capsys
):
    monkeypatch.setenv("HARNESS_TEST_SPAWNS_MODE", "hang")
    assert cli.main(run_args(tmp_path, "--timeout", "5")) == 0
    assert "→ timeout" in capsys.readouterr().err
    assert_gone(grandchild())


@pytest.mark.parametrize("ending", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_an_ended_harness_takes_the_grandchild_with_it(ending, tmp_path, grandchild):
    environ = {**os.environ, "HARNESS_TEST_SPAWNS_MODE": "hang"}
    sweep = subprocess.Popen(
        harness_command(*run_args(tmp_path, "--timeout", "120")),
        env=environ,
        stderr=subprocess.DEVNULL,
    )
    try:
        pid = grandchild()
        sweep.send_signal(ending)
        sweep.wait(30)
    finally:
        sweep.kill()
        sweep.wait()
    assert_gone(pid)


def test_a_dead_worker_takes_the_grandchild_with_it(tmp_path, grandchild, monkeypatch):
    monkeypatch.setenv("HARNESS_TEST_SPAWNS_MODE", "hang")
    worker = Worker(sys.executable, dict(os.environ), "spawn", tmp_path / "worker.log")
    try:
        worker.ready()
        worker.start(
            {
                "case_file": str(CASES / "spawns.py"),
                "sizes": {"K": 10},
                "settings": {
                    "warmup": 0,
                    "repeats": 2,
                    "min_repeats": 2,
                    "max_seconds": 1.0,
                    "compile_repeats": 1,
                },
                "out": str(tmp_path / "out.json"),
                "log": str(tmp_path / "out.log"),
                "affinity": None,
            }
        )
        pid = grandchild()
        worker.proc.kill()
        with pytest.raises(WorkerGone):
            worker.wait(30)
    finally:
        worker.close()
    assert_gone(pid)
