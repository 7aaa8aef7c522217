"""Simulated runs of the whole verdict procedure, for the tests that hold it to its promised level
and for ``benchmarks/verdict_simulation.py``, which prints the table.

Nothing is re-implemented here: a run's looks are taken by the runner's own ``StopRules`` with the
analysis stage's ``open_comparison`` (spending, futility, sides that settle while their neighbours
go on), the stored pair is judged by ``compare_metric`` as a report judges it, a triage screens with
``bisection.sweep``'s rule and confirms with ``triage.confirm``, and claims settle by
``settle_claim``.  Only the processes are made up: each process of a side gets one figure (a
script's ``json.t_ms``), its level drawn from a noise model.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, cast

from harness.analysis.metrics import compare_metric, process_samples
from harness.analysis.power import open_comparison
from harness.analysis.significance import Comparison, Thresholds, Verdict
from harness.claim_rule import HOLDS, settle_claim
from harness.measure.cells import Cell, CellRun
from harness.measure.sides import Side
from harness.measure.stopping import StopRules
from harness.metric_names import MetricKey, parse_metric_name
from harness.store.schema import ProcessClaim, ProcessRun, RunStatus, Settings

METRIC = "json.t_ms"
KEY: MetricKey = parse_metric_name(METRIC)
# docs/statistics.md: this machine's hosts put processes on two levels 36 % apart
TWO_LEVELS = math.log(1.36)


@dataclass(frozen=True)
class Noise:
    """How a process's level scatters: ``kind`` lognormal, t3 (heavy tails) or two-level (a share
    ``slow`` of processes on a level 36 % higher, plus a lognormal ``spread``); ``spread``: log
    standard deviation."""

    kind: str
    spread: float
    slow: float = 0.0

    def level(self, rng: random.Random) -> float:
        if self.kind == "t3":  # Student's t with 3 degrees of freedom, scaled to unit variance
            t3 = rng.gauss(0, 1) / math.sqrt(sum(rng.gauss(0, 1) ** 2 for _ in range(3)) / 3)
            return self.spread * t3 / math.sqrt(3)
        jump = TWO_LEVELS if self.kind == "two-level" and rng.random() < self.slow else 0.0
        return rng.gauss(0, self.spread) + jump

    @property
    def name(self) -> str:
        if self.kind == "two-level":
            return f"two levels, {self.slow:.0%} slow"
        return f"{self.kind} {self.spread:.0%}"


def settings_of(processes: int, most: int | None, decide: str | None = "changes") -> Settings:
    return Settings(processes=processes, max_processes=most if decide else None, decide=decide)


def _process(index: int, value: float, holds: bool | None = None) -> ProcessRun:
    claim = None if holds is None else ProcessClaim(holds, "simulated")
    return ProcessRun(index, RunStatus.OK, figures={METRIC: value}, claim=claim)


def measure_together(
    truths: Sequence[float],
    noise: Noise,
    settings: Settings,
    rng: random.Random,
    pairs: Sequence[int] | None = None,
) -> list[list[ProcessRun]]:
    """One run of sides whose true figures are ``truths`` (in order), measured in rounds until the
    runner's own rules stop it; ``pairs``: the sides (by index) compared with their next, every
    neighbour when None."""
    sides = [
        Side(
            str(i),
            "sim",
            "python",
            compare_next=pairs is None or i in pairs,
            compare_metrics=(METRIC,),
        )
        for i in range(len(truths))
    ]
    cell = Cell(0, cast(Any, None), "sim", [CellRun(side, settings.processes) for side in sides])
    rules = StopRules(settings, lambda line: None, undecided=open_comparison)
    done = 0
    while True:
        going = [run for run in cell.runs if run.finished() is None]
        for run in going:
            index = int(run.side.release)
            run.processes.append(
                _process(len(run.processes), truths[index] * math.exp(noise.level(rng)))
            )
        done += 1
        going = [run for run in cell.runs if run.finished() is None]
        if not going or not rules.another_round(cell, going, done):
            return [run.processes for run in cell.runs]


def judged(
    a: list[ProcessRun], b: list[ProcessRun], settings: Settings, thresholds: Thresholds
) -> Comparison:
    """The stored pair as every page judges it: ``compare_metric`` on the sides' figures, one run's
    sides."""
    source = cast(Any, SimpleNamespace(settings=settings, invocation="simulated run"))
    sides = [process_samples(runs, source)[KEY] for runs in (a, b)]
    return compare_metric(*sides, replace(thresholds, resamples=20), KEY)


Outcome = Callable[[random.Random], list[Comparison]]


def pairwise(
    truths: Sequence[float], noise: Noise, settings: Settings, thresholds: Thresholds
) -> Outcome:
    """A run of ``truths`` side by side until decided; each neighbouring pair judged as stored."""

    def run(rng: random.Random) -> list[Comparison]:
        sides = measure_together(truths, noise, settings, rng)
        return [judged(a, b, settings, thresholds) for a, b in itertools.pairwise(sides)]

    return run


@dataclass(frozen=True)
class TriageRun:
    """A triage of equal releases, or of releases with one step: its first round and its
    confirmations."""

    candidates: int
    confirmed: list[Comparison]  # the stored confirmations that agreed with their candidate
    claims_confirmed: int = 0


def triage_run(
    truths: Sequence[float],
    noise: Noise,
    processes: int,
    most: int,
    thresholds: Thresholds,
    rng: random.Random,
    claim_chance: float | None = None,
) -> TriageRun:
    """``harness.steps.triage``'s procedure on simulated releases: one interleaved first round of
    ``processes`` a side judged at the screen level, then every candidate step's two releases
    measured again together until decided, confirmed when the stored confirmation shows the same
    change.  With ``claim_chance`` each process's claim holds with that chance on every release (no
    true flip), and flips are confirmed as the triage confirms them."""
    from harness.steps.triage import SCREEN_ALPHA

    screen = replace(thresholds, alpha=max(SCREEN_ALPHA, thresholds.alpha), rank_guard=False)
    fixed = settings_of(processes, None, None)
    first = measure_together(truths, noise, fixed, rng)
    steps = []
    for i in range(len(truths) - 1):
        compared = judged(first[i], first[i + 1], fixed, screen)
        if compared.verdict in (Verdict.SLOWER, Verdict.FASTER):
            steps.append((i, compared.verdict))
    confirmed = []
    if steps:
        deciding = settings_of(processes, most)
        again = measure_together(truths, noise, deciding, rng, pairs=[i for i, _ in steps])
        for i, verdict in steps:
            found = judged(again[i], again[i + 1], deciding, thresholds)
            if found.verdict == verdict:
                confirmed.append(found)
    flipped = 0
    if claim_chance is not None:
        first_claims = [settle(claim_chance, processes, rng) for _ in truths]
        for i in range(len(truths) - 1):
            if {first_claims[i], first_claims[i + 1]} == {True, False}:
                again = [settle(claim_chance, processes, rng) for _ in range(2)]
                flipped += again == first_claims[i : i + 2]
    return TriageRun(len(steps), confirmed, flipped)


def settle(chance: float, processes: int, rng: random.Random) -> bool | None:
    """A release's claim over ``processes`` processes, each holding with ``chance``: True, False or
    unsettled."""
    verdict = settle_claim([rng.random() < chance for _ in range(processes)])
    return None if not verdict.settled else verdict.outcome == HOLDS


@dataclass(frozen=True)
class Rates:
    runs: int
    flagged: int  # runs in which any stored comparison said slower or faster
    ratios: tuple[float, ...]  # the ratio shown for each flagged comparison in the true direction

    @property
    def rate(self) -> float:
        return self.flagged / self.runs

    def mean_ratio(self) -> float:
        return statistics.fmean(self.ratios) if self.ratios else math.nan


def rates(outcome: Outcome, runs: int, seed: int, slower: bool = True) -> Rates:
    rng = random.Random(seed)
    flagged = 0
    ratios: list[float] = []
    for _ in range(runs):
        found = outcome(rng)
        changed = [c for c in found if c.verdict in (Verdict.SLOWER, Verdict.FASTER)]
        flagged += bool(changed)
        ratios += [c.cost.ratio for c in changed if (c.verdict == Verdict.SLOWER) == slower]
    return Rates(runs, flagged, tuple(ratios))


def binomial_upper(rate: float, runs: int, z: float = 3.09) -> float:
    """An upper bound on the false-alarm count a procedure of level ``rate`` may show in ``runs``
    runs (normal approximation at z, plus one)."""
    mean = rate * runs
    return mean + z * math.sqrt(mean * (1 - rate)) + 1
