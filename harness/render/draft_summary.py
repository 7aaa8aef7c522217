"""The first lines of an issue draft, as a maintainer reads them: how sure the change is, in which
phase it moved, and where the report comes from, in a JAX user's words.  Pure: stored results in,
sentences out.

How sure: the change's metric per process on each release, from the newest stored result of each:
"in 5 separate Python processes per release, every one on 0.4.33 slower than every one on 0.4.31"
where the two sets do not overlap, else the medians and the test.  Which phase: the other kinds of
the same program (or, for a script, its phases: tracing, lowering, compile, the rest of its run)
compared by the report's rule, "compile time moved (×16.6 slower); tracing and lowering did not".
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.metrics import ProcessSamples, compare_metric, metric_samples
from harness.analysis.processes import process_medians
from harness.analysis.significance import MOVED, Verdict
from harness.catalogue.discovery import CaseInfo
from harness.metric_names import JSON, KINDS, PHASES, PROCESS, MetricKey
from harness.store.results import StoredResult
from harness.units import format_p
from harness.upstream.change import Change, newest_result


def _samples(
    change: Change, results: Sequence[StoredResult], case: str, sizes: dict[str, int], profile: str
) -> tuple[dict[MetricKey, ProcessSamples], dict[MetricKey, ProcessSamples]] | None:
    mine = [r for r in results if r.case == case]
    before, after = (
        newest_result(mine, release, sizes, profile)
        for release in (change.last_good, change.first_bad)
    )
    if before is None or after is None:
        return None
    return metric_samples(before), metric_samples(after)


def how_sure(
    change: Change, results: Sequence[StoredResult], case: str, sizes: dict[str, int], profile: str
) -> str:
    """How sure the change is, in a sentence a JAX user reads at once; "" without both releases'
    results."""
    found = _samples(change, results, case, sizes, profile)
    metric = change.metric
    if found is None or metric is None or metric not in found[0] or metric not in found[1]:
        return ""
    a, b = found[0][metric], found[1][metric]
    old, new = process_medians(a.processes), process_medians(b.processes)
    count = f"{len(old)}" if len(old) == len(new) else f"{len(old)} and {len(new)}"
    higher = "slower" if metric.is_duration else "higher"
    lower = "faster" if metric.is_duration else "lower"
    if min(new) > max(old):
        return (
            f"Measured in {count} separate Python processes per release: every one on "
            f"{change.first_bad} {higher} than every one on {change.last_good}."
        )
    if max(new) < min(old):
        return (
            f"Measured in {count} separate Python processes per release: every one on "
            f"{change.first_bad} {lower} than every one on {change.last_good}."
        )
    compared = compare_metric(a, b, change.thresholds, metric)
    return (
        f"Measured in {count} separate Python processes per release, whose figures overlap: the "
        f"medians differ ×{compared.ratio:.3g} at p={format_p(compared.p_value)} (Welch's t-test "
        "on their logs)."
    )


def phase_reading(
    change: Change, results: Sequence[StoredResult], case: str, sizes: dict[str, int], profile: str
) -> str:
    """Which phases of the changed program (a script: of the process) moved and which did not, in a
    line."""
    found = _samples(change, results, case, sizes, profile)
    metric = change.metric
    if found is None or metric is None:
        return ""
    name = PROCESS if metric.name in (JSON, PROCESS) else metric.name
    a, b = found
    moved, still = [], []
    table = PHASES if name == PROCESS else KINDS
    # What comes before the run first (tracing, lowering, compiling), then the run's own times.
    for kind, measured in sorted(table.items(), key=lambda row: row[1].run_time):
        key, words = MetricKey(name, kind), measured.words
        if not words:
            continue
        if key not in a or key not in b:
            continue
        compared = compare_metric(a[key], b[key], change.thresholds, key)
        if compared.verdict in MOVED:
            moved.append(
                (kind, f"{words} (×{max(compared.ratio, 1 / compared.ratio):.3g} {compared.said})")
            )
        elif compared.verdict is Verdict.UNCHANGED:
            still.append(words)
    if not moved or ([kind for kind, _ in moved] == [metric.kind] and not still):
        return ""  # nothing moved, or only the metric the headline already names
    said = f"{_joined([text for _, text in moved])} moved" + (
        f"; {_joined(still)} did not" if still else ""
    )
    return said[0].upper() + said[1:] + "."


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def provenance(case: CaseInfo) -> str:
    """Where the report comes from: a user's own script, or a claim from a discussion (with its
    URL)."""
    return case.subject.provenance(case.claim, case.source)
