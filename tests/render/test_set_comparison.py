"""compare's output: the tables first, the rule in one line above them and in full once, after them."""

from harness.analysis.set_comparison import ResultSet, compare_sets
from harness.analysis.significance import DEFAULT_THRESHOLDS
from harness.render.set_comparison import render_markdown, render_text
from harness.render.tables import rule_line, rule_text
from tests.conftest import assert_valid_tables, derive, real_result, write_results


def comparison(tmp_path):
    data = real_result("async_dispatch-0.12.0.1")
    folder = write_results(tmp_path / "results", [data, derive(data, release="0.4.26", scale=0.8)])
    a, b = ResultSet("A", folder, "0.4.26", None), ResultSet("B", folder, "0.12.0.1", None)
    return compare_sets(a, b, [], DEFAULT_THRESHOLDS)


def test_the_markdown_states_the_rule_in_one_line_and_explains_it_once_after_the_tables(tmp_path):
    markdown = render_markdown(comparison(tmp_path))
    assert_valid_tables(markdown)
    paragraph = rule_text(DEFAULT_THRESHOLDS)
    assert markdown.count(paragraph) == 1
    assert (
        markdown.index(rule_line(DEFAULT_THRESHOLDS, cells=False))
        < markdown.index("| metric")
        < markdown.index(paragraph)
    )
    assert "[How the numbers are made](#how-the-numbers-are-made)" in markdown
    assert "\n## How the numbers are made\n" in markdown


def test_the_terminal_text_ends_with_its_summary_and_explains_the_rule_once(tmp_path):
    text = render_text(comparison(tmp_path))
    paragraph = rule_text(DEFAULT_THRESHOLDS).replace("*", "")
    assert text.count(paragraph) == 1 and text.index("metric") < text.index(paragraph)
    assert (
        text.rstrip().splitlines()[-1].startswith(("Worse in B", "Nothing got significantly worse"))
    )
