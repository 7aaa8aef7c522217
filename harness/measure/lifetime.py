"""Processes the harness starts die with the process that started them (Linux: ``PR_SET_PDEATHSIG``).

Standard library only: a side's worker imports it before anything else.
"""

from __future__ import annotations

import ctypes
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Linux only: ask the kernel to SIGKILL this process if its parent dies first."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
