"""Each shape of metric judged by its own rule, with an A/A test for each: a value by equality per
process, a presence and an ending by their counts, never a ratio."""

import copy
import json
import pickle
import re
from pathlib import Path

import pytest

from harness.analysis.metrics import (
    ProcessSamples,
    compare_metric,
    metric_samples,
    process_samples,
)
from harness.analysis.shapes import SHAPES, compare_counts, compare_values, fisher_p, shape_of
from harness.analysis.significance import Comparison, Shape, Thresholds, Verdict
from harness.analysis.statuses import change_between, summarise
from harness.measure.script_process import script_numbers
from harness.metric_names import parse_metric_name
from harness.store.results import StoredResult
from harness.store.schema import JaxFacts, ProcessRun, RunStatus, parse_process
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
    assert compared.cost is None, "never a ratio"


def test_each_shape_is_one_object_that_owns_its_words_and_survives_a_copy():
    """A page asks the shape (``shape.ratio``, ``comparison.shown``): the one object per shape is
    itself after a copy or a pickle, and only a cost is judged by a ratio."""
    for shape in SHAPES:
        assert copy.deepcopy(shape) is shape and pickle.loads(pickle.dumps(shape)) is shape
    assert [str(s) for s in SHAPES if s.ratio] == ["cost"], "a new shape says whether it has one"
    counted = compare_counts(Shape.PRESENCE, (5, 5), (0, 5), Thresholds(), LOSS)
    assert counted.shown == ("5 of 5", "0 of 5") and counted.ratio_cell == "" and counted.worse


def test_a_metric_gone_is_worse_and_one_newly_printed_is_not():
    gone = compare_counts(Shape.PRESENCE, (3, 3), (0, 3), Thresholds())
    new = compare_counts(Shape.PRESENCE, (0, 3), (3, 3), Thresholds())
    assert gone.verdict is new.verdict is Verdict.CHANGED
    assert gone.worse and not new.worse
    assert gone.said == "printed in 3 of 3 processes on A, 0 of 3 on B"


def test_a_value_is_compared_by_equality_never_by_a_ratio():
    same = compare_values([[0.25]] * 5, [[0.25]] * 5, LOSS)
    flipped = compare_values([[0.25]] * 5, [[-0.25]] * 5, LOSS)
    varies = compare_values([[0.1], [0.2]], [[0.1], [0.2], [0.3]], LOSS)
    assert (same.verdict, same.said) == (Verdict.UNCHANGED, "the same in all 10 processes")
    assert flipped.verdict is Verdict.CHANGED and flipped.worse
    assert flipped.said == "changed from 0.25 to -0.25 in every process"
    assert flipped.cost is None
    assert (
        varies.verdict is Verdict.UNDECIDED
        and varies.said == "varies within a side: 2 values in 2 on A, 3 values in 3 on B"
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
        (LOSS, [[0.25], [0.5]], [[-0.25], [-1]], {"costs": ("json.loss",)}, Shape.COST),  # signs
        (LOSS, [[0.25], [-0.5]], [[-0.25]] * 2, {"costs": ("json.loss",)}, Shape.VALUE),  # no ×-1
        (LOOP, [[-5.0], [-5.1]], [[-7.0], [-7.1]], {}, Shape.VALUE),  # a unit's name, yet negative
        (LOOP, [[1.0], [1.1]], [[0.0]] * 2, {}, Shape.COST),  # a time may fall to zero
        (parse_metric_name("eager.wall_ns"), [[5.0]] * 3, [[5.0]] * 3, {}, Shape.COST),
    ],
)
def test_a_shape_is_declared_or_inferred_where_safe(key, a, b, declared, shape):
    assert shape_of(key, ProcessSamples(a), ProcessSamples(b), Thresholds(**declared)) is shape


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
    ok_ends, half_ends = summarise(ok), summarise(half)
    assert change_between(ok_ends, half_ends, Thresholds()) == "ok → SIGSEGV (exit 139)"
    assert change_between(half_ends, ok_ends, Thresholds()) == "SIGSEGV (exit 139) → ok"
    assert change_between(ok_ends, ok_ends, Thresholds()) is None, "A/A"
    assert len(metric_samples(half)) > 0, "the ten that ran ok are measured"


def _printed(lines: str, processes: int = 3, version: str = "0.10.1") -> list[ProcessRun]:
    """``processes`` script processes that each printed ``lines``, stored and read back as a result
    holds them (``script_process``): a figure and the values as written."""
    numbers = script_numbers(lines)
    run = ProcessRun(
        0,
        RunStatus.OK,
        jax=JaxFacts(jax_version=version),
        figures={f"json.{name}": value for name, value in numbers.values.items()},
        printed={f"json.{name}": texts for name, texts in numbers.printed.items()},
    )
    stored = json.loads(json.dumps(run.to_json(), allow_nan=False))
    return [parse_process(stored) for _ in range(processes)]


def _compared(a: str, b: str, name: str, **declared) -> Comparison:
    key = parse_metric_name(f"json.{name}")
    old, new = process_samples(_printed(a)), process_samples(_printed(b, version="0.10.2"))
    return compare_metric(old[key], new[key], Thresholds(**declared), key)


@pytest.mark.parametrize(
    ("name", "ratio", "said"),
    [
        ("temp_mb", 6.55, "changed from 29.91 to 195.9 in every process"),
        ("temp_bytes", 6.55, "changed from 29.91 to 195.9 in every process"),
        ("compile_ms", 6.55, "changed from 29.9 ms to 196 ms in every process"),
        ("flops", 6.55, "changed from 29.91 to 195.9 in every process"),
    ],
)
def test_a_cost_named_for_its_unit_keeps_its_ratio_though_constant(name, ratio, said):
    """#73: a compiled temp buffer 29.91 → 195.9 MB in every process is ×6.55 more, not a value."""
    found = _compared(f'{{"{name}": 29.91}}', f'{{"{name}": 195.9}}', name)
    assert (found.shape, found.verdict, found.constant) == (Shape.COST, Verdict.SLOWER, True)
    assert found.cost.ratio == pytest.approx(ratio, rel=1e-3) and found.said == said
    unitless = _compared('{"temp": 29.91}', '{"temp": 195.9}', "temp")
    assert unitless.shape is Shape.VALUE, "a unitless computed number is still a value"
    declared = _compared(
        f'{{"{name}": 29.91}}', f'{{"{name}": 195.9}}', name, values=(f"json.{name}",)
    )
    assert declared.shape is Shape.VALUE, "--value overrides the unit"


@pytest.mark.parametrize(
    ("a", "b", "said"),
    [
        ("12345678901234567", "12345678901234568", "12345678901234567 to 12345678901234568"),
        (str(2**60), str(2**60 + 1), f"{2**60} to {2**60 + 1}"),
        ("1e400", "1e401", "1e400 to 1e401"),
        (str(10**30), str(10**30 + 1), f"{10**30} to {10**30 + 1}"),
        ('"converged"', '"diverged"', '"converged" to "diverged"'),
        ("true", "false", "true to false"),
        ("0.25", "null", "0.25 to null"),
    ],
)
def test_a_value_is_compared_as_written(a, b, said):
    """#74.1, #74.6: integers exactly at any size, a number past range by its text, a string and a
    flag as printed; never 'the same', never missing."""
    changed = _compared(f'{{"x": {a}}}', f'{{"x": {b}}}', "x")
    assert (changed.shape, changed.verdict) == (Shape.VALUE, Verdict.CHANGED)
    assert changed.said == f"changed from {said} in every process"
    same = _compared(f'{{"x": {a}}}', f'{{"x": {a}}}', "x")
    assert same.verdict is Verdict.UNCHANGED and same.said == "the same in all 6 processes"


@pytest.mark.parametrize("now", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_values_a_release_prints_never_missing(now):
    found = _compared('{"loss": 0.25}', f'{{"loss": {now}}}', "loss")
    assert (found.shape, found.verdict) == (Shape.VALUE, Verdict.CHANGED)
    assert found.said == f"became {now} in every process (was 0.25)"
    timed = _compared('{"step_ms": 0.25}', f'{{"step_ms": {now}}}', "step_ms")
    assert timed.said == found.said, "a time that became NaN is said so too"
    assert (
        _compared(f'{{"loss": {now}}}', f'{{"loss": {now}}}', "loss").verdict is Verdict.UNCHANGED
    )


def test_jax_s_version_printed_is_recognised_and_left_out():
    old = process_samples(_printed('{"v": "0.10.1", "about": "jax 0.10.1+cpu", "n": 1}'))
    assert [key.kind for key in old] == ["n"]
    kept = process_samples(_printed('{"v": "0.10.10"}'))  # not its version: a value
    assert [key.kind for key in kept] == ["v"]


def test_two_values_in_one_process_are_never_their_median():
    """Printed 1 and 3 in each process against 2: their median would say 'the same'."""
    found = _compared('{"x": 1}\n{"x": 3}', '{"x": 2}', "x")
    assert found.verdict is Verdict.CHANGED
    assert found.said == "changed from 1, 3 (varies within a process) to 2 in every process"
    assert _compared('{"x": 1}\n{"x": 3}', '{"x": 1}\n{"x": 3}', "x").verdict is Verdict.UNCHANGED


def test_a_value_constant_on_one_side_and_varying_on_the_other_is_a_change():
    """R8-10: never judged as a cost 'unchanged within ±0.2%'."""
    constant = ProcessSamples([[0.5]] * 4)
    varies = ProcessSamples([[0.5], [0.5001], [0.4999], [0.5]])
    became = compare_metric(constant, varies, Thresholds(), LOSS)
    assert (became.shape, became.verdict) == (Shape.VALUE, Verdict.CHANGED)
    assert became.said == "0.5 in every process on A, 3 values in 4 on B: no longer one value"
    ceased = compare_metric(varies, constant, Thresholds(), LOSS)
    assert ceased.said == "3 values in 4 on A, 0.5 in every process on B: now one value"


@pytest.mark.parametrize("now", [[[0.0]] * 3, [[-1.0], [-2.0], [-1.5]]])
def test_a_time_fallen_to_zero_or_below_in_every_process_is_a_change(now):
    """R8-11: no ratio of it, yet a candidate, never dropped."""
    found = compare_metric(
        ProcessSamples([[1.0], [1.1], [0.9]]), ProcessSamples(now), Thresholds(), LOOP
    )
    assert (found.verdict, found.worse) == (Verdict.CHANGED, True)
    assert "at or below zero in every process on B: no ratio" in found.said
    aa = compare_metric(ProcessSamples(now), ProcessSamples(now), Thresholds(), LOOP)
    assert aa.verdict is not Verdict.CHANGED


def test_values_that_differ_past_the_eighth_are_said_apart():
    many = "\n".join(f'{{"x": {i}}}' for i in range(20))
    other = "\n".join(f'{{"x": {i}}}' for i in [*range(19), 99])
    found = _compared(many, other, "x")
    assert found.verdict is Verdict.CHANGED
    was, now = found.sides or ("", "")
    assert was.startswith("0, 1, 2, … 20 values, sha256 ") and was != now


def test_a_fifth_shape_is_its_object_in_shapes_and_its_test_alone(monkeypatch):
    """docs/layout.md's recipe for a new shape names two files, this module and the shape's own:
    a shape made here, placed in ``SHAPES`` as the recipe says and nowhere else, is inferred,
    compared, said, shown on a page and in JSON, and asks its why's kinds (a third file to edit
    would leave one of them a cost's or fail)."""
    from harness.analysis import shapes
    from harness.explain.kinds import kinds_for
    from harness.metric_names import Criterion
    from harness.render.json_out import comparison_json
    from harness.render.tables import comparison_cell, said_text
    from harness.steps.evidence import Step
    from tests.conftest import REPO

    recipe = next(
        line for line in (REPO / "docs/layout.md").read_text().split("\n\n") if "new shape" in line
    )
    named = set(re.findall(r"`((?:harness|tests)/[\w/]+\.py)`", recipe))
    assert named == {"harness/analysis/shapes.py", "tests/analysis/test_shapes.py"}, recipe

    class Positive(shapes.Counted):
        """A script's number judged by its sign: positive in k of the n processes."""

        def fits(self, key, a, b, thresholds):
            return key is not None and key.kind.endswith("_sign")

        def compare(self, a, b, thresholds, key=None, *, interval=True):
            counts = [(sum(p[0] > 0 for p in s.processes), len(s.processes)) for s in (a, b)]
            return shapes.compare_counts(self, *counts, thresholds, key)

    fifth = Positive(
        "positive", "signs counted", counted="positive", fewer_is_worse=True, why=("host",)
    )
    monkeypatch.setattr(shapes, "SHAPES", [fifth, *shapes.SHAPES])
    key = parse_metric_name("json.drift_sign")
    compared = compare_metric(ProcessSamples([[1.0]] * 5), ProcessSamples([[-2.0]] * 5), key=key)
    assert (compared.shape, compared.verdict, compared.worse) == (fifth, Verdict.CHANGED, True)
    assert said_text(compared) == "positive in 5 of 5 processes on A, 0 of 5 on B"
    assert comparison_cell(compared).startswith("0 of 5 n/a [n/a] positive in 5 of 5")
    assert comparison_json(compared)["shape"] == "positive"
    step = Step(
        "0.4.38", "0.5.0", (Criterion.of(key),), "cpu", Thresholds(), Path("out"), "s",
        script="s.py", shapes={key: fifth},
    )  # fmt: skip
    assert step.shape is fifth and [kind.name for kind in kinds_for(step)][-1] == "host"
    loss = compare_metric(ProcessSamples([[1.0]] * 3), ProcessSamples([[2.0]] * 3), key=LOSS)
    assert loss.shape is Shape.VALUE, "the shapes before it are asked as before"
