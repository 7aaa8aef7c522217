"""Every PNG plot and how it looks: the report's per comparison group (wall time by release, time
per call by device count for programs ``<method>_d<devices>``), a triage's (metrics over releases,
the confirmed changes marked).  Each series a look of its own, labels whole, legends beside the
axes, two releases as points.  Without matplotlib (the ``report`` extra) the page says why."""

from __future__ import annotations

import hashlib
import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.analysis.report_model import GroupKey, Series, TimingGroup
from harness.metric_names import MetricKey
from harness.stats import Summary
from harness.store.files import child, output_folder, replace_file

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))
# Ten colours, seven markers: 7 and 10 share no factor, so (colour, marker) first repeats at series
# 70, and the line style, which changes every ten series, keeps even those apart.
COLOURS = tuple(f"C{i}" for i in range(10))
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", ":", "-.")
LABEL_WIDTH = 34  # characters per line of a y-label at the plots' font size
TITLE_WIDTH = 70
SEPARATOR = " · "
SPREAD = "points: median of the process medians · bars: IQR between processes"
# Two releases are two categories, not a trend's two ends: each release's points side by side.
MOST_FOR_POINTS = 2
DODGE = 0.5  # the share of a category's width the side-by-side points take


@dataclass(frozen=True)
class Style:
    colour: str
    marker: str
    linestyle: str


def series_styles(count: int) -> list[Style]:
    c, m, s = len(COLOURS), len(MARKERS), len(LINESTYLES)
    return [Style(COLOURS[i % c], MARKERS[i % m], LINESTYLES[(i // c) % s]) for i in range(count)]


def unit_for(summaries: Sequence[Summary]) -> tuple[str, float]:
    largest = max(s.median for s in summaries)
    return next((unit, scale) for unit, scale in UNITS if largest >= scale or scale == 1.0)


def metric_axis(key: MetricKey, summaries: Sequence[Summary]) -> tuple[str, float]:
    """A metric's y-label and its values' divisor: ``two_scans dispatch (ms)``; a script's own
    number (``json.FIELD``) as printed."""
    if not key.in_ns:
        return f"{key.metric_name} (as printed)", 1.0
    unit, scale = unit_for(summaries)
    return f"{key.name} {key.kind} ({unit})", scale


def wrapped(text: str, width: int = LABEL_WIDTH) -> str:
    """The text on as many lines as it needs, drawn whole; lines break between `` · `` parts."""
    lines: list[str] = []
    for part in text.split(SEPARATOR):
        if lines and len(lines[-1]) + len(SEPARATOR) + len(part) <= width:
            lines[-1] += SEPARATOR + part
        else:
            broken = textwrap.wrap(part, width, break_long_words=False, break_on_hyphens=False)
            lines += broken or [part]
    return "\n".join(lines)


def as_points(releases: Sequence[str]) -> bool:
    return len(releases) <= MOST_FOR_POINTS


def offsets(count: int, points: bool) -> list[float]:
    """Each series' place in its release's category: spread as points, so none covers another."""
    if not points or count < 2:
        return [0.0] * count
    step = DODGE / (count - 1)
    return [-DODGE / 2 + i * step for i in range(count)]


def release_ticks(axes: Axes, labels: Sequence[str], rotation: int, **font: Any) -> None:
    points = as_points(labels)
    turned: dict[str, Any] = (
        {"rotation": 0, "ha": "center"} if points else {"rotation": rotation, "ha": "right"}
    )
    axes.set_xticks(range(len(labels)), list(labels), **turned, **font)
    if points:
        axes.set_xlim(-0.6, len(labels) - 0.4)


WALL = "wall"
SCALING = "scaling"
PLOTS = "plots"  # the folder under the reports folder
MAX_PLOT_NAME = 200  # file systems allow 255 bytes a name


@dataclass(frozen=True)
class DrawnPlots:
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
    """Replaced atomically: never through a planted link."""
    buffer = io.BytesIO()
    # "tight" besides the constrained layout: what still reaches past the canvas is kept, not cut.
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", pad_inches=0.1)
    replace_file(path, buffer.getvalue())


def plot_name(key: GroupKey, kind: str, taken: set[str]) -> str:
    """A plot file name unique in ``taken`` (case-folded) and short enough for any file system: a
    digest beside the slug where the slug changed the key (``a/b`` and ``a_b``), long or taken."""
    slug = key.slug()
    name = f"{key.case}--{slug}--{kind}.png"
    if slug != key.raw_slug() or len(name) > MAX_PLOT_NAME or name.casefold() in taken:
        digest = hashlib.sha256(repr(key.order()).encode()).hexdigest()[:12]
        name = f"{key.case}--{slug[:60]}-{digest}--{kind}.png"
    taken.add(name.casefold())
    return name


def error_bars(
    axes: Axes, points: Sequence[tuple[float, Summary]], scale: float, **look: Any
) -> None:
    """Each point's median at its x, and the IQR between its processes as a bar."""
    medians = [s.median / scale for _, s in points]
    spread = [
        [(s.median - s.q1) / scale for _, s in points],
        [(s.q3 - s.median) / scale for _, s in points],
    ]
    axes.errorbar([x for x, _ in points], medians, yerr=spread, capsize=3, **look)


def group_axes(axes: Axes, key: GroupKey, what: str, x: str, y: str, series: int) -> None:
    """Labels and title; the legend right of the axes, never over the data, in two columns past 14
    series so that it stays no taller than the plot."""
    axes.set_xlabel(x, fontsize=8)
    axes.set_ylabel(y, fontsize=9)
    axes.set_ylim(bottom=0)
    axes.set_title(wrapped(f"{key.case}: {what} · {key.describe()}", TITLE_WIDTH), fontsize=9)
    columns = 1 if series <= 14 else 2
    axes.legend(
        loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, ncols=columns
    )


def wall_figure(timing: TimingGroup) -> Figure | None:
    """Each program's wall time by release; two releases as points side by side, more as lines."""
    from matplotlib.figure import Figure

    if not (lines := timing.wall):
        return None
    releases = timing.comparison.group.releases
    unit, scale = unit_for([s for points in lines.values() for _, s in points])
    points = as_points(releases)
    figure = Figure(figsize=(max(6.0, 0.7 * len(releases) + 3) + 2.2, 4.4), layout="constrained")
    axes = figure.subplots()
    for program, style, offset in zip(
        lines, series_styles(len(lines)), offsets(len(lines), points), strict=True
    ):
        error_bars(
            axes,
            [(releases.index(release) + offset, s) for release, s in lines[program]],
            scale,
            color=style.colour,
            marker=style.marker,
            linestyle="none" if points else style.linestyle,
            label=program,
        )
    release_ticks(axes, [f"jax {r}" for r in releases], 30)
    group_axes(axes, timing.key, "wall time by release", SPREAD, f"wall time ({unit})", len(lines))
    return figure


def scaling_figure(timing: TimingGroup) -> Figure | None:
    """Time per call by device count: a colour per release, a marker and line style per method."""
    from matplotlib.figure import Figure

    if not (lines := timing.scaling):
        return None
    unit, scale = unit_for([s for points in lines.values() for _, s in points])
    figure = Figure(figsize=(9, 4.8), layout="constrained")
    axes = figure.subplots()
    releases = list(dict.fromkeys(release for release, _ in lines))
    methods = list(dict.fromkeys(method for _, method in lines))
    for (release, method), points in lines.items():
        m = methods.index(method)
        error_bars(
            axes,
            points,
            scale,
            marker=MARKERS[m % len(MARKERS)],
            color=COLOURS[releases.index(release) % len(COLOURS)],
            linestyle=LINESTYLES[m % len(LINESTYLES)],
            label=f"{method} · jax {release}",
        )
    counts = sorted({d for points in lines.values() for d, _ in points})
    axes.set_xscale("log", base=2)
    axes.set_xticks(counts, [str(c) for c in counts])
    what, y = "time per call by device count", f"wall time per call ({unit})"
    group_axes(axes, timing.key, what, f"devices · {SPREAD}", y, len(lines))
    return figure


FIGURES = {WALL: wall_figure, SCALING: scaling_figure}


def draw_plots(timings: Sequence[TimingGroup], out_dir: Path) -> DrawnPlots:
    if reason := matplotlib_missing():
        return DrawnPlots(missing_reason=reason)
    folder = output_folder(out_dir, PLOTS)
    files = {}
    taken: set[str] = set()
    for timing in timings:
        for kind, figure_of in FIGURES.items():
            name = plot_name(timing.key, kind, taken)
            if (figure := figure_of(timing)) is not None:
                save_figure(figure, child(folder, name))
                files[(timing.key, kind)] = f"{PLOTS}/{name}"
    return DrawnPlots(files)


MOST_PANELS = 6
Panel = tuple[MetricKey, list[tuple[str, Summary]]]


def draw_series(
    title: str, releases: Sequence[str], series: Series, changes: Sequence[str], path: Path
) -> str | None:
    """Up to six metrics over ``releases``, a dashed line before each of ``changes``; or why not."""
    if missing := matplotlib_missing():
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
    from matplotlib.figure import Figure

    points = as_points(releases)
    width = max(6.0, 0.5 * len(releases) + 3)
    figure = Figure(figsize=(width, 2.6 * len(panels) + 0.8), layout="constrained")
    axes_list = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
    for axes, (key, found) in zip(axes_list, panels, strict=True):
        label, scale = metric_axis(key, [s for _, s in found])
        xs = [(releases.index(r), s) for r, s in found]
        # Two releases are two categories: points, not a line that reads as a trend between them.
        line = "none" if points else "-"
        error_bars(axes, xs, scale, marker="o", linestyle=line)
        for release in changes:
            axes.axvline(releases.index(release) - 0.5, color="C3", linestyle="--", linewidth=1)
        release_ticks(axes, releases, 45, fontsize=7)
        axes.set_ylabel(wrapped(label), fontsize=8)
        axes.set_ylim(bottom=0)
    axes_list[0].set_title(wrapped(title, TITLE_WIDTH), fontsize=9)
    axes_list[-1].set_xlabel(f"jax release · {SPREAD} · dashed: a confirmed change", fontsize=8)
    return figure
