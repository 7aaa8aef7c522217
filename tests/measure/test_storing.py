"""A plain script's results never mix with another version's in one results folder; what a resumed
run takes for a cell measured before."""

import pytest

from harness.catalogue import discovery
from harness.catalogue.scripts import read_script
from harness.catalogue.sizes import PlannedPoint
from harness.errors import UsageError
from harness.measure.cells import PlannedRun
from harness.measure.sides import Side
from harness.measure.storing import check_results_folder, stored_status
from harness.store.results import write_result
from tests.conftest import FIXTURES, derive, real_result

PLAIN = FIXTURES / "scripts" / "cumsum_loop.py"


def stored_as(results, case, sha256):
    record = derive(real_result("async_dispatch-0.12.0.1"), case=case.name)
    if sha256 is not None:
        record["script"] = {"file": case.subject.script_file, "sha256": sha256}
    write_result(results, record)


def test_results_of_the_same_content_are_accepted_and_of_another_version_refused(tmp_path):
    case = read_script(PLAIN)
    check_results_folder(tmp_path / "nothing-yet", case)
    stored_as(tmp_path / "same", case, case.subject.content_digest(case.path))
    check_results_folder(tmp_path / "same", case)
    stored_as(tmp_path / "other", case, "0" * 64)
    with pytest.raises(UsageError, match=r"another version of it .*never mixed"):
        check_results_folder(tmp_path / "other", case)
    stored_as(tmp_path / "no-hash", case, None)
    with pytest.raises(UsageError, match="something other than it"):
        check_results_folder(tmp_path / "no-hash", case)


def test_the_main_command_s_skip_by_a_claim_leaves_the_cell_to_a_side_that_measures_every_case(
    tmp_path,
):
    """Plain nox stores switch_scans on cpu8 as skipped (its claim is about one device): a second
    plain nox passes the cell over, while ``--profile cpu8`` (a side without ``claims_only``)
    measures it, as the reason says."""
    catalogue = discovery.discover()
    case = catalogue["switch_scans"]
    item = PlannedRun(case, PlannedPoint(case.anchors[0], "anchor"))
    eight = {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    main_side = Side("0.12.0.1", "cpu8", env=eight, claims_only=True)
    named = Side("0.12.0.1", "cpu8", env=eight)
    reason = main_side.claim_skip(case.name, case.claim_devices, 8)
    record = derive(real_result("async_dispatch-0.12.0.1"), case=case.name, profile="cpu8")
    record.update(sizes=item.sizes, status="skipped", detail=reason)
    record["processes"] = [
        {"index": 0, "status": "skipped", "detail": reason, "duration_s": 0.0, "affinity": None}
    ]
    write_result(tmp_path, record)
    machine = record["host"]["machine"]["id"]
    assert stored_status(tmp_path, machine, item, main_side) == "skipped", (
        "passed over by plain nox"
    )
    assert stored_status(tmp_path, machine, item, named) is None, (
        "not measured before: measured now"
    )


def test_a_result_at_the_discussions_sizes_carries_its_figure_quoted_and_no_other(tmp_path):
    from harness.main import main
    from tests.conftest import stored_in

    quoted = "SOURCE_RUNS = [{'sizes': {'K': 1000}, 'call': 'f(1000)', 'device': 'a laptop', "
    quoted += "'printed': 't = 0.1s'}]\n"
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "steady.py").write_text((FIXTURES / "cases" / "steady.py").read_text() + quoted)
    for size in ("1000", "7"):
        words = ["--cases-dir", str(cases), "--size", f"K={size}", "--repeats", "2"]
        assert main(["run", *words, "--processes", "1", "--results", str(tmp_path / "r")]) == 0
    figures = {s.result.sizes["K"]: s.result.source_figure for s in stored_in(tmp_path / "r")}
    assert figures == {1000: "f(1000) on a laptop: t = 0.1s", 7: ""}
