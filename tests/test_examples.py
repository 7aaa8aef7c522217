"""The committed examples (reports/examples/, linked from the README) are what today's renderers
write.

Each example is re-rendered's twin: the same renderer run today on stored results (fixture files)
writes pages whose structure (the headings, with names and numbers masked, and every table's
columns) must be the example's.  Timings and answers differ from run to run and are not
compared.  When this fails, the renderer changed: regenerate the examples by the commands in
reports/README.md.
"""

import re
from pathlib import Path

import pytest

from harness.render.release_answers import bisect_markdown
from harness.render.triage_answer import triage_markdown
from tests.conftest import assert_valid_tables

EXAMPLES = Path(__file__).parent.parent / "reports" / "examples"
# Names and numbers an example's headings hold, masked: releases, metric keys, case names, sizes,
# counts.
_MASKS = [
    (re.compile(r"\d+(\.\d+)+"), "V"),
    (re.compile(r"\b[a-z_0-9]+[. ][a-z_]+_(ns|ms|bytes)\b"), "METRIC"),
    (re.compile(r"\b[A-Z]=\d+"), "SIZE"),
    (re.compile(r"\d+"), "N"),
    # a column named for a release (``vs 0.4.31``), as the fixtures name theirs (``vs good``)
    (re.compile(r"^vs (V|good|bad)$"), "vs RELEASE"),
]


def _body(markdown: str) -> list[str]:
    """The page as the command wrote it: the example's note on when and how it was made (a quote and
    a rule above the page) left out."""
    lines = markdown.splitlines()
    start = 0
    while start < len(lines) and (lines[start].startswith(">") or lines[start] in ("", "---")):
        start += 1
    return lines[start:]


def _mask(text: str, names: tuple[str, ...]) -> str:
    for name in names:
        text = text.replace(name, "CASE")
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text


def structure(markdown: str, names: tuple[str, ...]) -> tuple[set[str], set[tuple[str, ...]]]:
    """(the headings, masked; the columns of every table)."""
    lines = _body(markdown)
    headings = {_mask(line, names) for line in lines if line.startswith("#")}
    columns = {
        tuple(_mask(cell.strip(), names) for cell in lines[i - 1].strip("|").split("|"))
        for i, line in enumerate(lines)
        if i and re.fullmatch(r"\|[-:| ]+\|", line)
    }
    return headings, columns


def example(path: str) -> str:
    found = EXAMPLES / path
    if not found.is_file():
        pytest.fail(f"reports/examples/{path} is missing: the README links it")
    return found.read_text()


def _metric_heading(headings: set[str]) -> set[str]:
    """A per-metric table's heading (``### METRIC · eager · wall (until ready)``) by its kind: the
    label after the key names what is measured, which depends on the case."""
    return {h.split(" · ")[0] if h.startswith("### ") else h for h in headings}


def test_the_triage_example_is_what_the_triage_renderer_writes_today():
    from tests.render.test_triage_answer import outcome

    [name] = [p.name for p in (EXAMPLES / "triage").glob("triage-*.md")]
    shown = example(f"triage/{name}")
    assert_valid_tables("\n".join(_body(shown)))
    found, setting = outcome({"0.4.31": 1, "0.4.33": 3}, holds={"0.4.33": False})
    today = triage_markdown(found, setting, 5, ("plots/x.png", ""))
    names = ("scan_sync", "async_dispatch")
    example_headings, example_tables = structure(shown, names)
    today_headings, today_tables = structure(today, names)
    assert _metric_heading(example_headings) == _metric_heading(today_headings)
    assert example_tables == today_tables


def test_the_bisect_example_is_what_the_bisect_renderer_writes_today():
    from tests.render.test_release_answers import bisected, setting

    [name] = [p.name for p in (EXAMPLES / "bisect").glob("bisect-*.md")]
    shown = example(f"bisect/{name}")
    today = bisect_markdown(bisected(), setting())
    names = ("scan_sync", "async_dispatch")
    assert structure(shown, names) == structure(today, names)
    assert (EXAMPLES / "bisect" / name).with_suffix(".json").is_file(), "its data beside it"


def test_the_issue_example_is_what_the_draft_renderer_writes_today():
    from harness.render.issue_draft import render
    from tests.render.test_issue_draft import draft_inputs

    shown = example("issue/scan_sync.md")
    today = render(draft_inputs())
    names = ("scan_sync",)
    assert structure(shown, names) == structure(today, names)
    for script in ("scan_sync.py", "scan_sync-full.py"):
        assert (EXAMPLES / "issue" / script).is_file(), "the scripts beside the draft"


def test_the_catalogue_example_is_what_the_report_renderer_writes_today(tmp_path):
    from tests.conftest import derive, real_result, write_results
    from tests.render.test_report import WHEN, load, render_report

    data = real_result("scan_sync-0.12.0.1")
    folder = write_results(tmp_path, [data, derive(data, release="0.4.26", scale=3)])
    results = load(folder)
    pages = render_report(results, [], WHEN)
    names = ("scan_sync", "async_dispatch", "nested_scan", "sharding_scaling", "switch_scans")
    names += ("vmapped_scans",)
    index_headings, index_tables = structure(example("catalogue/index.md"), names)
    today_headings, today_tables = structure(pages["index.md"], names)
    assert index_headings <= today_headings | set(), index_headings - today_headings
    assert index_tables <= today_tables, index_tables - today_tables
    case_headings, case_tables = structure(example("catalogue/scan_sync.md"), names)
    page_headings, page_tables = structure(pages["scan_sync.md"], names)
    assert case_tables == page_tables
    assert _metric_heading(case_headings) <= _metric_heading(page_headings) | {""}
