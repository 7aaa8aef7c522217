"""The one rule that settles a claim over the processes of one run: enough of enough processes
agree.

A counting rule, not statistics, below every stage so that the runner's progress, the search and
every report page settle a claim alike.  Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
UNSETTLED = "unsettled"
MARKS = {HOLDS: "✓", DOES_NOT_HOLD: "✗", UNSETTLED: "?"}

# A claim settles when this share of its processes agree, and at least this many gave a verdict.
SETTLING_SHARE = 0.8
MIN_CLAIM_PROCESSES = 3


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim's outcome over the processes of one run, with the counts behind it."""

    outcome: str  # HOLDS, DOES_NOT_HOLD or UNSETTLED
    agree: int  # processes that agree with the outcome; when unsettled, with the larger side
    of: int  # processes that gave a verdict
    # what the processes lean to (one process: its verdict); None when evenly split
    hint: bool | None

    @property
    def settled(self) -> bool:
        return self.outcome != UNSETTLED

    def text(self) -> str:
        """E.g. ``holds in 4 of 5 processes``, ``unsettled: one process (holds there)``."""
        if self.of == 0:
            return f"{UNSETTLED}: no process gave a verdict"
        leaning = HOLDS if self.hint else DOES_NOT_HOLD
        if self.settled:
            return f"{self.outcome} in {self.agree} of {self.of} processes"
        if self.of == 1:
            return f"{UNSETTLED}: one process ({leaning} there)"
        if self.hint is None:
            return f"{UNSETTLED}: holds in {self.agree} of {self.of} processes, not in the others"
        return f"{UNSETTLED}: {leaning} in {self.agree} of {self.of} processes"


def settle_claim(
    process_verdicts: Sequence[bool],
    *,
    share: float = SETTLING_SHARE,
    min_processes: int = MIN_CLAIM_PROCESSES,
) -> ClaimVerdict:
    """Each process's verdict settled: *holds* / *does not hold* needs ⌈share·K⌉ of K ≥
    ``min_processes`` processes to agree, else *unsettled* (one process: its verdict the hint)."""
    of = len(process_verdicts)
    holding = sum(bool(v) for v in process_verdicts)
    failing = of - holding
    hint = None if holding == failing else holding > failing
    agree = max(holding, failing)
    needed = math.ceil(round(share * of, 9))  # rounded first: 0.8 · 5 must need 4, not 5
    if of >= min_processes and agree >= needed:
        return ClaimVerdict(HOLDS if holding > failing else DOES_NOT_HOLD, agree, of, hint)
    return ClaimVerdict(UNSETTLED, agree, of, hint)
