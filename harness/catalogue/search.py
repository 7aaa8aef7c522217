"""Search for the smallest size at which a case's claim fails (or holds).

Timing noise must not invent counterexamples: a point counts only when ``confirm`` further
measurements agree, each memoised so hypothesis's replays cannot turn flaky.  The example database
(``.hypothesis/``) is keyed by case and direction, so an interrupted search resumes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import seed as fix_seed
from hypothesis.database import DirectoryBasedExampleDatabase

from harness.catalogue.discovery import CaseInfo
from harness.catalogue.sizes import Budget, SizePoint
from harness.units import sizes_text

DATABASE_DIR = Path(".hypothesis") / "harness-search"

# A measurement of a point: whether the claim held (None: no verdict, e.g. the run
# failed) and what to show for it.
Measure = Callable[[SizePoint], tuple[bool | None, str]]


@dataclass
class Measurement:
    sizes: SizePoint
    holds: bool | None
    evidence: str


@dataclass
class SearchOutcome:
    case: str
    looking_for: str  # "fails" or "holds"
    found: SizePoint | None
    measurements: list[Measurement] = field(default_factory=list)
    wall_s: float = 0.0
    seed: int = 0
    replay_blob: str | None = None
    note: str = ""

    def for_point(self, point: SizePoint) -> list[Measurement]:
        return [m for m in self.measurements if m.sizes == point]


class _Found(Exception):
    """Raised inside the hypothesis test for a confirmed point; hypothesis shrinks it."""


def search(
    case: CaseInfo,
    measure: Measure,
    *,
    budget: Budget,
    want_holds: bool = False,
    max_examples: int = 20,
    confirm: int = 2,
    seed: int = 0,
    database_dir: Path | None = DATABASE_DIR,
) -> SearchOutcome:
    outcome = SearchOutcome(case.name, "holds" if want_holds else "fails", None, seed=seed)
    verdicts: dict[tuple[tuple[str, int], ...], bool | None] = {}

    def measured(point: SizePoint) -> bool | None:
        holds, evidence = measure(point)
        outcome.measurements.append(Measurement(dict(point), holds, evidence))
        return holds

    def confirmed(point: SizePoint) -> bool | None:
        key = tuple(sorted(point.items()))
        if key not in verdicts:
            first = measured(point)
            # Re-measure before believing it: stop at the first disagreement.
            doubted = first is want_holds and any(
                measured(point) is not first for _ in range(confirm)
            )
            verdicts[key] = None if doubted else first
        return verdicts[key]

    database = DirectoryBasedExampleDatabase(str(database_dir)) if database_dir else None

    @fix_seed(seed)
    @settings(
        max_examples=max_examples,
        database=database,
        deadline=None,
        phases=[Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=True,
    )
    @given(case.space.strategy(budget, log_spaced=False))
    def claim_check(point: SizePoint) -> None:
        verdict = confirmed(point)
        if verdict is None:
            reject()
        if verdict is want_holds:
            raise _Found(point)

    inner: Any = claim_check.hypothesis.inner_test
    inner._hypothesis_internal_add_digest = f"{case.name}:{outcome.looking_for}".encode()
    started = time.monotonic()
    try:
        claim_check()
        outcome.note = (
            f"no size within {max_examples} examples where the claim {outcome.looking_for}"
        )
    except _Found as found:
        outcome.found = dict(found.args[0])
        notes = getattr(found, "__notes__", [])
        outcome.replay_blob = next((n.strip() for n in notes if "reproduce_failure" in n), None)
    outcome.wall_s = time.monotonic() - started
    return outcome


def render(outcome: SearchOutcome, *, release: str, profile: str) -> str:
    """Markdown summary of a search: the answer, how to replay it, every measurement."""
    lines = [
        f"# Search: smallest size where `{outcome.case}`'s claim {outcome.looking_for}",
        "",
        f"jax {release} · profile {profile} · seed {outcome.seed} · "
        f"{len(outcome.measurements)} measurements in {outcome.wall_s:.0f} s",
        "",
    ]
    if outcome.found is None:
        lines += [f"**No such size found**: {outcome.note}.", ""]
    else:
        confirming = outcome.for_point(outcome.found)
        flags = " ".join(f"--size {k}={v}" for k, v in sorted(outcome.found.items()))
        blob = outcome.replay_blob
        lines += [
            f"**Smallest size found: {sizes_text(outcome.found)}** (confirmed by "
            f"{len(confirming)} agreeing measurements).",
            "",
            *(f"- {m.evidence}" for m in confirming),
            "",
            "To replay: run the same search again (the example database under `.hypothesis/` holds "
            f"it), or measure the size directly with `run {flags}`.",
            *(["", f"Hypothesis replay blob: `{blob}`"] if blob else []),
            "",
        ]
    lines += [
        "<details><summary>Every measurement, in order</summary>",
        "",
        "| # | sizes | claim | evidence |",
        "|---|---|---|---|",
    ]
    for i, m in enumerate(outcome.measurements, start=1):
        verdict = {True: "holds", False: "fails", None: "no verdict"}[m.holds]
        lines.append(
            f"| {i} | {sizes_text(m.sizes)} | {verdict} | {m.evidence.replace('|', '/')} |"
        )
    lines += ["", "</details>", ""]
    return "\n".join(lines)
