"""Claim verdicts by release, and the release ranges over which each outcome holds.

"holds on 0.4.33–0.10.2; does not hold on 0.4.26–0.4.31" reads better than a row of fourteen ticks.
A range spans consecutive releases of the given release order; a release without a result breaks it,
so a range never claims a release nobody ran.

A claim is judged per backend (a scan that overlaps on CPU may sync every iteration on GPU), so each
row is one case, profile, backend and sizes.  A claim is judged within one run, so runs of a release
on several machines share a cell.

A run measured in several processes has a verdict from each: the claim *holds* or *does not hold*
only when at least 80 % of at least three processes agree (``harness.claim_rule.settle_claim``,
which the runner's progress lines and the search use too); otherwise it is *unsettled*, marked
``?``, never ✓ or ✗. ``outcome`` is the one place that turns a result's process verdicts into its
outcome.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from harness.analysis.shapes import counted
from harness.analysis.significance import Comparison, Shape, Verdict
from harness.claim_rule import (
    DOES_NOT_HOLD,
    HOLDS,
    MARKS,
    MIN_CLAIM_PROCESSES,
    SETTLING_SHARE,
    UNSETTLED,
    ClaimVerdict,
    settle_claim,
)
from harness.store.results import StoredResult
from harness.store.schema import ProcessClaim, RunStatus
from harness.units import sizes_text

DIFFERS = "differs by machine"

ClaimRow = tuple[str, str, str, str]  # case, profile, backend, sizes as text


def process_claims(result: StoredResult) -> list[ProcessClaim]:
    """The claim verdict of every process that finished ok and gave one, in the order they ran."""
    return [p.claim for p in result.result.finished() if p.claim is not None]


def outcome(result: StoredResult) -> str:
    """``holds``, ``does not hold`` or ``unsettled`` (``settle_claim`` over the processes'
    verdicts), or the run's status when it did not finish with a verdict."""
    verdict = claim_verdict(result)
    return result.result.status if verdict is None else verdict.outcome


def claim_verdict(result: StoredResult) -> ClaimVerdict | None:
    """The claim over the run's processes, or None when the run did not finish ok with verdicts."""
    claims = process_claims(result)
    if result.result.status is not RunStatus.OK or not claims:
        return None
    return settle_claim([claim.holds for claim in claims])


def compare_claims(before: StoredResult, after: StoredResult) -> Comparison:
    """The claim on two releases as a counted comparison: held in k of the n processes that gave a
    verdict on each side, judged by its settling rule, not a test (``flip_chance`` bounds a flip's
    error): a change where both settled and differ, unchanged where they agree, else undecided. Each
    side's outcome is its words: ``holds → does not hold``."""
    sides = outcome(before), outcome(after)
    k_a, k_b = (sum(c.holds for c in process_claims(side)) for side in (before, after))
    n_a, n_b = (len(process_claims(side)) for side in (before, after))
    verdict = Verdict.UNDECIDED
    if set(sides) <= {HOLDS, DOES_NOT_HOLD}:
        verdict = Verdict.UNCHANGED if sides[0] == sides[1] else Verdict.CHANGED
    return replace(counted(Shape.CLAIM, verdict, ((k_a, n_a), (k_b, n_b))), sides=sides)


def _settles_holding(chance: float, processes: int) -> float:
    """The chance that ``processes``, each holding with ``chance``, settle the claim as holding."""
    needed = math.ceil(round(SETTLING_SHARE * processes, 9))
    if processes < MIN_CLAIM_PROCESSES:
        return 0.0
    ways = range(needed, processes + 1)
    return sum(math.comb(processes, k) * chance**k * (1 - chance) ** (processes - k) for k in ways)


def flip_chance(first: tuple[int, int], again: tuple[int, int]) -> float:
    """At most the chance that a claim flips between two releases in a first measurement and flips
    the same way when both are measured again, where the two releases behave alike (each process
    holding with the same chance, whatever it is): the error of a confirmed flip.  ``first``,
    ``again``: processes with a verdict on each release in each measurement.  The settling rule
    makes it small: 80 % of 5 processes flip both ways in at most 3.5 % of measurements, twice in a
    row in 0.12 %."""

    def flips(chance: float, counts: tuple[int, int]) -> float:
        return _settles_holding(chance, counts[0]) * _settles_holding(1 - chance, counts[1])

    # the chance that maximises it: the worst case over every claim
    grid = (k / 1000 for k in range(1001))
    return max(flips(chance, first) * flips(chance, again) for chance in grid)


def claim_evidence(result: StoredResult) -> str:
    """What the case measured for its verdict: how many processes agreed, one's evidence."""
    claims = process_claims(result)
    verdict = claim_verdict(result)
    if not claims or verdict is None:
        return claims[0].evidence if claims else ""
    return f"{verdict.text()}; e.g. {claims[0].evidence}"


def claim_rows(results: Iterable[StoredResult]) -> dict[ClaimRow, dict[str, str]]:
    """Outcome by release for each (case, profile, backend, sizes). Runs of one release on several
    machines give one outcome when they agree and ``differs by machine`` when they do not; the runs
    in detail say which is which."""
    found: dict[ClaimRow, dict[str, set[str]]] = {}
    for result in results:
        r = result.result
        row = (r.case, r.profile, r.backend, sizes_text(r.sizes))
        found.setdefault(row, {}).setdefault(r.release, set()).add(outcome(result))
    return {
        row: {
            release: next(iter(seen)) if len(seen) == 1 else DIFFERS
            for release, seen in by_release.items()
        }
        for row, by_release in found.items()
    }


def mark(outcome_text: str | None) -> str:
    return "–" if outcome_text is None else MARKS.get(outcome_text, outcome_text)


def ranges_text(outcomes: dict[str, str], order: Sequence[str]) -> str:
    """Per outcome, the runs of consecutive releases (in ``order``) that share it, e.g. "holds on
    0.4.33–0.10.2; does not hold on 0.4.26–0.4.31; failed on 0.12.0.1"."""
    ranges: dict[str, list[str]] = {}
    for found, run in itertools.groupby(order, key=outcomes.get):
        if found is not None:  # a release without a result breaks a range
            releases = list(run)
            span = releases[0] if len(releases) == 1 else f"{releases[0]}–{releases[-1]}"
            ranges.setdefault(found, []).append(span)
    verdicts = (HOLDS, DOES_NOT_HOLD, UNSETTLED)
    ordered = [o for o in verdicts if o in ranges] + sorted(set(ranges) - set(verdicts))
    return "; ".join(f"{o} on {', '.join(ranges[o])}" for o in ordered) or "no runs"
