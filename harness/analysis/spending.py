"""Measure until decided: a group-sequential design over rounds of processes measured together.

A fixed number of processes and one strict test cannot tell "no change" from "not enough data
yet".  So sides measured in one run (``run --sides``: a bisect's endpoints and probes, a triage's
confirmations, a matrix of releases) are looked at after their planned ``processes`` rounds, and
while a comparison between them is still *open*, another ``processes`` rounds are added, up to
``max_processes`` a side: the looks come at ``processes``, 2·``processes``, … processes a side.

Looking again and again at data that keeps growing would turn the test's level into a much larger
false-alarm rate, were each look tested at the full level.  The design spends the level over the
looks instead (Lan and DeMets' alpha spending with the Pocock-type function α·ln(1 + (e − 1)·t),
t the share of the most processes reached): look k tests at the level spent between looks k − 1
and k.  These levels add up to α, so whichever look a run stops at, and for whatever reason, the
chance that any look flags a change where there is none stays at most α (the union bound; the
exact group-sequential bound would allow a little more at each look).  The first look gets the
largest share (0.36 of α with four looks), where clear changes are decided.

The verdict of a stored comparison uses the level of the look its processes reached
(``nominal_alpha``), so a report reads the same verdict the run stopped on.  "Unchanged" (the
interval inside the no-change band) is judged at every look with the same 99 % interval; over K
looks the chance of calling a change of the factor's size unchanged is at most K × 0.5 %.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from harness.analysis.significance import Thresholds
from harness.store.schema import Settings

CHANGES = "changes"  # more rounds while a ratio is past the factor but not yet significant
ALL = "all"  # more rounds while any comparison is undecided
MODES = (CHANGES, ALL)


def spent(alpha: float, fraction: float) -> float:
    """The level spent by the time ``fraction`` of the most processes is reached (Pocock-type spending)."""
    return alpha * math.log(1 + (math.e - 1) * min(max(fraction, 0.0), 1.0))


@dataclass(frozen=True)
class Design:
    first: int  # processes a side at the first look (the planned ones)
    most: int  # processes a side at the last look

    @property
    def looks(self) -> int:
        return max(1, math.ceil(self.most / self.first))

    def look_of(self, processes: int) -> int:
        """The look (1 to ``looks``) that ``processes`` a side reached: the last one begun."""
        return min(self.looks, max(1, math.ceil(processes / self.first)))

    def at_look(self, processes: int) -> bool:
        """Whether ``processes`` a side is where a look is taken."""
        return processes >= self.most or (processes >= self.first and processes % self.first == 0)

    def nominal_alpha(self, alpha: float, processes: int) -> float:
        """The level the test takes at the look ``processes`` reached, of ``alpha`` spent over the looks."""
        look = self.look_of(processes)
        share = lambda k: 1.0 if k >= self.looks else k * self.first / self.most
        return spent(alpha, share(look)) - spent(alpha, share(look - 1))


def design_of(settings: Settings) -> Design | None:
    """The sequential design a run's settings record; None for a fixed number of processes."""
    if settings.decide is None:
        return None
    return Design(settings.processes, max(settings.processes, settings.max_processes or settings.processes))


def at_level(thresholds: Thresholds, settings: Settings, processes: int) -> Thresholds:
    """``thresholds`` with the level of the look ``processes`` a side reached, where the run was sequential."""
    design = design_of(settings)
    if design is None:
        return thresholds
    return dataclasses.replace(thresholds, alpha=design.nominal_alpha(thresholds.alpha, processes))
