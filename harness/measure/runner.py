"""Measure planned cells on one or more sides, in several case processes each; store every outcome.

One process sets a level its samples cannot reveal (memory layout, thread placement, clock): one
release measured in separate processes lands at 33, 58 or 92 ms while each process's samples are
tight. So each cell runs several processes per side, the sides taking turns in rotated order (A B
C, B C A, ...), and the cells too: round k measures process k of every cell before any process
k + 1, so a slow spell of the host lands on one process of a few cells, where the spread shows it,
not on one cell's every process, where it would pass for its level. Whatever a process does is
recorded and the cell goes on.

A cell needing no further round is stored at once, a result per side (``interleaved_with`` naming
the others); an interrupt stores what unfinished cells have, which a resumed run measures again.
Runs into one results folder take turns (``folder_lock``): neither measures what the other stored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from harness.catalogue.sizes import DEFAULT_SEED, Budget
from harness.errors import HarnessError
from harness.host.environment import machine_identity
from harness.measure import storing
from harness.measure.attempts import load_text, measure_process
from harness.measure.cells import Cell, CellRun, PlannedRun, describe
from harness.measure.child import device_skip
from harness.measure.isolation import default_isolation
from harness.measure.launch import WorkerPool
from harness.measure.locks import Progress, folder_lock, stderr_line
from harness.measure.sides import Side
from harness.measure.stopping import DetectableRatio, OpenComparison, SettledCell, StopRules
from harness.store.results import INTERRUPTED, StoredResult
from harness.store.schema import ProcessRun, RunStatus, Settings
from harness.units import sizes_text, time_left

# A stored result standing for a planned cell on a side (``measure(reuse=...)``), or None.
Reuse = Callable[[PlannedRun, Side], StoredResult | None]
# Told each side's processes (by label) after each round of a cell's first: what a process costs is
# said before the rest are paid (``harness.steps.suite_floor``); it answers the most processes a
# side the cell may take (None: as the settings say), so that a time cap is not overrun in vain.
FirstRound = Callable[[dict[str, list[ProcessRun]]], int | None]


class Measured(NamedTuple):
    """One planned cell on one side: what was measured and stored; neither for one passed over."""

    side: Side
    run: CellRun | None
    stored: StoredResult | None
    # A cell passed over: its stored status (``run --strict`` fails on a stored failure too).
    previous: str | None = None


class _Pace:
    """The progress line's count of what is left and the time it will take, paced from the end of
    the first process (the first also waits for the sides' workers)."""

    def __init__(self) -> None:
        self.started = self.first_done = time.monotonic()
        self.measured = 0

    def line(self, going: list[Cell], settings: Settings) -> str:
        lefts = [cell.left(settings) for cell in going]
        planned, most = sum(p for p, _ in lefts), sum(m for _, m in lefts)
        now = time.monotonic()
        per_unit = (now - self.first_done) / (self.measured - 1) if self.measured > 1 else 0.0
        pace = time_left(self.measured - 1, planned, now - self.started, per_unit)
        beyond = f", at most {most - 1}" if most > planned else ""
        return f"({max(planned - 1, 0)} more planned{beyond}{' · ' + pace if pace else ''})"

    def done(self) -> None:
        self.measured += 1
        if self.measured == 1:
            self.first_done = time.monotonic()


def plan_line(cells: list[Cell], settings: Settings) -> str:
    """A measurement's first line: how many cells, processes and sides, and how far it may go."""
    count, sides = settings.processes, max(len(cell.runs) for cell in cells)
    what = f"{count} process{'es' if count > 1 else ''}"
    if sides > 1:
        what += f" on each of {sides} sides, interleaved"
    elif len(cells) > 1:
        what += " each"
    if settings.target_ratio is not None:
        detectable = f"×{settings.target_ratio:.3g} is detectable"
        what += f" (up to {settings.most_processes} until {detectable})"
    elif settings.decide is not None and sides > 1:
        what += f" (up to {settings.most_processes} until decided)"
    if len(cells) > 1:
        rounds = "in rounds: process k of every cell before process k+1 of any …"
        return f"{len(cells)} cells · {what}, {rounds}"
    who = f"[{cells[0].runs[0].side.label}] " if sides == 1 else ""
    return f"{who}{cells[0].head} · {what} …"


def known_skip(item: PlannedRun, side: Side) -> str:
    """Why a process of ``side`` would skip ``item``'s case, where its environment's CPU devices say
    so before one is started; empty for a script, and where only the process can tell."""
    found = side.cpu_devices()
    if found is None:
        return ""
    needed, used = item.case.subject.device_needs(item.case.min_devices, item.case.devices_used)
    return device_skip(needed, used, found, cpu=True) or side.claim_skip(
        item.case.name, item.case.claim_devices, found
    )


@dataclass
class Recorder:
    """Measures planned cells on its sides, a worker per side; a result per side and cell."""

    results_dir: Path
    sides: list[Side]
    settings: Settings
    seed: int
    budget: Budget
    progress: Progress = stderr_line
    # Cells measured on other machines do not count as measured here.
    machine: str = field(default_factory=lambda: machine_identity()["id"])
    # With every result: comparisons tell sides that shared this run's level from separate runs.
    invocation: str = field(default_factory=lambda: secrets.token_hex(8))
    detectable: DetectableRatio | None = None  # with ``settings.target_ratio``
    undecided: OpenComparison | None = None  # with ``settings.decide``
    settled: SettledCell | None = None  # with ``settings.decide``
    # What the caller would reuse instead of measuring, asked under the folder lock: a run into the
    # same folder may have stored it between the caller's own look and this run's turn.
    reuse: Reuse | None = None
    first_round: FirstRound | None = None

    def __post_init__(self) -> None:
        if not self.settings.isolation:
            self.settings = dataclasses.replace(self.settings, isolation=default_isolation())
        self.workers = WorkerPool(self.sides, self.settings.isolation)
        self.context = storing.RunContext(
            self.results_dir, self.settings, self.seed, self.budget, self.invocation
        )
        self.rules = StopRules(
            self.settings, self.progress, self.detectable, self.undecided, self.settled
        )

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.workers.close()

    def run(self, item: PlannedRun, *, resume: str = "force") -> list[Measured]:
        """Measure and store one cell on every side (``run_plan`` of a plan of one)."""
        return self.run_plan([item], resume=resume)

    def run_plan(self, plan: list[PlannedRun], *, resume: str = "force") -> list[Measured]:
        """Measure the plan's cells in rounds, storing each as it ends; ``resume`` "skip" or
        "retry-failed" passes over cells measured before (all, or those ok), never those cut short.
        One ``Measured`` per planned cell and side, in plan order."""
        outcomes: dict[tuple[int, str], Measured] = {}
        with folder_lock(self.results_dir, self.progress):
            for case in {item.case.name: item.case for item in plan}.values():
                storing.check_results_folder(self.results_dir, case)
            cells = self._cells(plan, resume, outcomes)
            # Only a side with a cell still to measure gets a worker: one reused or passed over
            # everywhere never starts one (a process, and its import of jax, for nothing).
            measuring = {run.side.label for cell in cells for run in cell.runs}
            self.workers.sides = [side for side in self.sides if side.label in measuring]
            self._measure_in_rounds(cells, outcomes)
        return [outcomes[index, side.label] for index in range(len(plan)) for side in self.sides]

    def _cells(
        self, plan: list[PlannedRun], resume: str, outcomes: dict[tuple[int, str], Measured]
    ) -> list[Cell]:
        """The plan's cells with a run for each side still to measure; refused and passed-over ones
        go to ``outcomes``, what was stored read once under the folder lock."""
        stored: dict[tuple[int, str], str | None] = {}
        if resume != "force":
            stored = {
                (i, s.label): storing.stored_status(self.results_dir, self.machine, item, s)
                for i, item in enumerate(plan)
                for s in self.sides
            }
            self._resuming(len(plan), stored, resume)
        cells = []
        for index, item in enumerate(plan):
            shown = f" {sizes_text(item.sizes)}" if item.sizes else ""  # a script has none
            cell = Cell(index, item, f"({index + 1}/{len(plan)}) {item.case.name}{shown}")
            for side in self.sides:
                previous, key = stored.get((index, side.label)), (index, side.label)
                head, planned = f"[{side.label}] {cell.head} →", self.settings.processes
                if item.point.refusal:
                    run = CellRun(side, planned, refusal=item.point.refusal)
                    outcomes[key] = Measured(side, run, self._store(item, run, []))
                    self.progress(f"{head} {describe(run)}")
                elif self.reuse is not None and (found := self.reuse(item, side)) is not None:
                    outcomes[key] = Measured(side, None, found, str(found.result.status))
                    meanwhile = f"stored by another run meanwhile ({found.path.name})"
                    self.progress(f"{head} {meanwhile}: reused, not measured again")
                elif previous not in (None, INTERRUPTED) and (
                    resume == "skip" or previous == RunStatus.OK
                ):
                    outcomes[key] = Measured(side, None, None, previous)
                    self.progress(f"{head} {describe(None, previous)}")
                elif known := known_skip(item, side):
                    run = CellRun(side, planned, [ProcessRun(0, RunStatus.SKIPPED, known)])
                    outcomes[key] = Measured(side, run, self._store(item, run, []))
                    self.progress(f"{head} {describe(run)} (known before starting: {known})")
                else:
                    cell.runs.append(CellRun(side, planned))
            if cell.runs:
                cells.append(cell)
        return cells

    def _resuming(self, total: int, stored: dict[tuple[int, str], str | None], resume: str) -> None:
        """What a resumed run says, per side with cells measured before: how many it passes over."""
        for side in self.sides:
            statuses = [status for (_, label), status in stored.items() if label == side.label]
            before, cut = len(statuses) - statuses.count(None), statuses.count(INTERRUPTED)
            if before:
                what = "measured" if resume == "skip" else "measured ok"
                cut_short = f", {cut} of them cut short by an interrupt (measured again in full)"
                self.progress(
                    f"[{side.label}] resuming: {before} of {total} cells already in "
                    f"{self.results_dir}{cut_short if cut else ''}; those {what} are skipped "
                    "(--force re-measures, --retry-failed re-runs the ones that did not finish ok)"
                )

    def _measure_in_rounds(
        self, cells: list[Cell], outcomes: dict[tuple[int, str], Measured]
    ) -> None:
        """Round k measures process k of every cell still going, one per side (the order rotated),
        before any cell's process k + 1; a cell is stored once it needs no further round."""
        if not cells:
            return
        self.progress(plan_line(cells, self.settings))
        going, round_index, pace = list(cells), 0, _Pace()
        try:
            while going:
                for cell in list(going):
                    active = [run for run in cell.runs if run.finished() is None]
                    shift = round_index % max(len(active), 1)
                    for run in active[shift:] + active[:shift]:
                        left = pace.line(going, self.settings)
                        self._measure_process(cell, run, round_index, left)
                        pace.done()
                    if self.first_round is not None:
                        cell.capped = self.first_round(
                            {r.side.label: r.processes for r in cell.runs}
                        )
                    active = [run for run in cell.runs if run.finished() is None]
                    if not active or not self._another_round(cell, active, round_index + 1):
                        going.remove(cell)
                        self._finish(cell, outcomes)
                round_index += 1
        except BaseException:
            self._keep_unfinished(going)
            raise

    def _another_round(self, cell: Cell, active: list[CellRun], done: int) -> bool:
        """Whether ``cell`` takes one more round: as the rules say, within its time cap."""
        if cell.capped is not None and done >= cell.capped:
            for run in (run for run in active if done < run.planned):
                run.stopped = f"stopped at {done} of {run.planned} processes: the time cap"
            return False
        return self.rules.another_round(cell, active, done)

    def _keep_unfinished(self, going: list[Cell]) -> None:
        """Interrupted, or the harness cannot go on: what each cell measured so far is stored."""
        for cell in going:
            for run in cell.runs:
                if run.processes:
                    done = len(run.processes)
                    judged = ", before the target was judged"
                    of = f" of {run.planned}" if done < run.planned else judged
                    if not run.settled:  # a side settled at a look was measured in full
                        run.stopped = f"interrupted after {done}{of} processes"
                    # the disk is full: the error propagating says why
                    with contextlib.suppress(HarnessError):
                        self._store(cell.item, run, cell.others(run))

    def _measure_process(self, cell: Cell, run: CellRun, round_index: int, left: str) -> None:
        planned, most = self.settings.processes, self.settings.most_processes
        of = f"/{planned}" if round_index < planned else f" (of at most {most})"
        line = f"[{run.side.label}] {cell.head} · process {round_index + 1}{of}"
        worker = lambda: self.workers.worker(run.side)
        process = measure_process(
            worker, cell.item, run, round_index, self.settings, self.progress, line
        )
        took = f"{process.duration_s:.1f} s{load_text(process)}"
        self.progress(f"{line} → {process.status} in {took} {left}")
        if process.status not in (RunStatus.OK, RunStatus.SKIPPED) and process.detail:
            self.progress("    " + process.detail.splitlines()[-1][:200])

    def _finish(self, cell: Cell, outcomes: dict[tuple[int, str], Measured]) -> None:
        for run in cell.runs:
            reason = run.finished()
            if reason and reason != RunStatus.SKIPPED and len(run.processes) < run.planned:
                run.stopped = reason
            stored = self._store(cell.item, run, cell.others(run))
            outcomes[cell.index, run.side.label] = Measured(run.side, run, stored)
            self.progress(f"[{run.side.label}] {cell.head} → {describe(run)}, stored")

    def _store(self, item: PlannedRun, run: CellRun, others: list[str]) -> StoredResult:
        """HarnessError (one line) where the results folder cannot take ``run``'s result."""
        result = storing.result_of(self.context, item, run, others, self.workers.host(run.side))
        return storing.store(self.results_dir, result)


def measure(
    plan: list[PlannedRun],
    sides: list[Side],
    settings: Settings,
    results_dir: Path,
    *,
    resume: str = "force",
    seed: int = DEFAULT_SEED,
    budget: Budget | None = None,
    progress: Progress = stderr_line,
    detectable: DetectableRatio | None = None,
    undecided: OpenComparison | None = None,
    reuse: Reuse | None = None,
    settled: SettledCell | None = None,
    first_round: FirstRound | None = None,
) -> list[Measured]:
    """Measure ``plan`` on ``sides`` and store every outcome under ``results_dir``: one ``Measured``
    per planned cell and side, in plan order. What ``run`` does, called from any command; the rest
    are the ``Recorder``'s, typed here so that every caller's keywords are checked."""
    budget = Budget.for_this_machine() if budget is None else budget
    with Recorder(
        results_dir,
        sides,
        settings,
        seed,
        budget,
        progress,
        detectable=detectable,
        undecided=undecided,
        settled=settled,
        reuse=reuse,
        first_round=first_round,
    ) as recorder:
        return recorder.run_plan(plan, resume=resume)
