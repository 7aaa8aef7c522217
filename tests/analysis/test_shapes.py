"""Each shape of metric judged by its own rule, with an A/A test for each: a value by equality per
process, a presence and an ending by their counts, never a ratio."""

import math
from pathlib import Path

import pytest

from harness.analysis.metrics import ProcessSamples, compare_metric, metric_samples
from harness.analysis.shapes import compare_counts, compare_values, fisher_p, shape_of
from harness.analysis.significance import Shape, Thresholds, Verdict
from harness.analysis.statuses import status_change
from harness.metric_names import parse_metric_name
from harness.store.results import StoredResult
from tests.conftest import SEGFAULT, derive, died, real_result

LOSS = parse_metric_name("json.loss")
LOOP = parse_metric_name("json.loop_ms")


def test_fisher_p_matches_the_exact_test_s_known_values():
    assert fisher_p((0, 10), (1, 10)) == pytest.approx(1.0)
    assert fisher_p((0, 20), (10, 20)) == pytest.approx(0.000436, rel=1e-2)
    assert fisher_p((0, 3), (3, 3)) == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("a", "b", "verdict"),
    [
        ((0, 10), (1, 10), Verdict.UNDECIDED),  # one crash of ten: no change can be said
        ((0, 20), (10, 20), Verdict.CHANGED),  # half of twenty: decided
        ((0, 5), (0, 5), Verdict.UNCHANGED),  # A/A: none died on either side
        ((5, 5), (5, 5), Verdict.UNCHANGED),  # A/A: every one on both
        ((3, 3), (0, 3), Verdict.CHANGED),  # every process alike on each side: known exactly
        ((0, 1), (1, 1), Verdict.UNDECIDED),  # one process a side is one draw of the machine
    ],
)
def test_an_ending_is_judged_on_its_counts(a, b, verdict):
    compared = compare_counts(Shape.ENDING, a, b, Thresholds())
    assert compared.verdict is verdict
    assert math.isnan(compared.ratio), "never a ratio"


def test_a_metric_gone_is_worse_and_one_newly_printed_is_not():
    gone = compare_counts(Shape.PRESENCE, (3, 3), (0, 3), Thresholds())
    new = compare_counts(Shape.PRESENCE, (0, 3), (3, 3), Thresholds())
    assert gone.verdict is new.verdict is Verdict.CHANGED
    assert gone.worse and not new.worse
    assert gone.said == "printed in 3 of 3 processes on A, 0 of 3 on B"


def test_a_value_is_compared_by_equality_never_by_a_ratio():
    same = compare_values([[0.25]] * 5, [[0.25]] * 5, LOSS)
    flipped = compare_values([[0.25]] * 5, [[-0.25]] * 5, LOSS)
    varies = compare_values([[0.25]] * 5, [[0.1], [0.2], [0.3]], LOSS)
    assert (same.verdict, same.said) == (Verdict.UNCHANGED, "the same in all 10 processes")
    assert flipped.verdict is Verdict.CHANGED and flipped.worse
    assert flipped.said == "changed from 0.25 to -0.25 in every process"
    assert math.isnan(flipped.ratio)
    assert (
        varies.verdict is Verdict.UNDECIDED and "varies within a side: 3 values on B" in varies.said
    )


def test_a_value_within_the_factor_is_still_a_change():
    small = compare_metric(
        ProcessSamples([[1000.0]] * 5), ProcessSamples([[1001.0]] * 5), Thresholds(), LOSS
    )
    assert (small.shape, small.verdict) == (Shape.VALUE, Verdict.CHANGED)


@pytest.mark.parametrize(
    ("key", "a", "b", "declared", "shape"),
    [
        (LOSS, [[0.5]] * 3, [[0.7]] * 3, {}, Shape.VALUE),  # constant within each side
        (LOSS, [[0.5], [0.6]], [[0.7], [0.8]], {}, Shape.COST),  # varies: a cost by default
        (LOSS, [[0.5], [0.6]], [[0.7], [0.8]], {"values": ("json.loss",)}, Shape.VALUE),
        (LOSS, [[-0.5], [0.6]], [[0.7], [0.8]], {}, Shape.VALUE),  # never a ratio's operand
        (LOOP, [[5.0]] * 3, [[7.0]] * 3, {}, Shape.COST),  # named for a unit of time
        (LOSS, [[5.0]] * 3, [[7.0]] * 3, {"costs": ("json.loss",)}, Shape.COST),
        (LOSS, [[0.25]] * 3, [[-0.25]] * 3, {"costs": ("json.loss",)}, Shape.VALUE),  # no ×-1
        (LOOP, [[-5.0], [-5.1]], [[-7.0], [-7.1]], {}, Shape.VALUE),  # a unit's name, yet negative
        (LOOP, [[1.0], [1.1]], [[0.0]] * 2, {}, Shape.COST),  # a time may fall to zero
        (parse_metric_name("eager.wall_ns"), [[5.0]] * 3, [[5.0]] * 3, {}, Shape.COST),
    ],
)
def test_a_shape_is_declared_or_inferred_where_safe(key, a, b, declared, shape):
    assert shape_of(key, a, b, Thresholds(**declared)) is shape


def test_a_metric_missing_on_one_side_is_a_presence_change_not_no_change():
    printed = ProcessSamples([[5.0], [5.1], [5.2]], ran=3)
    gone = ProcessSamples([], ran=3)
    compared = compare_metric(printed, gone, Thresholds(), LOOP)
    assert (compared.shape, compared.verdict, compared.worse) == (
        Shape.PRESENCE,
        Verdict.CHANGED,
        True,
    )


def test_a_metric_gone_from_some_processes_of_one_side_is_never_unchanged():
    """4 of 5 against 5 of 5 decides no presence change, and the four that printed it alike do not
    say that nothing changed; a figure that moved on those is the change found."""
    most = ProcessSamples([[5.0], [5.1], [5.2], [5.0]], ran=5)
    every = ProcessSamples([[5.0], [5.1], [5.2], [5.1], [5.0]], ran=5)
    compared = compare_metric(most, every, Thresholds(), LOOP)
    assert (compared.shape, compared.verdict) == (Shape.PRESENCE, Verdict.UNDECIDED)
    most = ProcessSamples([[5.0 + i / 100] for i in range(19)], ran=20)
    slower = ProcessSamples([[9.0 + i / 100] for i in range(20)], ran=20)
    compared = compare_metric(most, slower, Thresholds(), LOOP)
    assert (compared.shape, compared.verdict) == (Shape.COST, Verdict.SLOWER)
    both = ProcessSamples([[5.0], [5.1], [5.2], [5.1]], ran=5)
    compared = compare_metric(most, both, Thresholds(), LOOP)
    assert compared.shape is Shape.COST, "missing alike on both sides: its figures are compared"


def _stored(data: dict) -> StoredResult:
    return StoredResult.from_document(Path(f"{data['id']}.json"), data)


def test_a_new_crash_in_half_of_twenty_processes_is_a_status_step():
    base = real_result("async_dispatch-0.12.0.1")
    ok = _stored(derive(base, release="a", processes=20))
    half = _stored(died(derive(base, release="b", processes=20), {**SEGFAULT, "processes": 10}))
    assert status_change(ok, half) is None, "without thresholds: every process alike only"
    assert status_change(ok, half, Thresholds()) == "ok → SIGSEGV (exit 139)"
    assert status_change(half, ok, Thresholds()) == "SIGSEGV (exit 139) → ok"
    assert status_change(ok, ok, Thresholds()) is None, "A/A"
    assert len(metric_samples(half)) > 0, "the ten that ran ok are measured"
