import re
import statistics

from harness.analysis.report_model import run_view
from harness.render.report import environment_block, metrics_table, run_section
from harness.store.results import Newest, StoredResult
from harness.units import format_ns
from tests.conftest import FIXTURES, assert_valid_tables, in_processes, real_result, v1_result

PATH = FIXTURES / "results" / "scan_sync-0.12.0.1.json"


def section_of(result, older):
    """The run's section, its claim decided as the report model decides it."""
    return run_section(run_view(Newest(result, older)))


def row(table, program, metric):
    return next(
        [c.strip() for c in line.strip("|").split("|")]
        for line in table.splitlines()
        if re.match(rf"\| {re.escape(program)} +\| {re.escape(metric)} +\|", line)
    )


def test_every_median_is_the_median_of_the_raw_samples():
    data = real_result("scan_sync-0.12.0.1")
    data["processes"] = data["processes"][:4]  # 4 × 5 samples: an even count once pooled
    table = metrics_table(StoredResult.from_document(PATH, data))
    samples = [s for p in data["processes"] for s in p["programs"]["two_scans"]["samples"]]
    first_marks = sorted(s["marks_ns"][0] for s in samples)
    assert len(first_marks) % 2 == 0, "an even count: the two middle values differ"
    assert first_marks[len(first_marks) // 2 - 1] != first_marks[len(first_marks) // 2]
    assert row(table, "two_scans", "returned from scan 1")[2] == format_ns(
        statistics.median(first_marks)
    )
    wall = row(table, "two_scans", "wall (until ready)")
    assert wall[2] == format_ns(statistics.median(s["wall_ns"] for s in samples)) and wall[
        6
    ] == str(len(samples))
    compile_ns = [v for p in data["processes"] for v in p["compiled"]["scan"]["compile_ns"]]
    assert len(compile_ns) == 4
    assert row(table, "scan", "jit: compile (cold)")[2] == format_ns(statistics.median(compile_ns))


def test_a_run_of_several_processes_says_how_each_ended_and_pools_their_samples():
    data = real_result("scan_sync-0.12.0.1")
    several = StoredResult.from_document(
        PATH, in_processes(data, ["ok", "ok", "crashed"], holds=[True, True, False])
    )
    section = section_of(several, older=0)
    assert "Status: **crashed**" in section
    assert "Measured in 3 processes: 2 ok, 1 crashed." in section
    assert "Claim" not in section, "a cell that did not finish has no claim verdict"
    samples = len(data["processes"][0]["programs"]["two_scans"]["samples"])
    assert row(metrics_table(several), "two_scans", "wall (until ready)")[6] == str(2 * samples)
    first_calls = row(
        metrics_table(several), "two_scans", "first call (incl. compile), one per process"
    )
    assert first_calls[6] == "2"
    assert_valid_tables(section)


def test_agreeing_processes_give_the_claim_and_how_many_agree():
    data = real_result("scan_sync-0.12.0.1")
    agreeing = StoredResult.from_document(PATH, in_processes(data, ["ok"] * 3, holds=[False] * 3))
    section = section_of(agreeing, older=2)
    assert "(2 earlier runs not shown)" in section
    assert "Claim **does not hold**: does not hold in 3 of 3 processes; e.g. process 0" in section
    assert "Measured in 3 processes: 3 ok." in section
    mostly = in_processes(data, ["ok"] * 5, holds=[True, True, False, True, True])
    assert "Claim holds: holds in 4 of 5 processes; e.g. process 0" in section_of(
        StoredResult.from_document(PATH, mostly), older=0
    )
    # Fewer than three processes, or fewer than 80 % of them agreeing, settle nothing.
    too_few = StoredResult.from_document(
        PATH, in_processes(data, ["ok", "ok"], holds=[False, False])
    )
    assert "Claim unsettled: does not hold in 2 of 2 processes; e.g. process 0" in section_of(
        too_few, older=0
    )
    split = StoredResult.from_document(
        PATH, in_processes(data, ["ok"] * 5, holds=[True, True, True, False, False])
    )
    assert "Claim unsettled: holds in 3 of 5 processes; e.g. process 0" in section_of(
        split, older=0
    )
    assert "**does not hold**" not in section_of(split, older=0) + section_of(too_few, older=0)
    old = StoredResult.from_document(
        FIXTURES / "v1" / "scan_sync-0.12.0.1.json", v1_result("scan_sync-0.12.0.1")
    )
    one = section_of(old, older=0)
    assert "processes=1" in one and "Measured in" not in one, (
        "a version-1 run was measured in one process"
    )
    assert "Claim unsettled: one process (holds there); e.g. scan 1 returned at" in one
    five = section_of(StoredResult.from_document(PATH, data), older=0)
    assert "processes=5" in five and "Measured in 5 processes: 5 ok." in five
    assert "Claim holds: holds in 5 of 5 processes; e.g. scan 1 returned at 1.501 ms" in five


def test_the_environment_shows_each_variable_on_one_line_a_long_value_shortened():
    data = real_result("scan_sync-0.12.0.1")
    require = "cuda>=13.0 " + " ".join(f"brand=b{i},driver>=535,driver<536" for i in range(120))
    data["host"]["variables"] = {"JAX_PLATFORMS": "cuda", "NVIDIA_REQUIRE_CUDA": require}
    block = environment_block(StoredResult.from_document(PATH, data))
    lines = [line for line in block.splitlines() if line.startswith("| `")]
    rows = {line.split("|")[1].strip(): line for line in lines}
    assert "| `cuda` " in rows["`JAX_PLATFORMS`"], "a short value is shown whole"
    shown = rows["`NVIDIA_REQUIRE_CUDA`"].split("|")[2].strip().strip("`")
    assert shown.startswith("cuda>=13.0 brand=b0") and shown.endswith("…") and len(shown) <= 80
    assert "the result file holds it whole" in block
    assert require[:200] not in block and len(rows["`NVIDIA_REQUIRE_CUDA`"]) < 300
