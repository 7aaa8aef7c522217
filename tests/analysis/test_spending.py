"""The level of a test spent over the looks of a run measured until decided."""

import math

import pytest

from harness.analysis.significance import Thresholds
from harness.analysis.spending import Design, at_level, design_of, spent
from harness.store.schema import Settings, look_number


def test_the_looks_double_and_their_levels_add_up_to_alpha_the_last_look_getting_the_most():
    design = Design(5, 20)
    assert design.points == (5, 10, 20) and len(design.points) == 3
    levels = [design.nominal_alpha(0.002, n) for n in design.points]
    # α·t⁴ at t = 1/4, 1/2, 1: 0.002/256, 0.002·(1/16 − 1/256), 0.002·(1 − 1/16), worked by hand.
    assert levels == pytest.approx([7.8125e-6, 1.171875e-4, 1.875e-3])
    assert math.isclose(sum(levels), 0.002)
    assert spent(0.002, 0) == 0 and spent(0.002, 1) == pytest.approx(0.002)


def test_a_count_between_looks_takes_the_level_of_the_look_it_began_the_last_look_what_is_left():
    design = Design(3, 18)  # looks at 3, 6, 12 and 18
    assert design.points == (3, 6, 12, 18)
    assert [look_number(design.points, n) for n in (1, 3, 4, 6, 7, 12, 13, 18, 40)] == [
        1,
        1,
        2,
        2,
        3,
        3,
        4,
        4,
        4,
    ]
    last = pytest.approx(0.01 * (1 - (12 / 18) ** 4))
    assert design.nominal_alpha(0.01, 13) == design.nominal_alpha(0.01, 18) == last
    total = sum(design.nominal_alpha(0.01, n) for n in design.points)
    assert math.isclose(total, 0.01)


def test_only_a_run_measured_until_decided_changes_the_level():
    fixed = Settings(processes=5)
    assert design_of(fixed) is None and at_level(Thresholds(), fixed, 5) == Thresholds()
    sequential = Settings(processes=5, decide="changes", max_processes=20)
    assert at_level(Thresholds(), sequential, 10).alpha == pytest.approx(
        Design(5, 20).nominal_alpha(0.002, 10)
    )
    # no room for another look: one look at the full level
    alone = Settings(processes=5, decide="all")
    assert at_level(Thresholds(), alone, 5).alpha == pytest.approx(0.002)
