"""Comparisons as text and tables; caveats as marks: every caveat the analysis writes has its own
letter, and the legend says each once."""

import math
from dataclasses import replace

from harness.analysis.processes import compare_processes
from harness.analysis.shapes import SEPARATE_UNDER_LOAD
from harness.analysis.significance import DEFAULT_THRESHOLDS, Thresholds
from harness.render.tables import (
    OTHER,
    STATISTICS_HEADERS,
    comparison_cell,
    legend,
    markdown_table,
    marks_of,
    marks_text,
    rule_text,
    statistics_cells,
)
from harness.units import format_ns, format_p, format_ratio, sizes_text


def test_format_ns_picks_a_readable_unit():
    assert [format_ns(v) for v in (12, 3_400, 5_600_000, 2.5e9)] == [
        "12 ns",
        "3.4 µs",
        "5.6 ms",
        "2.5 s",
    ]


def test_sizes_are_sorted_by_name():
    assert sizes_text({"N": 100, "M": 2}) == "M=2 N=100"
    assert sizes_text({}) == "–"


def test_numbers_that_are_not_there_say_so():
    assert format_ratio(math.nan) == format_p(math.nan) == "n/a"
    assert format_p(3e-7) == "<0.0001" and format_p(0.0234) == "0.023"


BASE = [[100.0 + i + process for i in range(10)] for process in range(8)]
SLOWER = [[x * 1.5 for x in samples] for samples in BASE]


def test_a_cell_carries_median_ratio_interval_and_verdict():
    cell = comparison_cell(compare_processes(BASE, SLOWER))
    assert cell.startswith("162 ns ×1.5 [") and cell.endswith("] **slower**")
    noisy = comparison_cell(compare_processes([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]))
    assert noisy.endswith("undecided ⚠"), "three samples a side prove no absence of a change"


def test_statistics_cells_of_a_slowdown():
    cells = statistics_cells(compare_processes(BASE, SLOWER))
    assert dict(zip(STATISTICS_HEADERS, cells, strict=True)) | {
        "interval": "",
        "p": "",
        "between A/B": "",
    } == {
        "processes A/B": "8/8",
        "samples A/B": "80/80",
        "median A": "108 ns",
        "median B": "162 ns",
        "ratio B/A": "×1.5",
        "interval": "",
        "p": "",
        "between A/B": "",
        "within A/B": "4.2%/4.2%",
        "verdict": "**slower**",
        "caveats": "",
    }


def test_statistics_of_processes_show_counts_and_both_spreads():
    a = [[100.0, 101.0, 102.0], [110.0, 111.0], [90.0, 91.0, 92.0, 93.0]]
    b = [[150.0, 151.0], [160.0, 161.0, 162.0]]
    cells = dict(
        zip(
            STATISTICS_HEADERS,
            statistics_cells(compare_processes(a, b, Thresholds(resamples=20))),
            strict=True,
        )
    )
    assert (cells["processes A/B"], cells["samples A/B"]) == ("3/2", "9/5")
    # A's process medians 101, 110.5, 91.5: sd 9.5 around 101 (9.4 %); B's 150.5, 161: sd 7.4 around
    # 155.75.
    assert cells["between A/B"] == "9.4%/4.8%"
    assert cells["verdict"] == "within ±126%", (
        "no change shown, and the data allow one of up to ×2.26 either way"
    )
    assert cells["caveats"] == "f", "too few processes, as a mark the legend says"


def test_the_rule_says_how_verdicts_are_reached():
    text = rule_text(Thresholds(factor=1.2, alpha=0.01, min_processes=4))
    for part in (
        "Welch's t-test on the log process medians",
        "p < 0.01",
        "×1.2",
        "at least 4 processes",
        "hierarchical",
    ):
        assert part in text


def test_markdown_table_escapes_what_would_break_it():
    table = markdown_table([["a|b", "line\nbreak"]], ["x", "y"])
    assert "a\\|b" in table and "line break" in table
    assert table.splitlines()[2].count("|") - table.splitlines()[2].count("\\|") == 3


SPREAD = [[100.0, 140.0, 60.0], [180.0, 100.0, 120.0], [90.0, 95.0, 250.0]]


def test_every_caveat_of_the_process_rule_has_a_mark_of_its_own():
    few = compare_processes([[1.0, 1.1]], [[2.0, 2.1]])
    noisy = compare_processes(SPREAD, SPREAD, loaded=(1, 0))
    under_load = replace(noisy, flags=(*noisy.flags, SEPARATE_UNDER_LOAD))
    for comparison in (few, noisy, under_load):
        assert comparison.flags and OTHER not in marks_of(comparison.flags, DEFAULT_THRESHOLDS)
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


def test_a_value_s_cells_show_it_as_printed():
    """R8-13: a printed string is shown on the page, not as 'nan'."""
    from harness.analysis.metrics import ProcessSamples, compare_metric
    from harness.metric_names import parse_metric_name

    status = parse_metric_name("json.status")
    a = ProcessSamples([[math.nan]] * 3, printed=[('"converged"',)] * 3)
    b = ProcessSamples([[math.nan]] * 3, printed=[('"diverged"',)] * 3)
    found = compare_metric(a, b, DEFAULT_THRESHOLDS, status)
    cells = statistics_cells(found)
    assert cells[2:4] == ['"converged"', '"diverged"']
    assert str(comparison_cell(found)).startswith('"diverged" ')
    assert found.said == 'changed from "converged" to "diverged" in every process'
    assert (a.shown(status), b.shown(status)) == ('"converged"', '"diverged"')
    checksum = ProcessSamples([[12345678901234567]] * 2, printed=[("12345678901234567",)] * 2)
    assert checksum.shown(parse_metric_name("json.sum")) == "12345678901234567", "never 1.235e+16"
