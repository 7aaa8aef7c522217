"""compare's output: the tables first, the rule in one line above them and in full once, after
them."""

from harness.analysis.set_comparison import ResultSet, compare_sets
from harness.analysis.significance import DEFAULT_THRESHOLDS
from harness.render.screen import fits
from harness.render.set_comparison import render_markdown, render_text
from harness.render.tables import rule_line, rule_text
from tests.conftest import FIXTURES, assert_valid_tables, derive, real_result, write_results


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


def test_the_terminal_text_fits_a_screen_and_ends_with_the_verdict_and_the_report(tmp_path):
    found = comparison(tmp_path)
    text = render_text(found, "comparison.md")
    assert fits(text)
    lines = text.splitlines()
    assert lines[0] == found.summary()
    assert lines[-2].startswith(("Worse in B", "Nothing got significantly worse"))
    assert lines[-1] == "Report: comparison.md"
    assert rule_text(DEFAULT_THRESHOLDS).replace("*", "") not in text, (
        "the rule in full is the report's"
    )
    assert render_text(found).splitlines()[-1].endswith("--markdown FILE, --json FILE")


def test_a_script_compared_across_runs_fits_with_its_own_numbers_first_and_marks_explained():
    """Two real runs of one script, 6 processes each, in separate invocations
    (tests/fixtures/compare)."""
    a, b = (ResultSet(side.upper(), FIXTURES / "compare" / side) for side in "ab")
    text = render_text(compare_sets(a, b, [], DEFAULT_THRESHOLDS))
    assert fits(text)
    metrics = [line.split()[0] for line in text.splitlines() if line.startswith("  json.")]
    assert metrics == ["json.loop_ms", "json.steps"]
    assert (
        text.index("json.steps") < text.index("process.wall_ns") < text.index("process.import_ns")
    )
    [steps] = [line for line in text.splitlines() if line.startswith("  json.steps")]
    assert "the same in all 12 processes" in steps and "±" not in steps
    assert "caveats: L separate runs, one measured under load: no verdict" in text
    assert "measured under load … no verdict" not in text and text.count("no verdict") == 2


def test_many_pairs_fold_the_unchanged_metrics_to_stay_on_one_screen(tmp_path):
    data = real_result("async_dispatch-0.12.0.1")
    runs = [
        derive(data, release=release, sizes={"N": n}, scale=scale, id=f"{data['id']}-n{n}")
        for n in range(1, 9)
        for release, scale in (("0.4.26", 1.0), ("0.12.0.1", 1.3 if n == 3 else 1.0))
    ]
    folder = write_results(tmp_path / "results", runs)
    a, b = ResultSet("A", folder, "0.4.26", None), ResultSet("B", folder, "0.12.0.1", None)
    text = render_text(compare_sets(a, b, [], DEFAULT_THRESHOLDS))
    assert fits(text), text
    assert "Worse in B: async_dispatch N=3: " in text


def test_a_value_that_changed_is_listed_when_the_screen_folds_never_a_traceback(tmp_path):
    """Pairs too many for one screen keep only what changed: a value's change among them (its
    verdict 'changed', once missing from the order, raised KeyError)."""
    from harness.analysis.set_comparison import ResultSet, compare_sets
    from harness.analysis.significance import DEFAULT_THRESHOLDS
    from tests.analysis.test_set_comparison import _script
    from tests.conftest import write_results

    records = []
    for number in range(6):
        for release, flag in (("0.4.30", 1.0), ("0.4.31", 0.0)):
            data = _script(release, {"json.ok_flag": flag})
            data["case"], data["id"] = f"script-s{number}", f"{data['id']}-s{number}"
            records.append(data)
    folder = write_results(tmp_path / "r", records)
    sides = ResultSet("A", folder, "0.4.30"), ResultSet("B", folder, "0.4.31")
    text = render_text(compare_sets(*sides, [], DEFAULT_THRESHOLDS))
    assert "ok_flag" in text and "changed from 1 to 0 in every process" in text
    assert text.splitlines()[-2].startswith("Worse in B: script-s0 –: json.ok_flag changed")
