"""The draft's first sentences: how sure, which phase moved, where the report comes from."""

from pathlib import Path

from harness.catalogue import discovery
from harness.catalogue.discovery import CaseInfo
from harness.catalogue.subjects import PlainScript
from harness.metric_names import MetricKey
from harness.render.draft_summary import how_sure, phase_reading
from harness.store.results import StoredResult
from harness.upstream.change import Change, change_from
from tests.conftest import derive, real_result

SOLVE = MetricKey("json", "solve_ms")


def stored(tmp_path, compile_scale: float, spread: float = 0.0) -> list[StoredResult]:
    """A script's results on 0.9.0 and 0.9.1: compile time ×``compile_scale``, its solve with it;
    tracing the same. ``spread``: each process's figures apart by that share, so the releases'
    processes overlap."""
    found = []
    for release, scale in (("0.9.0", 1.0), ("0.9.1", compile_scale)):
        data = derive(
            real_result("async_dispatch-0.12.0.1"), release=release, case="script-m", sizes={}
        )
        for i, process in enumerate(data["processes"]):
            wobble = 1 + spread * (i - 2)
            process["figures"] = {
                "process.trace_ns": 5e8 * wobble,
                "process.lower_ns": 2e8 * wobble,
                "process.compile_ns": 1e9 * scale * wobble,
                "json.solve_ms": 40 * scale * wobble,
            }
        found.append(StoredResult.from_document(tmp_path / f"{release}.json", data))
    return found


def judged(results: list[StoredResult], good: str = "0.9.0") -> Change:
    """The change ``issue`` reads from the stored results: every metric compared by its rule."""
    where = {"case": "script-m", "sizes": {}, "profile": "cpu", "metric": SOLVE}
    change = change_from([], results, good=good, bad="0.9.1", **where)
    assert change is not None
    return change


def test_a_change_every_process_agrees_on_is_said_so_with_the_phase_that_moved(tmp_path):
    results = stored(tmp_path, 16.6)
    change = judged(results)
    processes = len(results[0].result.processes)
    assert how_sure(change) == (
        f"Measured in {processes} separate Python processes per release: every one on 0.9.1 slower "
        "than every one on 0.9.0."
    )
    assert phase_reading(change) == (
        "Compile time (×16.6 changed from 1 s to 16.6 s in every process) moved; tracing and "
        "lowering did not."
    )


def test_overlapping_processes_are_said_with_the_test_and_no_phase_reading_without_a_move(tmp_path):
    results = stored(tmp_path, 1.1, spread=0.2)
    said = how_sure(judged(results))
    assert (
        said.startswith("Measured in")
        and "whose figures overlap: the medians differ ×1.1 at p=" in said
    )
    assert phase_reading(judged(stored(tmp_path, 1.0))) == ""
    assert how_sure(judged(results, good="0.8.0")) == "", "no result of 0.8.0"
    assert phase_reading(Change(SOLVE, "0.9.0", "0.9.1")) == "", "not compared"


def provenance(case: CaseInfo) -> str:
    """Where the draft's description says the report comes from."""
    return case.subject.provenance(case.claim, case.source)


def test_a_script_is_the_user_s_and_a_case_cites_its_discussion():
    script = CaseInfo("script-m", Path("m.py"), "", "", None, subject=PlainScript("m.py", "0" * 64))  # type: ignore[arg-type]
    assert provenance(script).startswith(
        "Found with a user's script, `m.py`, run unmodified on each release"
    )
    case = discovery.discover()["scan_sync"]
    assert provenance(case).startswith("Found while checking a claim from a user discussion")
    assert case.claim in provenance(case)
