"""A measurement's records while it runs: a planned cell (``Cell``: which of its sides measuring
until decided compares), each side's run of it (``CellRun``: its case processes in the order they
ran, and why it stopped), and how they read in progress lines."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from harness.catalogue.discovery import CaseInfo
from harness.catalogue.sizes import PlannedPoint
from harness.claim_rule import HOLDS, ClaimVerdict, settle_claim
from harness.measure.sides import Side
from harness.store.results import REFUSED
from harness.store.schema import ProcessRun, RunStatus, Settings

# Timeouts after which a side stops in a cell: a hanging case would cost processes × timeout.
TIMEOUTS_BEFORE_GIVING_UP = 2


@dataclass(frozen=True)
class PlannedRun:
    case: CaseInfo
    point: PlannedPoint

    @property
    def sizes(self) -> dict[str, int]:
        return self.point.sizes


@dataclass
class CellRun:
    """One side's measurement of one cell: its case processes, in the order they ran."""

    side: Side
    planned: int
    processes: list[ProcessRun] = field(default_factory=list)
    refusal: str | None = None  # refused by the budget: no process was started
    stopped: str = ""  # why the side ran fewer processes than planned
    extent: str = ""  # with a target ratio: how many rounds it took, or that it was not reached
    settled: str = ""  # measuring until decided: every comparison of this side decided at a look

    @property
    def status(self) -> RunStatus:
        """ok when every process finished ok; otherwise the first status that is not."""
        if self.refusal is not None:
            return RunStatus.SKIPPED
        failed = (p.status for p in self.processes if p.status is not RunStatus.OK)
        return next(failed, RunStatus.OK)

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
            first_of = f"(first: process {first.index + 1})"
            notes.insert(0, f"{status} in {same} of {count} processes {first_of}")
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

    def claim_verdict(self) -> ClaimVerdict | None:
        """The claim settled over the processes finished ok with a verdict; None without one."""
        holds = [p.claim.holds for p in self.processes if p.status is RunStatus.OK and p.claim]
        return settle_claim(holds) if holds else None

    def finished(self) -> str | None:
        """Why this side needs no further process in this cell, if it does not."""
        if self.processes and self.processes[0].status is RunStatus.SKIPPED:
            return RunStatus.SKIPPED
        if self.settled:
            return self.settled
        timeouts = sum(p.status is RunStatus.TIMEOUT for p in self.processes)
        if timeouts >= TIMEOUTS_BEFORE_GIVING_UP:
            left = self.planned - len(self.processes)
            return f"stopped after {timeouts} timeouts, {left} processes not run"
        return None


def next_look(looks: tuple[int, ...], done: int) -> int:
    """The processes a side at the next look after ``done`` (the last look once past it)."""
    return next((point for point in looks if point > done), looks[-1])


@dataclass
class Cell:
    """A planned cell being measured: its place in the plan, a run per side still to measure."""

    index: int
    item: PlannedRun
    head: str  # "(i/n) case sizes", for progress lines
    runs: list[CellRun] = field(default_factory=list)
    capped: int | None = None  # the most processes a side a time cap leaves it (``FirstRound``)

    def others(self, run: CellRun) -> list[str]:
        """The labels of the sides measured beside ``run`` (its ``interleaved_with``)."""
        return [r.side.label for r in self.runs if r is not run]

    def left(self, settings: Settings) -> tuple[int, int]:
        """Processes still to measure, for the progress line: to the end of the planned rounds or of
        the look under way, and at most (every comparison left open to ``most_processes``)."""
        active = [run for run in self.runs if run.finished() is None]
        if not active:
            return 0, 0
        count, most = settings.processes, settings.most_processes
        rounds = min(len(run.processes) for run in active)
        looking = settings.decide is not None and len(self.runs) > 1 and rounds >= count
        end = next_look(settings.looks, rounds) if looking else count
        planned = sum(max(end - len(run.processes), 0) for run in active)
        return planned, max(planned, sum(max(most - len(run.processes), 0) for run in active))

    def pairs(self) -> list[tuple[CellRun, CellRun]]:
        """The sides compared when measuring until decided, in plan order: each with the next side
        of its profile (a bisect's good, probe and bad releases; a matrix's releases step by step);
        sides whose profile is theirs alone (an A/A of one release under two labels) each with the
        next such side; none with a side whose plan says ``compare_next: false``; a side that names
        its partner (``compare_with``: a changed default tried on a release) with that side, the
        partner first."""
        profiles = Counter(run.side.profile for run in self.runs)
        by_label = {run.side.label: run for run in self.runs}
        found = []
        for index, run in enumerate(self.runs):
            partner = by_label.get(run.side.compare_with)
            if partner is not None:
                found.append((partner, run))
            if not run.side.compare_next:
                continue
            alone = profiles[run.side.profile] == 1
            following = [
                r
                for r in self.runs[index + 1 :]
                if (profiles[r.side.profile] == 1 if alone else r.side.profile == run.side.profile)
            ]
            if following:
                found.append((run, following[0]))
        return found


def pair_name(a: Side, b: Side) -> str:
    """What two sides' comparison compares, in lines and results: "jax 0.4.31 → 0.4.33 · cpu"."""
    plain = all(side.label == Side(side.release, side.profile).label for side in (a, b))
    if plain and a.profile == b.profile:
        return f"jax {a.release} → {b.release} · {a.profile}"
    return f"{a.label} → {b.label}"


def claim_text(run: CellRun) -> str:
    """The claim over the run's processes as the report settles it (one process's as it said)."""
    verdict = run.claim_verdict()
    if verdict is None:
        return ""
    if verdict.of == 1:
        return " · claim holds" if verdict.hint else " · claim does NOT hold"
    return f" · claim {verdict.text()}"


def point_claim(run: CellRun, shown_sizes: str) -> tuple[bool | None, str]:
    """Whether the claim holds at a size point (for a search), settled as every claim is, and the
    evidence; None when the run did not finish ok or its processes did not settle."""
    verdict = run.claim_verdict()
    if run.status is not RunStatus.OK:
        return None, f"{shown_sizes}: {run.status}"
    if verdict is None or not verdict.settled:
        return None, f"{shown_sizes}: {verdict.text() if verdict else 'no verdict'}"
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
