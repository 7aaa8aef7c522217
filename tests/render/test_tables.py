import math

from harness.analysis.significance import compare_samples
from harness.render.tables import comparison_cell, markdown_table, statistics_cells
from harness.units import format_ns, format_p, format_ratio, sizes_text


def test_format_ns_picks_a_readable_unit():
    assert [format_ns(v) for v in (12, 3_400, 5_600_000, 2.5e9)] == ["12 ns", "3.4 µs", "5.6 ms", "2.5 s"]


def test_sizes_are_sorted_by_name():
    assert sizes_text({"N": 100, "M": 2}) == "M=2 N=100"
    assert sizes_text({}) == "–"


def test_numbers_that_are_not_there_say_so():
    assert format_ratio(math.nan) == format_p(math.nan) == "n/a"
    assert format_p(3e-7) == "<0.0001" and format_p(0.0234) == "0.023"


def test_a_cell_carries_median_ratio_interval_and_verdict():
    base = [100.0 + i for i in range(10)]
    cell = comparison_cell(compare_samples(base, [x * 1.5 for x in base]))
    assert cell.startswith("157 ns ×1.5 [") and cell.endswith("] **slower**")
    noisy = comparison_cell(compare_samples([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
    assert noisy.endswith("unchanged ⚠")


def test_plain_text_cells_have_no_markdown():
    base = [100.0 + i for i in range(10)]
    cells = statistics_cells(compare_samples(base, [x * 1.5 for x in base]), markdown=False)
    assert cells[0] == "10/10" and cells[6] == "slower"


def test_markdown_table_escapes_what_would_break_it():
    table = markdown_table([["a|b", "line\nbreak"]], ["x", "y"])
    assert "a\\|b" in table and "line break" in table
    assert table.splitlines()[2].count("|") - table.splitlines()[2].count("\\|") == 3
