import re
import shutil
from pathlib import Path

import pytest

from harness.analysis.set_comparison import ResultSet, compare_sets
from harness.analysis.significance import DEFAULT_THRESHOLDS
from harness.errors import UsageError
from harness.render.set_comparison import render_markdown, render_text
from tests.conftest import (
    FIXTURES,
    SCRIPT_RESULT,
    SEGFAULT,
    assert_valid_tables,
    derive,
    died,
    real_result,
    write_results,
)


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
    crashed = died(derive(data, release="0.4.26"), SEGFAULT)
    scan = real_result("scan_sync-0.12.0.1")
    folder = write_results(tmp_path / "r", [data, crashed, scan, derive(scan, release="0.4.26")])
    comparison = compare_sets(*sides(folder, "0.12.0.1", "0.4.26"), [], DEFAULT_THRESHOLDS)
    assert comparison.broken == [
        "async_dispatch N=1000 (cpu): A ok in 5 of 5 processes; B SIGSEGV (exit 139) in 10 of 10 "
        "processes (ok → SIGSEGV (exit 139))"
    ]
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


def _script(release: str, figures: dict | None = None, drop: str = "") -> dict:
    """The loop_json script's real result (6 processes) posing as ``release``, each process's
    ``figures`` set, ``drop`` left out of every one."""
    import json

    [path] = SCRIPT_RESULT.glob("*.json")
    data = derive(json.loads(path.read_text()), release=release)
    for process in data["processes"]:
        process["figures"] = {**process["figures"], **(figures or {})}
        process["figures"].pop(drop, None)
    return data


def _compared(tmp_path, a: dict, b: dict):
    folder = write_results(tmp_path / "r", [a, b])
    return compare_sets(*sides(folder, a["release"], b["release"]), [], DEFAULT_THRESHOLDS)


def test_a_value_changed_in_every_process_and_a_number_only_in_a_are_worse(tmp_path):
    """#74.3: a value "changed from 1 to 0 in every process" and a metric printed only in A were
    "Nothing got significantly worse in B.", exit 0: each shape is judged by its comparison."""
    a = _script("0.4.30", {"json.ok_flag": 1.0})
    b = _script("0.4.31", {"json.ok_flag": 0.0}, drop="json.steps")
    comparison = _compared(tmp_path, a, b)
    assert comparison.worse(short=True) == [
        "script-loop_json –: json.ok_flag changed from 1 to 0 in every process",
        "script-loop_json –: json.steps printed in 10 of 10 processes on A, 0 of 10 on B",
    ], comparison.worse()
    text = render_text(comparison)
    assert "Worse in B: script-loop_json –: json.ok_flag changed from 1 to 0" in text
    assert "Nothing got" not in text
    assert re.search(r"json\.steps +10 of 10 +0 of 10 ", text), text
    assert "**Worse in B**: " in render_markdown(comparison)
    back = _compared(tmp_path / "back", b, a).worse(short=True)
    assert back == ["script-loop_json –: json.ok_flag changed from 0 to 1 in every process"], (
        "a number printed again is not worse; a value that moved is, either way"
    )


def test_processes_dying_in_b_however_each_died_are_worse_on_their_counts(tmp_path):
    a = _script("0.4.30")
    b = died(
        died(_script("0.4.31"), SEGFAULT),
        {"status": "timeout", "how": "timeout", "processes": 3},
    )
    comparison = _compared(tmp_path, a, b)
    [broken] = comparison.worse()
    assert "SIGSEGV in 7" in broken and "timed out in 3" in broken, broken
    assert "A ok in 10 of 10 processes" in broken
    some = died(_script("0.4.31"), {**SEGFAULT, "processes": 1})
    once = _compared(tmp_path / "once", a, some)
    assert not once.worse(), "1 of 6 against 0 of 6: undecided counts, not worse"
    [pair] = once.pairs
    assert pair.ending is not None and "Fisher p=1" in pair.ending.said
    said = "how the processes ended: died in 0 of 10 processes on A, 1 of 10 on B"
    assert said in render_text(once)


def test_a_result_that_could_not_be_read_is_said_and_the_one_compared_instead_named(tmp_path):
    from harness.store.results import write_result

    folder = tmp_path / "r"
    write_result(folder, _script("0.4.30"))
    taken = write_result(folder, _script("0.4.31"))
    (taken.parent / "20991231T000000-ffffffff.json").write_text("{ not json")
    comparison = compare_sets(*sides(folder, "0.4.30", "0.4.31"), [], DEFAULT_THRESHOLDS)
    [pair] = comparison.pairs
    assert pair.notes[0].startswith("B: 20991231T000000-ffffffff.json beside it could not be read")
    assert f"this compares {taken.name}, which may be an older result" in pair.notes[0]
    [left] = comparison.left_out
    assert "20991231T000000-ffffffff.json" in left and "Left out, unreadable:" in render_text(
        comparison
    )


def test_processes_that_run_again_in_b_are_a_comparison_never_bad_input(tmp_path):
    """Every process of A dead, every one of B ok: judged by how they ended (not worse), where it
    was 'nothing in A and B is comparable' (exit 2, bad input)."""
    comparison = _compared(tmp_path, died(_script("0.4.30"), SEGFAULT), _script("0.4.31"))
    assert not comparison.worse() and comparison.endings_judged == 1
    [said] = comparison.not_compared
    assert said.endswith("(SIGSEGV → ok)"), said
