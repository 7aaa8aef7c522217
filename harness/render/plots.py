"""PNG plots for the report: per comparison group, median wall time by release, and
time per call against device count for programs named ``<method>_d<devices>``.

Preparing the points is pure and needs nothing; drawing needs matplotlib (the
``report`` extra).  Without it no plot is drawn and the report says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.analysis.groups import ComparisonGroup, GroupKey
from harness.analysis.metrics import MetricKey, metric_samples, program_names
from harness.analysis.processes import process_medians
from harness.names import inside
from harness.stats import Summary, summarize

DEVICE_SUFFIX = re.compile(r"^(?P<method>.+)_d(?P<devices>\d+)$")
WALL = "wall"
SCALING = "scaling"
UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))


@dataclass(frozen=True)
class DrawnPlots:
    """What was drawn, as paths relative to the reports folder, or why nothing was."""

    files: dict[tuple[GroupKey, str], str] = field(default_factory=dict)
    missing_reason: str | None = None

    def link(self, key: GroupKey, kind: str) -> str | None:
        return self.files.get((key, kind))


def wall_by_release(group: ComparisonGroup) -> dict[str, list[tuple[str, Summary]]]:
    """Per program, the summary of its process medians (wall) in each release that ran it: the point is the
    figure comparisons judge, the bars the spread between processes."""
    lines: dict[str, list[tuple[str, Summary]]] = {}
    for run in group.runs:
        for key, samples in metric_samples(run).items():
            if key.kind == WALL:
                lines.setdefault(key.name, []).append((run.release, summarize(process_medians(samples.processes))))
    return lines


def split_device_suffix(program: str) -> tuple[str, int] | None:
    """``jit_d4`` → ``("jit", 4)``; None for a name without a device-count suffix."""
    match = DEVICE_SUFFIX.match(program)
    return (match["method"], int(match["devices"])) if match else None


def wall_by_device_count(group: ComparisonGroup) -> dict[tuple[str, str], list[tuple[int, Summary]]]:
    """Per (release, method), wall-time summaries by device count; only methods run at two or more counts."""
    lines: dict[tuple[str, str], list[tuple[int, Summary]]] = {}
    for run in group.runs:
        series = metric_samples(run)
        for name in program_names(run):
            parsed = split_device_suffix(name)
            samples = series.get(MetricKey(name, WALL))
            if parsed and samples:
                method, devices = parsed
                summary = summarize(process_medians(samples.processes))
                lines.setdefault((run.release, method), []).append((devices, summary))
    return {key: sorted(points) for key, points in lines.items() if len(points) >= 2}


def matplotlib_missing() -> str | None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed (install the report extra: `pip install -e '.[report]'`)"
    return None


def _unit(summaries: Sequence[Summary]) -> tuple[str, float]:
    largest = max(s.median for s in summaries)
    return next((unit, scale) for unit, scale in UNITS if largest >= scale or scale == 1.0)


def _error_bars(points: Sequence[Summary], scale: float) -> tuple[list[float], list[list[float]]]:
    medians = [s.median / scale for s in points]
    spread = [[(s.median - s.q1) / scale for s in points], [(s.q3 - s.median) / scale for s in points]]
    return medians, spread


def draw_wall_by_release(case: str, group: ComparisonGroup, path: Path) -> bool:
    from matplotlib.figure import Figure

    lines = wall_by_release(group)
    if not lines:
        return False
    releases = group.releases
    unit, scale = _unit([s for points in lines.values() for _, s in points])
    figure = Figure(figsize=(max(6.0, 0.7 * len(releases) + 3), 4), layout="constrained")
    axes = figure.subplots()
    for program, points in lines.items():
        medians, spread = _error_bars([s for _, s in points], scale)
        xs = [releases.index(release) for release, _ in points]
        axes.errorbar(xs, medians, yerr=spread, marker="o", capsize=3, label=program)
    axes.set_xticks(range(len(releases)), [f"jax {r}" for r in releases], rotation=30, ha="right")
    axes.set_ylabel(f"median of process medians, wall ({unit}); bars: IQR between processes", fontsize=8)
    axes.set_ylim(bottom=0)
    axes.set_title(f"{case}: {group.key.describe()}", fontsize=9)
    axes.legend(fontsize=8)
    figure.savefig(path, dpi=100)
    return True


def draw_wall_by_device_count(case: str, group: ComparisonGroup, path: Path) -> bool:
    from matplotlib.figure import Figure

    lines = wall_by_device_count(group)
    if not lines:
        return False
    unit, scale = _unit([s for points in lines.values() for _, s in points])
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.subplots()
    releases = list(dict.fromkeys(release for release, _ in lines))
    methods = list(dict.fromkeys(method for _, method in lines))
    styles = ["-", "--", ":", "-."]
    colours = [f"C{i % 10}" for i in range(len(releases))]
    for (release, method), points in lines.items():
        medians, spread = _error_bars([s for _, s in points], scale)
        axes.errorbar(
            [d for d, _ in points],
            medians,
            yerr=spread,
            marker="o",
            capsize=3,
            color=colours[releases.index(release)],
            linestyle=styles[methods.index(method) % len(styles)],
            label=f"{method} · jax {release}",
        )
    counts = sorted({d for points in lines.values() for d, _ in points})
    axes.set_xscale("log", base=2)
    axes.set_xticks(counts, [str(c) for c in counts])
    axes.set_xlabel("devices")
    axes.set_ylabel(f"median of process medians ({unit}); bars: IQR between processes", fontsize=8)
    axes.set_ylim(bottom=0)
    axes.set_title(f"{case}: time per call by device count ({group.key.describe()})", fontsize=9)
    axes.legend(fontsize=7, ncols=2)
    figure.savefig(path, dpi=100)
    return True


DRAWERS = {WALL: draw_wall_by_release, SCALING: draw_wall_by_device_count}


def draw_plots(groups: Sequence[ComparisonGroup], out_dir: Path) -> DrawnPlots:
    """Draw every plot the groups allow under ``out_dir/plots``."""
    reason = matplotlib_missing()
    if reason:
        return DrawnPlots(missing_reason=reason)
    folder = out_dir / "plots"
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for group in groups:
        for kind, draw in DRAWERS.items():
            name = f"{group.key.case}--{group.key.slug()}--{kind}.png"
            if draw(group.key.case, group, inside(folder, name)):
                files[(group.key, kind)] = f"plots/{name}"
    return DrawnPlots(files)
