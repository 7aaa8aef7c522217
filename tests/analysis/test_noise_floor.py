"""The noise floor's figures from stored runs."""

import math
from datetime import UTC, datetime

import pytest

from harness.analysis.metrics import metric_samples
from harness.analysis.noise_floor import invocation_spread, summarize_calibration
from harness.store.calibrations import append_calibration, read_calibration
from tests.commands.test_calibrate import FAST, plan
from tests.conftest import as_stored as stored
from tests.conftest import derive, real_result, v1_result
from tests.store.test_calibrations import a_calibration


def test_a_result_of_one_process_is_one_list_per_metric():
    data = v1_result("async_dispatch-0.12.0.1")
    series = {key: found.processes for key, found in metric_samples(stored(data)).items()}
    wall = [s["wall_ns"] for s in data["programs"]["jit"]["samples"]]
    assert [len(processes) for processes in series.values()] == [1] * len(series)
    assert next(v for k, v in series.items() if k.name == "jit" and k.kind == "wall") == [wall]


def test_the_figures_of_a_calibration():
    base = real_result("scan_sync-0.12.0.1")
    pairs = [
        (stored(derive(base, profile=f"a{i}")), stored(derive(base, profile=f"b{i}")))
        for i in range(3)
    ]
    raised = stored(derive(base, scale=1.3))
    chosen = plan(pairs=3)
    run = summarize_calibration(
        chosen, FAST, pairs, [(pairs[0][0], raised)], datetime(2026, 6, 1, tzinfo=UTC)
    )
    metrics = len(metric_samples(pairs[0][0]))
    assert (run.pairs, run.comparisons, run.flagged, run.false_positive_rate) == (
        3,
        3 * metrics,
        0,
        0.0,
    )
    # Every timing is ×1.3 slower (the memory is left as it was); the real fixture's cold trace +
    # lower varies 31 % between its processes, too much for ten a side (five, repeated) to show it:
    # the other timings are flagged.
    assert run.slowdown_comparisons == metrics and run.slowdown_flagged == metrics - 2
    assert run.smallest_flagged_ratio == pytest.approx(1.3, rel=0.05)
    assert run.largest_unflagged_ratio == pytest.approx(1.3, rel=0.05)
    assert (run.processes, run.min_processes, run.release, run.case) == (
        10,
        3,
        "0.12.0.1",
        "scan_sync",
    )
    assert run.created_at == "2026-06-01T00:00:00+00:00"
    assert run.details["per_pair"] == [{"comparisons": metrics, "flagged": []}] * 3


def test_one_process_a_side_is_no_calibration_but_says_so():
    base = v1_result("scan_sync-0.12.0.1")
    pair = (stored(derive(base, profile="a")), stored(derive(base, profile="b")))
    run = summarize_calibration(
        plan(pairs=1), FAST, [pair], [(pair[0], stored(derive(base, scale=1.3)))], datetime.now(UTC)
    )
    assert run.processes == 1 and run.slowdown_flagged == 0
    assert {m["verdict"] for m in run.details["metrics"]} == {"undecided"}


def test_the_spread_between_invocations_comes_from_how_far_the_aa_runs_levels_moved():
    base = real_result("scan_sync-0.12.0.1")

    def pairs(*scales: float):
        return [
            (
                stored(derive(base, profile=f"a{i}", invocation=f"a{i}")),
                stored(derive(base, scale=s, invocation=f"b{i}")),
            )
            for i, s in enumerate(scales)
        ]

    assert invocation_spread(pairs(1.0, 1.0, 1.0)) == 0.0, (
        "levels that agree better than their processes predict"
    )
    # Each pair's levels ×1.5 apart: the excess of the squared difference over what the processes
    # predict is log(1.5)² less a little; twice the invocation variance, so the spread is a little
    # under log(1.5)/√2.
    moved = invocation_spread(pairs(1.5, 1 / 1.5, 1.5))
    assert moved is not None and 0.7 * math.log(1.5) / math.sqrt(2) < moved < math.log(
        1.5
    ) / math.sqrt(2)
    assert invocation_spread(pairs(1.2, 1.2)) < moved
    one = v1_result("scan_sync-0.12.0.1")
    assert (
        invocation_spread([(stored(derive(one, profile="a")), stored(derive(one, profile="b")))])
        is None
    )


def test_a_calibration_records_its_detectable_ratio_and_reads_it_back(tmp_path):
    run = a_calibration(datetime(2026, 6, 1, tzinfo=UTC))
    assert run.detectable_ratio is not None and run.detectable_ratio >= 1.1
    assert set(run.details["detectable"]) == {m["metric"] for m in run.details["metrics"]}
    [back] = read_calibration(append_calibration(tmp_path, run))
    assert back.detectable_ratio == run.detectable_ratio
