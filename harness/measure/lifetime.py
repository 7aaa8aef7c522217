"""Processes the harness starts die with the process that started them (Linux: ``prctl``; elsewhere
a watch).

Standard library only: a side's worker imports it before anything else.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time

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
    """The harness's own process: receive ``signum`` when whatever started it (nox, a CI step) dies;
    False when it does not follow its parent.

    Without it a SIGTERM to nox (``timeout``, a CI cancel) leaves the harness re-parented to init,
    still measuring and storing; SIGTERM ends it as an interrupt does. A harness started alone
    under ``nohup`` (it ignores SIGHUP, its parent does not) was detached on purpose and is left to
    run; so is one whose parent is already init; one whose parent ignores SIGHUP too follows it.
    """
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
