"""Measure until decided: a group-sequential design over rounds of processes measured together.

Sides measured in one run are looked at after their planned ``processes`` rounds, then at twice as
many (5, 10, 20; ``schema.look_points``) while a comparison between them is still *open*, up to
``max_processes``.  The level is spent over the looks (Lan and DeMets' alpha spending, α·t⁴), so
whichever look a run stops at, the chance that any look flags a change where there is none stays at
most α; a stored pair is judged on the processes both sides had at the look that decided it
(``judged_on``).  docs/statistics.md, "Measuring until decided", says it with its numbers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from harness.analysis.significance import Thresholds
from harness.store.schema import Settings, look_number, look_points

CHANGES = "changes"  # more rounds while a ratio is past the factor but not yet significant
ALL = "all"  # more rounds while any comparison is undecided
MODES = (CHANGES, ALL)


# The spending function's power: α·t^ρ spends little at the early looks (a change decided there must
# be clear) and keeps most of the level for the last.  Chosen by simulation
# (benchmarks/verdict_simulation.py): with looks at 5, 10 and 20 processes a side, 4 leaves 94 % of
# α for the last look, where a fixed 20 processes would test; Pocock's even split (the design
# before) found a true ×1.10 at 10 % spread in 21 % of runs, this one in about a third.
SPENDING_POWER = 4


def spent(alpha: float, fraction: float) -> float:
    """The level spent at ``fraction`` of the most processes (power spending, α·t^ρ)."""
    return alpha * min(max(fraction, 0.0), 1.0) ** SPENDING_POWER


@dataclass(frozen=True)
class Design:
    first: int  # processes a side at the first look (the planned ones)
    most: int  # processes a side at the last look
    looks: tuple[int, ...] = ()  # where they are, if not on doubling from ``first``

    @property
    def points(self) -> tuple[int, ...]:
        return self.looks or look_points(self.first, self.most)

    def nominal_alpha(self, alpha: float, processes: int) -> float:
        """The level the test takes at the look ``processes`` reached, of ``alpha`` spent."""
        look = look_number(self.points, processes)
        share = lambda k: 0.0 if k == 0 else self.points[k - 1] / self.most
        return spent(alpha, share(look)) - spent(alpha, share(look - 1))


def design_of(settings: Settings) -> Design | None:
    """The sequential design a run's settings record; None for a fixed number of processes."""
    return None if settings.decide is None else Design(settings.processes, settings.most_processes)


def at_level(
    thresholds: Thresholds, settings: Settings, processes: int, *, counts: bool = False
) -> Thresholds:
    """``thresholds`` at the level of the look ``processes`` reached, for a sequential run;
    ``counts``: of a presence's or an ending's counts, whose looks go on to
    ``max_count_processes`` (their own design: the level spent over all their looks)."""
    design = design_of(settings)
    if design is None:
        return thresholds
    if counts and settings.count_looks != settings.looks:
        looks = settings.count_looks
        design = Design(settings.processes, looks[-1], looks)
    return dataclasses.replace(thresholds, alpha=design.nominal_alpha(thresholds.alpha, processes))


def judged_on(settings: Settings, counts: tuple[int, int]) -> int | None:
    """How many processes of each side (the first, in the order they ran) a comparison of two sides
    measured together until decided is judged on: as many as both had, None where the run was not
    sequential.

    A side whose comparisons were all decided stops at that look while its neighbour goes on;
    judging the pair on every process of the longer side would test it at a look it never had, with
    unequal sides, where Welch's test overshoots its level (×3 at 5 against 20 processes).  The
    first processes of both sides are the ones the look that decided the pair saw; never more than
    the last look's (a side measured on for its counts, ``max_count_processes``)."""
    return None if design_of(settings) is None else min(*counts, settings.most_processes)
