"""The metric over releases: a PNG when matplotlib is here, else why not."""

import pytest

from harness.analysis.plot_points import metric_series
from harness.metric_names import parse_metric_name
from harness.render.series_plot import draw_series
from tests.conftest import FakeReleases

WALL = parse_metric_name("eager.wall_ns")


def results(scales):
    fake = FakeReleases(scales)
    return [p.result for p in (fake(r) for r in scales) if p.result is not None]


def test_drawing_writes_a_png_or_says_why_not(tmp_path):
    path = tmp_path / "plots" / "x.png"
    series = metric_series(results({"a": 1, "b": 3}), [WALL])
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
    from harness.render.series_plot import series_figure

    series = metric_series(results({"a": 1, "b": 3}), [WALL])
    figure = series_figure("t", ["a", "b"], list(series.items()), ["b"])
    [axes] = figure.axes
    assert axes.get_ylabel() == "eager wall (ms)", "never eager.wall_ns (ms)"
    [container] = axes.containers
    assert container.lines[0].get_linestyle() == "None"
    many = {r: 1 for r in "abc"}
    figure = series_figure("t", list(many), list(metric_series(results(many), [WALL]).items()), [])
    assert figure.axes[0].containers[0].lines[0].get_linestyle() == "-", (
        "three or more: a trend line"
    )
