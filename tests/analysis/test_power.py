"""How small a change processes can see: the detectable ratio, pooled spreads, and the figure of a
cell in progress."""

import math
import random
import statistics

import pytest

from harness.analysis.metrics import ProcessSamples, process_samples
from harness.analysis.power import (
    detectable_in_records,
    detectable_ratio,
    pooled_spreads,
)
from harness.analysis.processes import compare_processes
from harness.analysis.significance import Thresholds
from harness.metric_names import MetricKey
from harness.store.schema import parse, parse_process
from tests.analysis.test_processes import simulated_side
from tests.conftest import real_result, with_processes


def test_the_detectable_ratio_follows_the_spread_between_processes():
    thresholds = Thresholds()
    # exp((t(0.999, 5) + t(0.9, 5)) * 0.142 * sqrt(2/5)) = exp((5.8934 + 1.4759) * 0.089808), worked
    # by hand
    apart = Thresholds(rank_guard=False)  # sides of separate runs: Welch's test alone
    assert detectable_ratio(0.142, 5, apart) == pytest.approx(1.938, abs=0.003)
    assert detectable_ratio(0.142, 10, apart) < detectable_ratio(0.142, 5, apart), (
        "more processes see more"
    )
    assert detectable_ratio(0.001, 5, apart) == thresholds.factor, "never below the rule's factor"
    assert detectable_ratio(0.1, 1, apart) == thresholds.factor
    assert detectable_ratio(0.142, 6, thresholds) == math.inf, (
        "6 and 6 processes cannot pass the rank guard"
    )
    assert detectable_ratio(0.142, 7, thresholds) == detectable_ratio(0.142, 7, apart), (
        "7 and 7 can"
    )


def test_a_change_of_the_detectable_ratio_is_flagged_about_nine_times_in_ten():
    rng = random.Random(2026)
    thresholds = Thresholds(resamples=10)
    ratio = detectable_ratio(0.1, 10, thresholds)
    trials = 400
    flagged = sum(
        compare_processes(
            simulated_side(rng, 10, 0.1), simulated_side(rng, 10, 0.1, scale=ratio), thresholds
        ).verdict
        == "slower"
        for _ in range(trials)
    )
    assert 0.85 * trials <= flagged <= 0.98 * trials, flagged


def test_a_release_level_that_moves_between_runs_raises_what_another_run_flags_nine_times_in_ten():
    """Memory measured tight within a run (0.2 % between processes) while a release's level moves by
    5 % from one run to the next (a whole-range triage, 2026-12-06): a step of the within-run ratio
    is flagged in few other runs; with ``between`` the ratio is flagged about nine times in ten."""
    rng = random.Random(2026)
    screen = Thresholds(alpha=0.01, rank_guard=False, resamples=10)
    alone = detectable_ratio(0.002, 5, screen)
    ratio = detectable_ratio(0.002, 5, screen, between=0.05)
    assert alone == screen.factor and ratio > 1.1
    assert detectable_ratio(0.1, 5, screen, between=0.0) == detectable_ratio(0.1, 5, screen)

    def flagged(change: float, trials: int = 300) -> float:
        def side(scale: float):
            return simulated_side(rng, 5, 0.002, scale=scale * rng.lognormvariate(0, 0.05))

        verdicts = [
            compare_processes(side(1.0), side(change), screen).verdict for _ in range(trials)
        ]
        return sum(v == "slower" for v in verdicts) / trials

    assert flagged(alone) < 0.6
    assert 0.85 <= flagged(ratio) <= 0.98


def _processes(scale: float = 1.0, count: int | None = None):
    """The fixture's finished processes, every raw time multiplied by ``scale``."""
    record = with_processes(real_result("scan_sync-0.12.0.1"), max(count or 0, 5))
    processes = parse(record).finished()[:count]
    scaled = []
    for process in record["processes"][: len(processes)]:
        for program in process["programs"].values():
            for sample in program["samples"]:
                sample["wall_ns"] = round(sample["wall_ns"] * scale)
                sample["marks_ns"] = [round(mark * scale) for mark in sample["marks_ns"]]
        for function in process["compiled"].values():
            for kind in ("lower_ns", "compile_ns"):
                function[kind] = [round(value * scale) for value in function[kind]]
        scaled.append(parse_process(process))
    return scaled


def test_pooled_spreads_read_each_side_apart_so_a_shift_between_sides_adds_nothing():
    one = pooled_spreads([process_samples(_processes())])
    two = pooled_spreads([process_samples(_processes()), process_samples(_processes(scale=3.0))])
    assert one.keys() == two.keys() and one
    for name in one:
        assert two[name] == pytest.approx(one[name], rel=1e-3), name


def test_a_cell_in_progress_reads_its_detectable_ratio_and_sees_more_with_more_processes():
    every = detectable_in_records([_processes(count=10), _processes(count=10, scale=2.0)])
    fewer = detectable_in_records([_processes(count=8), _processes(count=8)])
    assert every is not None and fewer is not None
    assert 1.05 <= every < fewer, (every, fewer)
    assert not math.isnan(every)


def test_no_figure_before_every_side_has_two_finished_processes():
    assert detectable_in_records([_processes(count=1), _processes()]) is None
    assert detectable_in_records([]) is None


def test_a_target_judged_on_some_kinds_reads_only_their_spread():
    sides = [_processes(), _processes(scale=2.0)]
    spreads = pooled_spreads([process_samples(side) for side in sides])
    walls = pooled_spreads([process_samples(side) for side in sides], kinds=("wall",))
    assert walls and set(walls) < set(spreads) and all(key.kind == "wall" for key in walls)
    assert detectable_in_records(sides, kinds=("wall",)) == pytest.approx(
        detectable_ratio(statistics.median(walls.values()), len(sides[0]), Thresholds())
    )
    assert detectable_in_records(sides, kinds=("no such kind",)) is None


def test_adding_processes_until_a_target_is_detectable_keeps_the_false_positive_rate_near_alpha():
    """The stopping rule of ``run --target-ratio``, simulated on A/A cells: it reads only the spread
    within each side, so no-change cells are flagged nearly as often as at a fixed count.  Alpha
    0.05 so that 500 cells say something: measured over 2000, 6.2 % (a fixed 8 processes: 4.2–5.3
    %); stopping once a difference showed instead flags 17.8 % of these 500."""
    rng = random.Random(5)
    thresholds = Thresholds(alpha=0.05, factor=1.0001, resamples=10)
    flagged, counts = 0, []
    for _ in range(500):
        sides = [simulated_side(rng, 5, 0.05), simulated_side(rng, 5, 0.05)]
        while True:
            series = [{MetricKey("p", "wall"): ProcessSamples(processes=side)} for side in sides]
            [spread] = pooled_spreads(series).values()
            if detectable_ratio(spread, len(sides[0]), thresholds) <= 1.1 or len(sides[0]) >= 20:
                break
            for side in sides:
                side += simulated_side(rng, 1, 0.05)
        counts.append(len(sides[0]))
        flagged += compare_processes(*sides, thresholds).verdict in ("slower", "faster")
    assert 5 < statistics.median(counts) < 20, (
        "the rule added processes, and stopped before the most allowed"
    )
    assert flagged / 500 <= 0.09, flagged


def test_a_cell_of_one_side_is_read_without_the_rank_guard_that_sides_measured_together_pass():
    one, two = detectable_in_records([_processes()]), detectable_in_records([_processes()] * 2)
    assert two == math.inf, "5 processes a side cannot pass the rank guard at 0.002"
    assert one is not None and 1.05 <= one < math.inf, "compared with another run's: no guard"
