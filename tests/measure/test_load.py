"""The machine's load while a case process ran, from the kernel's busy time less the process's
own."""

import os
import subprocess
import sys
import time

import pytest

from harness.measure import load
from tests.conftest import FIXTURES


def test_busy_time_is_read_from_the_aggregate_cpu_line():
    # cpu  185240 0 14391 129417 1838 0 287 2247 0 0: user nice system [idle iowait] irq softirq
    # steal
    ticks = os.sysconf("SC_CLK_TCK")
    assert load.busy_cpu_seconds(FIXTURES / "proc" / "stat") == pytest.approx(
        (185240 + 14391 + 287 + 2247) / ticks
    )


@pytest.mark.parametrize("name", ["stat-without-cpu", "absent"])
def test_busy_time_is_unknown_where_the_kernel_does_not_say(name):
    assert load.busy_cpu_seconds(FIXTURES / "proc" / name) is None


@pytest.mark.parametrize(
    ("before", "after", "own", "wall", "cores"),
    [
        (10.0, 12.5, 0.5, 2.0, 1.0),  # 2.5 s busy, 0.5 of it the case's own, over 2 s
        (10.0, 10.4, 0.5, 2.0, 0.0),  # ticks undercount the case's own time: never below zero
        (None, 12.0, 0.5, 2.0, None),
        (10.0, 12.0, 0.5, 0.0, None),
    ],
)
def test_other_cores_are_the_busy_time_the_case_did_not_take(before, after, own, wall, cores):
    assert load.other_cpu_cores(before, after, own, wall) == cores


def test_a_short_window_is_not_judged_on_clock_ticks():
    resolution = load.resolution_cores(0.05)
    assert resolution > 0
    assert not load.is_loaded(0.5 + resolution / 2, 0.05, 0.5)
    assert load.is_loaded(0.5 + 2 * resolution, 0.05, 0.5)
    assert not load.is_loaded(None, 1.0, 0.5)


@pytest.mark.skipif(load.busy_cpu_seconds() is None, reason="no /proc/stat here")
def test_a_busy_process_shows_as_load():
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # started and spinning
        watch = load.LoadWatch(threshold=0.25)
        started = time.monotonic()
        time.sleep(1.0)
        found = watch.finish(own_cpu_s=0.0, wall_s=time.monotonic() - started)
    finally:
        busy.kill()
        busy.wait()
    assert found.other_cpu_cores is not None and found.other_cpu_cores > 0.25, found
    assert found.loaded and found.loadavg_1m is not None
    assert found.to_json() == {
        "other_cpu_cores": found.other_cpu_cores,
        "loadavg_1m": found.loadavg_1m,
        "loaded": True,
        "attempts": 1,
    }
