"""Processes the harness starts die with the process that started them (Linux: ``prctl``).

Standard library only: a side's worker imports it before anything else.
"""

from __future__ import annotations

import ctypes
import signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def prctl(option: int, value: int) -> bool:
    """Linux's ``prctl``; False where there is none (macOS, BSD) or the kernel refuses the option."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Linux only: ask the kernel to send ``signum`` to this process if its parent dies first."""
    prctl(PR_SET_PDEATHSIG, signum)
