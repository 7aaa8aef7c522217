"""A plain repro script's case process: run ``python FILE`` once, time it, read what it printed.

Run in the case process a side's worker started (``harness.measure.child``, with
``--script``), so the script runs with the side's interpreter and environment (the
profile's ``XLA_FLAGS``...), under the measurement lock and the timeout that every case
process runs under: it is in the case process's group, which the harness kills at the
timeout.  It runs from its own folder, with the environment the side's worker was given
(JAX's own additions in a ``fork`` worker and the harness on ``PYTHONPATH`` taken out).

What it is judged on:

- a script that prints ``metric PROGRAM METRIC median=NS min=NS max=NS n=COUNT`` lines
  (``harness.measure.figures``; every exported script does) is judged on those: per
  process, each program's printed ``wall_ns`` and ``dispatch_ns`` medians become one
  sample (marks: its ``mark:<step>`` medians), ``lower_ns`` and ``compile_ns`` one cold
  compile; the figures as printed (min, max, n) are kept beside them, and ``claim holds:``
  and ``fact`` lines become the process's claim and facts, as a case's would;
- any other script is timed as a whole process: program ``process``, one wall sample
  (``process.wall_ns``), from start to exit, interpreter start and imports included.

Either way the process's own figure is one number per metric, and the statistics run
over processes, as for a case.  A non-zero exit is a failed process (a signal: crashed),
its exit status and last output lines recorded.
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.host.environment import REPO_ROOT, scrub
from harness.measure.figures import Figure, parse_output
from harness.measure.lifetime import die_with_parent
from harness.store.schema import CompiledFunction, ProcessClaim, ProcessRun, RunStatus, StoredProgram, TimedSample

WHOLE_PROCESS = "process"  # the program of a script timed as a whole process
# Read of a script's standard output: figure lines come first, and a script can print gigabytes.
OUTPUT_BYTES = 8 * 1024 * 1024
TAIL_LINES, TAIL_CHARS = 25, 4000  # of a failed script's output kept in its result
COMPILE_METRICS = {"lower_ns": "lower_ns", "compile_ns": "compile_ns"}


def script_environment(environ: dict[str, str]) -> dict[str, str]:
    """The side's environment for the script, without the harness that ``launch.Worker`` put first on
    ``PYTHONPATH``."""
    env = dict(environ)
    entries = env.get("PYTHONPATH", "").split(os.pathsep)
    if entries and entries[0] == str(REPO_ROOT):
        entries = entries[1:]
    if any(entries):
        env["PYTHONPATH"] = os.pathsep.join(entries)
    else:
        env.pop("PYTHONPATH", None)
    return env


def programs_from(figures: list[Figure]) -> tuple[dict[str, StoredProgram], dict[str, CompiledFunction]]:
    """Programs and compiled functions, as a result stores them, from one process's figure lines.

    A program's sample is the medians the script printed: its wall time, and as marks its
    ``mark:<step>`` medians (or its ``dispatch_ns`` alone); ``kinds`` says which of wall and
    dispatch it printed, so a figure it did not print is never stood in for by another.
    """
    by_program: dict[str, dict[str, Figure]] = {}
    for figure in figures:
        by_program.setdefault(figure.program, {})[figure.metric] = figure
    programs: dict[str, StoredProgram] = {}
    compiled: dict[str, CompiledFunction] = {}
    for name, found in by_program.items():
        cold = {key: (found[metric].median,) for metric, key in COMPILE_METRICS.items() if metric in found}
        if cold:
            compiled[name] = CompiledFunction(cold.get("lower_ns", ()), cold.get("compile_ns", ()))
        wall, dispatch = found.get("wall_ns"), found.get("dispatch_ns")
        if wall is None and dispatch is None:
            continue
        marks = {metric.removeprefix("mark:"): f.median for metric, f in found.items() if metric.startswith("mark:")}
        kinds = [kind for kind, figure in (("wall", wall), ("dispatch", dispatch)) if figure is not None]
        if dispatch is None or not marks:
            marks = {"script": (dispatch or wall).median}  # type: ignore[union-attr]
        first = found.get("first_call_ns")
        programs[name] = StoredProgram(
            steps=tuple(marks),
            samples=(TimedSample(tuple(marks.values()), (wall or dispatch).median),),  # type: ignore[union-attr]
            first_call=None if first is None else TimedSample((first.median,), first.median),
            stopped_by="script output",
            kinds=tuple(kinds),
            printed=tuple(f.as_dict() for f in found.values()),
        )
    return programs, compiled


def whole_process(wall_ns: int, file: str) -> StoredProgram:
    sample = TimedSample((wall_ns,), wall_ns)
    return StoredProgram((f"python {file}",), (sample,), stopped_by="whole process", kinds=("wall",))


def tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The last lines of a script's output, scrubbed, and of those the last characters."""
    kept = "\n".join(text.strip().splitlines()[-lines:])
    return scrub(kept if len(kept) <= chars else "…" + kept[-chars:])


def _read_start(handle: Any) -> tuple[str, bool]:
    handle.seek(0)
    data = handle.read(OUTPUT_BYTES + 1)
    return data[:OUTPUT_BYTES].decode(errors="replace"), len(data) > OUTPUT_BYTES


def _read_end(handle: Any, size: int = 64 * 1024) -> str:
    handle.seek(max(0, handle.seek(0, 2) - size))
    return handle.read().decode(errors="replace")


def run_script(path: Path, expected_sha256: str, timeout_s: float | None = None) -> ProcessRun:
    """Run the script once and time it: what the case process measured (status, programs, claim, script...).

    ``timeout_s`` is for running it outside a case process (tests): there the harness's own
    timeout kills the case process with the script in its group.
    """
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return ProcessRun(0, RunStatus.FAILED, f"script {path.name} cannot be read: {exc.strerror or exc}")
    if digest != expected_sha256:
        changed = (
            f"script {path.name} changed since this run began (sha256 {expected_sha256[:12]}, now "
            f"{digest[:12]}): results of two versions are never mixed"
        )
        return ProcessRun(0, RunStatus.FAILED, changed, script={"sha256": digest})
    env = script_environment(dict(os.environ))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter_ns()
        child = subprocess.Popen(
            [sys.executable, path.name],
            cwd=path.parent,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
            preexec_fn=die_with_parent,
        )
        try:
            code = child.wait(timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            return ProcessRun(0, RunStatus.TIMEOUT, f"no exit within {timeout_s:g} s; killed")
        wall_ns = time.perf_counter_ns() - started
        stdout, cut = _read_start(out)
        stderr = _read_end(err)
    record: dict[str, Any] = {
        "sha256": digest,
        "exit_status": code,
        "wall_ns": wall_ns,
        "maxrss_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,  # Linux reports KiB
    }
    if code != 0:
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
            status, how = RunStatus.CRASHED, f"was killed by {name}"
        else:
            status, how = RunStatus.FAILED, f"exited with code {code}"
        output = tail(stderr) or tail(stdout)
        return ProcessRun(0, status, f"python {path.name} {how}\n{output}".strip(), script=record)
    figures = parse_output(stdout)
    programs, compiled = programs_from(figures.lines)
    record["judged_on"] = "printed figures" if programs or compiled else "whole process"
    if cut:
        record["output_cut"] = f"only the first {OUTPUT_BYTES} bytes of its output were read"
    if not (programs or compiled):
        programs = {WHOLE_PROCESS: whole_process(wall_ns, path.name)}
        if figures.lines:  # figure lines of metrics the statistics do not know: kept, not judged
            record["printed"] = [f.as_dict() for f in figures.lines]
    claim = None if figures.holds is None else ProcessClaim(figures.holds, figures.evidence)
    return ProcessRun(
        0, RunStatus.OK, programs=programs, compiled=compiled, facts=figures.facts, claim=claim, script=record
    )
