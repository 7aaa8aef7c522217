"""PNG plots for the report: per comparison group, median wall time by release, and time per call
against device count for programs named ``<method>_d<devices>``.

The points are the model's (``analysis.plot_points``, held by each ``TimingGroup``); drawing them
needs matplotlib (the ``report`` extra).  Without it no plot is drawn and the report says why.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.report_model import GroupKey, TimingGroup
from harness.render.plot_style import (
    COLOURS,
    LINESTYLES,
    MARKERS,
    SPREAD,
    TITLE_WIDTH,
    as_points,
    legend_beside,
    legend_columns,
    offsets,
    series_styles,
    unit_for,
    wrapped,
)
from harness.stats import Summary
from harness.store.files import child, output_folder, replace_file

if TYPE_CHECKING:
    from matplotlib.figure import Figure

WALL = "wall"
SCALING = "scaling"
PLOTS = "plots"  # the folder under the reports folder
MAX_PLOT_NAME = 200  # file systems allow 255 bytes a name


@dataclass(frozen=True)
class DrawnPlots:
    """What was drawn, as paths relative to the reports folder, or why nothing was."""

    files: dict[tuple[GroupKey, str], str] = field(default_factory=dict)
    missing_reason: str | None = None

    def link(self, key: GroupKey, kind: str) -> str | None:
        return self.files.get((key, kind))


def matplotlib_missing() -> str | None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return (
            "matplotlib is not installed (install the report extra: `pip install -e '.[report]'`)"
        )
    return None


def save_figure(figure: Figure, path: Path) -> None:
    """The figure as a PNG at ``path``, replaced atomically: never through a planted link."""
    buffer = io.BytesIO()
    # "tight" besides the constrained layout: what still reaches past the canvas is kept, not cut.
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", pad_inches=0.1)
    replace_file(path, buffer.getvalue())


def plot_name(key: GroupKey, kind: str, taken: set[str]) -> str:
    """The group's plot file name, unique in ``taken`` (compared case-folded) and short enough for
    any file system.

    The readable slug is kept where it says the key as it is; where it had to change it (backends
    ``a/b`` and ``a_b`` slug alike), is long or is taken already, a digest of the key tells it
    apart."""
    slug = key.slug()
    name = f"{key.case}--{slug}--{kind}.png"
    if slug != key.raw_slug() or len(name) > MAX_PLOT_NAME or name.casefold() in taken:
        digest = hashlib.sha256(repr(key.order()).encode()).hexdigest()[:12]
        name = f"{key.case}--{slug[:60]}-{digest}--{kind}.png"
    taken.add(name.casefold())
    return name


def error_bars(points: Sequence[Summary], scale: float) -> tuple[list[float], list[list[float]]]:
    medians = [s.median / scale for s in points]
    spread = [
        [(s.median - s.q1) / scale for s in points],
        [(s.q3 - s.median) / scale for s in points],
    ]
    return medians, spread


def wall_figure(timing: TimingGroup) -> Figure | None:
    """Each program's wall time by release, a look of its own per program; two releases as points
    side by side (two categories), more joined by lines (a trend).  None when no program has one."""
    from matplotlib.figure import Figure

    lines = timing.wall
    if not lines:
        return None
    key = timing.key
    releases = timing.comparison.group.releases
    unit, scale = unit_for([s for points in lines.values() for _, s in points])
    points = as_points(releases)
    figure = Figure(figsize=(max(6.0, 0.7 * len(releases) + 3) + 2.2, 4.4), layout="constrained")
    axes = figure.subplots()
    for program, style, offset in zip(
        lines, series_styles(len(lines)), offsets(len(lines), points), strict=True
    ):
        medians, spread = error_bars([s for _, s in lines[program]], scale)
        axes.errorbar(
            [releases.index(release) + offset for release, _ in lines[program]],
            medians,
            yerr=spread,
            color=style.colour,
            marker=style.marker,
            linestyle="none" if points else style.linestyle,
            capsize=3,
            label=program,
        )
    axes.set_xticks(
        range(len(releases)),
        [f"jax {r}" for r in releases],
        rotation=0 if points else 30,
        ha="center" if points else "right",
    )
    if points:
        axes.set_xlim(-0.6, len(releases) - 0.4)
    axes.set_ylabel(f"wall time ({unit})", fontsize=9)
    axes.set_xlabel(SPREAD, fontsize=8)
    axes.set_ylim(bottom=0)
    axes.set_title(
        wrapped(f"{key.case}: wall time by release · {key.describe()}", TITLE_WIDTH), fontsize=9
    )
    legend_beside(axes, legend_columns(len(lines)))
    return figure


def scaling_figure(timing: TimingGroup) -> Figure | None:
    """Time per call by device count: a colour per release, a marker and line style per method, so
    no two lines look alike and one release's lines read as one family.  None without a method at
    two counts."""
    from matplotlib.figure import Figure

    lines = timing.scaling
    if not lines:
        return None
    key = timing.key
    unit, scale = unit_for([s for points in lines.values() for _, s in points])
    figure = Figure(figsize=(9, 4.8), layout="constrained")
    axes = figure.subplots()
    releases = list(dict.fromkeys(release for release, _ in lines))
    methods = list(dict.fromkeys(method for _, method in lines))
    for (release, method), points in lines.items():
        medians, spread = error_bars([s for _, s in points], scale)
        m = methods.index(method)
        axes.errorbar(
            [d for d, _ in points],
            medians,
            yerr=spread,
            marker=MARKERS[m % len(MARKERS)],
            capsize=3,
            color=COLOURS[releases.index(release) % len(COLOURS)],
            linestyle=LINESTYLES[m % len(LINESTYLES)],
            label=f"{method} · jax {release}",
        )
    counts = sorted({d for points in lines.values() for d, _ in points})
    axes.set_xscale("log", base=2)
    axes.set_xticks(counts, [str(c) for c in counts])
    axes.set_xlabel(f"devices · {SPREAD}", fontsize=8)
    axes.set_ylabel(f"wall time per call ({unit})", fontsize=9)
    axes.set_ylim(bottom=0)
    axes.set_title(
        wrapped(f"{key.case}: time per call by device count · {key.describe()}", TITLE_WIDTH),
        fontsize=9,
    )
    legend_beside(axes, legend_columns(len(lines)))
    return figure


FIGURES = {WALL: wall_figure, SCALING: scaling_figure}


def draw_plots(timings: Sequence[TimingGroup], out_dir: Path) -> DrawnPlots:
    """Draw every plot the groups' points allow under ``out_dir/plots``."""
    reason = matplotlib_missing()
    if reason:
        return DrawnPlots(missing_reason=reason)
    folder = output_folder(out_dir, PLOTS)
    files = {}
    taken: set[str] = set()
    for timing in timings:
        key = timing.key
        for kind, figure_of in FIGURES.items():
            name = plot_name(key, kind, taken)
            figure = figure_of(timing)
            if figure is not None:
                save_figure(figure, child(folder, name))
                files[(key, kind)] = f"{PLOTS}/{name}"
    return DrawnPlots(files)
