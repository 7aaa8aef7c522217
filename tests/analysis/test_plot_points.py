"""The plots' points: wall time by release and by device count per group, and a metric over
releases."""

from pathlib import Path

import pytest

from harness.analysis.groups import comparison_groups, latest_runs
from harness.analysis.metrics import compare_group, metric_samples
from harness.analysis.report_model import (
    metric_series,
    split_device_suffix,
    wall_by_device_count,
    wall_by_release,
)
from harness.analysis.significance import Thresholds
from harness.metric_names import parse_metric_name
from harness.store.results import StoredResult, load_results
from tests.conftest import FIXTURES, FakeReleases, derive, real_result

FAST = Thresholds(resamples=20)
WALL = parse_metric_name("eager.wall_ns")
DISPATCH = parse_metric_name("eager.dispatch_ns")


def compared(folder):
    return [
        compare_group(g, None, FAST)
        for g in comparison_groups(latest_runs(load_results(folder)[0]))
    ]


@pytest.fixture
def synthetic_group():
    [comparison] = compared(FIXTURES / "synthetic")
    return comparison


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("jit_d4", ("jit", 4)),
        ("pmap_d16", ("pmap", 16)),
        ("shard_map_d2", ("shard_map", 2)),
        ("jit", None),
    ],
)
def test_device_count_suffix(name, parsed):
    assert split_device_suffix(name) == parsed
    assert split_device_suffix("jit_dx") is None and split_device_suffix("jit_d") is None


def test_scaling_lines_are_per_release_and_method_ordered_by_devices(synthetic_group):
    lines = wall_by_device_count(synthetic_group)
    assert set(lines) == {(r, m) for r in ("0.4.26", "0.12.0.1") for m in ("jit", "pmap")}
    assert [d for d, _ in lines[("0.12.0.1", "jit")]] == [1, 2, 4, 8]
    newer_jit = [s.median for _, s in lines[("0.12.0.1", "jit")]]
    assert newer_jit == sorted(newer_jit), "the synthetic newer release slows down with devices"
    assert all(s.q1 <= s.median <= s.q3 for _, s in lines[("0.4.26", "pmap")])


def test_cases_without_device_suffixes_have_no_scaling_plot():
    comparisons = compared(FIXTURES / "results")
    assert all(wall_by_device_count(c) == {} for c in comparisons)
    assert all(set(wall_by_release(c)) for c in comparisons)


def test_release_lines_follow_the_group(synthetic_group):
    lines = wall_by_release(synthetic_group)
    assert [release for release, _ in lines["jit_d8"]] == ["0.4.26", "0.12.0.1"]


def test_a_point_is_the_summary_of_the_process_medians_whose_median_is_the_figure(synthetic_group):
    [(release, point), *_] = wall_by_release(synthetic_group)["jit_d8"]
    samples = next(
        s
        for k, s in synthetic_group.series[release].items()
        if k.name == "jit_d8" and k.kind == "wall"
    )
    assert point == samples.summary and point.median == samples.figure


def results(scales):
    fake = FakeReleases(scales)
    return [p.result for p in (fake(r) for r in scales) if p.result is not None]


def test_each_metric_has_a_point_per_release_that_ran_ok():
    series = metric_series(results({"a": 1, "b": "failed", "c": 3}), [WALL, DISPATCH])
    assert [r for r, _ in series[WALL]] == ["a", "c"] and [r for r, _ in series[DISPATCH]] == [
        "a",
        "c",
    ]
    (_, a), (_, c) = series[WALL]
    assert 2.5 < c.median / a.median < 3.5 and a.q1 <= a.median <= a.q3


def test_a_value_no_figure_holds_has_no_point():
    """A printed string is compared and shown as printed; a plot has no point of it (never NaN)."""
    data = derive(real_result("async_dispatch-0.12.0.1"), release="a")
    for process in data["processes"]:
        process["printed"] = {"json.status": ['"converged"']}
    stored = StoredResult.from_document(Path(f"{data['id']}.json"), data)
    status = parse_metric_name("json.status")
    assert status in metric_samples(stored)
    assert metric_series([stored], [status]) == {}
