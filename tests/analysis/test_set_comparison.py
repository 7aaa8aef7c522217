import re
import shutil
from pathlib import Path

import pytest

from harness.analysis.set_comparison import ResultSet, compare_sets
from harness.analysis.significance import DEFAULT_THRESHOLDS
from harness.errors import UsageError
from harness.render.set_comparison import render_markdown, render_text
from tests.conftest import FIXTURES, assert_valid_tables, derive, real_result, write_results


@pytest.fixture
def two_releases(tmp_path) -> Path:
    """Both real cases on 0.12.0.1, and on "0.4.26" with every timing × 0.8 (test-only)."""
    records = []
    for name in ("async_dispatch-0.12.0.1", "scan_sync-0.12.0.1"):
        data = real_result(name)
        records += [data, derive(data, release="0.4.26", scale=0.8)]
    return write_results(tmp_path / "results", records)


def sides(folder, a_release=None, b_release=None, **kw):
    return ResultSet("A", folder, a_release, kw.get("a_profile")), ResultSet(
        "B", folder, b_release, kw.get("b_profile")
    )


def test_one_folder_two_releases(two_releases):
    comparison = compare_sets(*sides(two_releases, "0.4.26", "0.12.0.1"), [], DEFAULT_THRESHOLDS)
    assert [p.a.result.case for p in comparison.pairs] == ["async_dispatch", "scan_sync"]
    # Over 10 processes (the 5 repeated) against 5, Welch's t on log process medians and the ranks
    # pass at 0.002 for these six; jit's dispatch and the other cold timings, too spread, stay
    # undecided at ×1.25.
    assert comparison.worse() == [
        "async_dispatch N=1000: eager · wall (until ready) ×1.25",
        "async_dispatch N=1000: eager · dispatch (Python regains control) ×1.25",
        "async_dispatch N=1000: jit · wall (until ready) ×1.25",
        "scan_sync M=500 N=100: two_scans · wall (until ready) ×1.25",
        "scan_sync M=500 N=100: two_scans · dispatch (Python regains control) ×1.25",
        "scan_sync M=500 N=100: scan · compile (cold) ×1.25",
    ]
    assert comparison.not_compared == [] and comparison.broken == []


def test_the_other_way_round_nothing_is_worse(two_releases):
    comparison = compare_sets(*sides(two_releases, "0.12.0.1", "0.4.26"), [], DEFAULT_THRESHOLDS)
    assert comparison.worse() == []
    assert comparison.verdicts()["faster"] >= 2


def test_two_folders_and_a_case_filter(tmp_path):
    data = real_result("async_dispatch-0.12.0.1")
    a = write_results(tmp_path / "a", [data, real_result("scan_sync-0.12.0.1")])
    b = write_results(tmp_path / "b", [derive(data, scale=1.0)])
    comparison = compare_sets(
        ResultSet("A", a), ResultSet("B", b), ["async_dispatch"], DEFAULT_THRESHOLDS
    )
    assert len(comparison.pairs) == 1 and comparison.worse() == []
    assert {m.comparison.verdict for m in comparison.pairs[0].metrics} <= {"unchanged", "undecided"}


def test_several_releases_on_one_side_must_be_narrowed(two_releases):
    with pytest.raises(
        UsageError, match=r"B holds async_dispatch N=1000 for several releases \(0\.4\.26, 0\.12"
    ):
        compare_sets(*sides(two_releases, "0.4.26", None), [], DEFAULT_THRESHOLDS)


def test_the_same_set_twice_is_refused(two_releases):
    with pytest.raises(UsageError, match="A and B are the same results"):
        compare_sets(*sides(two_releases), [], DEFAULT_THRESHOLDS)


def on_devices(data, count):
    """The result with every process reporting ``count`` devices (a test-only change); returns
    it."""
    for process in data["processes"]:
        process["jax"] = {**process["jax"], "device_count": count}
    return data


def test_different_device_counts_under_one_profile_are_not_compared(tmp_path):
    data = real_result("async_dispatch-0.12.0.1")
    other = on_devices(derive(data, release="0.4.26"), 8)
    folder = write_results(tmp_path / "r", [data, other, real_result("scan_sync-0.12.0.1")])
    with pytest.raises(
        UsageError, match="1 device\\(s\\) in A, 8 in B under the same profile label"
    ):
        compare_sets(*sides(folder, "0.12.0.1", "0.4.26"), ["async_dispatch"], DEFAULT_THRESHOLDS)


def test_two_profiles_are_compared_on_purpose_and_say_what_differs(tmp_path):
    data = real_result("async_dispatch-0.12.0.1")
    eight = on_devices(derive(data, profile="cpu8"), 8)
    folder = write_results(tmp_path / "r", [data, eight])
    comparison = compare_sets(
        *sides(folder, a_profile="cpu", b_profile="cpu8"), [], DEFAULT_THRESHOLDS
    )
    [pair] = comparison.pairs
    assert (
        "profile cpu (A) vs cpu8 (B)" in pair.title() and "devices 1 (A) vs 8 (B)" in pair.title()
    )


def test_a_run_that_broke_in_b_is_worse(tmp_path):
    data = real_result("async_dispatch-0.12.0.1")
    crashed = {**derive(data, release="0.4.26"), "status": "crashed"}
    scan = real_result("scan_sync-0.12.0.1")
    folder = write_results(tmp_path / "r", [data, crashed, scan, derive(scan, release="0.4.26")])
    comparison = compare_sets(*sides(folder, "0.12.0.1", "0.4.26"), [], DEFAULT_THRESHOLDS)
    assert comparison.broken == ["async_dispatch N=1000 (cpu): ok in A, crashed in B"]
    assert comparison.worse() == comparison.broken


def test_text_and_markdown_say_the_same(two_releases):
    comparison = compare_sets(*sides(two_releases, "0.4.26", "0.12.0.1"), [], DEFAULT_THRESHOLDS)
    text, markdown = render_text(comparison), render_markdown(comparison)
    assert "Worse in B:" in text and "**Worse in B**:" in markdown
    assert "**" not in text.split("\n\n", 2)[2], "no markdown in the terminal tables"
    assert_valid_tables(markdown)
    assert re.search(r"\| jit · wall \(until ready\) +\| 10/5 +\| 96/48 ", markdown), (
        "processes, then samples"
    )


def test_one_release_from_two_machines_is_not_one_sample(tmp_path):
    machines = FIXTURES / "machines"
    for folder in ("runner-a", "runner-b"):
        shutil.copytree(machines / folder, tmp_path / "results", dirs_exist_ok=True)
    with pytest.raises(
        UsageError, match=r"B holds scan_sync M=500 N=100 of jax 0\.12\.0\.1 from several machines"
    ):
        compare_sets(*sides(tmp_path / "results", "0.4.26", "0.12.0.1"), [], DEFAULT_THRESHOLDS)
