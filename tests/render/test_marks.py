"""Caveats as marks: every caveat the analysis writes has its own letter, and the legend says each
once."""

from dataclasses import replace

from harness.analysis.metrics import SEPARATE_UNDER_LOAD
from harness.analysis.processes import compare_processes
from harness.analysis.significance import DEFAULT_THRESHOLDS
from harness.render.marks import OTHER, legend, marks_of, marks_text

SPREAD = [[100.0, 140.0, 60.0], [180.0, 100.0, 120.0], [90.0, 95.0, 250.0]]


def test_every_caveat_of_the_process_rule_has_a_mark_of_its_own():
    few = compare_processes([[1.0, 1.1]], [[2.0, 2.1]])
    noisy = compare_processes(SPREAD, SPREAD, loaded=(1, 0))
    under_load = replace(noisy, flags=(*noisy.flags, SEPARATE_UNDER_LOAD))
    for comparison in (few, noisy, under_load):
        assert comparison.flags and OTHER not in marks_of(comparison, DEFAULT_THRESHOLDS)
    assert marks_text(few, DEFAULT_THRESHOLDS) == "f"
    assert marks_text(under_load, DEFAULT_THRESHOLDS) == "L v w l"


def test_the_legend_says_each_mark_once_and_an_unknown_caveat_is_still_marked():
    noisy = compare_processes(SPREAD, SPREAD)
    odd = replace(noisy, flags=("something new",))
    text = legend([noisy, noisy, odd], DEFAULT_THRESHOLDS)
    assert text.startswith("caveats: v process medians vary by more than 10%")
    assert text.count("v process medians") == 1 and text.endswith(
        "* another caveat: the report's JSON names it"
    )
    assert legend([compare_processes([[1.0]] * 3, [[1.0]] * 3)], DEFAULT_THRESHOLDS) == ""
