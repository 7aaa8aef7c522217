"""The metric over releases: points from ok results only, one panel per metric, a PNG when matplotlib is here."""

import pytest

from harness.analysis.metric_names import parse_metric_name
from harness.render.series_plot import draw_series, metric_series
from tests.conftest import FakeReleases

WALL = parse_metric_name("eager.wall_ns")
DISPATCH = parse_metric_name("eager.dispatch_ns")


def results(scales):
    fake = FakeReleases(scales)
    return [p.result for p in (fake(r) for r in scales) if p.result is not None]


def test_each_metric_has_a_point_per_release_that_ran_ok():
    series = metric_series(results({"a": 1, "b": "failed", "c": 3}), [WALL, DISPATCH])
    assert [r for r, _ in series[WALL]] == ["a", "c"] and [r for r, _ in series[DISPATCH]] == ["a", "c"]
    (_, a), (_, c) = series[WALL]
    assert 2.5 < c.median / a.median < 3.5 and a.q1 <= a.median <= a.q3


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
