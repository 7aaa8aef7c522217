"""The level of a test spent over the looks of a run measured until decided."""

import math

import pytest

from harness.analysis.significance import Thresholds
from harness.analysis.spending import Design, at_level, design_of, spent
from harness.store.schema import Settings


def test_the_levels_of_the_looks_add_up_to_alpha_and_the_first_look_gets_the_most():
    design = Design(5, 20)
    levels = [design.nominal_alpha(0.002, n) for n in (5, 10, 15, 20)]
    assert design.looks == 4 and math.isclose(sum(levels), 0.002)
    assert levels == sorted(levels, reverse=True) and levels[0] == pytest.approx(0.002 * 0.357, rel=0.01)
    assert spent(0.002, 0) == 0 and spent(0.002, 1) == pytest.approx(0.002)


def test_a_count_between_looks_takes_the_level_of_the_look_it_began_and_the_last_look_takes_what_is_left():
    design = Design(5, 18)  # looks at 5, 10, 15 and 18
    assert [design.look_of(n) for n in (1, 5, 6, 10, 11, 18, 40)] == [1, 1, 2, 2, 3, 4, 4]
    assert [design.at_look(n) for n in (4, 5, 7, 15, 18)] == [False, True, False, True, True]
    total = sum(design.nominal_alpha(0.01, n) for n in (5, 10, 15, 18))
    assert math.isclose(total, 0.01)


def test_only_a_run_measured_until_decided_changes_the_level():
    fixed = Settings(processes=5)
    assert design_of(fixed) is None and at_level(Thresholds(), fixed, 5) == Thresholds()
    sequential = Settings(processes=5, decide="changes", max_processes=20)
    assert at_level(Thresholds(), sequential, 10).alpha == pytest.approx(Design(5, 20).nominal_alpha(0.002, 10))
    alone = Settings(processes=5, decide="all")  # no room for another look: one look at the full level
    assert at_level(Thresholds(), alone, 5).alpha == pytest.approx(0.002)
