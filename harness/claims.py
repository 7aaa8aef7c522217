"""Claim verdicts by release, and the release ranges over which each outcome holds.

"holds on 0.4.33–0.10.2; does not hold on 0.4.26–0.4.31" reads better than a row of
fourteen ticks.  A range spans consecutive releases of the given release order; a
release without a result breaks it, so a range never claims a release nobody ran.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.results import StoredResult

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
MARKS = {HOLDS: "✓", DOES_NOT_HOLD: "✗"}


def outcome(result: StoredResult) -> str:
    """``holds``, ``does not hold``, or the run's status when it did not finish with a verdict."""
    claim = result.data.get("claim")
    if result.status != "ok" or not claim:
        return result.status
    return HOLDS if claim["holds"] else DOES_NOT_HOLD


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
