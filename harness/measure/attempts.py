"""One case process of a side, measured under the machine's lock, and again while it was loaded.

A process that finished ok while others kept more than ``--max-load`` cores busy is measured again,
a second apart, up to ``LOAD_ATTEMPTS`` times, each attempt counted in its load record; a retry that
does not end ok leaves the loaded measurement standing. A process that met its venv changed
(``VenvGone``) or its TPU held by another program (``DeviceHeld``) is no outcome of the release: it
is not kept, and the measurement stops, saying so.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from harness.host import tpu
from harness.measure.case_process import run_process
from harness.measure.cells import CellRun, PlannedRun
from harness.measure.launch import DeviceHeld, Worker, check_venv
from harness.measure.locks import timing_lock
from harness.store.schema import ProcessRun, RunStatus, Settings

# A loaded process is measured again this often at most (unless --max-load off), a second apart.
LOAD_ATTEMPTS = 3
LOAD_RETRY_WAIT_S = 1.0


def _with_attempts(process: ProcessRun, attempts: int) -> ProcessRun:
    """The process with how many attempts its measurement took (where its load was read)."""
    if process.load is None:
        return process
    return dataclasses.replace(process, load=dataclasses.replace(process.load, attempts=attempts))


def load_text(process: ProcessRun) -> str:
    load = process.load
    if load is None or not load.loaded or load.other_cpu_cores is None:
        return ""
    return f" · loaded: {load.other_cpu_cores:.2f} other cores busy"


def measure_process(
    worker: Callable[[], Worker],
    item: PlannedRun,
    run: CellRun,
    round_index: int,
    settings: Settings,
    progress: Callable[[str], None],
    line: str,
) -> ProcessRun:
    """Measure process ``round_index`` of ``run``'s side, append it to ``run`` and return it;
    ``worker`` gives the side's worker, ``line`` begins each progress line about it."""
    attempts, kept = 0, None  # kept: the last attempt that finished ok, loaded
    start = item.case.subject.child_start()
    case = {"case_file": str(item.case.path), "sizes": run.side.cell_sizes(item.sizes)}
    if start.script_sha256 is not None:  # a plain script of this content, not a case module
        case |= {"script_sha256": start.script_sha256, "script_args": list(start.script_args)}
    # A side still loaded on its last attempt meets a steady load: measuring again would only add
    # time, and its sides share the load, taking turns in rounds.
    steady = any(
        p.load is not None and p.load.loaded and p.load.attempts >= LOAD_ATTEMPTS
        for p in run.processes
    )
    while True:
        attempts += 1
        try:
            with timing_lock(progress):
                process = run_process(worker(), round_index, case, settings)
            if process.status is not RunStatus.OK:
                check_venv(run.side, process.detail)
                if why := tpu.held_elsewhere(process.detail):
                    raise DeviceHeld(why)
        except BaseException:
            # Interrupted while measuring again, or the venv gone (VenvGone: not the release's
            # doing, nothing of this process is kept): the loaded measurement is kept.
            if kept is not None:
                run.processes.append(_with_attempts(kept, attempts))
            raise
        if kept is not None and process.status is not RunStatus.OK:
            process = kept  # measuring again failed, hung or crashed: the loaded measurement stands
            break
        # Only a measurement is measured again: a failure, timeout or crash under load stays.
        loaded = process.load is not None and process.load.loaded and process.status is RunStatus.OK
        if not loaded or settings.max_load is None or attempts >= LOAD_ATTEMPTS or steady:
            break
        kept = process
        over = f"{load_text(process)} (over --max-load {settings.max_load:g})"
        again = f"again in {LOAD_RETRY_WAIT_S:g} s (attempt {attempts + 1} of {LOAD_ATTEMPTS})"
        progress(f"{line} → {process.status}{over}; measuring {again}")
        time.sleep(LOAD_RETRY_WAIT_S)
    process = _with_attempts(process, attempts)
    run.processes.append(process)
    return process
