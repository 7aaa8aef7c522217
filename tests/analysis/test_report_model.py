import dataclasses

from harness.analysis import groups
from harness.analysis.report_model import SEARCHED, build_model
from harness.store.results import load_results
from tests.conftest import derive, real_result, write_results


def test_the_model_selects_once_and_groups_what_it_selected(tmp_path, monkeypatch):
    base = real_result("async_dispatch-0.12.0.1")
    records = [
        base,
        derive(base, release="0.4.26", scale=1.25),
        derive(base, release="0.4.26", created_at="2026-01-01T00:00:00+00:00"),  # older: counted, not shown
        derive(base, release="0.5.3", status="failed", detail="boom"),
        real_result("scan_sync-0.12.0.1"),
    ]
    results, problems = load_results(write_results(tmp_path / "r", records))
    calls = []
    real_selector = groups.newest_runs
    monkeypatch.setattr(groups, "newest_runs", lambda *a, **k: calls.append(a[1]) or real_selector(*a, **k))
    model = build_model(results, problems)
    assert calls[0] is groups.cell_of, "the newest run of each cell is selected once, first"
    assert all(call is not groups.cell_of for call in calls[1:]), "the groups come from that selection"
    assert model.stored == 5 and model.searched == 0 and model.order == ["0.4.26", "0.5.3", "0.12.0.1"]
    assert sorted((n.result.release, n.older) for n in model.latest if n.result.case == "async_dispatch") == [
        ("0.12.0.1", 0),
        ("0.4.26", 1),
        ("0.5.3", 0),
    ]
    assert [(g.key.case, g.releases) for g in model.groups] == [
        ("async_dispatch", ["0.4.26", "0.12.0.1"]),
        ("scan_sync", ["0.12.0.1"]),
    ], "a run that failed is in the claims, not in the timings"
    assert [c.group for c in model.comparisons] == model.groups
    [async_page, scan_page] = model.cases()
    assert (async_page.case, len(async_page.runs), len(async_page.comparisons)) == ("async_dispatch", 3, 1)
    assert [g.key.case for g in scan_page.structures] == ["scan_sync"]


def test_measurements_of_size_searches_are_counted_and_left_out(tmp_path):
    results, _ = load_results(write_results(tmp_path / "r", [real_result("async_dispatch-0.12.0.1")]))
    searched = dataclasses.replace(
        results[0], result=dataclasses.replace(results[0].result, size_source=SEARCHED, id="s")
    )
    model = build_model([*results, searched])
    assert (model.stored, model.searched, len(model.latest)) == (1, 1, 1)
    assert model.latest[0].result.id == results[0].id
