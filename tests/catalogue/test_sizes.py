import json
import subprocess
import sys

import pytest

from harness.catalogue.sizes import Budget, SizeSpace, draw, evaluate_cost, parse_quantity, plan
from harness.errors import UsageError

SPACE = SizeSpace(
    {"N": (16, 2048), "M": (1, 20000)}, {"bytes": "4 * M * N * N", "flops": "2 * M * N ** 3"}
)


def test_cost_expressions_are_arithmetic_over_sizes():
    assert (
        evaluate_cost("4 * M * N * N + 2 ** 3 - 8 // 2", {"N": 10, "M": 3}) == 4 * 3 * 100 + 8 - 4
    )


@pytest.mark.parametrize(
    "expression", ["__import__('os')", "N.bit_length()", "[N]", "Q * 2", "N if N else 1"]
)
def test_cost_expressions_refuse_anything_else(expression):
    with pytest.raises(UsageError):
        evaluate_cost(expression, {"N": 3})


@pytest.mark.parametrize(
    ("text", "value"),
    [("8GiB", 8 * 2**30), ("500M", 5e8), ("2e11", 2e11), ("1.5kib", 1536), ("3 GB", 3e9)],
)
def test_quantities(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "text", ["", "lots", "-3G", "0", "5 parsecs", "1e400", "1e308TiB", "9" * 5000]
)
def test_malformed_quantities(text):
    with pytest.raises(UsageError, match="malformed quantity"):
        parse_quantity(text)


def test_budget_from_command_line_and_refusal_message():
    budget = Budget.for_this_machine(["memory=1GiB", "flops=1e9"])
    assert budget.limits == {"bytes": 2**30, "flops": 1e9}
    assert budget.refusal({"bytes": 2**29, "flops": 1e6}) is None
    assert budget.refusal({"bytes": 2**31}) == "over budget: needs 2 GiB, budget 1 GiB"


@pytest.mark.parametrize("text", ["memory", "disk=3G", "flops=many"])
def test_malformed_budget(text):
    with pytest.raises(UsageError):
        Budget.for_this_machine([text])


def test_drawn_points_stay_inside_ranges_and_budget():
    budget = Budget({"bytes": 2**28, "flops": 1e11})
    points = draw(SPACE, budget, 6, seed=3)
    assert len(points) == 6 and len({json.dumps(p, sort_keys=True) for p in points}) == 6
    for p in points:
        assert 16 <= p["N"] <= 2048 and 1 <= p["M"] <= 20000
        assert budget.refusal(SPACE.cost_of(p)) is None


def test_same_seed_same_sizes_in_two_processes():
    program = (
        "import json; from harness.catalogue.sizes import Budget, SizeSpace, draw;"
        "space = SizeSpace({'N': (16, 2048), 'M': (1, 20000)}, {'flops': '2 * M * N ** 3'});"
        "print(json.dumps(draw(space, Budget({'flops': 1e11}), 6, seed={seed})))"
    )

    def in_process(seed):
        done = subprocess.run(
            [sys.executable, "-c", program.replace("{seed}", str(seed))],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout)

    first, second, other = in_process(11), in_process(11), in_process(12)
    assert first == second
    assert first != other


def test_plan_quick_is_the_anchors_full_adds_drawn_points():
    anchors = [{"N": 100, "M": 10}]
    budget = Budget({"flops": 1e12})
    quick = plan(SPACE, anchors, "quick", {}, seed=1, budget=budget)
    assert [(p.sizes, p.source) for p in quick] == [({"N": 100, "M": 10}, "anchor")]
    full = plan(SPACE, anchors, "full", {}, seed=1, budget=budget, draws=4)
    assert (
        full[0].sizes == anchors[0] and {p.source for p in full[1:]} == {"drawn"} and len(full) == 5
    )


def test_explicit_sizes_win_and_over_budget_points_are_marked():
    budget = Budget({"bytes": 1e6})
    [point] = plan(SPACE, [{"N": 100, "M": 10}], "quick", {"N": 1000}, seed=1, budget=budget)
    assert point.sizes == {"N": 1000, "M": 10} and point.source == "explicit"
    assert point.refusal and "over budget" in point.refusal


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("K / 0", "divides by zero"),
        ("10 ** 400", "overflows"),
        # as an integer: hundreds of millions of digits, the parent hung
        ("9 ** 9 ** 9", "overflows"),
        ("K +", "does not parse"),
        ("1e308 * 1e308", "not a finite cost"),
        ("(-K) ** 0.5", "not a finite cost"),
        ("K - 100", "not a finite cost"),
        ("K" + " + K" * 300, "over 500 characters"),
        ("9" * 5000, "over 500 characters"),
    ],
)
def test_a_cost_formula_that_cannot_give_a_cost_is_one_usage_error_and_quick(expression, reason):
    with pytest.raises(UsageError, match=reason):
        evaluate_cost(expression, {"K": 3})


def test_a_point_where_a_cost_formula_fails_is_refused_with_the_reason_not_raised():
    space = SizeSpace({"K": (1, 10)}, {"flops": "1 / (K - 5)"})
    [point] = plan(space, [{"K": 5}], "quick", {}, seed=1, budget=Budget({"flops": 1e9}))
    assert point.refusal is not None and "its cost cannot be estimated" in point.refusal
    assert "divides by zero" in point.refusal
    assert space.cost_of({"K": 5}) == {} and space.cost_of({"K": 6}) == {"flops": 1.0}
    drawn = draw(space, Budget({"flops": 1e9}), 5, seed=3)
    assert drawn and {"K": 5} not in drawn
