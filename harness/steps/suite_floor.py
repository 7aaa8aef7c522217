"""What a watch of a pytest-benchmark suite costs, said before it is paid, and how far it goes.

A process of a suite costs its import, its collection and its benchmarks' own rounds: the wrapper
that runs pytest stamps them (``suite_phases`` in the process's record: the time in import
statements until the suite is collected, the rest of the collection, every round summed); the rest
of the process is Python's start, pytest-benchmark's calibration and warm-up, and the end.

After the first process of each side the watch says that, the processes a verdict at the rule's
factor needs a side, and the time that makes (``Floor``), and once more after the second where that
cost a fifth less (the first filled the compilation cache): before any spread between processes is
known, the fewest the rank test passes at the level with.  After the first round, each benchmark's
spread of process medians (rounds within one process are not independent: the process is the
unit) gives the processes a verdict needs (``processes_needed``): a candidate's confirmation takes
them at its first look, said with the time they make (``sized``); a benchmark that needs more than
``--max-processes``, or than ``--max-time`` leaves, is not measured on in vain: its smallest change
still detectable is said instead (``out_of_reach``).  Stopping there only leaves a benchmark
undecided, never calls a change, so it keeps the A/A at its level.

``--max-time`` holds for the whole path (``SuiteCap``): the first round takes only what leaves a
confirmation the processes a verdict needs, each confirmation only what the cap leaves when it
starts, and where that cannot pay for a verdict nothing more is measured: each candidate and
benchmark left open is undecided, saying why.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.metrics import process_samples
from harness.analysis.power import detectable_ratio, pooled_spreads
from harness.analysis.significance import Thresholds
from harness.measure.benchmark_json import PREFIX as BENCH_PREFIX
from harness.metric_names import Criterion, MetricKey
from harness.steps.confirm import ConfirmPairs, PairConfirmer
from harness.steps.probes import Pair, Probe, ReleaseProber
from harness.steps.triage import TriageOutcome
from harness.steps.watch import UNDECIDED, Finding
from harness.store.schema import ProcessRun, RunStatus
from harness.units import format_ns, format_seconds

PARTS = ("import", "collection", "benchmarks")
MOST = 200  # processes a side looked at for a verdict's need: beyond, none is in reach
STOPPED = "measuring stopped at --max-time"
RESIZED = 0.2  # the share by which later processes are cheaper before the floor is said again


def processes_needed(spread: float, thresholds: Thresholds) -> int | None:
    """The fewest processes a side whose comparison flags a change of the rule's factor reliably
    (``detectable_ratio``) at a spread of log process medians ``spread``; None past ``MOST``."""
    for k in range(2, MOST + 1):
        if detectable_ratio(spread, k, thresholds) <= thresholds.factor:
            return k
    return None


def fewest(thresholds: Thresholds) -> int:
    """The fewest processes a side any verdict needs: the rank test's at the level."""
    return processes_needed(0.0, thresholds) or MOST


@dataclass(frozen=True)
class ProcessCost:
    """What a process of the suite took, in seconds: in all, and each of ``PARTS`` it said."""

    wall_s: float
    parts: Mapping[str, float]

    @classmethod
    def of(cls, processes: Iterable[ProcessRun]) -> ProcessCost | None:
        """The mean over ``processes`` that finished ok with a suite's record; None without one."""
        ok = [p.script for p in processes if p.status is RunStatus.OK and p.script]
        if not (records := [r for r in ok if isinstance(r.get("wall_ns"), int)]):
            return None
        phases = [r.get("suite_phases") or {} for r in records]
        parts = {
            part: statistics.fmean(float(each[f"{part}_ns"]) for each in phases) / 1e9
            for part in PARTS
            if all(isinstance(each.get(f"{part}_ns"), int | float) for each in phases)
        }
        return cls(statistics.fmean(r["wall_ns"] for r in records) / 1e9, parts)

    def affords(self, seconds: float) -> int:
        """Processes a side ``seconds`` pay for, both sides."""
        return int(seconds // (2 * self.wall_s)) if self.wall_s > 0 else MOST

    def words(self) -> str:
        parts = ", ".join(f"{part} {format_ns(s * 1e9)}" for part, s in self.parts.items())
        return f"a process costs {format_ns(self.wall_s * 1e9)}" + (f": {parts}" if parts else "")


@dataclass(frozen=True)
class Floor:
    """The least a verdict costs (see above), and whether ``cap_s`` (what ``--max-time`` leaves)
    affords it."""

    cost: ProcessCost
    thresholds: Thresholds
    cap_s: float | None = None
    planned: int | None = None  # the first round's processes a side, as asked (``--processes``)

    @property
    def needed(self) -> int:
        return fewest(self.thresholds)

    @property
    def seconds(self) -> float:
        return 2 * self.needed * self.cost.wall_s

    @property
    def verdict(self) -> str:
        """``a verdict at ×1.05 needs at least 7 a side: about 15 min 52 s``."""
        needs = f"needs at least {self.needed} a side: about {format_seconds(self.seconds)}"
        return f"a verdict at ×{self.thresholds.factor:g} {needs}"

    def most(self, paid: int = 1) -> int | None:
        """The most processes a side the first round may take, the ``paid`` each side has paid
        included: what leaves a confirmation its ``needed`` a side within the cap; ``paid`` where
        the cap cannot pay even those (measuring stops there); None without a cap."""
        if self.cap_s is None:
            return None
        return paid + max(0, self.cost.affords(self.cap_s) - self.needed)

    def stops(self) -> str:
        """Why no verdict is in reach within ``cap_s``; "" where one is (or without a cap)."""
        if self.cap_s is None or self.cost.affords(self.cap_s) >= self.needed:
            return ""
        return f"{self.verdict}; the cap leaves {format_seconds(self.cap_s)}"

    @property
    def first_round(self) -> int | None:
        """The first round's processes a side: as planned, as the cap bounds it."""
        return None if self.planned is None else min(self.planned, self.most() or self.planned)

    def in_all(self) -> float | None:
        """The whole measuring where a benchmark moves: the first round, a confirmation's fewest,
        and where import is most of a process the one a side that shows where it goes, both
        sides; None without a planned first round."""
        if (first := self.first_round) is None:
            return None
        imports = self.cost.parts.get("import", 0.0) > self.cost.wall_s / 2
        return 2 * (first + self.needed + imports) * self.cost.wall_s

    def line(self) -> str:
        said = f"{self.cost.words()}; {self.verdict}"
        if (whole := self.in_all()) is not None and not self.stops():
            said += (
                f"; with the first round's {self.first_round} a side, at least "
                f"{format_seconds(whole)} in all where a benchmark moves"
            )
        if self.stops():
            assert self.cap_s is not None
            said += (
                f"; --max-time leaves {format_seconds(self.cap_s)}, "
                f"{self.cost.affords(self.cap_s)} more a side: too few for a verdict at level "
                f"{self.thresholds.alpha:g}: measuring stops here"
            )
        return said

    def to_json(self) -> dict[str, Any]:
        return {
            "process_s": round(self.cost.wall_s, 3),
            **{f"{part}_s": round(s, 3) for part, s in self.cost.parts.items()},
            "processes_needed": self.needed,
            "seconds_needed": self.seconds,
            "seconds_in_all": self.in_all(),
            "max_time_s": None if self.cap_s is None else round(self.cap_s, 1),
        }


def floor(
    first: Mapping[str, list[ProcessRun]],
    thresholds: Thresholds,
    cap_s: float | None,
    planned: int | None = None,
) -> Floor | None:
    """The floor from each side's first process, or from those after it once there are (None
    where none finished ok with a record)."""
    later = [p for processes in first.values() for p in processes[1:]]
    cost = ProcessCost.of(later or (p for processes in first.values() for p in processes[:1]))
    return None if cost is None else Floor(cost, thresholds, cap_s, planned)


@dataclass(eq=False)
class SuiteCap:
    """A suite's floor, said once after its first process of each side (``Floor``), and the
    watch's ``--max-time`` (``deadline``, on ``clock``) kept on the whole path (see above)."""

    thresholds: Thresholds
    deadline: float | None
    say: Callable[[str], None]
    clock: Callable[[], float] = time.monotonic
    planned: int | None = None  # the first round's processes a side (``Floor.in_all``)
    said: Floor | None = field(default=None, init=False)
    stopped: str = field(default="", init=False)  # why measuring stopped at the cap, once it did
    # the first round's processes so far
    first: Mapping[str, list[ProcessRun]] = field(default_factory=dict, init=False)
    first_at: float = field(default=0.0, init=False)  # the clock when its first round ended
    # a process's share of the harness's time per round, once two ended
    pace_s: float = field(default=0.0, init=False)

    def left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - self.clock())

    def __call__(self, first: dict[str, list[ProcessRun]]) -> int | None:
        """After each round of the first: the floor said after the first process of each side, and
        said again once after the second where it cost less by more than ``RESIZED`` (the first
        filled the compilation cache, or read the suite from a cold disk: a floor sized on it
        overstates the run); the most processes a side the cap leaves the first round."""
        paid = min((len(processes) for processes in first.values()), default=0)
        self.first = first
        if paid == 1:
            self.first_at = self.clock()
        elif paid > 1:
            self.pace_s = (self.clock() - self.first_at) / ((paid - 1) * len(first))
        if (found := floor(first, self.thresholds, self.left(), self.planned)) is None or paid > 2:
            return None if found is None else found.most(paid)
        if self.said is None:
            self.said = found
            self.say(found.line())
        elif paid == 2 and found.cost.wall_s < (1 - RESIZED) * self.said.cost.wall_s:
            before = format_seconds(self.said.cost.wall_s)
            self.said = found
            again = f"sized again on the second process of each side: the first took {before}"
            self.say(f"{found.line()} ({again})")
        return found.most(paid)

    @property
    def spreads(self) -> dict[MetricKey, float]:
        """Per benchmark, the spread of log process medians within each side of the first round."""
        ok = [[p for p in ps if p.status is RunStatus.OK] for ps in self.first.values()]
        return pooled_spreads(process_samples(processes) for processes in ok)

    def paced(self) -> Floor | None:
        """The floor said, a process costing what the harness spent a process in the first round
        where that was more (its start, storing and the wait between processes are outside the
        process's own clock: an uncached optimistix watch ran 32 s past its cap)."""
        if self.said is None or self.pace_s <= self.said.cost.wall_s:
            return self.said
        cost = dataclasses.replace(self.said.cost, wall_s=self.pace_s)
        return dataclasses.replace(self.said, cost=cost)

    def stop(self) -> str:
        """Why no verdict is in reach within what the cap leaves now ("" while one is), at the
        floor's cost a process; said once, and kept."""
        if not self.stopped and (paced := self.paced()) is not None and self.deadline is not None:
            self.stopped = dataclasses.replace(paced, cap_s=self.left()).stops()
            if self.stopped:
                self.say(f"{STOPPED}: {self.stopped}")
        return self.stopped

    def confirming(self, prober: ReleaseProber, most: int | None = None) -> ReleaseProber | None:
        """``prober`` held to what the cap leaves now: its looks, its first included, to the
        processes a side that time pays for at the floor's cost (and to ``most``), and its time
        budget to that time less a process (a round begun before the budget is spent is
        finished: at most one process past the cap); None where no verdict is in reach."""
        left = self.left()  # before ``stop`` reads it: what it affords pays for a verdict
        if self.stop():
            return None
        bounds = [bound for bound in (most, prober.max_processes) if bound is not None]
        budget = prober.time_budget
        if left is not None and (paced := self.paced()) is not None:
            bounds.append(paced.cost.affords(left))
            left -= paced.cost.wall_s
        if left is not None:
            budget = min(budget or left, left)
        held = min(bounds, default=None)
        first = prober.processes if held is None else min(prober.processes, held)
        sized = dataclasses.replace(prober.settings, processes=first)
        return dataclasses.replace(prober, settings=sized, max_processes=held, time_budget=budget)

    def held(self, confirmer: PairConfirmer, most: int | None = None) -> ConfirmPairs:
        """``confirmer`` held, when it is called, to the cap (``confirming``): where no verdict
        is in reach it measures nothing, and each release says why."""

        def confirm(pairs: Mapping[Pair, tuple[Criterion, ...]]) -> dict[Pair, tuple[Probe, Probe]]:
            if (prober := self.confirming(confirmer.prober, most)) is None:
                why = f"{STOPPED}: {self.stopped}"
                return {(a, b): (Probe(a, None, why), Probe(b, None, why)) for a, b in pairs}
            return PairConfirmer(self.sized(prober, pairs))(pairs)

        return confirm

    def sized(
        self, prober: ReleaseProber, pairs: Mapping[Pair, tuple[Criterion, ...]]
    ) -> ReleaseProber:
        """``prober``'s first look at the processes a side the moved benchmarks' spread in the first
        round needs for a verdict at the factor (``processes_needed``: processes by the spread
        between them), within its bound, and said with the time that makes; as it was where that
        is no more than its own or none is in reach."""
        moved = {c.metric for criteria in pairs.values() for c in criteria}
        spreads = self.spreads
        keys = {k for k in moved if k in spreads and k.metric_name.startswith(BENCH_PREFIX)}
        needs = [processes_needed(spreads[key], self.thresholds) for key in keys]
        need = max((n for n in needs if n is not None), default=0)
        if prober.max_processes is not None:
            need = min(need, prober.max_processes)
        if need <= prober.processes:
            return prober
        if (paced := self.paced()) is not None:
            cost = 2 * need * paced.cost.wall_s * len(pairs)
            self.say(
                f"confirming {len(keys)} benchmark(s): their spread between processes needs {need} "
                f"a side for a verdict at ×{self.thresholds.factor:g}: about {format_seconds(cost)}"
            )
        settings = dataclasses.replace(prober.settings, processes=need)
        return dataclasses.replace(prober, settings=settings)

    def unmeasured(
        self, found: TriageOutcome, still_open: Sequence[MetricKey]
    ) -> dict[MetricKey, tuple[str, float]]:
        """Where measuring stopped at the cap, each benchmark it left open (``still_open``, and
        each candidate not confirmed), with why, and the smallest change still detectable: none."""
        if not self.stopped:
            return {}
        said = f"{STOPPED}: {self.stopped}; the smallest change still detectable within it: none"
        candidates = [c.step.criterion.metric for c in found.confirmations if STOPPED in c.reason]
        keys = [*still_open, *(key for key in candidates if key is not None)]
        return {key: (said, math.inf) for key in keys}

    def at_cap(self, unmeasured: Mapping[MetricKey, object]) -> Finding | None:
        """Where measuring stopped at the cap with something left open, the finding that says so
        (in place of ``watch.blind``'s, whose advice is more processes)."""
        if not (self.stopped and unmeasured):
            return None
        said = f"{STOPPED}: {self.stopped}; what it left open was not measured again"
        return Finding(UNDECIDED, None, f"{said}, and no change of it could be confirmed within it")


def out_of_reach(
    spreads: Mapping[MetricKey, float], thresholds: Thresholds, most: int, why: str
) -> dict[MetricKey, tuple[str, float]]:
    """The metrics whose spread needs more than ``most`` processes a side for a verdict at the
    factor (``why``: what sets ``most``), each with what is said of it and the smallest change
    ``most`` a side could still see."""
    found = {}
    for key, spread in spreads.items():
        if (needed := processes_needed(spread, thresholds)) is not None and needed <= most:
            continue
        seen = detectable_ratio(spread, most, thresholds)
        need = f"{needed} processes a side" if needed else f"over {MOST} processes a side"
        smallest = f"×{seen:.3g}" if math.isfinite(seen) else "none (too few for the rank test)"
        said = (
            f"its process medians scatter by {spread:.1%}: a verdict at ×{thresholds.factor:g} "
            f"needs {need}, more than the {most} {why}; the smallest change {most} a side could "
            f"see is {smallest}, so it was not measured on in vain"
        )
        found[key] = (said, seen)
    return found


def reach(processes: Iterable[ProcessRun], most: int, left_s: float | None) -> tuple[int, str]:
    """The most processes a side measuring again may take, and what sets it: ``--max-processes``,
    or the time ``--max-time`` leaves (``left_s``) at what a process of ``processes`` cost."""
    cost = ProcessCost.of(processes)
    if left_s is None or cost is None or cost.affords(left_s) >= most:
        return most, "--max-processes allows"
    return cost.affords(left_s), f"the {format_seconds(left_s)} --max-time leaves affords"


def cap_line(max_time_s: float, thresholds: Thresholds) -> str:
    """What ``--max-time`` affords, said at the start: the longest a process may take for a
    verdict at the factor (the rank test's fewest processes a side, both sides)."""
    least, level = fewest(thresholds), f"the rank test at level {thresholds.alpha:g}"
    return (
        f"--max-time {format_seconds(max_time_s)}: a verdict at ×{thresholds.factor:g} needs at "
        f"least {least} processes a side ({level}), so a process may take at most "
        f"{max_time_s / (2 * least):.0f} s; said after the first of each side"
    )
