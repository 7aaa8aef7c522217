"""How busy the machine was while a case process ran, apart from that process.

A busy process on the other core of a 2-core machine moved a case from 33 ms to 35–57 ms. Over a
process's window, every CPU's busy time (``/proc/stat``, stolen time included) less the process's
own (``os.wait4``), over the wall time, reads as *other CPU cores busy*. The kernel counts 10 ms
ticks per CPU, so a process is loaded only when over the threshold by more than that. Without
``/proc/stat`` the figures are null.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.store.schema import ProcessLoad, Settings

PROC_STAT = Path("/proc/stat")
# The threshold at which a process is flagged as loaded when --max-load is not given.
DEFAULT_FLAG_CORES = 0.5
# /proc/stat's "cpu" line: user nice system idle iowait irq softirq steal guest guest_nice; idle
# and iowait are not busy, guest time is already counted in user (guest_nice in nice).
_BUSY_FIELDS = (0, 1, 2, 5, 6, 7)


def busy_cpu_seconds(stat: Path = PROC_STAT) -> float | None:
    """CPU seconds all CPUs have spent busy since boot; None where the kernel does not say."""
    try:
        with open(stat) as handle:
            first = handle.readline().split()
        ticks = os.sysconf("SC_CLK_TCK")
        if not first or first[0] != "cpu" or ticks <= 0:
            return None
        return sum(int(first[1 + i]) for i in _BUSY_FIELDS if 1 + i < len(first)) / ticks
    except (OSError, ValueError):
        return None


def other_cpu_cores(
    busy_before: float | None, busy_after: float | None, own_cpu_s: float, wall_s: float
) -> float | None:
    """Average number of cores busy with anything but the case process over its window."""
    if busy_before is None or busy_after is None or wall_s <= 0:
        return None
    # /proc/stat counts 10 ms ticks, the rusage microseconds: a quiet machine can come out below 0.
    return round(max(0.0, busy_after - busy_before - own_cpu_s) / wall_s, 3)


def resolution_cores(wall_s: float) -> float:
    """How far off ``other_cpu_cores`` can be: each CPU's busy time counts in whole ticks."""
    try:
        ticks = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        ticks = 100
    return (os.cpu_count() or 1) / max(ticks, 1) / wall_s if wall_s > 0 else float("inf")


def load_threshold(settings: Settings) -> float:
    return DEFAULT_FLAG_CORES if settings.max_load is None else settings.max_load


def is_loaded(cores: float | None, wall_s: float, threshold: float) -> bool:
    """Over the threshold by more than the ticks' resolution: no 20 ms process is judged on them."""
    return cores is not None and cores - resolution_cores(wall_s) > threshold


class LoadWatch:
    """Started when a case process starts; ``finish`` with its CPU time once it has exited."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.busy_before = busy_cpu_seconds()

    def finish(self, own_cpu_s: float, wall_s: float) -> ProcessLoad:
        cores = other_cpu_cores(self.busy_before, busy_cpu_seconds(), own_cpu_s, wall_s)
        try:
            loadavg: float | None = os.getloadavg()[0]
        except OSError:
            loadavg = None
        return ProcessLoad(cores, loadavg, is_loaded(cores, wall_s, self.threshold))
