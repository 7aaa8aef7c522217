"""The first lines of an issue draft, as a maintainer reads them: how sure the change is and in
which phase it moved, in a JAX user's words (where the report comes from is the subject's to say).
Pure: the change's own comparisons in (``upstream.change`` judged them), sentences out.

How sure: the change's metric per process on each release: "in 5 separate Python processes per
release, every one on 0.4.33 slower than every one on 0.4.31" where the two sets do not overlap,
else the medians and the test.  Which phase: the other kinds of the same program (or, for a script,
its phases: tracing, lowering, compile, the rest of its run) as their comparisons judged them,
"compile time moved (×16.6 slower); tracing and lowering did not".
"""

from __future__ import annotations

from harness.analysis.significance import MOVED, Shape, Verdict
from harness.metric_names import JSON, KINDS, PHASES, PROCESS, MetricKey
from harness.units import format_p
from harness.upstream.change import Change


def how_sure(change: Change) -> str:
    """How sure the change is, in a sentence a JAX user reads at once, from its comparison's process
    medians; "" where the two releases' stored results were not compared, or the step is a value's
    or a presence's (its own words say every process)."""
    compared = change.compared
    if compared is None or compared.shape is not Shape.COST:
        return ""
    old, new = compared.baseline, compared.candidate
    count = f"{old.n}" if old.n == new.n else f"{old.n} and {new.n}"
    metric = change.metric
    duration = metric is None or metric.is_duration
    higher, lower = ("slower", "faster") if duration else ("higher", "lower")
    ahead = higher if new.minimum > old.maximum else lower if new.maximum < old.minimum else ""
    if ahead:
        return (
            f"Measured in {count} separate Python processes per release: every one on "
            f"{change.first_bad} {ahead} than every one on {change.last_good}."
        )
    return (
        f"Measured in {count} separate Python processes per release, whose figures overlap: the "
        f"medians differ ×{compared.ratio:.3g} at p={format_p(compared.p_value)} (Welch's t-test "
        "on their logs)."
    )


def phase_reading(change: Change) -> str:
    """Which phases of the changed program (a script: of the process) moved and which did not, in a
    line, from the change's comparisons."""
    metric = change.metric
    if metric is None or not change.comparisons:
        return ""
    name = PROCESS if metric.name in (JSON, PROCESS) else metric.name
    moved, still = [], []
    table = PHASES if name == PROCESS else KINDS
    # What comes before the run first (tracing, lowering, compiling), then the run's own times.
    for kind, measured in sorted(table.items(), key=lambda row: row[1].run_time):
        compared = change.comparisons.get(MetricKey(name, kind))
        if not measured.words or compared is None or compared.shape is not Shape.COST:
            continue
        if compared.verdict in MOVED:
            ratio = max(compared.ratio, 1 / compared.ratio)
            moved.append((kind, f"{measured.words} (×{ratio:.3g} {compared.said})"))
        elif compared.verdict is Verdict.UNCHANGED:
            still.append(measured.words)
    if not moved or ([kind for kind, _ in moved] == [metric.kind] and not still):
        return ""  # nothing moved, or only the metric the headline already names
    said = f"{_joined([text for _, text in moved])} moved" + (
        f"; {_joined(still)} did not" if still else ""
    )
    return said[0].upper() + said[1:] + "."


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
