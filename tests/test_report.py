import json
import re
import shutil
from datetime import UTC, datetime

from harness.report import format_ns, latest_runs, release_key, render, write_report
from harness.results import load_results

from .conftest import FIXTURES, assert_valid_tables, tables

WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def fixture_results():
    results, problems = load_results(FIXTURES / "results")
    assert problems == []
    return results


def test_report_has_overview_verdicts_and_environment():
    text = render(fixture_results(), [], WHEN)
    assert "## Overview" in text
    assert re.search(r"\| async_dispatch +\| 0\.12\.0\.1 +\| cpu +\| N=1000 +\| ok +\| holds", text)
    assert "## scan_sync" in text and "returned from scan 1" in text
    assert "jit: compile (cold)" in text
    assert text.count("<details>") == text.count("</details>") == 2
    assert "jax:    0.12.0.1" in text


def test_tables_are_valid_github_markdown():
    text = render(fixture_results(), [], WHEN)
    assert tables(text)
    assert_valid_tables(text)


def test_unusable_files_are_named_in_the_report(tmp_path):
    shutil.copytree(FIXTURES / "results", tmp_path / "results")
    (tmp_path / "results" / "broken.json").write_text("{")
    written, problems = write_report(tmp_path / "results", tmp_path / "out")
    assert [p.path.name for p in problems] == ["broken.json"]
    text = written[0].read_text()
    assert "`broken.json`: unreadable JSON" in text and "## Overview" in text


def test_empty_results_say_what_to_do():
    assert "No results yet" in render([], [], WHEN)


def test_latest_run_per_cell_is_shown_and_older_ones_counted(tmp_path):
    data = json.loads((FIXTURES / "results" / "async_dispatch-0.12.0.1.json").read_text())
    folder = tmp_path / "r"
    folder.mkdir()
    for i, stamp in enumerate(["2026-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00"]):
        (folder / f"{i}.json").write_text(json.dumps({**data, "created_at": stamp, "id": f"run{i}"}))
    results, _ = load_results(folder)
    [(chosen, older)] = latest_runs(results)
    assert chosen.data["id"] == "run1" and older == 1


def test_release_order_is_numeric():
    assert sorted(["0.10.2", "0.4.26", "0.12.0.1", "0.4.9"], key=release_key) == [
        "0.4.9",
        "0.4.26",
        "0.10.2",
        "0.12.0.1",
    ]


def test_format_ns_picks_a_readable_unit():
    assert [format_ns(v) for v in (12, 3_400, 5_600_000, 2.5e9)] == ["12 ns", "3.4 µs", "5.6 ms", "2.5 s"]
