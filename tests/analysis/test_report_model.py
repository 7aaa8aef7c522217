import dataclasses

from harness.analysis import groups
from harness.analysis.report_model import SEARCHED, build_model
from harness.analysis.significance import Thresholds
from harness.store.results import load_results
from tests.conftest import derive, in_processes, real_result, set_claim, write_results


def test_the_model_selects_once_and_groups_what_it_selected(tmp_path, monkeypatch):
    base = real_result("async_dispatch-0.12.0.1")
    records = [
        base,
        derive(base, release="0.4.26", scale=1.25),
        # older: counted, not shown
        derive(base, release="0.4.26", created_at="2026-01-01T00:00:00+00:00"),
        derive(base, release="0.5.3", status="failed", detail="boom"),
        real_result("scan_sync-0.12.0.1"),
    ]
    results, problems = load_results(write_results(tmp_path / "r", records))
    calls = []
    real_selector = groups.newest_runs
    monkeypatch.setattr(
        groups, "newest_runs", lambda *a, **k: calls.append(a[1]) or real_selector(*a, **k)
    )
    model = build_model(results, problems)
    assert calls[0] is groups.cell_of, "the newest run of each cell is selected once, first"
    assert all(call is not groups.cell_of for call in calls[1:]), (
        "the groups come from that selection"
    )
    assert (
        model.stored == 5 and model.searched == 0 and model.order == ["0.4.26", "0.5.3", "0.12.0.1"]
    )
    assert sorted(
        (run.stored.result.release, run.older)
        for run in model.runs
        if run.stored.result.case == "async_dispatch"
    ) == [
        ("0.12.0.1", 0),
        ("0.4.26", 1),
        ("0.5.3", 0),
    ]
    assert [(t.comparison.group.key.case, t.comparison.group.releases) for t in model.timings] == [
        ("async_dispatch", ["0.4.26", "0.12.0.1"]),
        ("scan_sync", ["0.12.0.1"]),
    ], "a run that failed is in the claims, not in the timings"
    [async_page, scan_page] = model.cases
    assert (async_page.case, len(async_page.runs), len(async_page.timings)) == (
        "async_dispatch",
        3,
        1,
    )
    assert [g.key.case for g in scan_page.structures] == ["scan_sync"]


def test_measurements_of_size_searches_are_counted_and_left_out(tmp_path):
    results, _ = load_results(
        write_results(tmp_path / "r", [real_result("async_dispatch-0.12.0.1")])
    )
    searched = dataclasses.replace(
        results[0], result=dataclasses.replace(results[0].result, size_source=SEARCHED, id="s")
    )
    model = build_model([*results, searched])
    assert (model.stored, model.searched, len(model.runs)) == (1, 1, 1)
    assert model.runs[0].stored.result.id == results[0].result.id


def test_the_model_decides_claims_runs_and_tallies(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")  # the claim holds in 5 of 5 processes
    skipped = derive(
        in_processes(base, ["skipped"]), profile="cpu8", status="skipped", detail="uses 1 device"
    )
    records = [base, set_claim(derive(base, release="0.4.26", scale=1.5), False), skipped]
    model = build_model(
        load_results(write_results(tmp_path / "r", records))[0], thresholds=Thresholds(resamples=20)
    )
    assert model.claims.releases == ["0.4.26", "0.12.0.1"]
    [line] = model.claims.lines
    assert (line.profile, line.marks, line.in_words) == (
        "cpu",
        ["✗", "✓"],
        "holds on 0.12.0.1; does not hold on 0.4.26",
    )
    assert [(s.profile, s.marks) for s in model.claims.skipped] == [("cpu8", ["–", "skipped"])]
    assert {
        (r.stored.result.release, r.stored.result.profile): (r.outcome, r.mark) for r in model.runs
    } == {
        ("0.12.0.1", "cpu"): ("holds", "✓"),
        ("0.4.26", "cpu"): ("does not hold", "✗"),
        ("0.12.0.1", "cpu8"): ("skipped", "skipped"),
    }
    assert all((r.claim is None) == (r.stored.result.profile == "cpu8") for r in model.runs)
    [timing] = model.timings
    slower, faster, _, _ = timing.tallies
    assert slower == 0 and faster > 0, "0.12.0.1 is 1.5× faster"
    assert timing.hosts == [] and set(timing.wall) == {"eager", "jit"} and timing.scaling == {}
    [case] = model.cases
    assert case.claims.releases == ["0.4.26", "0.12.0.1"] and len(case.claims.lines) == 2, (
        "the case page has every row"
    )
    assert case.differ == []


def test_compiled_facts_are_cells_marked_where_they_change(tmp_path):
    base = real_result("scan_sync-0.12.0.1")
    model = build_model(
        load_results(write_results(tmp_path / "r", [base, derive(base, release="0.4.26")]))[0]
    )
    [structure] = model.cases[0].structures
    assert (
        structure.releases == ["0.4.26", "0.12.0.1"]
        and structure.machines == 1
        and structure.devices == []
    )
    assert structure.rows and all(
        cell is not None and not cell.changed for row in structure.rows for cell in row.cells
    )


def test_only_the_machines_of_the_report_show_their_noise_floor(tmp_path):
    results, _ = load_results(
        write_results(tmp_path / "r", [real_result("async_dispatch-0.12.0.1")])
    )
    here, elsewhere = object(), object()
    model = build_model(
        results, calibrations={results[0].result.machine: here, "another machine": elsewhere}
    )
    assert model.noise_floors == [here]
    assert model.timings[0].tallies is None, "one release: nothing compared, nothing tallied"


def test_the_changes_are_every_slower_or_faster_verdict_slowdowns_first_the_largest_first(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    records = [derive(base, release="0.4.26"), derive(base, release="0.4.30", scale=1.5), base]
    records.append(derive(base, release="0.5.3", scale=1 / 3))
    model = build_model(
        load_results(write_results(tmp_path / "r", records))[0], thresholds=Thresholds(resamples=20)
    )
    assert model.changes, "0.4.30 is 1.5× slower, 0.5.3 3× faster"
    kinds = [change.slower for change in model.changes]
    assert kinds == sorted(kinds, reverse=True), "every slowdown before any speed-up"
    assert {c.release for c in model.changes if c.slower} == {"0.4.30"}
    assert {c.release for c in model.changes if not c.slower} == {"0.5.3"}
    faster = [c.comparison.cost.ratio for c in model.changes if not c.slower]
    assert faster == sorted(faster), "the largest speed-up first"
    assert all(c.baseline == "0.4.26" and c.key.case == "async_dispatch" for c in model.changes)
