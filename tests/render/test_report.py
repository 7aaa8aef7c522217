import dataclasses
import re
from datetime import UTC, datetime

import pytest

from harness.analysis.claims import process_claims
from harness.analysis.report_model import build_model
from harness.render.report import INDEX, render_pages
from harness.render.tables import rule_text
from harness.store.results import load_results
from tests.conftest import (
    FIXTURES,
    assert_valid_tables,
    derive,
    document,
    in_processes,
    real_result,
    set_claim,
    write_results,
)

WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def render_report(results, problems, generated_at, **options):
    """Every page of the report on ``results``: the model, then the pages."""
    return render_pages(build_model(results, problems, **options), generated_at)


def with_jax(data, **facts):
    """The result with every process's JAX facts changed (a test-only change); returns it."""
    for process in data["processes"]:
        process["jax"] |= facts
    return data


def load(folder):
    results, problems = load_results(folder)
    assert problems == []
    return results


@pytest.fixture
def releases(tmp_path):
    """async_dispatch on four releases: the claim fails (in every process) on the two oldest;
    0.4.26's timings are the real ones divided by 1.5 (a test-only injection), 0.5.3's an exact
    copy."""
    base = real_result("async_dispatch-0.12.0.1")
    records = [
        set_claim(derive(base, release="0.4.26", scale=1 / 1.5), False),
        set_claim(derive(base, release="0.4.30"), False),
        derive(base, release="0.5.3"),
        base,
        real_result("scan_sync-0.12.0.1"),
    ]
    return write_results(tmp_path / "results", records)


def skipped_under(data, profile, release):
    """The result posing as a cell skipped in its one process under another profile (a test-only
    change)."""
    return derive(
        in_processes(data, ["skipped"]),
        release=release,
        profile=profile,
        status="skipped",
        detail="uses 1 device",
    )


def test_rows_skipped_on_every_release_are_named_below_the_claims_table(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    records = [
        base,
        derive(base, release="0.4.26"),
        skipped_under(base, "cpu8", "0.4.26"),
        skipped_under(base, "cpu8", "0.12.0.1"),
        # skipped on one release, measured on the other: a row
        skipped_under(base, "cpu4", "0.4.26"),
        derive(base, profile="cpu4"),
    ]
    index = render_report(load(write_results(tmp_path / "r", records)), [], WHEN)[INDEX]
    claims = index.split("## Claims by release")[1].split("## ")[0]
    assert not re.search(r"\| cpu8 ", claims), (
        "a row of nothing but 'skipped' says nothing per release"
    )
    assert re.search(r"\| cpu4 +\| cpu +\| N=1000 +\| skipped +\| ✓ ", claims)
    assert (
        "Skipped on every release (each case page's runs say why): "
        "[async_dispatch](async_dispatch.md) N=1000 on cpu8." in claims
    )
    assert_valid_tables(index)


def test_the_index_puts_each_discussions_own_figure_beside_ours_at_its_sizes(tmp_path):
    quoted = "test1(10_000) on the poster's GPU (model not given): t1 = 0.001s, t2 = 0.137s"
    base = real_result("async_dispatch-0.12.0.1")
    records = [derive(base, profile="tpu", source_figure=quoted), real_result("scan_sync-0.12.0.1")]
    index = render_report(load(write_results(tmp_path / "r", records)), [], WHEN)[INDEX]
    claims = index.split("## Claims by release")[1].split("## ")[0]
    [row] = [line for line in claims.splitlines() if quoted in line]
    assert row.startswith("| [async_dispatch](async_dispatch.md) | tpu ")
    assert "| jax 0.12.0.1 on cpu: eager: dispatch" in row, "ours: the case's own evidence"
    assert "scan_sync" not in claims.split("At the sizes each discussion ran")[1], "no figure"
    assert_valid_tables(index)


def test_index_gives_claim_verdicts_as_release_ranges(releases):
    index = render_report(load(releases), [], WHEN)[INDEX]
    assert "| 0.4.26 | 0.4.30 | 0.5.3 | 0.12.0.1 |" in re.sub(r" +", " ", index)
    row = (
        r"\| \[async_dispatch\]\(async_dispatch\.md\) +\| cpu +\| cpu +\| N=1000 +\| ✗ +\| ✗ +\| ✓ "
        r"+\| ✓ "
    )
    assert re.search(row, index), "case, profile, backend, sizes, then one column per release"
    assert "holds on 0.5.3–0.12.0.1; does not hold on 0.4.26–0.4.30" in index
    assert "holds on 0.12.0.1" in index and "[scan_sync](scan_sync.md)" in index


def test_case_page_has_releases_as_columns_and_verdicts_in_cells(releases):
    page = render_report(load(releases), [], WHEN)["async_dispatch.md"]
    assert re.search(
        r"\| metric +\| jax 0\.4\.26 +\| jax 0\.4\.30 +\| jax 0\.5\.3 +\| jax 0\.12\.0\.1 +\|", page
    )
    assert "Baseline (A): jax 0.4.26, the oldest release present." in page
    jit_wall = next(line for line in page.splitlines() if line.startswith("| jit · wall"))
    cells = [c.strip() for c in jit_wall.strip("|").split("|")]
    assert cells[1].endswith("(baseline)")
    assert all("×1.5 " in c and "**slower**" in c for c in cells[2:]), cells
    assert "Statistics in full" in page


def test_an_identical_copy_is_not_called_changed_and_the_baseline_can_be_chosen(releases):
    page = render_report(load(releases), [], WHEN, baseline="0.5.3")["async_dispatch.md"]
    assert "Baseline (A): jax 0.5.3, chosen with --baseline." in page
    jit_wall = next(line for line in page.splitlines() if line.startswith("| jit · wall"))
    cells = [c.strip() for c in jit_wall.strip("|").split("|")]
    assert "×0.667 " in cells[1] and "faster" in cells[1]
    # Its processes scatter by 20 %: the same figure, but ten processes cannot show it is unchanged
    # within 5 %.
    assert "×1 " in cells[2] and "within ±11%" in cells[2], (
        "the change the data still allow, not 'unchanged'"
    )
    assert cells[3].endswith("(baseline)")


def test_groups_that_differ_are_not_put_side_by_side(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    eight = with_jax(derive(base, profile="cpu8"), device_count=8)
    bigger = derive(base, sizes={"N": 2000})
    pages = render_report(load(write_results(tmp_path / "r", [base, eight, bigger])), [], WHEN)
    page = pages["async_dispatch.md"]
    assert "they differ in profile (cpu, cpu8), sizes (N=1000, N=2000), device count (1, 8)" in page
    timings, structure = page.split("## Runs in detail")[0].split(
        "## Compiled structure by release (exact)"
    )
    assert timings.count("### profile ") == 3, "one timing section per group"
    assert structure.count("### profile ") == 3, (
        "the real runs carry HLO facts: one structure table per group"
    )
    assert page.count("Only jax 0.12.0.1 ran in this group: nothing to compare yet.") == 3
    sections = page.split("## Runs in detail")[0].split("### profile ")[1:]
    assert not any("×" in section for section in sections), "no ratio across groups"


def test_a_failed_release_shows_in_claims_but_not_in_timings(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    # every process failed: no measurements, no claim
    failed = in_processes(derive(base, release="0.4.26"), ["failed"] * 5) | {"detail": "boom"}
    assert failed["status"] == "failed" and not any(
        "programs" in p or "claim" in p for p in failed["processes"]
    )
    pages = render_report(load(write_results(tmp_path / "r", [base, failed])), [], WHEN)
    assert "failed on 0.4.26" in pages[INDEX]
    timings = (
        pages["async_dispatch.md"].split("## Timings by release")[1].split("## Runs in detail")[0]
    )
    assert "jax 0.4.26" not in timings


def test_a_credential_in_a_stored_result_merged_or_edited_is_redacted_on_every_page(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    token = "ghp_" + "0123456789abcdefghijklmn"
    failed = in_processes(derive(base, release="0.4.26"), ["failed"] * 5)
    failed["detail"] = f"RuntimeError: Authorization: Bearer {token}"
    pages = render_report(load(write_results(tmp_path / "r", [base, failed])), [], WHEN)
    shown = "".join(pages.values())
    assert "Authorization: <redacted>" in shown and "ghp_" not in shown


def test_different_machines_are_warned_about(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    elsewhere = derive(base, release="0.4.26", host={**base["host"], "cpu_model": "Other CPU"})
    page = render_report(load(write_results(tmp_path / "r", [base, elsewhere])), [], WHEN)[
        "async_dispatch.md"
    ]
    assert "Measured on different machines" in page and "Other CPU (jax 0.4.26)" in page


def test_exact_compiled_facts_have_their_own_table_with_changes_in_bold():
    page = render_report(load(FIXTURES / "synthetic"), [], WHEN)["sharding_scaling.md"]
    facts = page.split("## Compiled structure by release (exact)")[1].split("## Runs in detail")[0]
    assert re.search(r"\| jit_d8 · fusions +\| 3 +\| \*\*2\*\* +\|", facts)
    assert re.search(r"\| jit_d8 · flops +\| 2,000,000 +\| 2,000,000 +\|", facts), (
        "unchanged: not bold"
    )
    assert re.search(r"\| jit_d8 · known trip counts +\| unknown +\| \*\*100\*\* +\|", facts)


@pytest.mark.parametrize("folder", ["results", "synthetic"])
def test_every_page_is_valid_github_markdown(folder, releases):
    for source in (FIXTURES / folder, releases):
        for text in render_report(load(source), [], WHEN).values():
            assert_valid_tables(text)
            assert text.count("<details>") == text.count("</details>")


def test_pipes_in_cells_do_not_break_tables(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    for process in base["processes"]:
        process["programs"]["a|b"] = process["programs"].pop("jit")
    for text in render_report(load(write_results(tmp_path / "r", [base])), [], WHEN).values():
        assert_valid_tables(text)


def test_run_detail_and_environment_stay_on_the_case_page():
    page = render_report(load(FIXTURES / "results"), [], WHEN)["scan_sync.md"]
    details = page.split("## Runs in detail")[1]
    assert "returned from scan 1" in details and "compile (cold)" in details
    assert "<summary>Environment</summary>" in details and "jax:    0.12.0.1" in details


def test_empty_results_say_what_to_do():
    assert render_report([], [], WHEN) == {INDEX: render_report([], [], WHEN)[INDEX]}
    assert "No results yet" in render_report([], [], WHEN)[INDEX]


def test_rendering_is_deterministic(releases):
    results = load(releases)
    assert render_report(results, [], WHEN) == render_report(results, [], WHEN)


def test_search_measurements_are_left_out_and_counted():
    results, _ = load_results(FIXTURES / "results")
    searched = [
        dataclasses.replace(
            r, result=dataclasses.replace(r.result, size_source="search", id=f"s{i}")
        )
        for i, r in enumerate(results)
    ]
    pages = render_report([*results, *searched], [], datetime(2026, 1, 1, tzinfo=UTC))
    assert (
        f"{len(searched)} measurement(s) taken by size searches are left out" in pages["index.md"]
    )
    assert (
        render_report(results, [], datetime(2026, 1, 1, tzinfo=UTC))["index.md"].count(
            "size searches"
        )
        == 0
    )


@pytest.fixture
def two_machines(tmp_path):
    """The fixture artifacts of two machines (one simulated), merged as CI merges them."""
    from harness.store.results import merge

    sources = ["runner-a", "runner-b", "runner-a-again"]
    merged = merge([FIXTURES / "machines" / name for name in sources], tmp_path / "results")
    assert merged.problems == [] and merged.duplicates == 1
    return load(tmp_path / "results")


def agreeing(stored, holds=None):
    """A one-process (version 1) result as if measured in three processes that all agree with its
    own verdict, or with ``holds`` (a test-only change); same id, same machine."""
    verdict = process_claims(stored)[0].holds if holds is None else holds
    return in_processes(document(stored), ["ok"] * 3, holds=[verdict] * 3)


def machine_of(folder):
    [found] = {r.result.machine for r in load(FIXTURES / "machines" / folder)}
    return found[:8]


def test_timings_of_two_machines_are_never_compared(two_machines):
    a, b = machine_of("runner-a"), machine_of("runner-b")
    pages = render_report(two_machines, [], WHEN)
    assert f"Results from 2 machines ({', '.join(sorted([a, b]))})" in pages[INDEX]
    timings = (
        pages["scan_sync.md"].split("## Timings by release")[1].split("## Compiled structure")[0]
    )
    assert "they differ in machine" in timings
    sections = {s.splitlines()[0].rsplit(" ", 1)[1]: s for s in timings.split("### profile ")[1:]}
    assert set(sections) == {a, b}
    assert "Baseline (A): jax 0.4.26" in sections[a] and "×" in sections[a], (
        "one machine: releases compared"
    )
    assert "Only jax 0.12.0.1 ran in this group" in sections[b] and "×" not in sections[b]


def test_compiled_structure_and_claims_are_shown_across_machines(two_machines, tmp_path):
    pages = render_report(two_machines, [], WHEN)
    structure = (
        pages["scan_sync.md"]
        .split("## Compiled structure by release (exact)")[1]
        .split("## Runs in detail")[0]
    )
    assert "From 2 machines" in structure
    assert re.search(r"\| scan · known trip counts +\| unknown +\| \*\*500\*\* +\|", structure)
    # The machine fixtures were measured in one process each: every claim there is unsettled.
    row = r"\| \[scan_sync\]\(scan_sync\.md\) +\| cpu +\| cpu +\| M=500 N=100 +\| \? +\| \? +\|"
    assert re.search(row, pages[INDEX]), "both machines unsettled on 0.12.0.1: one ?"
    assert (
        "unsettled on 0.4.26–0.12.0.1" in pages[INDEX] and "differs by machine" not in pages[INDEX]
    )
    every_run = pages[INDEX].split("Every run shown")[1]
    assert every_run.count("| scan_sync ") == 3, "each machine's run listed once, the duplicate not"
    settled = load(write_results(tmp_path / "settled", [agreeing(r) for r in two_machines]))
    index = render_report(settled, [], WHEN)[INDEX]
    row = r"\| \[scan_sync\]\(scan_sync\.md\) +\| cpu +\| cpu +\| M=500 N=100 +\| ✗ +\| ✓ +\|"
    assert re.search(row, index), "both machines agree on 0.12.0.1 in every process: one ✓"


def test_machines_that_disagree_on_a_claim_are_shown_as_such(two_machines, tmp_path):
    b = next(r for r in two_machines if r.result.id.endswith("-b"))
    flipped = agreeing(b, holds=False) | {"id": b.result.id + "-flipped"}
    others = [agreeing(r) for r in two_machines if r is not b]
    index = render_report(load(write_results(tmp_path / "flipped", [*others, flipped])), [], WHEN)[
        INDEX
    ]
    assert "differs by machine on 0.12.0.1" in index


def test_a_gpu_run_shows_its_device_and_driver(tmp_path):
    base = real_result("scan_sync-0.12.0.1")
    gpu = {
        "device_kinds": ["NVIDIA H200"],
        "compute_capabilities": ["9.0"],
        "driver_versions": ["570.86.15"],
        "cuda_driver": "12.8",
        "cuda_packages": {"jax-cuda12-plugin": "0.12.0.1"},
    }
    on_gpu = with_jax(derive(base, profile="cuda12"), backend="gpu", gpu=gpu)
    pages = render_report(load(write_results(tmp_path / "r", [base, on_gpu])), [], WHEN)
    assert re.search(r"\| \[scan_sync\]\(scan_sync\.md\) +\| cuda12 +\| gpu +\|", pages[INDEX]), (
        "a row of its own"
    )
    assert (
        "NVIDIA H200 (compute capability 9.0); driver 570.86.15, CUDA 12.8" in pages["scan_sync.md"]
    )
    assert "jax-cuda12-plugin 0.12.0.1" in pages["scan_sync.md"]


def test_a_tpu_run_shows_its_chip_and_libtpu(tmp_path):
    on_tpu = with_jax(
        derive(real_result("scan_sync-0.12.0.1"), profile="tpu"),
        backend="tpu",
        device_kinds=["TPU v5 lite"],
    )
    on_tpu["host"]["packages"]["libtpu"] = "0.0.42.1"
    pages = render_report(load(write_results(tmp_path / "r", [on_tpu])), [], WHEN)
    assert re.search(r"\| \[scan_sync\]\(scan_sync\.md\) +\| tpu +\| tpu +\|", pages[INDEX])
    assert re.search(r"\| libtpu +\| 0\.0\.42\.1 ", pages["scan_sync.md"])


def test_the_index_names_what_changed_before_any_count(releases):
    index = render_report(load(releases), [], WHEN)[INDEX]
    named = index.index("## What changed")
    assert (
        named
        < index.index("Generated ")
        < index.index("## Claims by release")
        < index.index("| slower")
    )
    changes = index[named : index.index("Generated ")]
    pattern = (
        r"- \[async_dispatch\]\(async_dispatch\.md\) \(profile cpu, N=1000\): [a-z]+ · [a-z]+ "
        r"\([^)]+\) \*\*slower\*\*( ⚠)? ×1\.5 \[[\d.]+–[\d.]+\], jax 0\.4\.26 → 0\.4\.30"
    )
    assert re.search(pattern, changes), changes
    assert "faster" not in changes, "every later release is slower than 0.4.26"
    claim = (
        "(profile cpu, N=1000): the claim holds on 0.5.3–0.12.0.1; does not hold on 0.4.26–0.4.30"
    )
    assert claim in changes and changes.index(claim) < changes.index("**slower**"), (
        "the claim leads"
    )


def test_a_long_list_of_changes_is_cut_and_the_rest_counted(releases, monkeypatch):
    monkeypatch.setattr("harness.render.report.MOST_CHANGES_LISTED", 2)
    model = build_model(load(releases))
    index = render_pages(model, WHEN)[INDEX]
    changes = index[index.index("## What changed") : index.index("Generated ")]
    assert changes.count("\n- [async_dispatch]") == 1 + 1, (
        "the claim and the cell's largest change, one a cell"
    )
    shown = changes.count("**slower**")
    assert (
        f"- and {len(model.changes) - shown} more timing change(s) of these cells: the case pages"
        in changes
    )


def test_the_statistics_are_explained_once_on_the_index_and_linked_from_case_pages(releases):
    model = build_model(load(releases))
    pages = render_pages(model, WHEN)
    paragraph = rule_text(model.thresholds)
    assert pages[INDEX].count(paragraph) == 1 and "## How the numbers are made" in pages[INDEX]
    for name, page in pages.items():
        if name != INDEX:
            assert paragraph not in page
    assert (
        "[How the numbers are made](index.md#how-the-numbers-are-made) says how."
        in pages["async_dispatch.md"]
    )
    assert "[How the numbers are made](#how-the-numbers-are-made) says how." in pages[INDEX]


def test_nothing_changed_is_said_so(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    index = render_report(load(write_results(tmp_path / "r", [base])), [], WHEN)[INDEX]
    changes = index[index.index("## What changed") : index.index("Generated ")]
    assert (
        "- nothing: no timing changed significantly and no claim changed between releases"
        in changes
    )


def test_claims_skipped_on_every_release_are_named_without_an_empty_table():
    from harness.analysis.report_model import ClaimLine, ClaimTable
    from harness.render.report import claims_overview

    skipped = ClaimLine("scan_sync", "cpu", "cpu", "N=600", ["skipped"], "skipped")
    text = claims_overview(ClaimTable(["0.4.26"], [], skipped=[skipped]), {})
    assert text.startswith("Skipped on every release") and "|" not in text
