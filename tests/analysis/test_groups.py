import json

import pytest

from harness.analysis.groups import (
    ANY_MACHINE,
    DEVICE_FACT,
    GroupKey,
    check_baseline,
    choose_baseline,
    comparison_groups,
    differences,
    group_key,
    host_differences,
    latest_runs,
    release_key,
)
from harness.errors import UsageError
from harness.store.results import StoredResult, load_results
from tests.conftest import FIXTURES, derive, real_result, v1_result, write_results

MACHINE = "418411f816baf977"  # the machine that measured the fixtures


def loaded(folder):
    results, problems = load_results(folder)
    assert problems == []
    return results


def test_release_order_is_numeric():
    assert sorted(["0.10.2", "0.4.26", "0.12.0.1", "0.4.9"], key=release_key) == [
        "0.4.9",
        "0.4.26",
        "0.10.2",
        "0.12.0.1",
    ]


def test_latest_run_per_cell_is_chosen_and_older_ones_counted(tmp_path):
    data = real_result("async_dispatch-0.12.0.1")
    folder = tmp_path / "r"
    folder.mkdir()
    for i, stamp in enumerate(["2026-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00"]):
        (folder / f"{i}.json").write_text(
            json.dumps({**data, "created_at": stamp, "id": f"run{i}"})
        )
    [(chosen, older)] = latest_runs(loaded(folder))
    assert chosen.result.id == "run1" and older == 1


def test_group_key_holds_what_must_be_equal():
    [result] = [r for r in loaded(FIXTURES / "results") if r.result.case == "scan_sync"]
    key = group_key(result)
    assert key == GroupKey("scan_sync", "cpu", (("M", 500), ("N", 100)), "cpu", 1, MACHINE)
    assert key.describe() == "profile cpu · M=500 N=100 · cpu backend · 1 device · machine 418411f8"
    assert key.slug() == "cpu-M500-N100-cpu-1dev-418411f8"
    across = group_key(result, with_machine=False)
    assert (
        across.machine == ANY_MACHINE
        and across.describe() == "profile cpu · M=500 N=100 · cpu backend · 1 device"
    )
    older = group_key(StoredResult.from_document(FIXTURES / "v1", v1_result("scan_sync-0.12.0.1")))
    assert older == GroupKey(
        "scan_sync", "cpu", (("M", 500), ("N", 100)), "cpu", 1, "unrecorded"
    ), "stored before ids"
    assert (
        older.describe()
        == "profile cpu · M=500 N=100 · cpu backend · 1 device · machine unrecorded"
    )
    assert older.slug() == "cpu-M500-N100-cpu-1dev-unrecorded"


def test_a_script_s_key_without_a_device_count_reads_nodev_in_its_plot_names():
    key = GroupKey("repro", "default", (), "cpu", None, "418411f8")
    assert key.slug() == "default-nosizes-cpu-nodev-418411f8"


def test_groups_put_releases_in_order_and_leave_out_runs_that_did_not_finish(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    failed = {**derive(base, release="0.4.30"), "status": "failed"}
    records = [
        base,
        derive(base, release="0.4.26"),
        failed,
        derive(base, release="0.5.3", profile="cpu8"),
    ]
    groups = comparison_groups(latest_runs(loaded(write_results(tmp_path / "r", records))))
    assert [(g.key.profile, g.releases) for g in groups] == [
        ("cpu", ["0.4.26", "0.12.0.1"]),
        ("cpu8", ["0.5.3"]),
    ]


def test_differences_name_only_what_differs():
    one = GroupKey("c", "cpu", (("N", 1),), "cpu", 1, "a" * 16)
    assert differences([one, one]) == []
    other = GroupKey("c", "cpu8", (("N", 1),), "cpu", 8, "b" * 16)
    assert differences([one, other]) == [
        "profile (cpu, cpu8)",
        "device count (1, 8)",
        "machine (aaaaaaaa, bbbbbbbb)",
    ]


def test_baseline_is_the_oldest_unless_chosen():
    assert choose_baseline(["0.4.26", "0.5.3"], None) == ("0.4.26", "the oldest release present")
    assert choose_baseline(["0.4.26", "0.5.3"], "0.5.3")[0] == "0.5.3"
    release, why = choose_baseline(["0.4.30", "0.5.3"], "0.4.26")
    assert release == "0.4.30" and "0.4.26 (--baseline) has no result here" in why


def test_a_baseline_no_result_has_is_a_usage_error():
    results = loaded(FIXTURES / "results")
    check_baseline("0.12.0.1", results)
    with pytest.raises(UsageError, match=r"no result of release 0\.4\.26"):
        check_baseline("0.4.26", results)


def test_host_differences_name_the_runs():
    base = real_result("async_dispatch-0.12.0.1")
    a = StoredResult.from_document(FIXTURES, base)
    b = StoredResult.from_document(
        FIXTURES, derive(base, host={**base["host"], "usable_cores": 64})
    )
    assert host_differences([("A", a), ("B", a)]) == []
    assert host_differences([("A", a), ("B", b)]) == ["usable cores: 2 (A); 64 (B)"]
    elsewhere = StoredResult.from_document(
        FIXTURES, derive(base, host={**base["host"], "machine": {"id": "c" * 16}})
    )
    assert host_differences([("A", a), ("B", elsewhere)]) == ["machine: 418411f8 (A); cccccccc (B)"]
    older = StoredResult.from_document(FIXTURES, v1_result("async_dispatch-0.12.0.1"))
    assert "machine: unrecorded (A); cccccccc (B)" in host_differences(
        [("A", older), ("B", elsewhere)]
    )
    assert host_differences([("A", a), ("B", elsewhere)], [DEVICE_FACT]) == [], "the same devices"


def on_machine(data, machine_id, **changes):
    return derive(
        data, host={**data["host"], "machine": {"id": machine_id, "basis": "test"}}, **changes
    )


def test_each_machine_keeps_its_newest_run_and_its_own_timing_group(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    records = [
        on_machine(base, "a" * 16),
        on_machine(base, "a" * 16, release="0.4.26"),
        on_machine(base, "b" * 16, scale=0.5, created_at="2026-12-01T00:00:00+00:00"),
    ]
    results = loaded(write_results(tmp_path / "r", records))
    assert sorted((r.result.release, r.result.machine[0]) for r, _ in latest_runs(results)) == [
        ("0.12.0.1", "a"),
        ("0.12.0.1", "b"),
        ("0.4.26", "a"),
    ]
    timing = comparison_groups(latest_runs(results))
    assert [(g.key.machine[0], g.releases) for g in timing] == [
        ("a", ["0.4.26", "0.12.0.1"]),
        ("b", ["0.12.0.1"]),
    ]
    [exact] = comparison_groups(latest_runs(results), across_machines=True)
    assert exact.key.machine == ANY_MACHINE and exact.releases == ["0.4.26", "0.12.0.1"]
    assert exact.run("0.12.0.1").result.machine == "b" * 16, (
        "a release measured twice: its newest run"
    )
