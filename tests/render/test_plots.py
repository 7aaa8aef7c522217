import sys

import pytest

from harness.analysis.groups import GroupKey, comparison_groups, latest_runs
from harness.analysis.report_model import timing_group
from harness.analysis.significance import Thresholds
from harness.render.plots import (
    SCALING,
    WALL,
    draw_plots,
    matplotlib_missing,
    plot_name,
    scaling_figure,
    wall_figure,
)
from harness.store.results import load_results
from tests.conftest import FIXTURES


@pytest.fixture
def synthetic_timing():
    [group] = comparison_groups(latest_runs(load_results(FIXTURES / "synthetic")[0]))
    return timing_group(group, None, Thresholds(resamples=20))


def test_drawing_writes_png_files(synthetic_timing, tmp_path):
    pytest.importorskip("matplotlib")
    drawn = draw_plots([synthetic_timing], tmp_path)
    assert drawn.missing_reason is None
    for kind in (WALL, SCALING):
        link = drawn.link(synthetic_timing.key, kind)
        assert link is not None and (tmp_path / link).read_bytes().startswith(b"\x89PNG")


def test_missing_matplotlib_is_a_reason_not_an_error(synthetic_timing, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert "matplotlib is not installed" in str(matplotlib_missing())
    drawn = draw_plots([synthetic_timing], tmp_path)
    assert drawn.files == {} and drawn.link(synthetic_timing.key, WALL) is None


def drawn(figure):
    """The figure laid out as it is saved, and the renderer that measured it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def series_lines(axes):
    """The data line of each errorbar series, in the legend's order."""
    return [container.lines[0] for container in axes.containers]


def test_two_releases_are_points_each_series_its_own_look_the_legend_beside_the_axes(
    synthetic_timing,
):
    pytest.importorskip("matplotlib")
    figure = wall_figure(synthetic_timing)
    [axes] = figure.axes
    renderer = drawn(figure)
    lines = series_lines(axes)
    assert len(lines) == len(synthetic_timing.wall) == 8
    assert all(line.get_linestyle() == "None" for line in lines), (
        "two releases: no trend line between them"
    )
    looks = {(line.get_color(), line.get_marker()) for line in lines}
    assert len(looks) == len(lines), "no two series alike"
    legend = axes.get_legend().get_window_extent(renderer)
    assert legend.x0 >= axes.get_window_extent(renderer).x1, (
        "the legend sits right of the data, not over it"
    )
    assert axes.get_ylabel() == "wall time (ms)" and "_ns" not in axes.get_ylabel()


def test_titles_and_labels_are_drawn_whole_inside_the_figure(synthetic_timing):
    pytest.importorskip("matplotlib")
    for figure in (wall_figure(synthetic_timing), scaling_figure(synthetic_timing)):
        renderer = drawn(figure)
        [axes] = figure.axes
        canvas = figure.bbox
        for text in (axes.title, axes.yaxis.label, axes.xaxis.label):
            box = text.get_window_extent(renderer)
            assert (
                canvas.x0 <= box.x0
                and box.x1 <= canvas.x1
                and canvas.y0 <= box.y0
                and box.y1 <= canvas.y1
            ), text.get_text()
        assert "bars: IQR between processes" in axes.get_xlabel(), (
            "the bars are explained whole, not in the y-label"
        )


def test_the_device_count_plot_tells_every_line_apart(synthetic_timing):
    pytest.importorskip("matplotlib")
    figure = scaling_figure(synthetic_timing)
    [axes] = figure.axes
    lines = series_lines(axes)
    looks = {(line.get_color(), line.get_marker(), line.get_linestyle()) for line in lines}
    assert len(looks) == len(lines) == len(synthetic_timing.scaling)
    assert axes.get_ylabel() == "wall time per call (ms)"


def test_a_plot_of_a_key_without_a_device_count_is_named_nodev_not_nonedev():
    key = GroupKey("repro", "default", (), "cpu", None, "418411f8")
    assert plot_name(key, "wall", set()) == "repro--default-nosizes-cpu-nodev-418411f8--wall.png"
