"""How every plot looks, decided once: a look per series no other series shares, labels wrapped
whole, legends beside the axes, units that match the numbers drawn, and two releases drawn as
points.

Pure where it can be (styles, units, label text); the few helpers that touch a matplotlib
axes only place what the drawers made.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.metric_names import MetricKey
from harness.stats import Summary

if TYPE_CHECKING:
    from matplotlib.axes import Axes

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
    """``count`` looks, no two alike: colours and markers cycle at unequal lengths, styles by 10."""
    return [
        Style(
            COLOURS[i % len(COLOURS)],
            MARKERS[i % len(MARKERS)],
            LINESTYLES[(i // len(COLOURS)) % len(LINESTYLES)],
        )
        for i in range(count)
    ]


def unit_for(summaries: Sequence[Summary]) -> tuple[str, float]:
    """The largest unit the biggest median reaches, and nanoseconds per that unit."""
    largest = max(s.median for s in summaries)
    return next((unit, scale) for unit, scale in UNITS if largest >= scale or scale == 1.0)


def metric_axis(key: MetricKey, summaries: Sequence[Summary]) -> tuple[str, float]:
    """A metric's y-label and its values' divisor: ``two_scans dispatch (ms)``, never
    ``dispatch_ns (ms)``; a script's own number (``json.FIELD``) is drawn as printed, its unit."""
    if not key.in_ns:
        return f"{key.metric_name} (as printed)", 1.0
    unit, scale = unit_for(summaries)
    return f"{key.name} {key.kind} ({unit})", scale


def wrapped(text: str, width: int = LABEL_WIDTH) -> str:
    """The text on as many lines as it needs, so a label or title is drawn whole, never cut at the
    edge; lines break between a description's `` · `` parts, inside one only if it is too long."""
    lines: list[str] = []
    for part in text.split(SEPARATOR):
        if lines and len(lines[-1]) + len(SEPARATOR) + len(part) <= width:
            lines[-1] += SEPARATOR + part
        else:
            lines += textwrap.wrap(part, width, break_long_words=False, break_on_hyphens=False) or [
                part
            ]
    return "\n".join(lines)


def as_points(releases: Sequence[str]) -> bool:
    """Whether releases are drawn as points side by side, not joined by lines."""
    return len(releases) <= MOST_FOR_POINTS


def offsets(count: int, points: bool) -> list[float]:
    """Where each series sits within its release's category: spread across it when drawn as points,
    so a release's points and bars do not cover each other; at the centre when lines join them."""
    if not points or count < 2:
        return [0.0] * count
    step = DODGE / (count - 1)
    return [-DODGE / 2 + i * step for i in range(count)]


def legend_beside(axes: Axes, columns: int = 1) -> None:
    """The legend right of the axes, never over the data; constrained layout makes room for it."""
    axes.legend(
        loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, ncols=columns
    )


def legend_columns(count: int) -> int:
    """One column up to 14 entries, then two: a long legend stays no taller than the plot."""
    return 1 if count <= 14 else 2
