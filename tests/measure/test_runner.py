"""The runner: several case processes per cell and side, interleaved; whatever one does, it is
recorded."""

import dataclasses
import re
import subprocess
import sys

import pytest

from harness.catalogue import discovery
from harness.catalogue.sizes import Budget, PlannedPoint
from harness.measure import attempts as attempts_module
from harness.measure.cells import Cell, CellRun, PlannedRun, claim_text, pair_name, point_claim
from harness.measure.launch import VenvGone, WorkerPool
from harness.measure.load import load_threshold
from harness.measure.runner import Recorder, known_skip
from harness.measure.sides import Side, this_side
from harness.metric_names import MetricKey
from harness.store.results import load_results
from harness.store.schema import (
    SCHEMA_VERSION,
    ProcessClaim,
    ProcessLoad,
    ProcessRun,
    RunStatus,
    Settings,
)
from tests.conftest import FIXTURES, document, harness_command

QUICK = Settings(timeout_s=5, warmup=1, repeats=5, min_repeats=2, max_seconds=1, processes=2)
ORDER = ["raises", "hangs", "segfaults", "oom", "unsupported", "steady"]
# A spawned case process imports jax afresh, which takes over 5 s on a loaded 2-core CI machine: a
# timeout of 5 s there turned the unsupported case into a timeout.
SWEEP_TIMEOUT_S = {"fork": 5, "spawn": 20}


def planned(*names, sizes=None):
    found = discovery.discover(FIXTURES / "cases")
    return [
        PlannedRun(found[name], PlannedPoint(sizes or found[name].anchors[0], "anchor"))
        for name in names
    ]


@pytest.fixture(scope="module", params=["fork", "spawn"])
def sweep(tmp_path_factory, request):
    tmp_path = tmp_path_factory.mktemp("sweep")
    settings = dataclasses.replace(
        QUICK, isolation=request.param, timeout_s=SWEEP_TIMEOUT_S[request.param]
    )
    lines: list[str] = []
    with Recorder(
        tmp_path, [this_side("test")], settings, seed=7, budget=Budget(), progress=lines.append
    ) as rec:
        outcomes = rec.run_plan(planned(*ORDER), resume="skip")
    runs = {case: run for case, (_, run, *_) in zip(ORDER, outcomes, strict=True)}
    return runs, lines, tmp_path, settings.timeout_s


def test_every_failure_mode_is_recorded_and_the_sweep_goes_on(sweep):
    runs, _, results_dir, _ = sweep
    assert {case: run.status for case, run in runs.items()} == {
        "raises": "failed",
        "hangs": "timeout",
        "segfaults": "crashed",
        "oom": "crashed",
        "unsupported": "skipped",
        "steady": "ok",
    }
    stored, problems = load_results(results_dir)
    assert problems == [] and len(stored) == 6
    processes = {r.result.case: [p["status"] for p in document(r)["processes"]] for r in stored}
    assert processes["unsupported"] == ["skipped"], (
        "a cell skipped in its first process is not run again"
    )
    assert processes["raises"] == ["failed", "failed"] and processes["steady"] == ["ok", "ok"]
    assert all(
        document(r)["schema_version"] == SCHEMA_VERSION
        and document(r)["settings"]["processes"] == 2
        for r in stored
    )


def test_details_say_what_happened(sweep):
    runs, _, _, timeout_s = sweep
    detail = {name: run.detail for name, run in runs.items()}
    assert "deliberate failure at K=1" in detail["raises"] and "RuntimeError" in detail["raises"]
    assert "failed in 2 of 2 processes" in detail["raises"]
    assert f"no result within {timeout_s} s" in detail["hangs"]
    assert "SIGSEGV" in detail["segfaults"]
    assert "SIGKILL" in detail["oom"] and "out of memory" in detail["oom"]
    assert "needs a feature no release has" in detail["unsupported"]


def test_each_process_keeps_its_raw_samples_verdict_and_load(sweep):
    _, _, results_dir, _ = sweep
    [steady] = [document(r) for r in load_results(results_dir)[0] if r.result.case == "steady"]
    assert [p["index"] for p in steady["processes"]] == [0, 1]
    for process in steady["processes"]:
        program = process["programs"]["sum"]
        assert len(program["samples"]) >= 2 and program["loops"] >= 1
        assert all(s["wall_ns"] >= s["marks_ns"][-1] for s in program["samples"])
        assert (process["claim"]["holds"], process["claim"]["evidence"]) == (
            True,
            "dispatch never exceeds wall",
        )
        assert process["claim"].get("backend") == process.get("jax", {}).get("backend")
        assert set(process["load"]) == {"other_cpu_cores", "loadavg_1m", "loaded", "attempts"}
        assert process["load"]["attempts"] == 1 and process["affinity"] is None
        assert process["window_unix_ns"][0] <= process["window_unix_ns"][1]
        assert process["peak_rss_bytes"] > 0
    first, second = steady["processes"]
    assert first["window_unix_ns"][1] <= second["window_unix_ns"][0], (
        "processes run one after the other"
    )
    assert steady["window_unix_ns"] == [first["window_unix_ns"][0], second["window_unix_ns"][1]]
    assert steady["interleaved_with"] == [] and steady["host"]["packages"]
    [oom] = [document(r) for r in load_results(results_dir)[0] if r.result.case == "oom"]
    assert all(p["peak_rss_bytes"] > 0 for p in oom["processes"]), (
        "the kernel's count, for a process that died"
    )


def test_progress_names_side_cell_process_and_what_is_left(sweep):
    _, lines, _, _ = sweep
    label = this_side("test").label
    assert lines[0].startswith(
        "6 cells · 2 processes each, in rounds: process k of every cell before process k+1"
    )
    assert any(
        line.startswith(f"[{label}] (1/6) raises K=1 · process 1/2 → failed") for line in lines
    )
    assert any(
        "(6/6) steady K=1000 · process 2/2 → ok in" in line and "(0 more planned · " in line
        for line in lines
    )
    assert any(
        re.search(r"\(\d+ more planned · \d+ s elapsed, about \d+ s left\)", line) for line in lines
    )
    assert any(
        "(2/6) hangs K=1 → timeout in 2 of 2 processes" in line and "stored" in line
        for line in lines
    )


def test_cells_take_turns_in_rounds(sweep):
    """Process 1 of every cell before process 2 of any: a slow spell of the host falls on one
    process of a few cells, where their spread shows it, not on every process of one cell."""
    _, _, results_dir, _ = sweep
    starts = {0: [], 1: []}
    for result in load_results(results_dir)[0]:
        for process in document(result)["processes"]:
            starts[process["index"]].append(process["window_unix_ns"][0])
    assert len(starts[0]) == 6 and len(starts[1]) == 5, "the skipped cell ran once"
    assert max(starts[0]) < min(starts[1])


def test_a_point_over_budget_is_refused_without_starting_a_process(fixture_cases, tmp_path):
    steady = discovery.discover(fixture_cases)["steady"]
    budget = Budget({"bytes": 1000.0})
    [point] = steady.plan("quick", {}, seed=1, budget=budget)
    assert point.refusal and "over budget" in point.refusal
    with Recorder(
        tmp_path, [this_side("t")], QUICK, seed=1, budget=budget, progress=print
    ) as recorder:
        [(_, run, *_)] = recorder.run(PlannedRun(steady, point))
    assert run.status == "skipped" and "refused before allocation" in run.detail
    assert run.processes == [], "no case process was started"
    stored = document(load_results(tmp_path)[0][0])
    assert stored["cost_estimate"] == {"bytes": 28000.0, "flops": 1000.0}
    assert (
        stored["budget"] == {"bytes": 1000.0} and stored["seed"] == 1 and stored["processes"] == []
    )


def test_a_flaky_crash_shows_as_crashed_in_one_of_three(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_TEST_FLAKY_MARKER", str(tmp_path / "marker"))
    settings = dataclasses.replace(QUICK, processes=3)
    with Recorder(
        tmp_path / "r", [this_side("t")], settings, seed=1, budget=Budget(), progress=print
    ) as recorder:
        [(_, run, *_)] = recorder.run(planned("flaky")[0])
    assert [p.status for p in run.processes] == ["crashed", "ok", "ok"], (
        "the cell goes on after a crash"
    )
    assert run.status == "crashed" and run.detail.startswith(
        "crashed in 1 of 3 processes (first: process 1)"
    )


def test_pinned_processes_run_on_the_cpus_asked_for(tmp_path):
    settings = dataclasses.replace(QUICK, affinity=(0,))
    with Recorder(
        tmp_path, [this_side("t")], settings, seed=1, budget=Budget(), progress=print
    ) as recorder:
        [(_, run, *_)] = recorder.run(planned("flaky")[0])
    assert run.status == "ok"
    assert [p.facts["cpus"] for p in run.processes] == [[0], [0]]
    stored = document(load_results(tmp_path)[0][0])
    assert stored["settings"]["affinity"] == [0] and [
        p["affinity"] for p in stored["processes"]
    ] == [[0], [0]]


def aa_sides():
    return [
        Side("0.0.0", "aa-a", sys.executable, label="A"),
        Side("0.0.0", "aa-b", sys.executable, label="B"),
    ]


def test_two_sides_take_turns_in_rotated_rounds_and_resume_per_side(tmp_path):
    """An A/A pair: the same interpreter twice, stored as two profiles, measured in interleaved
    rounds."""
    settings = dataclasses.replace(QUICK, processes=3)
    with Recorder(
        tmp_path, aa_sides(), settings, seed=1, budget=Budget(), progress=print
    ) as recorder:
        outcomes = recorder.run_plan(planned("steady", "unsupported"), resume="skip")
    assert [(side.label, run.status) for side, run, *_ in outcomes] == [
        ("A", "ok"),
        ("B", "ok"),
        ("A", "skipped"),
        ("B", "skipped"),
    ]
    stored = {(r.result.case, r.result.profile): r for r in load_results(tmp_path)[0]}
    assert len(stored) == 4
    assert document(stored["steady", "aa-a"])["interleaved_with"] == ["B"]
    assert document(stored["steady", "aa-b"])["interleaved_with"] == ["A"]
    assert len({r.result.invocation for r in stored.values()}) == 1, (
        "every result of one run names that run"
    )
    starts = sorted(
        (process["window_unix_ns"][0], profile[-1].upper(), process["index"])
        for (case, profile), result in stored.items()
        if case == "steady"
        for process in document(result)["processes"]
    )
    assert [f"{side}{index}" for _, side, index in starts] == ["A0", "B0", "B1", "A1", "A2", "B2"]

    stored["steady", "aa-b"].path.unlink()
    lines: list[str] = []
    with Recorder(
        tmp_path, aa_sides(), settings, seed=1, budget=Budget(), progress=lines.append
    ) as recorder:
        outcomes = recorder.run_plan(planned("steady"), resume="skip")
    assert [(side.label, run is None) for side, run, *_ in outcomes] == [("A", True), ("B", False)]
    assert any(line.startswith("[A] resuming: 1 of 1 cells") for line in lines)
    again = [
        r
        for r in load_results(tmp_path)[0]
        if (r.result.case, r.result.profile) == ("steady", "aa-b")
    ]
    assert [document(r)["interleaved_with"] for r in again] == [[]], "B alone this time"
    assert again[0].result.invocation not in {r.result.invocation for r in stored.values()}, (
        "in a run of its own"
    )


def fake_process(statuses_and_loads):
    """run_process stand-in: one (status, other_cpu_cores) per call, loaded over 0.5 cores."""
    calls = iter(statuses_and_loads)

    def run_process(worker, index, case, settings):
        status, cores = next(calls)
        load = ProcessLoad(cores, 0.0, cores > load_threshold(settings))
        return ProcessRun(index, RunStatus(status), "", 0.1, (index, index + 1), load, None)

    return run_process


@pytest.mark.parametrize(
    ("max_load", "loads", "attempts"),
    [
        (None, [0.9], 1),  # flagged, never measured again
        (0.5, [0.9, 0.2], 2),  # loaded, then quiet
        (0.5, [0.9, 0.9, 0.9], 3),  # loaded every time: the third attempt is kept
    ],
)
def test_a_loaded_process_is_measured_again_only_with_max_load(
    tmp_path, monkeypatch, max_load, loads, attempts
):
    monkeypatch.setattr(
        attempts_module, "run_process", fake_process([("ok", cores) for cores in loads])
    )
    monkeypatch.setattr(attempts_module.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    lines: list[str] = []
    settings = dataclasses.replace(QUICK, processes=1, max_load=max_load)
    recorder = Recorder(
        tmp_path, [this_side("t")], settings, seed=1, budget=Budget(), progress=lines.append
    )
    run = CellRun(recorder.sides[0], 1)
    recorder._measure_process(
        Cell(0, planned("steady")[0], "(1/1) steady"), run, 0, "(0 more planned)"
    )
    recorder.close()
    [process] = run.processes
    assert process.load.attempts == attempts and process.load.other_cpu_cores == loads[-1]
    assert sum("measuring again in 1 s" in line for line in lines) == attempts - 1
    assert "loaded: 0.90 other cores busy" in lines[0]


def test_a_steady_load_is_measured_once_after_a_process_stayed_loaded_on_every_attempt(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(attempts_module, "run_process", fake_process([("ok", 0.9)] * 5))
    monkeypatch.setattr(attempts_module.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    settings = dataclasses.replace(QUICK, processes=2, max_load=0.5)
    recorder = Recorder(
        tmp_path, [this_side("t")], settings, seed=1, budget=Budget(), progress=print
    )
    run = CellRun(recorder.sides[0], 2)
    for index in range(2):
        recorder._measure_process(Cell(0, planned("steady")[0], "(1/1) steady"), run, index, "")
    recorder.close()
    assert [p.load.attempts for p in run.processes] == [3, 1], (
        "three attempts, then the load is known to stay"
    )


def test_a_loaded_measurement_stands_when_measuring_again_fails_and_a_loaded_failure_is_not_redone(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(attempts_module.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    settings = dataclasses.replace(QUICK, processes=1, max_load=0.5)
    for calls, status, attempts in (
        # the retry hung: the loaded measurement is kept
        ([("ok", 0.9), ("timeout", 0.9)], "ok", 2),
        # a failure under load is not a measurement to improve
        ([("failed", 0.9), ("ok", 0.0)], "failed", 1),
    ):
        monkeypatch.setattr(attempts_module, "run_process", fake_process(calls))
        recorder = Recorder(
            tmp_path, [this_side("t")], settings, seed=1, budget=Budget(), progress=print
        )
        run = CellRun(recorder.sides[0], 1)
        recorder._measure_process(Cell(0, planned("steady")[0], "(1/1) steady"), run, 0, "")
        recorder.close()
        [process] = run.processes
        assert (process.status, process.load.attempts) == (status, attempts)


def test_an_interrupt_while_measuring_a_loaded_process_again_keeps_the_loaded_measurement(
    tmp_path, monkeypatch
):
    calls = iter([("ok", 0.9)])

    def run_process(worker, index, case, settings):
        for status, cores in calls:
            return ProcessRun(
                index, RunStatus(status), "", 0.1, (index, index + 1), ProcessLoad(cores, 0.0, True)
            )
        raise KeyboardInterrupt

    monkeypatch.setattr(attempts_module, "run_process", run_process)
    monkeypatch.setattr(attempts_module.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    recorder = Recorder(
        tmp_path,
        [this_side("t")],
        dataclasses.replace(QUICK, processes=1, max_load=0.5),
        seed=1,
        budget=Budget(),
        progress=print,
    )
    run = CellRun(recorder.sides[0], 1)
    with pytest.raises(KeyboardInterrupt):
        recorder._measure_process(Cell(0, planned("steady")[0], "(1/1) steady"), run, 0, "")
    recorder.close()
    assert [p.status for p in run.processes] == ["ok"]


def test_cell_status_is_ok_only_when_every_process_is():
    side = this_side("t")

    def cell(*statuses):
        return CellRun(
            side,
            len(statuses),
            [ProcessRun(i, RunStatus(s), f"why {i}") for i, s in enumerate(statuses)],
        )

    assert cell("ok", "ok").status == "ok" and cell("ok", "ok").detail == ""
    assert cell("ok", "timeout", "crashed").status == "timeout"
    assert (
        cell("ok", "timeout", "crashed").detail
        == "timeout in 1 of 3 processes (first: process 2)\nwhy 1"
    )
    assert cell("skipped").detail == "why 0"
    assert cell("timeout", "timeout").finished().startswith("stopped after 2 timeouts")
    assert cell("skipped").finished() == "skipped" and cell("ok", "failed").finished() is None


def adaptive_recorder(tmp_path, monkeypatch, ratios, **changes):
    """Two sides whose fake processes always finish ok; ``detectable`` answers from ``ratios`` by
    processes a side."""
    monkeypatch.setattr(attempts_module, "run_process", fake_process([("ok", 0.0)] * 100))
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    asked: list[list[int]] = []

    def detectable(sides, kinds):
        assert kinds == (changes.get("target_kinds") or ()), (
            "the kinds judged come from the settings"
        )
        asked.append([len(records) for records in sides])
        return ratios[len(sides[0])]

    lines: list[str] = []
    settings = dataclasses.replace(QUICK, processes=3, **changes)
    recorder = Recorder(
        tmp_path,
        aa_sides(),
        settings,
        seed=1,
        budget=Budget(),
        progress=lines.append,
        detectable=detectable,
    )
    monkeypatch.setattr(Recorder, "_store", lambda self, item, run, others: None)
    runs = [run for _, run, *_ in recorder.run(planned("steady")[0])]
    recorder.close()
    return runs, asked, lines


def test_with_a_target_rounds_are_added_until_the_processes_could_detect_it(tmp_path, monkeypatch):
    runs, asked, lines = adaptive_recorder(
        tmp_path, monkeypatch, {3: 2.0, 4: 1.5, 5: 1.1}, target_ratio=1.2, max_processes=10
    )
    assert [len(run.processes) for run in runs] == [5, 5]
    assert asked == [[3, 3], [4, 4], [5, 5]], (
        "asked after each round past the planned ones, with both sides"
    )
    assert all(
        "5 processes a side can detect ×1.100, within the target ×1.2" in run.detail for run in runs
    )
    assert any(
        "3 processes a side can detect ×2.000, not the target ×1.2: round 4 (at most 10)" in x
        for x in lines
    )
    assert any("process 4 (of at most 10)" in line for line in lines)


def test_the_most_processes_allowed_stop_a_target_that_is_not_reached_and_say_so(
    tmp_path, monkeypatch
):
    runs, asked, _ = adaptive_recorder(
        tmp_path,
        monkeypatch,
        {3: 2.0, 4: 1.9},
        target_ratio=1.1,
        target_kinds=("wall",),
        max_processes=4,
    )
    assert [len(run.processes) for run in runs] == [4, 4] and len(asked) == 2
    said = (
        "4 processes a side (the most allowed) can detect only ×1.900, not the target ×1.1 on wall "
        "times"
    )
    assert all(said in run.detail for run in runs)


def test_a_target_met_by_the_planned_processes_adds_nothing_and_without_one_nothing_is_asked(
    tmp_path, monkeypatch
):
    runs, asked, lines = adaptive_recorder(
        tmp_path, monkeypatch, {3: 1.08}, target_ratio=1.1, max_processes=10
    )
    assert [len(run.processes) for run in runs] == [3, 3] and asked == [[3, 3]]
    assert not any("detect" in line for line in lines[1:]), (
        "nothing to report when the planned processes sufficed"
    )
    runs, asked, _ = adaptive_recorder(tmp_path, monkeypatch, {})
    assert [len(run.processes) for run in runs] == [3, 3] and asked == [] and runs[0].detail == ""


def deciding_recorder(
    tmp_path,
    monkeypatch,
    open_by_processes,
    sides=None,
    settled=None,
    metrics_seen=None,
    first_round=None,
    **changes,
):
    """Sides of fake processes measured until decided; ``undecided`` answers from
    ``open_by_processes`` (the metrics it was asked about kept in ``metrics_seen``), ``settled``
    (the metrics the caller settles itself) as given."""
    monkeypatch.setattr(attempts_module, "run_process", fake_process([("ok", 0.0)] * 200))
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    monkeypatch.setattr(Recorder, "_store", lambda self, item, run, others: None)
    asked: list[tuple[int, int]] = []

    def undecided(a, b, settings, *, name, metrics, counts_only=False):
        assert " → " in name and isinstance(metrics, tuple)
        asked.append((len(a), len(b)) + (("counts",) if counts_only else ()))
        if metrics_seen is not None:
            metrics_seen.append(metrics)
        if callable(open_by_processes):
            return open_by_processes(name, len(a))
        return open_by_processes.get(len(a), [])

    settings = dataclasses.replace(
        QUICK, processes=3, decide="changes", max_processes=12, **changes
    )
    lines: list[str] = []
    recorder = Recorder(
        tmp_path,
        sides or aa_sides(),
        settings,
        seed=1,
        budget=Budget(),
        progress=lines.append,
        undecided=undecided,
        settled=settled,
        first_round=first_round,
    )
    runs = [run for _, run, *_ in recorder.run(planned("steady")[0])]
    recorder.close()
    return runs, asked, lines


def test_the_first_round_is_told_each_side_s_processes_after_each_round(tmp_path, monkeypatch):
    """Issue 78 #1: what a process costs is said after the first of each side, not after all, and
    told each round after (the floor is sized again on the second)."""
    told = []
    count = lambda sides: told.append({label: len(ps) for label, ps in sides.items()})
    runs, *_ = deciding_recorder(tmp_path, monkeypatch, {}, first_round=count)
    assert told[0] == {"A": 1, "B": 1}
    assert told == [{"A": k, "B": k} for k in range(1, len(runs[0].processes) + 1)]


def test_a_cell_stops_at_the_processes_its_first_round_says_a_cap_leaves(tmp_path, monkeypatch):
    """Issue 78 #2: a time cap that cannot pay for a verdict is not measured on to in vain."""
    still = ["pair 1 x ×1.2, p=0.01 (needs < 0.0007)"]
    open_always = dict.fromkeys(range(1, 13), still)
    for cap, expected in ((1, 1), (5, 5), (None, 12)):
        runs, *_ = deciding_recorder(
            tmp_path, monkeypatch, open_always, first_round=lambda sides, cap=cap: cap
        )
        assert [len(run.processes) for run in runs] == [expected, expected]
    assert runs[0].stopped == ""
    runs, *_ = deciding_recorder(tmp_path, monkeypatch, open_always, first_round=lambda s: 1)
    assert runs[0].stopped == "stopped at 1 of 3 processes: the time cap"


def test_until_decided_the_looks_double_while_a_comparison_is_open(tmp_path, monkeypatch):
    still = ["pair 1 x ×1.2, p=0.01 (needs < 0.0007)"]
    runs, asked, lines = deciding_recorder(tmp_path, monkeypatch, {3: still, 6: still})
    assert [len(run.processes) for run in runs] == [12, 12]
    assert asked == [(3, 3), (6, 6), (12, 12)], "asked at each look only (3, 6, 12), never between"
    assert all("decided at 12 processes a side (look 3 of 3" in run.detail for run in runs)
    assert any(
        "look 1 of 3: 1 comparison(s) open (pair 1 x ×1.2" in line and "3 more rounds" in line
        for line in lines
    )
    assert any(
        "look 2 of 3: 1 comparison(s) open" in line and "6 more rounds" in line for line in lines
    )


def test_until_decided_stops_at_the_most_processes_or_the_time_budget_and_says_what_stayed_open(
    tmp_path, monkeypatch
):
    still = ["pair 1 x ×1.2, p=0.01 (needs < 0.0007)"]
    runs, asked, _ = deciding_recorder(tmp_path, monkeypatch, dict.fromkeys(range(1, 13), still))
    assert [len(run.processes) for run in runs] == [12, 12] and len(asked) == 3
    assert "undecided after 12 processes a side (the most allowed, look 3 of 3" in runs[0].detail
    assert "pair 1 x ×1.2" in runs[0].detail
    runs, _, _ = deciding_recorder(
        tmp_path, monkeypatch, dict.fromkeys(range(1, 13), still), decide_budget_s=1.0
    )
    assert [len(run.processes) for run in runs] == [5, 5], (
        "0.1 s a fake process, two sides: 1 s is spent after 5 rounds"
    )
    assert "the time budget of 1 s spent" in runs[0].detail


def test_a_metric_the_caller_settles_at_a_look_is_not_looked_at_again(tmp_path, monkeypatch):
    seen: list[dict[str, int]] = []
    metrics_seen: list[tuple[str, ...]] = []

    def settled(processes):
        seen.append({label: len(runs) for label, runs in processes.items()})
        x, y = MetricKey("x", "wall"), MetricKey("y", "wall")
        return {x} if len(next(iter(processes.values()))) < 6 else {x, y}

    def still_open(name, processes):
        return [f"{name} {metric} ×1.2" for metric in metrics_seen[-1]]

    runs, _, _ = deciding_recorder(
        tmp_path,
        monkeypatch,
        still_open,
        settled=settled,
        metrics_seen=metrics_seen,
        decide_metrics=("x.wall_ns", "y.wall_ns"),
    )
    assert [len(run.processes) for run in runs] == [6, 6], "both settled at the second look (6)"
    assert [set(each.values()) for each in seen] == [{3}, {6}], "asked at each look only, by side"
    assert len(seen[0]) == 2
    assert metrics_seen == [("y.wall_ns",)], "at the first look x is settled: only y is judged"
    assert all("decided at 6 processes a side (look 2" in run.detail for run in runs)
    assert "2 settled by the caller" in runs[0].detail


def test_until_decided_compares_neighbouring_sides_of_one_profile_and_nothing_with_one_side(
    tmp_path, monkeypatch
):
    releases = [
        Side(release, profile, sys.executable)
        for release in ("1", "2", "3")
        for profile in ("p", "q")
    ]
    recorder = Recorder(tmp_path, releases, QUICK, seed=1, budget=Budget())
    cell = Cell(0, planned("steady")[0], "", [CellRun(side, 3) for side in releases])
    recorder.close()
    labels = [(a.side.label, b.side.label) for a, b in cell.pairs()]
    assert labels == [
        ("jax 1 · p", "jax 2 · p"),
        ("jax 1 · q", "jax 2 · q"),
        ("jax 2 · p", "jax 3 · p"),
        ("jax 2 · q", "jax 3 · q"),
    ], "release by release within each profile, never one profile against another"
    apart = [dataclasses.replace(side, compare_next=side.release != "2") for side in releases]
    cell = Cell(0, planned("steady")[0], "", [CellRun(side, 3) for side in apart])
    assert [(a.side.label, b.side.label) for a, b in cell.pairs()] == [
        ("jax 1 · p", "jax 2 · p"),
        ("jax 1 · q", "jax 2 · q"),
    ]
    assert pair_name(releases[0], releases[2]) == "jax 1 → 2 · p"
    assert pair_name(*aa_sides()) == "A → B", "sides with labels of their own"
    _, asked, _ = deciding_recorder(
        tmp_path, monkeypatch, {}, sides=[*aa_sides(), Side("0.0.0", "c", label="C")]
    )
    assert asked == [(3, 3), (3, 3)], (
        "profiles of their own (an A/A under labels): A with B, B with C"
    )
    runs, asked, _ = deciding_recorder(tmp_path, monkeypatch, {3: ["open"]}, sides=[this_side("t")])
    assert asked == [] and len(runs[0].processes) == 3


def test_only_the_sides_of_open_comparisons_go_on_and_a_decided_side_keeps_where_it_stopped(
    tmp_path, monkeypatch
):
    def open_between_b_and_c(name, processes):
        return (
            [f"{name} x ×1.2, p=0.01 (needs < 0.0007)"] if name == "B → C" and processes < 9 else []
        )

    sides = [*aa_sides(), Side("0.0.0", "c", label="C")]
    runs, asked, lines = deciding_recorder(tmp_path, monkeypatch, open_between_b_and_c, sides=sides)
    assert [len(run.processes) for run in runs] == [3, 12, 12], (
        "A's only comparison was decided at the first look"
    )
    assert runs[0].detail.startswith("decided at 3 processes a side (look 1 of 3, ")
    assert all(
        run.detail.startswith("decided at 12 processes a side (look 3 of 3") for run in runs[1:]
    )
    assert asked == [(3, 3), (3, 3), (6, 6), (12, 12)], (
        "A → B judged once: its sides' verdict stands"
    )
    said = "look 1 of 3: 1 comparison(s) open (B → C x ×1.2"
    assert any(said in line and "for 2 of 3 sides" in line for line in lines)


def test_what_is_left_counts_the_look_under_way_and_at_most_the_processes_allowed():
    settings = dataclasses.replace(QUICK, processes=3, decide="changes", max_processes=12)
    sides = [Side(release, "p", sys.executable) for release in ("1", "2")]

    def cell(*done, settings=settings):
        ok = [[ProcessRun(i, RunStatus.OK, "") for i in range(n)] for n in done]
        runs = [CellRun(side, 3, processes) for side, processes in zip(sides, ok, strict=True)]
        return Cell(0, planned("steady")[0], "", runs).left(settings)

    assert cell(0, 0) == (6, 24), "the planned rounds, and four looks' worth at most"
    assert cell(3, 3) == (6, 18), "a cell going on after its first look: the second look's rounds"
    assert cell(4, 3) == (5, 17), "mid-round: the side behind catches up"
    assert cell(12, 12) == (0, 0)
    assert cell(2, 2, settings=dataclasses.replace(settings, decide=None)) == (2, 2), (
        "no looks: the planned only"
    )


def claimed(*verdicts, status="ok"):
    """A side's run whose processes finished ``status`` with these claim verdicts (True: it holds
    there)."""
    processes = [
        ProcessRun(i, RunStatus(status), claim=ProcessClaim(holds, f"evidence {i}"))
        for i, holds in enumerate(verdicts)
    ]
    return CellRun(this_side("t"), len(verdicts), processes)


def test_the_progress_line_settles_the_claim_as_the_report_does():
    assert claim_text(claimed(True)) == " · claim holds"
    assert claim_text(claimed(False)) == " · claim does NOT hold"
    assert (
        claim_text(claimed(True, True, True, True, False)) == " · claim holds in 4 of 5 processes"
    )
    assert claim_text(claimed(False, False, False)) == " · claim does not hold in 3 of 3 processes"
    assert claim_text(claimed(True, True, False)) == " · claim unsettled: holds in 2 of 3 processes"
    assert claim_text(claimed()) == ""


def test_a_search_point_is_settled_by_the_rule_every_page_uses():
    """At least 80 % of at least three processes agree, as on every report page; else no verdict."""
    assert point_claim(claimed(True, True, True), "K=1") == (True, "K=1: evidence 2")
    assert point_claim(claimed(False, False, False), "K=1") == (False, "K=1: evidence 2")
    assert point_claim(claimed(True), "K=1") == (None, "K=1: unsettled: one process (holds there)")
    assert point_claim(claimed(True, True, False), "K=1") == (
        None,
        "K=1: unsettled: holds in 2 of 3 processes",
    )
    assert point_claim(claimed(True, True, True, True, False), "K=1")[0] is True, "4 of 5 agree"
    assert point_claim(claimed(True, True, True, status="failed"), "K=1") == (None, "K=1: failed")


def test_a_skip_the_profile_already_decides_starts_no_process():
    """cpu8 makes eight CPU devices: a case whose programs use one is skipped there, and a case that
    needs two is skipped on cpu, from their constants, before any process imports JAX to find
    out."""
    catalogue = discovery.discover()
    one, several = (
        PlannedRun(catalogue[name], PlannedPoint(catalogue[name].anchors[0], "anchor"))
        for name in ("scan_sync", "sharding_scaling")
    )
    cpu = Side("0.4.26", "cpu", env={"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""})
    cpu8 = Side(
        "0.4.26",
        "cpu8",
        env={"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"},
    )
    assert (cpu.cpu_devices(), cpu8.cpu_devices()) == (1, 8)
    assert known_skip(one, cpu8).startswith(
        "uses 1 device (DEVICES_USED) and this profile made 8 CPU"
    )
    assert known_skip(several, cpu).startswith("needs 2 devices, found 1")
    assert known_skip(one, cpu) == known_skip(several, cpu8) == "", "measured"
    assert Side("0.4.26", "gpu", env={"JAX_PLATFORMS": "cuda"}).cpu_devices() is None, (
        "only the process can tell"
    )


def test_the_main_command_measures_a_case_only_under_the_devices_its_claim_is_about():
    """switch_scans' claim is about one device (CLAIM_DEVICES): on the main command's sides
    (``claims_only``) cpu8 skips it, saying how to measure it there; a side the user chose measures
    it; cases without the constant are measured where they were."""
    catalogue = discovery.discover()
    switch, sharding = (
        PlannedRun(catalogue[name], PlannedPoint(catalogue[name].anchors[0], "anchor"))
        for name in ("switch_scans", "sharding_scaling")
    )
    eight = {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    cpu = Side("0.4.26", "cpu", env={"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}, claims_only=True)
    cpu8, chosen = (
        Side("0.4.26", "cpu8", env=eight, claims_only=True),
        Side("0.4.26", "cpu8", env=eight),
    )
    assert catalogue["switch_scans"].claim_devices == 1
    assert known_skip(switch, cpu8) == (
        "its claim is about 1 device (CLAIM_DEVICES) and this profile made 8 CPU devices: the main "
        "command measures it only where its claim is; `nox -s matrix -- --profile cpu8 --case "
        "switch_scans` measures it here"
    )
    assert known_skip(switch, cpu) == known_skip(switch, chosen) == known_skip(sharding, cpu8) == ""


def test_a_cell_the_caller_would_reuse_is_asked_under_the_folder_lock_and_not_measured(tmp_path):
    """Two runs into one folder: the caller's look before the lock missed what the other stored
    meanwhile; ``reuse``, asked under the lock, takes it instead of measuring the cell again."""
    sides = [Side("0.0.0", "p", sys.executable, label="A"), Side("0.0.1", "p", sys.executable)]
    settings = dataclasses.replace(QUICK, isolation="fork")
    with Recorder(tmp_path, sides[1:], settings, seed=7, budget=Budget()) as other:
        [(_, _, theirs, _)] = other.run_plan(planned("steady"))  # the other run's result
    assert theirs is not None
    asked, lines = [], []

    def reuse(item, side):
        asked.append(side.label)
        return theirs if side.release == "0.0.1" else None

    # The reused side's interpreter is gone: its worker, were it started, could not start.
    sides[1] = dataclasses.replace(sides[1], interpreter=str(tmp_path / "no-python"))
    with Recorder(
        tmp_path, sides, settings, seed=7, budget=Budget(), progress=lines.append, reuse=reuse
    ) as rec:
        mine, taken = rec.run_plan(planned("steady"))
    assert len(asked) == 2, "asked of each side"
    assert taken.run is None and taken.stored == theirs, "reused, not measured"
    assert mine.run is not None and len(mine.run.processes) == 2
    assert len(load_results(tmp_path / "steady")[0]) == 2, "one result each, none twice"
    assert any("stored by another run meanwhile" in line for line in lines)


def venv_gone_line(tmp_path, python):
    """One process of a side run by ``python``, which must raise VenvGone: its line, and the run."""
    side = dataclasses.replace(this_side("t"), interpreter=str(python))
    recorder = Recorder(tmp_path / "r", [side], QUICK, seed=1, budget=Budget(), progress=print)
    run = CellRun(recorder.sides[0], 1)
    with pytest.raises(VenvGone) as gone:
        recorder._measure_process(Cell(0, planned("steady")[0], "(1/1) steady"), run, 0, "")
    recorder.close()
    return str(gone.value), run


@pytest.mark.parametrize(
    ("interpreter", "detail", "why"),
    [
        ("gone", "exit code 1\n…/bin/python: No such file or directory", "/bin/python is gone"),
        ("here", "ModuleNotFoundError: No module named 'jax'", "jax is gone from"),
    ],
)
def test_a_process_whose_venv_changed_under_it_is_a_fault_of_the_machine_not_kept(
    tmp_path, monkeypatch, interpreter, detail, why
):
    """A clean-up outside the harness removed the side's venv mid-run: never a script error (no
    advice to declare jax), and nothing of it stored as the release's outcome."""

    def run_process(worker, index, case, settings):
        return ProcessRun(index, RunStatus.FAILED, detail, 0.1, (index, index + 1))

    monkeypatch.setattr(attempts_module, "run_process", run_process)
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    python = tmp_path / "venv" / "bin" / "python"
    if interpreter == "here":  # a venv whose jax was removed
        python.parent.mkdir(parents=True)
        python.symlink_to(sys.executable)
        (python.parents[1] / "pyvenv.cfg").write_text("home = /usr\n")
    line, run = venv_gone_line(tmp_path, python)
    assert "\n" not in line and why in line and "a fault of the machine, not of the script" in line
    assert "declare" not in line and run.processes == []


def test_a_process_that_died_on_a_truncated_module_is_a_fault_of_the_machine_not_kept(
    tmp_path, monkeypatch
):
    """R8-19: a truncated module file in a script venv became a confirmed JAX step ("runs again
    since 0.10.2"). Its hash fails the venv's RECORD: a fault of the machine, nothing kept, the
    venv marked to be installed again."""
    from tests.measure.test_venv_files import TRACEBACK, installed

    venv, site = installed(tmp_path)
    (site / "jax").mkdir()
    (site / "jax" / "__init__.py").write_text("")
    (venv / "pyvenv.cfg").write_text("home = /usr\n")
    python = venv / "bin" / "python"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    (site / "pkg" / "mod.py").write_bytes(b"def f():\n    return")

    def run_process(worker, index, case, settings):
        return ProcessRun(index, RunStatus.FAILED, TRACEBACK, 0.1, (index, index + 1))

    monkeypatch.setattr(attempts_module, "run_process", run_process)
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    line, run = venv_gone_line(tmp_path, python)
    assert "site-packages/pkg/mod.py no longer what its install recorded" in line, line
    assert "a fault of the machine, not of the script or of JAX" in line and run.processes == []
    from harness.measure import venv_files

    assert venv_files.marked(venv) == ["pkg/mod.py"], "its next preparation installs it again"


def test_jax_missing_for_a_subprocess_of_the_script_is_no_fault_of_a_venv_that_holds_jax(tmp_path):
    from harness.measure.launch import venv_gone

    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages" / "jax"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    side = dataclasses.replace(this_side("t"), interpreter=str(python))
    said = "subprocess: ModuleNotFoundError: No module named 'jax'"
    assert venv_gone(side, said) == "", "the script's own python3 -c 'import jax', not the venv"
    (site / "__init__.py").unlink()
    assert venv_gone(side, said).startswith("jax is gone from")


HELD_CHIP = '''"""A case process that meets the TPU held by another program, as libtpu says it."""

CLAIM = "never judged"
SOURCE = "synthetic: a test fixture"
SIZE_SPACE = {"K": (1, 10)}
ANCHORS = [{"K": 1}]


def programs(K):
    raise RuntimeError(
        "Unable to initialize backend 'tpu': ABORTED: Internal error when accessing libtpu "
        'multi-process lockfile. Run "$ sudo rm /tmp/libtpu_lockfile".'
    )


def verdict(m):
    return True, ""
'''


def test_a_tpu_held_by_another_program_stops_the_run_in_one_line_and_stores_nothing(tmp_path):
    """Faked in a real run: its case process fails as a second process opening a TPU chip does.
    That is the machine's fault, not the case's: no result saying the case failed."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "held.py").write_text(HELD_CHIP)
    where = ["--cases-dir", str(tmp_path / "cases"), "--results", str(tmp_path / "r")]
    done = subprocess.run(
        harness_command("run", "--case", "held", *where, "--processes", "1"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0, done.stderr
    assert lines[-1].startswith("harness: error: the TPU is held by another program"), lines
    assert "Traceback" not in done.stderr
    assert not list((tmp_path / "r").rglob("*.json")), "nothing of the process is kept"


def test_counts_open_at_the_last_look_get_more_looks_up_to_their_ceiling_and_time(
    tmp_path, monkeypatch
):
    """#73.5: a new ending in some processes, undecided at the last look (12 a side), is looked at
    again on doubling (24, 48) while a side's processes are within the time budget: a cheap script's
    crash decided; the rest (costs) judged at their last look only."""
    import harness.measure.stopping as stopping

    def crashes(name, processes):
        return [f"{name} died in 0 of {processes} processes on A, 7 of 20 on B"] * (processes < 24)

    runs, asked, lines = deciding_recorder(tmp_path, monkeypatch, crashes, max_count_processes=48)
    assert [len(run.processes) for run in runs] == [24, 24], runs[0].detail
    assert asked == [(3, 3), (6, 6), (12, 12), (12, 12, "counts"), (24, 24)]
    assert "decided at 24 processes a side (look 4 of 5" in runs[0].detail
    assert any("12 more rounds (at most 48 a side)" in line for line in lines), lines
    monkeypatch.setattr(stopping, "COUNT_SECONDS", 1.5)  # 0.1 s a fake process: 15 a side
    runs, _, _ = deciding_recorder(tmp_path, monkeypatch, crashes, max_count_processes=48)
    assert [len(run.processes) for run in runs] == [15, 15], runs[0].detail
    assert "the counts' time budget of 1.5 s a side spent" in runs[0].detail
    runs, _, _ = deciding_recorder(tmp_path, monkeypatch, crashes)
    assert [len(run.processes) for run in runs] == [12, 12], "no ceiling recorded: as before"
    runs, _, _ = deciding_recorder(
        tmp_path, monkeypatch, crashes, max_count_processes=48, decide_budget_s=3.0
    )
    assert [len(run.processes) for run in runs] == [15, 15], runs[0].detail
    assert "undecided after 15 processes a side (the time budget of 3 s spent" in runs[0].detail, (
        "past the most (12), the counts went on until the cell's budget stopped them"
    )
