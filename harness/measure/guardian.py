"""What the harness starts ends with it: each process dies with its parent (Linux ``prctl``, else a
watch), the harness with whatever started it (``follow_parent``), and a watchdog ends what a killed
harness leaves.

A harness killed outright (SIGKILL, the OOM killer) cleans up nothing: its workers, case processes,
installer and temporary folders would stay. So a command runs ``guarded``: its temporary folders
under one of its own, a marker (``MARKER_VARIABLE``) in every process it starts, and a watchdog in
a session of its own reading a pipe only the harness writes to; when the pipe closes, the watchdog
ends every marked process (found in ``/proc``: Linux only) and removes the folder. Standard library
only: a worker imports it first, and the watchdog runs it as a file (``python -I -S guardian.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# Seconds between two looks at the parent where the kernel cannot be asked to tell (no ``prctl``).
PARENT_POLL_S = 0.5


def prctl(option: int, value: int) -> bool:
    """Linux's ``prctl``; False where there is none (macOS, BSD) or the option is refused."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Linux only: ask the kernel to send ``signum`` to this process if its parent dies first."""
    prctl(PR_SET_PDEATHSIG, signum)


def _watch_parent(parent: int, signum: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signum)


def ignores_hangups(pid: int) -> bool:
    """Whether ``pid`` ignores SIGHUP (its ``SigIgn`` in ``/proc``); False where unreadable."""
    try:
        with open(f"/proc/{pid}/status", "rb") as file:
            status = file.read()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith(b"SigIgn:"):
            with contextlib.suppress(ValueError):
                return bool(int(line.split()[1], 16) >> (signal.SIGHUP - 1) & 1)
    return False


def follow_parent(signum: int = signal.SIGTERM) -> bool:
    """Receive ``signum`` when whatever started the harness (nox, a CI step) dies, else a SIGTERM to
    nox (``timeout``, a CI cancel) leaves it measuring under init; False where it does not follow:
    its parent is init, or it alone ignores SIGHUP (``nohup``: detached on purpose)."""
    parent = os.getppid()
    if parent == 1:
        return False
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN and not ignores_hangups(parent):
        return False
    if not prctl(PR_SET_PDEATHSIG, signum):  # no kernel to ask: look at the parent now and then
        threading.Thread(
            target=_watch_parent, args=(parent, signum), name="watch-parent", daemon=True
        ).start()
    elif os.getppid() != parent:  # it died before the request was made: the kernel will not tell
        os.kill(os.getpid(), signum)
    return True


# Set in the harness's environment, so every process it starts carries it.
MARKER_VARIABLE = "HARNESS_RUN_MARKER"  # not JAX_: results record JAX_ variables
# Seconds the marked processes get on SIGTERM (a worker ends its tree) before SIGKILL.
GRACE_S = 2.0
# Rounds of looking: what each round's dead had started may show up in the next.
ROUNDS = 200
ROUND_PAUSE_S = 0.05


def end_marked(marker: str, harness: int) -> None:
    """End every process carrying ``MARKER_VARIABLE=marker``, SIGTERM first, SIGKILL once the grace
    is over; but the watchdog and the ``harness`` (still alive after a clean exit, waiting)."""
    wanted = f"{MARKER_VARIABLE}={marker}".encode()
    spared = {os.getpid(), harness}
    deadline = time.monotonic() + GRACE_S
    for _ in range(ROUNDS):
        left = []  # live processes carrying the marker, but the spared; none without /proc
        for entry in Path("/proc").glob("[0-9]*"):
            pid = int(entry.name)
            if pid in spared:
                continue
            try:
                state = (entry / "stat").read_bytes().rpartition(b")")[2].split()[0]
                environ = (entry / "environ").read_bytes()
            except (OSError, IndexError):  # it ended while we looked, or it is not ours to read
                continue
            if state not in (b"Z", b"X") and wanted in environ.split(b"\0"):
                left.append(pid)
        if not left:
            return
        signum = signal.SIGTERM if time.monotonic() < deadline else signal.SIGKILL
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)
        time.sleep(ROUND_PAUSE_S)


def watch(marker: str, folder: str, harness: int) -> int:
    """The watchdog: once the harness has ended (its pipe, our stdin, closes), clean up after it."""
    # A Ctrl-C at the terminal or a SIGTERM to the harness's group is for the harness; the
    # watchdog stays until the harness is gone, whichever way it went.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    while os.read(0, 4096):
        pass
    end_marked(marker, harness)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


@contextlib.contextmanager
def guarded() -> Iterator[Path]:
    """Run the harness's command under a watchdog; yields the folder its temporary folders go in."""
    marker = os.urandom(8).hex()
    folder = Path(tempfile.mkdtemp(prefix="jax-repro-"))
    # both ends non-inheritable: no other child holds the write end open
    read_end, write_end = os.pipe()
    command = [sys.executable or "python3", "-I", "-S", __file__, marker, str(folder)]
    watchdog: subprocess.Popen[bytes] | None = None
    try:
        watchdog = subprocess.Popen(
            [*command, str(os.getpid())],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a signal to the harness's group does not reach it
        )
    except OSError:  # no interpreter to start: the harness's own cleanup is all there is
        os.close(write_end)
    finally:
        os.close(read_end)
    previous_marker, previous_tempdir = os.environ.get(MARKER_VARIABLE), tempfile.tempdir
    os.environ[MARKER_VARIABLE] = marker
    tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = previous_tempdir
        if previous_marker is None:
            os.environ.pop(MARKER_VARIABLE, None)
        else:
            os.environ[MARKER_VARIABLE] = previous_marker
        shutil.rmtree(folder, ignore_errors=True)  # at once, not when the watchdog gets to it
        if watchdog is not None:  # the pipe closed: the watchdog's turn
            os.close(write_end)
            with contextlib.suppress(subprocess.TimeoutExpired):
                watchdog.wait(GRACE_S + 1)


if __name__ == "__main__":
    sys.exit(watch(sys.argv[1], sys.argv[2], int(sys.argv[3])))
