"""Claim verdicts by release, and the release ranges over which each outcome holds.

"holds on 0.4.33–0.10.2; does not hold on 0.4.26–0.4.31" reads better than a row of
fourteen ticks.  A range spans consecutive releases of the given release order; a
release without a result breaks it, so a range never claims a release nobody ran.

A claim is judged per backend (a scan that overlaps on CPU may sync every iteration
on GPU), so each row is one case, profile, backend and sizes.  A claim is judged
within one run, so runs of a release on several machines share a cell.

Each case process judges the claim on its own; ``outcome`` is the one place that
turns a result's process verdicts into the result's outcome.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.store.results import StoredResult
from harness.store.schema import ProcessClaim, RunStatus
from harness.units import sizes_text

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
DIFFERS = "differs by machine"
UNSETTLED = "unsettled"  # the processes of one run disagree
MARKS = {HOLDS: "✓", DOES_NOT_HOLD: "✗"}

ClaimRow = tuple[str, str, str, str]  # case, profile, backend, sizes as text


def process_claims(result: StoredResult) -> list[ProcessClaim]:
    """The claim verdict of every process that finished ok and gave one, in the order they ran."""
    return [p.claim for p in result.result.finished() if p.claim is not None]


def outcome(result: StoredResult) -> str:
    """``holds``, ``does not hold``, or the run's status when it did not finish with a verdict.

    Processes that agree decide; processes that disagree leave the claim ``unsettled``.
    """
    claims = process_claims(result)
    if result.status is not RunStatus.OK or not claims:
        return result.status
    verdicts = {claim.holds for claim in claims}
    if len(verdicts) > 1:
        return UNSETTLED
    return HOLDS if verdicts.pop() else DOES_NOT_HOLD


def claim_evidence(result: StoredResult) -> str:
    """What the case measured for its verdict: a process's evidence, and how many processes agreed."""
    claims = process_claims(result)
    if not claims:
        return ""
    if len(claims) == 1:
        return claims[0].evidence
    holding = sum(claim.holds for claim in claims)
    counts = f"holds in {holding} of {len(claims)} processes"
    return f"{counts}; e.g. {claims[0].evidence}"


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
    ordered = [o for o in (HOLDS, DOES_NOT_HOLD) if o in ranges] + sorted(set(ranges) - {HOLDS, DOES_NOT_HOLD})
    return "; ".join(f"{o} on {', '.join(ranges[o])}" for o in ordered) or "no runs"
