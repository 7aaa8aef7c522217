"""One case process: started on a side's worker, timed out, classified. The payload it wrote
(``child``) is read back with what only the parent knows: its place, its window, the machine's load,
its CPUs; or, where it wrote none, why (its exit code or signal, its last lines).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.measure import deaths
from harness.measure.launch import Worker, WorkerGone
from harness.measure.load import LoadWatch, load_threshold
from harness.store.schema import (
    EndKind,
    ProcessEnd,
    ProcessRun,
    RunStatus,
    SchemaError,
    Settings,
    parse_process,
)


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
        out, log = Path(scratch) / "payload.json", Path(scratch) / "output.log"
        faults = Path(scratch) / "faults.txt"
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
