"""A metric over a run of releases: the median of its process medians per release, the spread between
processes as bars, one panel per metric, the confirmed changes marked between releases.

The points are ``analysis.plot_points.metric_series``'s; drawing needs matplotlib (the
``report`` extra), and without it ``draw_series`` says why nothing was drawn, as the
report's plots do.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.analysis.plot_points import Series
from harness.render.plots import _error_bars, _unit, matplotlib_missing, save_figure

MOST_PANELS = 6


def draw_series(title: str, releases: Sequence[str], series: Series, changes: Sequence[str], path: Path) -> str | None:
    """Draw up to six metrics over ``releases`` into ``path``, a dashed line before each release in ``changes``;
    None when drawn, else why not."""
    missing = matplotlib_missing()
    if missing:
        return missing
    panels = [(key, points) for key, points in series.items() if points][:MOST_PANELS]
    if not panels:
        return "no metric ran ok on any release"
    from matplotlib.figure import Figure

    figure = Figure(figsize=(max(6.0, 0.5 * len(releases) + 3), 2.6 * len(panels) + 0.6), layout="constrained")
    axes_list = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
    for axes, (key, points) in zip(axes_list, panels, strict=True):
        unit, scale = _unit([s for _, s in points])
        medians, spread = _error_bars([s for _, s in points], scale)
        axes.errorbar([releases.index(r) for r, _ in points], medians, yerr=spread, marker="o", capsize=3)
        for release in changes:
            axes.axvline(releases.index(release) - 0.5, color="C3", linestyle="--", linewidth=1)
        axes.set_xticks(range(len(releases)), list(releases), rotation=45, ha="right", fontsize=7)
        axes.set_ylabel(f"{key.metric_name} ({unit})", fontsize=8)
        axes.set_ylim(bottom=0)
    axes_list[0].set_title(title, fontsize=9)
    axes_list[-1].set_xlabel("jax release · bars: IQR between processes · dashed: a confirmed change", fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent.is_symlink():  # planted in the reports folder: the plot would land wherever it points
        return f"{path.parent} is a link, not a folder"
    save_figure(figure, path)
    return None
