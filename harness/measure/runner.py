"""Run planned case runs, one subprocess each, and store every outcome.

Statuses: ``ok``, ``failed`` (the error's last lines), ``timeout``, ``crashed``
(killed by a signal: segfault, abort, the kernel's OOM killer) and ``skipped``
(with the reason).  Whatever one run does, the sweep goes on to the next.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.catalogue.discovery import CaseInfo
from harness.catalogue.sizes import Budget, PlannedPoint
from harness.errors import HarnessError
from harness.host.environment import host_facts, package_versions, scrub
from harness.measure.launch import default_isolation, kill, launch
from harness.store.results import REFUSED, RunStatus, cell_key, measured_cells, new_record, write_result

STDERR_TAIL_LINES = 25


@dataclass(frozen=True)
class Settings:
    timeout_s: float = 300.0
    warmup: int = 2
    repeats: int = 30
    min_repeats: int = 5
    max_seconds: float = 10.0
    compile_repeats: int = 3
    effort: str = "quick"
    isolation: str = field(default_factory=default_isolation)

    def for_child(self) -> dict[str, Any]:
        return {
            "warmup": self.warmup,
            "repeats": self.repeats,
            "min_repeats": self.min_repeats,
            "max_seconds": self.max_seconds,
            "compile_repeats": self.compile_repeats,
        }


@dataclass(frozen=True)
class PlannedRun:
    case: CaseInfo
    point: PlannedPoint

    @property
    def sizes(self) -> dict[str, int]:
        return self.point.sizes


@dataclass
class Outcome:
    status: RunStatus
    detail: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    already_measured: bool = False  # passed over on resume: ``status`` is the stored one


def tail(text: str, lines: int = STDERR_TAIL_LINES) -> str:
    return scrub("\n".join(text.strip().splitlines()[-lines:]))


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify(returncode: int, payload: dict[str, Any] | None, stderr: str) -> Outcome:
    if returncode < 0:
        name = signal_name(-returncode)
        hint = " (likely out of memory: the kernel's OOM killer sends SIGKILL)" if name == "SIGKILL" else ""
        return Outcome(RunStatus.CRASHED, f"killed by {name}{hint}\n{tail(stderr)}".strip())
    if returncode != 0:
        return Outcome(RunStatus.FAILED, f"exit code {returncode}\n{tail(stderr)}".strip())
    if payload is None:
        return Outcome(RunStatus.FAILED, f"the case process exited without a result\n{tail(stderr)}".strip())
    status = RunStatus(payload.pop("status", RunStatus.FAILED))
    return Outcome(status, payload.pop("detail", ""), payload)


def run_in_child(case_file: Path, sizes: dict[str, int], settings: Settings) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="harness-") as scratch:
        out, log = Path(scratch) / "payload.json", Path(scratch) / "output.log"
        started = time.monotonic()
        running = launch(settings.isolation, case_file, sizes, settings.for_child(), out, log)
        try:
            code = running.wait(settings.timeout_s)
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): the case must not outlive the sweep
            kill(running)
            raise
        if code is None:
            kill(running)
        output = log.read_text(errors="replace") if log.exists() else ""
        if code is None:
            outcome = Outcome(RunStatus.TIMEOUT, f"no result within {settings.timeout_s:g} s; killed\n{tail(output)}")
        else:
            payload = None
            if out.exists():
                try:
                    payload = json.loads(out.read_text())
                except json.JSONDecodeError:
                    payload = None
            outcome = classify(code, payload, output)
        outcome.duration_s = time.monotonic() - started
        return outcome


@contextmanager
def timing_lock(progress: Callable[[str], None]) -> Iterator[float]:
    """Hold the machine-wide measurement lock; yields the seconds spent waiting for it.

    Two sweeps measuring at once would slow each other down and both report
    nonsense, so case runs from any sweep on this machine take turns.
    """
    path = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / "jax-repro-harness-timing.lock"
    with open(path, "a+") as handle:
        started = time.monotonic()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"    waiting for another sweep's measurement to finish (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield time.monotonic() - started
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def release_label() -> str:
    return package_versions().get("jax", "unknown")


@dataclass
class Recorder:
    """Runs one planned point in a child process and stores its result, whatever happened."""

    results_dir: Path
    profile: str
    settings: Settings
    seed: int
    budget: Budget
    release: str = field(default_factory=release_label)
    host: dict[str, Any] = field(default_factory=host_facts)

    progress: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr, flush=True))

    def stored_status(self, item: PlannedRun) -> RunStatus | None:
        """Status of the newest stored result of this cell, if it was measured before."""
        machine = self.host["machine"]["id"]
        cells = measured_cells(self.results_dir, item.case.name, self.release, self.profile, machine)
        return cells.get(cell_key(item.case.name, self.release, self.profile, item.sizes))

    def run(self, item: PlannedRun, *, resume: str = "force") -> tuple[Outcome, Path | None]:
        """Measure and store one cell; with ``resume`` other than "force", skip a measured one.

        The stored status is checked, the case run and its result stored while the
        measurement lock is held, so two sweeps into one results folder neither
        measure at the same time nor measure the same cell twice.
        """
        if item.point.refusal:
            now = time.time_ns()
            return self._store(
                item, Outcome(RunStatus.SKIPPED, f"{REFUSED}: {item.point.refusal}"), [now, now], ran=False
            )
        with timing_lock(self.progress):
            previous = None if resume == "force" else self.stored_status(item)
            if previous is not None and (resume == "skip" or previous is RunStatus.OK):
                return Outcome(previous, f"stored as {previous}", already_measured=True), None
            started = time.time_ns()
            outcome = run_in_child(item.case.path, item.sizes, self.settings)
            return self._store(item, outcome, [started, time.time_ns()])

    def _store(
        self, item: PlannedRun, outcome: Outcome, window: list[int], *, ran: bool = True
    ) -> tuple[Outcome, Path]:
        """Store one cell as a result measured in one case process (none when the budget refused it)."""
        process = {
            "index": 0,
            "status": outcome.status,
            "detail": outcome.detail,
            "duration_s": round(outcome.duration_s, 3),
            "window_unix_ns": window,
            "load": None,
            "affinity": None,
            **outcome.payload,
        }
        record = new_record(
            case=item.case.name,
            release=self.release,
            profile=self.profile,
            sizes=item.sizes,
            size_source=item.point.source,
            seed=self.seed,
            cost_estimate=item.case.space.cost_of(item.sizes),
            budget=self.budget.as_dict(),
            status=outcome.status,
            detail=outcome.detail,
            duration_s=round(outcome.duration_s, 3),
            settings={
                **self.settings.for_child(),
                "timeout_s": self.settings.timeout_s,
                "effort": self.settings.effort,
                "isolation": self.settings.isolation,
                "processes": 1,
                "min_sample_ns": 0,
                "affinity": None,
                "max_load": None,
            },
            claim_statement=item.case.claim,
            discussion=item.case.discussion,
            host=self.host,
            window_unix_ns=window,
            interleaved_with=[],
            processes=[process] if ran else [],
        )
        try:
            return outcome, write_result(self.results_dir, record)
        except OSError as exc:
            raise HarnessError(
                f"cannot store results in {self.results_dir}: {exc.strerror or exc}; results stored so far are kept"
            ) from None


def describe(outcome: Outcome) -> str:
    if outcome.already_measured:
        return f"already measured ({outcome.detail}), skipped"
    verdict = ""
    if "claim" in outcome.payload:
        verdict = " · claim holds" if outcome.payload["claim"]["holds"] else " · claim does NOT hold"
    return f"{outcome.status}{verdict} in {outcome.duration_s:.1f} s"


RESUME_MODES = ("skip", "retry-failed", "force")


def run_all(plan: list[PlannedRun], recorder: Recorder, *, resume: str = "skip") -> list[tuple[Outcome, Path | None]]:
    """Run the plan in order; with ``resume`` "skip" (or "retry-failed") measured cells are passed over.

    Returns one (outcome, stored path) per planned cell; a passed-over cell has the
    outcome marked ``already_measured`` and no path.
    """
    progress = recorder.progress
    if resume != "force":
        before = sum(recorder.stored_status(item) is not None for item in plan)
        if before:
            what = "measured" if resume == "skip" else "measured ok"
            progress(
                f"[jax {recorder.release} · {recorder.profile}] resuming: {before} of {len(plan)} cells already in "
                f"{recorder.results_dir}; those {what} are skipped (--force re-measures, --retry-failed re-runs "
                "the ones that did not finish ok)"
            )
    done = []
    for index, item in enumerate(plan, start=1):
        sizes_text = " ".join(f"{k}={v}" for k, v in item.sizes.items())
        prefix = f"[jax {recorder.release} · {recorder.profile}] ({index}/{len(plan)}) {item.case.name} {sizes_text}"
        progress(f"{prefix} …")
        outcome, path = recorder.run(item, resume=resume)
        progress(f"{prefix} → {describe(outcome)} ({len(plan) - index} left)")
        if not outcome.already_measured and outcome.status not in (RunStatus.OK, RunStatus.SKIPPED) and outcome.detail:
            progress("    " + outcome.detail.splitlines()[-1][:200])
        done.append((outcome, path))
    return done
