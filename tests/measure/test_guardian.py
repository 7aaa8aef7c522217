"""A killed harness takes everything it started with it, and leaves no temporary folder.

Each test starts a real ``python -m harness run`` under a stand-in for nox (a parent that
only waits for it), with a case that starts a grandchild and hangs, then kills the parent or
the harness with SIGTERM or SIGKILL, as ``timeout``, a CI cancel or the OOM killer would.
Every process of the tree carries a marker in its environment, so survivors are found in
``/proc`` whoever adopted them.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness.measure import guardian

from ..conftest import FIXTURES

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="survivors are found in /proc"
)

# The stand-in for nox: it starts the harness and waits, as nox's session.run does.
PARENT = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def carrying(mark: str) -> dict[int, str]:
    """The command lines of live processes whose environment holds ``mark``, by pid."""
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (entry / "stat").read_bytes().rpartition(b")")[2].split()[0] in (b"Z", b"X"):
                continue
            if mark.encode() in (entry / "environ").read_bytes().split(b"\0"):
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
                found[int(entry.name)] = command.decode(errors="replace")
        except (OSError, IndexError):
            continue
    return found


def end_what_is_left(mark: str) -> None:
    """SIGKILL whatever of a test's tree is still alive, so that a failure here does not hold the
    machine's timing lock (a case hanging 300 s) against the tests after it."""
    for _ in range(50):
        left = carrying(mark)
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def wait_until(condition, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def harness_tree(tmp_path, marks):
    """A harness measuring a hanging case with a grandchild, under a parent; (parent, mark, its
    TMPDIR).

    ``marks`` collects the tree's mark before anything starts, for ``end_what_is_left``."""
    mark = f"HARNESS_TEST_TREE={uuid.uuid4().hex}"
    marks.append(mark)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    pidfile = tmp_path / "grandchild"
    env = {
        **os.environ,
        mark.partition("=")[0]: mark.partition("=")[2],
        "TMPDIR": str(scratch),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "HARNESS_TEST_SPAWNS_MODE": "hang",
        "HARNESS_TEST_GRANDCHILD_PIDFILE": str(pidfile),
    }
    harness = [
        sys.executable,
        "-m",
        "harness",
        "run",
        "--cases-dir",
        str(FIXTURES / "cases"),
        "--case",
        "spawns",
    ]
    harness += ["--processes", "1", "--timeout", "300", "--results", str(tmp_path / "results")]
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, *harness],
        env=env,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert wait_until(pidfile.exists, 120), "the case never started its grandchild"
    assert len(carrying(mark)) >= 5, "parent, harness, watchdog, worker, case process, grandchild"
    assert list(scratch.iterdir()), "the harness's temporary folder is under TMPDIR"
    return parent, mark, scratch


def the_harness(parent: subprocess.Popen) -> int:
    children = Path(f"/proc/{parent.pid}/task/{parent.pid}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


@pytest.fixture
def marks():
    """The marks of the trees a test started: whatever carries one is killed after the test, pass or
    fail."""
    started: list[str] = []
    yield started
    for mark in started:
        end_what_is_left(mark)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("killed", ["its parent", "the harness"])
def test_nothing_the_harness_started_outlives_it(tmp_path, marks, killed, signum):
    parent, mark, scratch = harness_tree(tmp_path, marks)
    os.kill(parent.pid if killed == "its parent" else the_harness(parent), signum)
    try:
        assert wait_until(lambda: carrying(mark) == {}, timeout=10), carrying(mark)
        assert wait_until(lambda: list(scratch.iterdir()) == [], timeout=5), list(scratch.iterdir())
    finally:
        parent.kill()
        parent.wait()


def test_a_harness_whose_parent_ignores_hangups_too_ends_with_it(tmp_path, marks):
    # ``nohup nox …``, or a test suite or CI runner that ignores SIGHUP: nox and the harness both
    # inherit it ignored; the harness was not detached from nox, and a SIGTERM to nox ends it.
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        parent, mark, scratch = harness_tree(tmp_path, marks)
    finally:
        signal.signal(signal.SIGHUP, previous)
    os.kill(parent.pid, signal.SIGTERM)
    try:
        assert wait_until(lambda: carrying(mark) == {}, timeout=10), carrying(mark)
        assert wait_until(lambda: list(scratch.iterdir()) == [], timeout=5), list(scratch.iterdir())
    finally:
        parent.kill()
        parent.wait()


def test_a_harness_under_nohup_is_left_to_run(tmp_path):
    from harness.measure.guardian import follow_parent, ignores_hangups

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        # pytest's own parent (a shell, nox) does not ignore SIGHUP where this runs: the harness
        # alone was detached.
        if ignores_hangups(os.getppid()):
            pytest.skip("this test run's parent ignores SIGHUP too")
        assert follow_parent() is False, "detached on purpose: not ended with the shell"
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_whether_a_process_ignores_hangups_is_read_from_proc():
    from harness.measure.guardian import ignores_hangups

    def sleeping(disposition):
        return subprocess.Popen(
            ["sleep", "30"], preexec_fn=lambda: signal.signal(signal.SIGHUP, disposition)
        )

    ignoring, plain = sleeping(signal.SIG_IGN), sleeping(signal.SIG_DFL)
    try:
        assert ignores_hangups(ignoring.pid) and not ignores_hangups(plain.pid)
        assert not ignores_hangups(2**22 + 1), "no such process: False"
    finally:
        for process in (ignoring, plain):
            process.kill()
            process.wait()


def test_guarded_puts_temporary_folders_under_one_that_is_removed(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with guardian.guarded() as folder:
        assert Path(tempfile.mkdtemp()).parent == folder
        assert os.environ[guardian.MARKER_VARIABLE]
    assert not folder.exists() and tempfile.tempdir == str(tmp_path)
    assert guardian.MARKER_VARIABLE not in os.environ
