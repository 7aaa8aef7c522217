"""One case process: started on a side's worker, timed out, classified, with the machine's load while it ran.

Statuses: ``ok``, ``failed`` (the error's last lines), ``timeout``, ``crashed`` (killed
by a signal: segfault, abort, the kernel's OOM killer; or its worker died) and
``skipped`` (with the reason).
"""

from __future__ import annotations

import json
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.host.environment import scrub
from harness.measure.launch import Worker, WorkerGone
from harness.measure.load import Load, LoadWatch

STDERR_TAIL_LINES = 25
DETAIL_CHARS = 4000  # of a failed process's output kept in its result


@dataclass
class ProcessRun:
    """What one case process measured (``payload``: programs, compiled, facts, claim, jax...) and how it ended."""

    index: int
    status: str
    detail: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    window_unix_ns: tuple[int, int] = (0, 0)
    load: Load | None = None
    affinity: list[int] | None = None

    def as_record(self) -> dict[str, Any]:
        """The process's entry in a stored result's ``processes``."""
        return {
            "index": self.index,
            "status": self.status,
            "detail": self.detail,
            "duration_s": round(self.duration_s, 3),
            "window_unix_ns": list(self.window_unix_ns),
            "load": None if self.load is None else self.load.as_dict(),
            "affinity": self.affinity,
            **self.payload,
        }

    @property
    def claim(self) -> dict[str, Any] | None:
        claim = self.payload.get("claim")
        return claim if isinstance(claim, dict) else None


def tail(text: str, lines: int = STDERR_TAIL_LINES, chars: int = DETAIL_CHARS) -> str:
    """The end of a case process's output, scrubbed: its last lines, and of those the last characters (one
    10 MB line would otherwise land whole in the result and on every page that shows it)."""
    kept = "\n".join(text[-4 * chars :].strip().splitlines()[-lines:])
    return scrub(kept if len(kept) <= chars else "…" + kept[-chars:])


def read_end(path: Path, size: int = 16 * DETAIL_CHARS) -> str:
    """The last ``size`` bytes of a log, as text: a case can print gigabytes before it dies."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, 2) - size))
            return handle.read().decode(errors="replace")
    except OSError:
        return ""


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify(returncode: int, payload: dict[str, Any] | None, output: str) -> tuple[str, str, dict[str, Any]]:
    """(status, detail, payload) of a case process from its exit code, its payload file and its output."""
    if returncode < 0:
        name = signal_name(-returncode)
        hint = " (likely out of memory: the kernel's OOM killer sends SIGKILL)" if name == "SIGKILL" else ""
        return "crashed", f"killed by {name}{hint}\n{tail(output)}".strip(), {}
    if returncode != 0:
        return "failed", f"exit code {returncode}\n{tail(output)}".strip(), {}
    if payload is None:
        return "failed", f"the case process exited without a result\n{tail(output)}".strip(), {}
    status = str(payload.pop("status", "failed"))
    return status, str(payload.pop("detail", "")), payload


def _read_payload(path: Path) -> dict[str, Any] | None:
    try:
        payload = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return payload if isinstance(payload, dict) else None


def run_process(
    worker: Worker,
    index: int,
    case_file: Path,
    sizes: dict[str, int],
    child_settings: dict[str, Any],
    *,
    timeout_s: float,
    affinity: list[int] | None,
    load_threshold: float,
    script_sha256: str | None = None,
) -> ProcessRun:
    """Run one case process on ``worker``, kill it (and its group) at the timeout; never raises for the case's sake.

    An interrupt (Ctrl-C, SIGTERM) kills the case process before it propagates.
    """
    with tempfile.TemporaryDirectory(prefix="harness-") as scratch:
        out, log = Path(scratch) / "payload.json", Path(scratch) / "output.log"
        request = {
            "case_file": str(case_file),
            "sizes": sizes,
            "settings": child_settings,
            "out": str(out),
            "log": str(log),
            "affinity": affinity,
        }
        if script_sha256 is not None:  # a plain script of this content, not a case module
            request["script_sha256"] = script_sha256
        watch = LoadWatch(load_threshold)
        started_ns, started = time.time_ns(), time.monotonic()
        timed_out = False
        try:
            worker.start(request)
            exited = worker.wait(timeout_s)
            if exited is None:
                timed_out = True
                exited = worker.kill()
        except WorkerGone as gone:
            return ProcessRun(
                index,
                "crashed",
                f"its worker died, and the case process with it: {gone}",
                duration_s=time.monotonic() - started,
                window_unix_ns=(started_ns, time.time_ns()),
                affinity=affinity,
            )
        except BaseException:  # interrupted: the case must not outlive the sweep
            worker.kill()
            raise
        wall_s = time.monotonic() - started
        window = (started_ns, time.time_ns())
        load = watch.finish(exited.cpu_s, wall_s) if exited is not None else None
        output = read_end(log)
        payload: dict[str, Any]
        if timed_out:
            status, detail, payload = "timeout", f"no result within {timeout_s:g} s; killed\n{tail(output)}", {}
        else:
            assert exited is not None
            status, detail, payload = classify(exited.returncode, _read_payload(out), output)
        if exited is not None and "peak_rss_bytes" not in payload:  # it died before saying: the kernel's count
            payload["peak_rss_bytes"] = exited.maxrss_bytes
        return ProcessRun(index, status, detail, payload, wall_s, window, load, affinity)
