"""A metric over a run of releases: the median of its process medians per release, the spread
between processes as bars, one panel per metric, the confirmed changes marked between releases.

The points are ``analysis.plot_points.metric_series``'s; drawing needs matplotlib (the ``report``
extra), and without it ``draw_series`` says why nothing was drawn, as the report's plots do.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.plot_points import Series
from harness.metric_names import MetricKey
from harness.render.plot_style import SPREAD, TITLE_WIDTH, as_points, metric_axis, wrapped
from harness.render.plots import error_bars, matplotlib_missing, save_figure
from harness.stats import Summary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MOST_PANELS = 6
Panel = tuple[MetricKey, list[tuple[str, Summary]]]


def draw_series(
    title: str, releases: Sequence[str], series: Series, changes: Sequence[str], path: Path
) -> str | None:
    """Draw up to six metrics over ``releases`` into ``path``, a dashed line before each release in
    ``changes``; None when drawn, else why not."""
    missing = matplotlib_missing()
    if missing:
        return missing
    panels = [(key, points) for key, points in series.items() if points][:MOST_PANELS]
    if not panels:
        return "no metric ran ok on any release"
    figure = series_figure(title, releases, panels, changes)
    path.parent.mkdir(parents=True, exist_ok=True)
    # planted in the reports folder: the plot would land wherever it points
    if path.parent.is_symlink():
        return f"{path.parent} is a link, not a folder"
    save_figure(figure, path)
    return None


def series_figure(
    title: str, releases: Sequence[str], panels: Sequence[Panel], changes: Sequence[str]
) -> Figure:
    """A panel per metric, its y-label the metric's name and the unit its values are drawn in."""
    from matplotlib.figure import Figure

    points = as_points(releases)
    width = max(6.0, 0.5 * len(releases) + 3)
    figure = Figure(figsize=(width, 2.6 * len(panels) + 0.8), layout="constrained")
    axes_list = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
    for axes, (key, found) in zip(axes_list, panels, strict=True):
        label, scale = metric_axis(key, [s for _, s in found])
        medians, spread = error_bars([s for _, s in found], scale)
        xs = [releases.index(r) for r, _ in found]
        # Two releases are two categories: points, not a line that reads as a trend between them.
        axes.errorbar(
            xs, medians, yerr=spread, marker="o", capsize=3, linestyle="none" if points else "-"
        )
        for release in changes:
            axes.axvline(releases.index(release) - 0.5, color="C3", linestyle="--", linewidth=1)
        axes.set_xticks(
            range(len(releases)),
            list(releases),
            rotation=0 if points else 45,
            ha="center" if points else "right",
            fontsize=7,
        )
        if points:
            axes.set_xlim(-0.6, len(releases) - 0.4)
        axes.set_ylabel(wrapped(label), fontsize=8)
        axes.set_ylim(bottom=0)
    axes_list[0].set_title(wrapped(title, TITLE_WIDTH), fontsize=9)
    axes_list[-1].set_xlabel(f"jax release · {SPREAD} · dashed: a confirmed change", fontsize=8)
    return figure
