"""Claim verdicts by release, and the release ranges over which each outcome holds.

"holds on 0.4.33–0.10.2; does not hold on 0.4.26–0.4.31" reads better than a row of
fourteen ticks.  A range spans consecutive releases of the given release order; a
release without a result breaks it, so a range never claims a release nobody ran.

A claim is judged per backend (a scan that overlaps on CPU may sync every iteration
on GPU), so each row is one case, profile, backend and sizes.  A claim is judged
within one run, so runs of a release on several machines share a cell.

A run measured in several processes has a verdict from each: the claim *holds* or
*does not hold* only when at least 80 % of at least three processes agree
(``settle_claim``); otherwise it is *unsettled*, marked ``?``, never ✓ or ✗.
``outcome`` is the one place that turns a result's process verdicts into its outcome.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.store.results import StoredResult
from harness.store.schema import ProcessClaim, RunStatus
from harness.units import sizes_text

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
DIFFERS = "differs by machine"
UNSETTLED = "unsettled"
MARKS = {HOLDS: "✓", DOES_NOT_HOLD: "✗", UNSETTLED: "?"}

ClaimRow = tuple[str, str, str, str]  # case, profile, backend, sizes as text


def process_claims(result: StoredResult) -> list[ProcessClaim]:
    """The claim verdict of every process that finished ok and gave one, in the order they ran."""
    return [p.claim for p in result.result.finished() if p.claim is not None]


def outcome(result: StoredResult) -> str:
    """``holds``, ``does not hold`` or ``unsettled`` (``settle_claim`` over the processes' verdicts), or the
    run's status when it did not finish with a verdict."""
    verdict = claim_verdict(result)
    return result.status if verdict is None else verdict.outcome


def claim_verdict(result: StoredResult) -> ClaimVerdict | None:
    """The claim over the run's processes, or None when the run did not finish ok with verdicts."""
    claims = process_claims(result)
    if result.status is not RunStatus.OK or not claims:
        return None
    return settle_claim([claim.holds for claim in claims])


def claim_evidence(result: StoredResult) -> str:
    """What the case measured for its verdict: how many processes agreed, and one process's evidence."""
    claims = process_claims(result)
    verdict = claim_verdict(result)
    if not claims or verdict is None:
        return claims[0].evidence if claims else ""
    return f"{verdict.text()}; e.g. {claims[0].evidence}"


def claim_rows(results: Iterable[StoredResult]) -> dict[ClaimRow, dict[str, str]]:
    """Outcome by release for each (case, profile, backend, sizes).

    Runs of one release on several machines give one outcome when they agree and
    ``differs by machine`` when they do not; the runs in detail say which is which.
    """
    found: dict[ClaimRow, dict[str, set[str]]] = {}
    for result in results:
        row = (result.case, result.profile, result.backend, sizes_text(result.sizes))
        found.setdefault(row, {}).setdefault(result.release, set()).add(outcome(result))
    return {
        row: {release: next(iter(seen)) if len(seen) == 1 else DIFFERS for release, seen in by_release.items()}
        for row, by_release in found.items()
    }


def mark(outcome_text: str | None) -> str:
    if outcome_text is None:
        return "–"
    return MARKS.get(outcome_text, outcome_text)


def release_ranges(outcomes: dict[str, str], order: Sequence[str]) -> dict[str, list[str]]:
    """Per outcome, the runs of consecutive releases (in ``order``) that share it."""
    ranges: dict[str, list[str]] = {}
    current: list[str] = []
    current_outcome: str | None = None

    def close() -> None:
        if current and current_outcome is not None:
            span = current[0] if len(current) == 1 else f"{current[0]}–{current[-1]}"
            ranges.setdefault(current_outcome, []).append(span)

    for release in order:
        found = outcomes.get(release)
        if found != current_outcome or found is None:
            close()
            current, current_outcome = [], found
        if found is not None:
            current.append(release)
    close()
    return ranges


def ranges_text(outcomes: dict[str, str], order: Sequence[str]) -> str:
    """E.g. ``holds on 0.4.33–0.10.2; does not hold on 0.4.26–0.4.31; failed on 0.12.0.1``."""
    ranges = release_ranges(outcomes, order)
    verdicts = (HOLDS, DOES_NOT_HOLD, UNSETTLED)
    ordered = [o for o in verdicts if o in ranges] + sorted(set(ranges) - set(verdicts))
    return "; ".join(f"{o} on {', '.join(ranges[o])}" for o in ordered) or "no runs"


# A claim settles when this share of its processes agree, and at least this many gave a verdict.
SETTLING_SHARE = 0.8
MIN_CLAIM_PROCESSES = 3


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim's outcome over the processes of one run, with the counts behind it."""

    outcome: str  # HOLDS, DOES_NOT_HOLD or UNSETTLED
    agree: int  # processes that agree with the outcome; when unsettled, with the larger side
    of: int  # processes that gave a verdict
    hint: bool | None  # what the processes lean to (one process: its verdict); None when evenly split

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

    def mark(self, with_hint: bool = False) -> str:
        """✓, ✗ or ?; with ``with_hint`` an unsettled claim that leans one way shows it, e.g. ``? (✓)``."""
        if self.settled or not with_hint or self.hint is None:
            return MARKS[self.outcome]
        return f"{MARKS[UNSETTLED]} ({MARKS[HOLDS if self.hint else DOES_NOT_HOLD]})"


def settle_claim(
    process_verdicts: Sequence[bool], *, share: float = SETTLING_SHARE, min_processes: int = MIN_CLAIM_PROCESSES
) -> ClaimVerdict:
    """The claim's outcome from each process's verdict (True: it holds there).

    *holds* / *does not hold* needs at least ⌈share·K⌉ of K ≥ ``min_processes``
    processes to agree; anything else is *unsettled*.  A result measured in one process
    (every result stored before processes) is unsettled, its verdict kept as the hint.
    """
    of = len(process_verdicts)
    holding = sum(bool(v) for v in process_verdicts)
    failing = of - holding
    hint = None if holding == failing else holding > failing
    agree = max(holding, failing)
    needed = math.ceil(round(share * of, 9))  # rounded first: 0.8 · 5 must need 4, not 5
    if of >= min_processes and agree >= needed:
        return ClaimVerdict(HOLDS if holding > failing else DOES_NOT_HOLD, agree, of, hint)
    return ClaimVerdict(UNSETTLED, agree, of, hint)
