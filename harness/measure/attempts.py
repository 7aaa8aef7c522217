"""One case process of a side: started on its worker, timed out, classified, measured under the
machine's lock, and again while it was loaded. The payload it wrote (``child``) is read back with
what only the parent knows: its place, its window, the machine's load, its CPUs; or, where it wrote
none, why (its exit code or signal, its last lines).

A process that finished ok while others kept more than ``--max-load`` cores busy is measured again,
a second apart, up to ``LOAD_ATTEMPTS`` times, each attempt counted in its load record; a retry that
does not end ok leaves the loaded measurement standing. A process that met its venv changed
(``VenvGone``) or its TPU held by another program (``DeviceHeld``) is no outcome of the release: it
is not kept, and the measurement stops, saying so.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.host import tpu
from harness.measure import deaths
from harness.measure.cells import CellRun, PlannedRun
from harness.measure.launch import DeviceHeld, Worker, WorkerGone, check_venv
from harness.measure.load import LoadWatch, load_threshold
from harness.measure.locks import timing_lock
from harness.store.schema import (
    EndKind,
    ProcessEnd,
    ProcessRun,
    RunStatus,
    SchemaError,
    Settings,
    parse_process,
)

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


def classify(returncode: int, payload: Any, output: str) -> ProcessRun:
    """How a case process ended and what it measured, from its exit code, its payload (the
    ``ProcessRun`` it wrote) and its output; its place and window are the caller's to add."""
    status = RunStatus.FAILED
    if returncode < 0:
        name = deaths.signal_name(-returncode)
        oom = " (likely out of memory: the kernel's OOM killer sends SIGKILL)"
        status, said = RunStatus.CRASHED, f"killed by {name}{oom if name == 'SIGKILL' else ''}"
    elif returncode != 0:
        said = f"exit code {returncode}"
    elif payload is None:
        said = "the case process exited without a result"
    else:
        try:
            return parse_process(payload, "payload")
        except SchemaError as exc:
            said = f"the case process wrote an unreadable result ({exc})"
    # The end of its output, scrubbed: one 10 MB line would otherwise land whole in the result.
    detail = f"{said}\n{deaths.last_lines(output)}".strip()
    return ProcessRun(0, status, detail, died=deaths.ended(returncode, output))


def run_process(worker: Worker, index: int, case: dict[str, Any], settings: Settings) -> ProcessRun:
    """Run one case process on ``worker`` (``case``: the request's ``case_file``, ``sizes`` and a
    script's ``script_sha256``, ``script_args``), its group killed at the time-out or an interrupt;
    never raises for the case's sake."""
    timeout_s, affinity = settings.timeout_s, settings.affinity
    with tempfile.TemporaryDirectory(prefix="harness-") as scratch:
        out, log, faults = (Path(scratch) / f for f in ("payload.json", "output.log", "faults.txt"))
        request = {
            **case,
            "settings": settings.for_child(),
            "fault_file": str(faults),
            "dump_at_unix_s": time.time() + deaths.dump_after(timeout_s),
            "out": str(out),
            "log": str(log),
            "affinity": None if affinity is None else list(affinity),
        }
        watch = LoadWatch(load_threshold(settings))
        started_ns, started = time.time_ns(), time.monotonic()
        timed_out, exited, process = False, None, None
        try:
            worker.start(request)
            exited = worker.wait(timeout_s)
            if exited is None:
                timed_out = True
                exited = worker.kill()
        except WorkerGone as gone:
            died = ProcessEnd(EndKind.WORKER, last_lines=deaths.last_lines(str(gone)))
            said = f"its worker died, and the case process with it: {gone}"
            process = ProcessRun(0, RunStatus.CRASHED, said, died=died)
        except BaseException:  # interrupted: the case must not outlive the sweep
            worker.kill()
            raise
        wall_s = time.monotonic() - started
        window = (started_ns, time.time_ns())
        load = watch.finish(exited.cpu_s, wall_s) if exited is not None else None
        output = deaths.read_end(log)
        if timed_out:  # a script's own output, where it was one, says more than its case process's
            written = (
                deaths.read_end(Path(scratch) / deaths.SCRIPT_STDERR).strip()
                or deaths.read_end(Path(scratch) / deaths.SCRIPT_STDOUT).strip()
                or output
            )
            process = ProcessRun(
                0,
                RunStatus.TIMEOUT,
                f"no result within {timeout_s:g} s; killed\n{deaths.last_lines(output)}",
                died=deaths.timed_out(timeout_s, written),
            )
        elif process is None:
            assert exited is not None
            try:
                payload = json.loads(out.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                payload = None
            process = classify(exited.returncode, payload, output)
        if process.status not in (RunStatus.OK, RunStatus.SKIPPED, RunStatus.NOT_INSTALLABLE):
            # where it died (where it did not say: its detail), with faulthandler's stack
            died = process.died or ProcessEnd(EndKind.RAISED, last_lines=process.detail)
            if (stack := deaths.read_stack(faults)) and not died.stack:
                died = dataclasses.replace(died, stack=stack)
            process = dataclasses.replace(process, died=died)
        peak = process.peak_rss_bytes
        if exited is not None and peak is None:  # it died before saying: the kernel's count
            peak = exited.maxrss_bytes
        return dataclasses.replace(
            process,
            index=index,
            duration_s=round(wall_s, 3),
            window_unix_ns=window,
            load=load,
            affinity=affinity,
            peak_rss_bytes=peak,
        )
