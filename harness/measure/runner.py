"""Measure planned cells on one or more sides, in several case processes each, and store every outcome.

One process sets a level its samples cannot reveal (memory layout, thread placement,
clock frequency, what else ran): the same release measured in separate processes
lands at 33, 58 or 92 ms while each process's samples are tight.  So each cell (a
case at sizes) is measured in ``processes`` case processes per side, and the sides
take turns: for each round k, for each side (the order rotated every round: A B C,
B C A, ...), one process.  The cells take turns too: round k measures process k of
every cell before any cell's process k + 1, so a slow spell of the host (seconds of a
slower clock that nothing inside the machine sees) lands on one process of a few cells,
where the spread between processes shows it, instead of on every process of one cell,
where it would pass for that cell's level.  Whatever one process does (raise, hang,
crash) is recorded in the cell's ``processes`` and the cell goes on; a side whose first
process is skipped (too few devices, ``compat.Unsupported``) is not run again, and one
that timed out twice is not kept waiting on further.

When a cell needs no further round each side's outcome is stored as one
schema-version-2 result (``interleaved_with`` naming the other sides); an interrupt
stores what every unfinished cell has so far before it propagates, and a resumed run
measures those cut short again.  Case processes from any sweep on this machine take
turns (``timing_lock``, per process); two sweeps into one results folder take turns
per run (``folder_lock``), so neither measures a cell the other has stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import os
import secrets
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from harness.catalogue.discovery import CaseInfo
from harness.catalogue.sizes import Budget, PlannedPoint
from harness.claim_rule import HOLDS, MIN_CLAIM_PROCESSES, ClaimVerdict, settle_claim
from harness.errors import HarnessError
from harness.host.environment import machine_identity, package_versions
from harness.measure.case_process import classify, run_process, signal_name, tail
from harness.measure.launch import Worker, WorkerGone, default_isolation
from harness.measure.load import DEFAULT_FLAG_CORES
from harness.measure.sides import Side
from harness.store.results import INTERRUPTED, REFUSED, cell_key, measured_cells, new_identity, write_result
from harness.store.schema import (
    HostFacts,
    ProcessRun,
    Result,
    RunStatus,
    SchemaError,
    ScriptIdentity,
    Settings,
    parse_host,
)
from harness.units import sizes_text, time_left

__all__ = [
    "CellRun",
    "PlannedRun",
    "ProcessRun",
    "Recorder",
    "Settings",
    "classify",
    "describe",
    "run_all",
    "signal_name",
    "tail",
    "this_side",
    "timing_lock",
]

# A loaded process is measured again this often at most (unless --max-load off), a second apart.
LOAD_ATTEMPTS = 3
LOAD_RETRY_WAIT_S = 1.0
# A side stops after this many timeouts in one cell: a hanging case would otherwise cost
# processes × timeout.
TIMEOUTS_BEFORE_GIVING_UP = 2
RESUME_MODES = ("skip", "retry-failed", "force")
# Per side: what was measured and where it was stored; (side, None, None) for a cell measured before.
CellOutcomes = list[tuple[Side, "CellRun | None", Path | None]]
# The same by (place in the plan, side label), while a plan is measured.
_Outcomes = dict[tuple[int, str], tuple["CellRun | None", Path | None]]
# From each side's processes finished ok so far, the ratio a comparison of them could detect, judged on
# metrics of the given kinds (all when empty); None: no spread to read yet.  The analysis stage provides it
# (``harness.analysis.power.detectable_in_records``).
DetectableRatio = Callable[[list[list[ProcessRun]], tuple[str, ...]], float | None]


# For two sides (A, B: their processes so far) measured until decided, the comparisons another look could still
# decide, described (empty: every one decided).  The analysis stage provides it
# (``harness.analysis.sequential.open_comparison``).
class OpenComparison(Protocol):
    def __call__(
        self,
        a_runs: list[ProcessRun],
        b_runs: list[ProcessRun],
        settings: Settings,
        *,
        name: str,
        metrics: Sequence[str],
    ) -> list[str]: ...


def load_threshold(settings: Settings) -> float:
    """Other cores busy above which a process counts as loaded."""
    return DEFAULT_FLAG_CORES if settings.max_load is None else settings.max_load


@dataclass(frozen=True)
class PlannedRun:
    case: CaseInfo
    point: PlannedPoint

    @property
    def sizes(self) -> dict[str, int]:
        return self.point.sizes


@dataclass
class _Cell:
    """A planned cell being measured: its place in the plan, and a run for each side not measured before."""

    index: int
    item: PlannedRun
    head: str  # "(i/n) case sizes", for progress lines
    runs: list[CellRun] = field(default_factory=list)

    def others(self, run: CellRun) -> list[str]:
        """The labels of the sides measured beside ``run``, as its result names them (``interleaved_with``)."""
        return [r.side.label for r in self.runs if r is not run]

    def left(self, settings: Settings) -> tuple[int, int]:
        """Processes still to measure: to the end of the planned rounds or of the look under way, and at most
        (every comparison left open to ``most_processes``), for the progress line's estimate."""
        active = [run for run in self.runs if run.finished() is None]
        if not active:
            return 0, 0
        count, most = settings.processes, settings.most_processes
        rounds = min(len(run.processes) for run in active)
        looking = settings.decide is not None and len(self.runs) > 1 and rounds >= count
        end = min((rounds // count + 1) * count, most) if looking else count
        planned = sum(max(end - len(run.processes), 0) for run in active)
        return planned, max(planned, sum(max(most - len(run.processes), 0) for run in active))

    def pairs(self) -> list[tuple[CellRun, CellRun]]:
        """The sides compared when measuring until decided, in plan order: each with the next side of its
        profile (a bisect's good, probe and bad releases; a matrix's releases step by step); sides whose
        profile is theirs alone (an A/A of one release under two labels) each with the next such side; none
        with a side whose plan says ``compare_next: false``."""
        profiles = Counter(run.side.profile for run in self.runs)
        found = []
        for index, run in enumerate(self.runs):
            if not run.side.compare_next:
                continue
            alone = profiles[run.side.profile] == 1
            following = [
                r for r in self.runs[index + 1 :]
                if (profiles[r.side.profile] == 1 if alone else r.side.profile == run.side.profile)
            ]  # fmt: skip
            if following:
                found.append((run, following[0]))
        return found


@dataclass
class CellRun:
    """One side's measurement of one cell: its case processes, in the order they ran."""

    side: Side
    planned: int
    processes: list[ProcessRun] = field(default_factory=list)
    refusal: str | None = None  # refused by the budget: no process was started
    stopped: str = ""  # why the side ran fewer processes than planned
    extent: str = ""  # with a target ratio: how many rounds it took, or that the most allowed did not reach it
    settled: str = ""  # measuring until decided: every comparison of this side was decided at a look

    @property
    def status(self) -> RunStatus:
        """ok when every process finished ok; otherwise the first status that is not."""
        if self.refusal is not None:
            return RunStatus.SKIPPED
        return next((p.status for p in self.processes if p.status is not RunStatus.OK), RunStatus.OK)

    @property
    def detail(self) -> str:
        if self.refusal is not None:
            return f"{REFUSED}: {self.refusal}"
        status, count = self.status, len(self.processes)
        notes = [note for note in (self.stopped, self.extent) if note]
        if status is RunStatus.OK:
            return "; ".join(notes)
        first = next(p for p in self.processes if p.status == status)
        same = sum(p.status == status for p in self.processes)
        if count > 1:
            notes.insert(0, f"{status} in {same} of {count} processes (first: process {first.index + 1})")
        return "\n".join(["; ".join(notes), first.detail] if notes else [first.detail]).strip()

    @property
    def duration_s(self) -> float:
        return sum(p.duration_s for p in self.processes)

    @property
    def window_unix_ns(self) -> tuple[int, int]:
        windows = [p.window_unix_ns for p in self.processes if p.window_unix_ns is not None]
        if not windows:
            now = time.time_ns()
            return now, now
        return min(start for start, _ in windows), max(end for _, end in windows)

    def claim_verdict(self, min_processes: int = MIN_CLAIM_PROCESSES) -> ClaimVerdict | None:
        """The claim over the processes that finished ok with a verdict (``settle_claim``); None without one."""
        claims = [p.claim for p in self.processes if p.status is RunStatus.OK and p.claim is not None]
        return settle_claim([claim.holds for claim in claims], min_processes=min_processes) if claims else None

    def finished(self) -> str | None:
        """Why this side needs no further process in this cell, if it does not."""
        if self.processes and self.processes[0].status is RunStatus.SKIPPED:
            return RunStatus.SKIPPED
        if self.settled:
            return self.settled
        timeouts = sum(p.status is RunStatus.TIMEOUT for p in self.processes)
        if timeouts >= TIMEOUTS_BEFORE_GIVING_UP:
            return f"stopped after {timeouts} timeouts, {self.planned - len(self.processes)} processes not run"
        return None


def pair_name(a: Side, b: Side) -> str:
    """What a comparison of two sides compares, in progress lines and results: "jax 0.4.31 → 0.4.33 · cpu"."""
    plain = a.label == Side(a.release, a.profile).label and b.label == Side(b.release, b.profile).label
    if plain and a.profile == b.profile:
        return f"jax {a.release} → {b.release} · {a.profile}"
    return f"{a.label} → {b.label}"


def _with_attempts(process: ProcessRun, attempts: int) -> ProcessRun:
    """The process with how many attempts its measurement took (where its load was read)."""
    if process.load is None:
        return process
    return dataclasses.replace(process, load=dataclasses.replace(process.load, attempts=attempts))


@contextmanager
def _exclusive(path: Path, waiting: str, progress: Callable[[str], None]) -> Iterator[float]:
    with open(path, "a+") as handle:
        started = time.monotonic()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"    {waiting} (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield time.monotonic() - started
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _runtime_dir() -> Path:
    return Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())


@contextmanager
def timing_lock(progress: Callable[[str], None]) -> Iterator[float]:
    """Hold the machine-wide measurement lock; yields the seconds spent waiting for it.

    Two case processes measuring at once would slow each other down and both report
    nonsense, so case processes from any sweep on this machine take turns.
    """
    path = _runtime_dir() / "jax-repro-harness-timing.lock"
    with _exclusive(path, "waiting for another sweep's measurement to finish", progress) as waited:
        yield waited


@contextmanager
def folder_lock(results_dir: Path, progress: Callable[[str], None]) -> Iterator[float]:
    """Hold a results folder for one run, so two sweeps into it measure each cell once."""
    digest = hashlib.sha256(str(results_dir.resolve()).encode()).hexdigest()[:16]
    path = _runtime_dir() / f"jax-repro-harness-results-{digest}.lock"
    with _exclusive(path, f"waiting for another sweep into {results_dir} to finish", progress) as waited:
        yield waited


def release_label() -> str:
    return package_versions().get("jax", "unknown")


def this_side(profile: str) -> Side:
    """The side of a run without a plan: this interpreter and environment, the JAX installed here."""
    return Side(release=release_label(), profile=profile, interpreter=sys.executable, env={})


def claim_text(run: CellRun) -> str:
    """The claim over the run's processes as the report settles it; one process's verdict as it said it."""
    verdict = run.claim_verdict()
    if verdict is None:
        return ""
    if verdict.of == 1:
        return " · claim holds" if verdict.hint else " · claim does NOT hold"
    return f" · claim {verdict.text()}"


def point_claim(run: CellRun, shown_sizes: str, min_processes: int = MIN_CLAIM_PROCESSES) -> tuple[bool | None, str]:
    """The claim's verdict at a size point (for a search): whether it holds, settled over the point's processes
    as every claim is (``settle_claim``), and the evidence; None when the run did not finish ok or the processes
    did not settle."""
    verdict = run.claim_verdict(min_processes)
    if run.status is not RunStatus.OK or verdict is None or not verdict.settled:
        why = run.status if run.status is not RunStatus.OK else verdict.text() if verdict else "no verdict"
        return None, f"{shown_sizes}: {why}"
    claims = [p.claim for p in run.processes if p.status is RunStatus.OK and p.claim is not None]
    return verdict.outcome == HOLDS, f"{shown_sizes}: {claims[-1].evidence}"


def describe(run: CellRun | None, previous: str = "") -> str:
    """A cell's outcome on one side, for the progress line; None: it was measured before."""
    if run is None:
        return f"already measured (stored as {previous}), skipped"
    if run.refusal is not None:
        return f"skipped ({REFUSED})"
    status, count = run.status, len(run.processes)
    shown: str = status
    if count > 1 and status is not RunStatus.OK:
        shown = f"{status} in {sum(p.status is status for p in run.processes)} of {count} processes"
    elif count > 1:
        shown = f"{RunStatus.OK} in {count} processes"
    return f"{shown}{claim_text(run)} · {run.duration_s:.1f} s"


def _load_text(process: ProcessRun) -> str:
    load = process.load
    if load is None or not load.loaded or load.other_cpu_cores is None:
        return ""
    return f" · loaded: {load.other_cpu_cores:.2f} other cores busy"


@dataclass
class Recorder:
    """Measures cells on its sides, a worker per side, and stores one result per side and cell."""

    results_dir: Path
    sides: list[Side]
    settings: Settings
    seed: int
    budget: Budget
    progress: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr, flush=True))
    # Cells measured on other machines do not count as measured here.
    machine: str = field(default_factory=lambda: machine_identity()["id"])
    # Stored with every result: comparisons tell sides that shared this run's level from separate runs.
    invocation: str = field(default_factory=lambda: secrets.token_hex(8))
    # With ``settings.target_ratio``: reads the ratio the sides' finished processes could detect.
    detectable: DetectableRatio | None = None
    # With ``settings.decide``: reads which comparisons between the sides are still open.
    undecided: OpenComparison | None = None

    def __post_init__(self) -> None:
        if not self.settings.isolation:
            self.settings = dataclasses.replace(self.settings, isolation=default_isolation())
        self._workers: dict[str, Worker] = {}
        self._hosts: dict[str, HostFacts] = {}  # per side: the host facts its worker took
        self._started = 0
        self._scratch = Path(tempfile.mkdtemp(prefix="harness-workers-"))

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()
        for leftover in self._scratch.glob("*"):
            leftover.unlink(missing_ok=True)
        self._scratch.rmdir()

    def _alive(self, side: Side) -> bool:
        worker = self._workers.get(side.label)
        return worker is not None and not worker.closed and worker.proc.poll() is None

    def worker(self, side: Side) -> Worker:
        """The side's worker, ready; the first call starts every side's worker at once, a dead one is restarted."""
        if not self._alive(side):
            starting = [s for s in self.sides if s.label == side.label or s.label not in self._workers]
            started = {}
            for each in starting:
                previous = self._workers.pop(each.label, None)
                if previous is not None:
                    previous.close()
                log = self._scratch / f"worker-{self._started}.log"
                self._started += 1
                try:
                    started[each.label] = Worker(each.interpreter, each.environment(), self.settings.isolation, log)
                except OSError as exc:
                    raise HarnessError(f"the worker of side {each.label!r} did not start: {exc}") from None
                self._workers[each.label] = started[each.label]
            for label, worker in started.items():
                try:
                    worker.ready()
                except WorkerGone as exc:
                    raise HarnessError(f"the worker of side {label!r} did not start: {exc}") from None
                try:
                    self._hosts[label] = parse_host(worker.facts.get("host") or {})
                except SchemaError as exc:
                    raise HarnessError(f"the worker of side {label!r} sent unreadable host facts: {exc}") from None
        return self._workers[side.label]

    def stored_status(self, item: PlannedRun, side: Side) -> str | None:
        """Status of the newest stored result of this cell on ``side``, if it was measured before."""
        cells = measured_cells(self.results_dir, item.case.name, side.release, side.profile, self.machine)
        return cells.get(cell_key(item.case.name, side.release, side.profile, side.cell_sizes(item.sizes)))

    def run(self, item: PlannedRun, *, resume: str = "force") -> CellOutcomes:
        """Measure and store one cell on every side (``run_plan`` of a plan of one)."""
        return self.run_plan([item], resume=resume)

    def run_plan(self, plan: list[PlannedRun], *, resume: str = "force") -> CellOutcomes:
        """Measure the plan's cells in rounds and store each as it ends; with ``resume`` other than "force",
        skip cells measured before (but not those an interrupt cut short).

        Per planned cell and side, in plan order: (side, what was measured, where it was stored);
        (side, None, None) for a side whose cell was measured before.
        """
        total = len(plan)
        outcomes: _Outcomes = {}
        with folder_lock(self.results_dir, self.progress):
            stored: dict[tuple[int, str], str | None] = {}
            if resume != "force":  # read once, under the lock: what the resume line counts is what is skipped
                stored = {(i, s.label): self.stored_status(item, s) for i, item in enumerate(plan) for s in self.sides}
                self._say_resuming(total, stored, resume)
            cells = []
            for index, item in enumerate(plan):
                shown = f" {sizes_text(item.sizes)}" if item.sizes else ""  # a plain script has no sizes
                head = f"({index + 1}/{total}) {item.case.name}{shown}"
                cell = _Cell(index, item, head)
                for side in self.sides:
                    if item.point.refusal:
                        run = CellRun(side, self.settings.processes, refusal=item.point.refusal)
                        outcomes[index, side.label] = (run, self._store(item, run, []))
                        self.progress(f"[{side.label}] {head} → {describe(run)}")
                        continue
                    previous = stored.get((index, side.label))
                    measured = previous is not None and previous != INTERRUPTED
                    if previous is not None and measured and (resume == "skip" or previous == RunStatus.OK):
                        outcomes[index, side.label] = (None, None)
                        self.progress(f"[{side.label}] {head} → {describe(None, previous)}")
                        continue
                    cell.runs.append(CellRun(side, self.settings.processes))
                if cell.runs:
                    cells.append(cell)
            self._measure_in_rounds(cells, outcomes)
        return [(side, *outcomes[index, side.label]) for index in range(total) for side in self.sides]

    def _say_resuming(self, total: int, stored: dict[tuple[int, str], str | None], resume: str) -> None:
        for side in self.sides:
            statuses = [status for (_, label), status in stored.items() if label == side.label]
            before, cut = len(statuses) - statuses.count(None), statuses.count(INTERRUPTED)
            if before:
                what = "measured" if resume == "skip" else "measured ok"
                again = f", {cut} of them cut short by an interrupt (measured again in full)" if cut else ""
                self.progress(
                    f"[{side.label}] resuming: {before} of {total} cells already in {self.results_dir}{again}; "
                    f"those {what} are skipped (--force re-measures, --retry-failed re-runs the ones that "
                    "did not finish ok)"
                )

    def _measure_in_rounds(self, cells: list[_Cell], outcomes: _Outcomes) -> None:
        """Round k measures process k of every cell still going, one per side (the order rotated each round),
        before any cell's process k + 1; a cell is stored as soon as it needs no further round."""
        if not cells:
            return
        self.progress(self._plan_line(cells))
        going, round_index = list(cells), 0
        started, measured = time.monotonic(), 0
        first_done = started
        try:
            while going:
                for cell in list(going):
                    active = [run for run in cell.runs if run.finished() is None]
                    shift = round_index % max(len(active), 1)
                    for run in active[shift:] + active[:shift]:
                        lefts = [c.left(self.settings) for c in going]
                        planned, most = sum(p for p, _ in lefts), sum(m for _, m in lefts)
                        now = time.monotonic()
                        # Paced from the end of the first process: the first also waits for the sides' workers.
                        per_unit = (now - first_done) / (measured - 1) if measured > 1 else 0.0
                        pace = time_left(measured - 1, planned, now - started, per_unit)
                        beyond = f", at most {most - 1}" if most > planned else ""
                        line = f"({max(planned - 1, 0)} more planned{beyond}{' · ' + pace if pace else ''})"
                        self._measure_process(cell.item, run, round_index, cell.head, line)
                        measured += 1
                        if measured == 1:
                            first_done = time.monotonic()
                    active = [run for run in cell.runs if run.finished() is None]
                    if not active or not self._another_round(cell, active, round_index + 1):
                        going.remove(cell)
                        self._finish(cell, outcomes)
                round_index += 1
        except BaseException:
            # Interrupted, or the harness cannot go on: what each cell measured so far is kept.
            for cell in going:
                for run in cell.runs:
                    if run.processes:
                        done = len(run.processes)
                        of = f" of {run.planned}" if done < run.planned else ", before the target was judged"
                        if not run.settled:  # a side settled at a look was measured in full
                            run.stopped = f"interrupted after {done}{of} processes"
                        with contextlib.suppress(HarnessError):  # the disk is full: the error propagating says why
                            self._store(cell.item, run, cell.others(run))
            raise

    def _plan_line(self, cells: list[_Cell]) -> str:
        count, sides = self.settings.processes, max(len(cell.runs) for cell in cells)
        what = f"{count} process{'es' if count > 1 else ''}"
        what += f" on each of {sides} sides, interleaved" if sides > 1 else " each" if len(cells) > 1 else ""
        if self.settings.target_ratio is not None:
            what += f" (up to {self.settings.most_processes} until ×{self.settings.target_ratio:.3g} is detectable)"
        elif self.settings.decide is not None and sides > 1:
            what += f" (up to {self.settings.most_processes} until decided)"
        if len(cells) > 1:
            return f"{len(cells)} cells · {what}, in rounds: process k of every cell before process k+1 of any …"
        who = f"[{cells[0].runs[0].side.label}] " if sides == 1 else ""
        return f"{who}{cells[0].head} · {what} …"

    def _finish(self, cell: _Cell, outcomes: _Outcomes) -> None:
        for run in cell.runs:
            reason = run.finished()
            if reason and reason != RunStatus.SKIPPED and len(run.processes) < run.planned:
                run.stopped = reason
            outcomes[cell.index, run.side.label] = (run, self._store(cell.item, run, cell.others(run)))
            self.progress(f"[{run.side.label}] {cell.head} → {describe(run)}, stored")

    def _another_round(self, cell: _Cell, runs: list[CellRun], done: int) -> bool:
        """The planned rounds; then, with a target ratio, more while the processes so far could not see it;
        or, measuring until decided, more while a comparison of the sides is open.

        The ratio is read from the spread within each side (``detectable``), never from how far the
        sides are apart: stopping when a difference showed would make every difference look real.
        Measuring until decided does stop on the difference, which is why its test's level is spent over
        the looks (``harness.analysis.spending``)."""
        settings = self.settings
        if done < settings.processes:
            return True
        if settings.decide is not None and self.undecided is not None and len(cell.runs) > 1:
            return self._undecided(cell, done)
        head = cell.head
        if settings.target_ratio is None or self.detectable is None:
            return False
        kinds = settings.target_kinds or ()
        ratio = self.detectable([[p for p in run.processes if p.status is RunStatus.OK] for run in runs], kinds)
        target = f"×{settings.target_ratio:.3g}" + (f" on {'/'.join(kinds)} times" if kinds else "")
        met = ratio is not None and ratio <= settings.target_ratio
        if ratio is None:
            extent = f"target {target} not judged: no side has 2 processes finished ok with a metric it judges"
        elif met:
            extent = f"{done} processes a side can detect ×{ratio:.3f}, within the target {target}"
        elif done >= settings.most_processes:
            extent = f"{done} processes a side (the most allowed) can detect only ×{ratio:.3f}, not the target {target}"
        else:
            self.progress(
                f"{head} · {done} processes a side can detect ×{ratio:.3f}, not the target {target}: "
                f"round {done + 1} (at most {settings.most_processes})"
            )
            return True
        if done > settings.processes or not met:  # a target the planned rounds met needs no line of its own
            self.progress(f"{head} · {extent}")
        for run in runs:
            run.extent = extent
        return False

    def _undecided(self, cell: _Cell, done: int) -> bool:
        """Whether to add a round: up to the next look, then another look while a comparison is open, within
        ``max_processes`` and the time budget; the cell's result says how far it went and why it stopped."""
        settings, most = self.settings, self.settings.most_processes
        seconds = sum(run.duration_s for run in cell.runs)  # its own processes: cells take turns in rounds
        spent = settings.decide_budget_s is not None and seconds >= settings.decide_budget_s
        if done % settings.processes and done < most and not spent:
            return True  # between looks: the look's rounds are measured whole
        assert self.undecided is not None
        # A pair with a side settled at an earlier look keeps what that look decided.
        pairs = [(a, b) for a, b in cell.pairs() if not (a.settled or b.settled)]
        open_by_pair = [
            self.undecided(
                a.processes, b.processes, settings, name=pair_name(a.side, b.side), metrics=a.side.compare_metrics
            )
            for a, b in pairs
        ]
        still = [line for lines in open_by_pair for line in lines]
        look = f"look {-(-done // settings.processes)} of {-(-most // settings.processes)}"
        going = [run for run in cell.runs if not run.settled]
        decided = f"decided at {done} processes a side ({look}, {seconds:.0f} s)"
        if not still:
            extent = decided
        elif done >= most or spent:
            why = "the most allowed" if done >= most else f"the time budget of {settings.decide_budget_s:g} s spent"
            shown = "; ".join(still[:3]) + (f"; {len(still) - 3} more" if len(still) > 3 else "")
            extent = f"undecided after {done} processes a side ({why}, {look}, {seconds:.0f} s): {shown}"
        else:
            # Only the sides of open comparisons go on: a decided pair's sides would measure for nothing.
            open_runs = [run for (a, b), lines in zip(pairs, open_by_pair, strict=True) if lines for run in (a, b)]
            for run in going:
                if all(run is not other for other in open_runs):
                    run.settled = run.extent = decided
            left = sum(not run.settled for run in cell.runs)
            sides = f" for {left} of {len(cell.runs)} sides" if left < len(cell.runs) else ""
            self.progress(
                f"{cell.head} · {look}: {len(still)} comparison(s) open ({still[0]}): "
                f"{settings.processes} more rounds{sides} (at most {most} a side)"
            )
            return True
        if done > settings.processes or still:
            self.progress(f"{cell.head} · {extent}")
        for run in going:
            run.extent = extent
        return False

    def _measure_process(self, item: PlannedRun, run: CellRun, round_index: int, head: str, left: str) -> None:
        settings = self.settings
        affinity = None if settings.affinity is None else list(settings.affinity)
        planned = settings.processes
        of = f"/{planned}" if round_index < planned else f" (of at most {settings.most_processes})"
        line = f"[{run.side.label}] {head} · process {round_index + 1}{of}"
        attempts, kept = 0, None  # kept: the last attempt that finished ok, loaded
        # A side still loaded on its last attempt meets a steady load: measuring again would only add time, and
        # its sides share the load, taking turns in rounds.
        steady = any(p.load is not None and p.load.loaded and p.load.attempts >= LOAD_ATTEMPTS for p in run.processes)
        while True:
            attempts += 1
            try:
                with timing_lock(self.progress):
                    process = run_process(
                        self.worker(run.side),
                        round_index,
                        item.case.path,
                        run.side.cell_sizes(item.sizes),
                        settings.for_child(),
                        timeout_s=settings.timeout_s,
                        affinity=affinity,
                        load_threshold=load_threshold(settings),
                        script_sha256=None if item.case.script is None else item.case.script.sha256,
                        script_args=() if item.case.script is None else item.case.script.args,
                    )
            except BaseException:
                if kept is not None:  # interrupted while measuring again: the loaded measurement is kept
                    run.processes.append(_with_attempts(kept, attempts))
                raise
            if kept is not None and process.status is not RunStatus.OK:
                process = kept  # measuring again failed, hung or crashed: the loaded measurement stands
                break
            # Only a measurement is measured again: a failure, timeout or crash under load stays what it was.
            loaded = process.load is not None and process.load.loaded and process.status is RunStatus.OK
            if not loaded or settings.max_load is None or attempts >= LOAD_ATTEMPTS or steady:
                break
            kept = process
            self.progress(
                f"{line} → {process.status}{_load_text(process)} (over --max-load {settings.max_load:g}); "
                f"measuring again in {LOAD_RETRY_WAIT_S:g} s (attempt {attempts + 1} of {LOAD_ATTEMPTS})"
            )
            time.sleep(LOAD_RETRY_WAIT_S)
        process = _with_attempts(process, attempts)
        run.processes.append(process)
        self.progress(f"{line} → {process.status} in {process.duration_s:.1f} s{_load_text(process)} {left}")
        if process.status not in (RunStatus.OK, RunStatus.SKIPPED) and process.detail:
            self.progress("    " + process.detail.splitlines()[-1][:200])

    def _store(self, item: PlannedRun, run: CellRun, others: list[str]) -> Path:
        if run.side.label not in self._hosts:  # a cell refused before any process ran on this side
            self.worker(run.side)
        sizes = run.side.cell_sizes(item.sizes)
        script = item.case.script
        identity = new_identity()
        result = Result(
            id=identity.id,
            created_at=identity.created_at,
            case=item.case.name,
            release=run.side.release,
            profile=run.side.profile,
            sizes=sizes,
            size_source=item.point.source if sizes == item.sizes else "explicit",
            seed=self.seed,
            cost_estimate=item.case.space.cost_of(sizes),
            budget=self.budget.as_dict(),
            status=run.status,
            detail=run.detail,
            duration_s=round(run.duration_s, 3),
            window_unix_ns=run.window_unix_ns,
            settings=self.settings,
            claim_statement=item.case.claim,
            source=item.case.source,
            host=self._hosts[run.side.label],
            interleaved_with=tuple(others),
            invocation=self.invocation,
            processes=tuple(run.processes),
            script=None if script is None else ScriptIdentity(script.file, script.sha256, script.args),
        )
        try:
            return write_result(self.results_dir, result)
        except OSError as exc:
            raise HarnessError(
                f"cannot store results in {self.results_dir}: {exc.strerror or exc}; results stored so far are kept"
            ) from None


def run_all(plan: list[PlannedRun], recorder: Recorder, *, resume: str = "skip") -> CellOutcomes:
    """Run the plan on every side; with ``resume`` "skip" (or "retry-failed") measured cells are passed over.

    Returns one (side, what was measured, stored path) per planned cell and side; a
    passed-over cell has neither a run nor a path.
    """
    return recorder.run_plan(plan, resume=resume)
