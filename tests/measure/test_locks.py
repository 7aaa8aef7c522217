"""The machine-wide locks: shared by every user, and every fault at their path one warning, never a
traceback."""

import os
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest

from harness.measure import locks
from harness.measure.locks import (
    LOCK_DIR_VARIABLE,
    TIMING_LOCK_DIR_VARIABLE,
    folder_lock,
    timing_lock,
    venv_lock,
)

NAME = "jax-repro-harness-timing.lock"


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setenv(LOCK_DIR_VARIABLE, str(shared))
    monkeypatch.delenv(TIMING_LOCK_DIR_VARIABLE, raising=False)  # the suite's worker's own
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(locks, "_WARNED", set())
    return shared


def taken(progress_lines=None):
    lines = [] if progress_lines is None else progress_lines
    with timing_lock(lines.append) as waited:
        assert waited >= 0
    return lines


def test_the_lock_file_is_for_every_user_whatever_the_umask(lock_dir):
    previous = os.umask(0o077)
    try:
        assert taken() == []
    finally:
        os.umask(previous)
    assert stat.S_IMODE((lock_dir / NAME).stat().st_mode) == 0o666


def test_the_runtime_folder_is_not_where_the_lock_is(lock_dir, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(lock_dir.parent / "gone"))  # missing, as after `su`
    assert taken() == []
    assert (lock_dir / NAME).is_file()


def test_two_holders_take_turns(lock_dir):
    order = []

    def second():
        with timing_lock(lambda line: order.append("waited")):
            order.append("second")

    with timing_lock(lambda line: None):
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.3)
        order.append("first")
    thread.join(10)
    assert order == ["first", "waited", "second"] or order == ["waited", "first", "second"]


def test_the_timing_lock_alone_may_have_a_folder_of_its_own(lock_dir, tmp_path, monkeypatch):
    """As each worker of the test suite has: it measures beside the others, yet waits while
    another makes the venv it needs."""
    own = tmp_path / "own"
    own.mkdir()
    monkeypatch.setenv(TIMING_LOCK_DIR_VARIABLE, str(own))
    with timing_lock(lambda line: None), venv_lock(tmp_path / "venv", lambda line: None):
        pass
    assert [p.name for p in own.iterdir()] == [NAME]
    assert [p.name[:23] for p in lock_dir.iterdir()] == ["jax-repro-harness-venv-"]


@pytest.mark.parametrize(
    ("plant", "said"),
    [
        (lambda path: path.mkdir(), "other than a file"),
        (lambda path: path.symlink_to("/etc/passwd"), "symbolic link"),
        (lambda path: os.mkfifo(path), "other than a file"),
    ],
    ids=["a folder", "a link", "a FIFO"],
)
def test_something_planted_at_the_lock_path_is_one_warning_and_a_fallback(lock_dir, plant, said):
    plant(lock_dir / NAME)
    lines = taken()
    assert (
        len(lines) == 1 and lines[0].startswith("harness: warning: the lock ") and said in lines[0]
    ), lines
    assert "does not exclude other users' runs" in lines[0]
    assert taken() == [], "said once"


def test_a_missing_lock_folder_and_no_runtime_folder_measure_without_a_lock(lock_dir, monkeypatch):
    monkeypatch.setenv(LOCK_DIR_VARIABLE, str(lock_dir / "missing"))
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    lines = taken()
    assert len(lines) == 1 and "no usable lock" in lines[0] and "does not exist" in lines[0], lines


def test_a_results_folder_lock_with_an_undecodable_name(lock_dir, tmp_path):
    folder = tmp_path / os.fsdecode(b"r\xff")
    with folder_lock(folder, lambda line: None) as waited:
        assert waited >= 0


OTHER_USER = 65534  # nobody


@pytest.fixture
def world_dir(monkeypatch):
    """A sticky folder every user can reach (pytest's own is root's alone), as the lock folder."""
    folder = Path(tempfile.mkdtemp(prefix="locks-", dir="/tmp"))
    folder.chmod(0o1777)
    monkeypatch.setenv(LOCK_DIR_VARIABLE, str(folder))
    monkeypatch.delenv(TIMING_LOCK_DIR_VARIABLE, raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(locks, "_WARNED", set())
    yield folder
    shutil.rmtree(folder)


def as_other_user(meanwhile=None) -> tuple[int, list[str]]:
    """Take the timing lock as another user (nobody) in a forked process; its exit code and progress
    lines.

    Forked, not started anew: nobody may not reach this interpreter.  ``meanwhile(pid, go)``, run in
    the parent once the child is forked, calls ``go()`` to let the child take the lock; forked
    before the parent takes it, the child shares none of the parent's lock descriptors.
    """
    read_end, write_end = os.pipe()
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        code = 1
        try:
            os.close(read_end)
            os.close(go_write)
            os.read(go_read, 1)
            os.setuid(OTHER_USER)
            lines = []
            with timing_lock(
                lambda line: lines.append("waiting" if line.startswith("    waiting") else line)
            ):
                lines.append("held")
            os.write(write_end, "\n".join(lines).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    os.close(go_read)

    def go():
        os.write(go_write, b"g")
        os.close(go_write)

    if meanwhile is None:
        go()
    else:
        meanwhile(pid, go)
    with os.fdopen(read_end) as said:
        lines = said.read().splitlines()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), lines


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user needs root")
@pytest.mark.parametrize("mode", [0o644, 0o600, 0o666])
def test_a_lock_file_made_by_another_user(world_dir, mode):
    path = world_dir / NAME
    path.touch()
    path.chmod(mode)  # root's: the other user is nobody
    code, lines = as_other_user()
    assert code == 0
    if mode & 0o004:  # readable: the same lock as root's runs
        assert lines == ["held"]
    else:
        assert len(lines) == 2 and "not readable" in lines[0] and "no usable lock" in lines[0], (
            lines
        )


@pytest.mark.skipif(os.geteuid() != 0, reason="a second user needs root")
def test_two_users_exclude_each_other(world_dir):
    def hold_a_while(pid, go):
        previous = os.umask(0o077)  # root's own umask would keep the file to root
        try:
            held = timing_lock(lambda line: None)
            held.__enter__()
        finally:
            os.umask(previous)
        go()
        time.sleep(1.5)
        assert os.waitpid(pid, os.WNOHANG) == (0, 0), "nobody waits for root's measurement"
        held.__exit__(None, None, None)

    code, lines = as_other_user(hold_a_while)
    assert code == 0 and lines == ["waiting", "held"]


def test_a_wait_for_another_run_s_lock_and_a_venv_made_under_its_lock_are_counted_aside(
    lock_dir, tmp_path, monkeypatch
):
    """What a why's budget leaves out: the seconds spent waiting for a lock another run holds, and
    those spent making a venv; the clock is the test's, nothing is timed."""
    now = [0.0]
    aside = locks.Aside(lambda: now[0])
    monkeypatch.setattr(locks, "ASIDE", aside)
    real = locks.fcntl.flock

    def held_by_another(fd, how):
        if how & locks.fcntl.LOCK_NB:
            raise BlockingIOError  # another run holds it …
        now[0] += 40.0  # … for 40 s
        return real(fd, how)

    monkeypatch.setattr(locks.fcntl, "flock", held_by_another)
    mark = aside.mark()
    with timing_lock(lambda line: None):
        now[0] += 5.0  # measuring: this run's own
    assert aside.seconds() == 40.0 and aside.own_since(mark) == 5.0
    with locks.venv_lock(tmp_path / "venv", lambda line: None):
        now[0] += 100.0  # an install
    assert aside.seconds() == 180.0 and aside.own_since(mark) == 5.0, (
        "the wait and the install, once"
    )
