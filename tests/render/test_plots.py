"""Every plot: the report's and a metric over releases drawn (a PNG when matplotlib is here, else
why not), and how plots look, decided without drawing: a look per series, labels whole and in the
unit drawn."""

import sys

import pytest

from harness.analysis.groups import GroupKey, comparison_groups, latest_runs
from harness.analysis.report_model import metric_series, timing_group
from harness.analysis.significance import Thresholds
from harness.metric_names import MetricKey, parse_metric_name
from harness.render.plots import (
    SCALING,
    WALL,
    as_points,
    draw_plots,
    draw_series,
    matplotlib_missing,
    metric_axis,
    offsets,
    plot_name,
    scaling_figure,
    series_figure,
    series_styles,
    wall_figure,
    wrapped,
)
from harness.stats import Summary
from harness.store.results import load_results
from tests.conftest import FIXTURES, FakeReleases


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


def summary(median: float) -> Summary:
    return Summary(
        n=3,
        median=median,
        q1=median * 0.9,
        q3=median * 1.1,
        minimum=median * 0.8,
        maximum=median * 1.2,
    )


def test_no_two_series_look_alike_however_many():
    for count in (2, 10, 12, 24, 80):
        styles = series_styles(count)
        assert len(set(styles)) == count, count
    twelve = series_styles(12)
    assert len({s.colour for s in twelve}) == 10 and len({s.marker for s in twelve}) == 7
    assert len({(s.colour, s.marker) for s in twelve}) == 12, (
        "colour and marker alone tell twelve apart"
    )


def test_a_metric_is_named_without_its_ns_suffix_in_the_unit_it_is_drawn_in():
    label, scale = metric_axis(MetricKey("two_scans", "dispatch"), [summary(4.2e7)])
    assert (label, scale) == ("two_scans dispatch (ms)", 1e6)
    assert "_ns" not in label
    assert metric_axis(MetricKey("scan", "lower"), [summary(900.0)]) == ("scan lower (ns)", 1.0)
    assert metric_axis(MetricKey("json", "reg_ms"), [summary(12.0)]) == (
        "json.reg_ms (as printed)",
        1.0,
    )


def test_long_labels_are_wrapped_whole_never_cut():
    text = "median of process medians, wall (ms); bars: IQR between processes"
    lines = wrapped(text, 34).splitlines()
    assert len(lines) > 1 and all(len(line) <= 34 for line in lines)
    assert " ".join(lines) == text


def test_two_releases_are_points_side_by_side_more_are_a_line():
    assert as_points(["0.4.26", "0.12.0.1"]) and not as_points(["0.4.26", "0.4.30", "0.12.0.1"])
    spread = offsets(4, points=True)
    assert len(set(spread)) == 4 and spread == sorted(spread) and abs(sum(spread)) < 1e-9
    assert offsets(4, points=False) == [0.0] * 4 and offsets(1, points=True) == [0.0]


def test_a_description_breaks_between_its_parts():
    title = (
        "scan_sync: wall time by release · profile cpu · M=500 N=100 · cpu backend · 1 device · "
        "machine 5c19a97b"
    )
    lines = wrapped(title, 70).splitlines()
    assert lines == [
        "scan_sync: wall time by release · profile cpu · M=500 N=100",
        "cpu backend · 1 device · machine 5c19a97b",
    ]


EAGER_WALL = parse_metric_name("eager.wall_ns")


def release_results(scales):
    fake = FakeReleases(scales)
    return [p.result for p in (fake(r) for r in scales) if p.result is not None]


def test_drawing_writes_a_png_or_says_why_not(tmp_path):
    path = tmp_path / "plots" / "x.png"
    series = metric_series(release_results({"a": 1, "b": 3}), [EAGER_WALL])
    why = draw_series("t", ["a", "b"], series, ["b"], path)
    if why is None:
        assert path.read_bytes().startswith(b"\x89PNG")
    else:
        pytest.importorskip("matplotlib", reason=why)
    assert draw_series("t", ["a"], {}, [], tmp_path / "y.png") in (
        "no metric ran ok on any release",
        why,
    )


def test_each_panel_names_its_metric_in_the_unit_drawn_and_two_releases_are_points():
    pytest.importorskip("matplotlib")
    series = metric_series(release_results({"a": 1, "b": 3}), [EAGER_WALL])
    figure = series_figure("t", ["a", "b"], list(series.items()), ["b"])
    [axes] = figure.axes
    assert axes.get_ylabel() == "eager wall (ms)", "never eager.wall_ns (ms)"
    [container] = axes.containers
    assert container.lines[0].get_linestyle() == "None"
    many = {r: 1 for r in "abc"}
    figure = series_figure(
        "t", list(many), list(metric_series(release_results(many), [EAGER_WALL]).items()), []
    )
    assert figure.axes[0].containers[0].lines[0].get_linestyle() == "-", (
        "three or more: a trend line"
    )
