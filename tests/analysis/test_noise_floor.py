"""The noise floor: its plan, its figures from stored runs, its file, and a real run through the CLI."""

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.analysis.metrics import sample_series
from harness.analysis.noise_floor import (
    CALIBRATION_SCHEMA,
    append_calibration,
    calibrate,
    calibration_path,
    invocation_spread,
    latest_calibrations,
    plan_calibration,
    read_calibration,
    summarize_calibration,
)
from harness.analysis.significance import Thresholds
from harness.catalogue import discovery
from harness.cli import main
from harness.errors import HarnessError, UsageError
from harness.store.results import CALIBRATION_FOLDER, StoredResult, load_results
from tests.conftest import FIXTURES, derive, real_result, v1_result, write_results

FAST = Thresholds(resamples=20)
CATALOGUE = discovery.discover()


def plan(**changes):
    options = {"pairs": 2, "profile": "cpu", "cases_dir": Path("cases"), "run_options": ()}
    overrides = changes.pop("overrides", {})
    raise_spec = changes.pop("raise_spec", None)
    return plan_calibration(CATALOGUE["scan_sync"], overrides, raise_spec, **(options | changes))


def test_the_plan_raises_the_first_size_a_tenth_changes():
    default = plan()
    assert (default.sizes, default.raised, default.raised_to) == ({"N": 600, "M": 2}, "N", 660)
    assert (plan(raise_spec="M").raised, plan(raise_spec="M").raised_to) == ("M", 3), "at least one more"
    assert plan(raise_spec="N=700").raised_to == 700
    assert plan(overrides={"N": 100, "M": 500}).raised_to == 110


def test_every_run_gets_the_cell_and_the_options():
    chosen = plan(run_options=("--repeats", "5"))
    assert chosen.run_arguments(Path("r")) == [
        "--case",
        "scan_sync",
        "--size=M=2",
        "--size=N=600",
        "--profile=cpu",
        "--cases-dir=cases",
        "--results=r",
        "--repeats",
        "5",
    ]
    assert "--size=N=660" in chosen.run_arguments(Path("r"), raised=True)
    interleaved = chosen.run_arguments(Path("r"), sides=Path("s.json"))
    assert "--sides=s.json" in interleaved and not any(a.startswith("--profile") for a in interleaved)
    unchanged, raised = chosen.sides_plan("0.12.0.1")
    assert "sizes" not in unchanged and raised["sizes"] == {"N": 660}
    assert {unchanged["profile"], raised["profile"]} == {"cpu"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"raise_spec": "Q"}, "scan_sync has no size Q"),
        ({"raise_spec": "N=big"}, "'big' is not an integer"),
        ({"raise_spec": "N=600"}, "must be above N=600"),
        ({"raise_spec": "N=5000"}, "leaves its range [16, 2048]"),
        ({"overrides": {"Q": 3}}, "no selected case has size Q"),
        ({"run_options": ("--results=x",)}, "calibrate chooses --results=x itself"),
        ({"run_options": ("--size", "N=3")}, "calibrate chooses --size itself"),
        (
            {"run_options": ("--repeats", "5", "--prof", "x")},
            "calibrate chooses --prof itself",
        ),  # argparse's abbreviation
    ],
)
def test_a_plan_that_cannot_be_run_is_refused(changes, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        plan(**changes)


def stored(data: dict) -> StoredResult:
    return StoredResult.from_document(FIXTURES / "results" / "x.json", data)


def test_a_result_of_one_process_is_one_list_per_metric():
    data = v1_result("async_dispatch-0.12.0.1")
    series = sample_series(stored(data))
    wall = [s["wall_ns"] for s in data["programs"]["jit"]["samples"]]
    assert [len(processes) for processes in series.values()] == [1] * len(series)
    assert next(v for k, v in series.items() if k.name == "jit" and k.kind == "wall") == [wall]


def test_the_figures_of_a_calibration():
    base = real_result("scan_sync-0.12.0.1")
    pairs = [(stored(derive(base, profile=f"a{i}")), stored(derive(base, profile=f"b{i}"))) for i in range(3)]
    raised = stored(derive(base, scale=1.3))
    chosen = plan(pairs=3)
    run = summarize_calibration(chosen, FAST, pairs, [(pairs[0][0], raised)], datetime(2026, 6, 1, tzinfo=UTC))
    metrics = len(sample_series(pairs[0][0]))
    assert (run.pairs, run.comparisons, run.flagged, run.false_positive_rate) == (3, 3 * metrics, 0, 0.0)
    # Every metric is ×1.3 slower; the real fixture's cold trace + lower varies 31 % between its
    # processes, too much for five a side to show it: the others are flagged.
    assert run.slowdown_comparisons == metrics and run.slowdown_flagged == metrics - 1
    assert run.smallest_flagged_ratio == pytest.approx(1.3, rel=0.05)
    assert run.largest_unflagged_ratio == pytest.approx(1.3, rel=0.05)
    assert (run.processes, run.min_processes, run.release, run.case) == (5, 3, "0.12.0.1", "scan_sync")
    assert run.created_at == "2026-06-01T00:00:00+00:00"
    assert run.details["per_pair"] == [{"comparisons": metrics, "flagged": []}] * 3


def test_one_process_a_side_is_no_calibration_but_says_so():
    base = v1_result("scan_sync-0.12.0.1")
    pair = (stored(derive(base, profile="a")), stored(derive(base, profile="b")))
    run = summarize_calibration(
        plan(pairs=1), FAST, [pair], [(pair[0], stored(derive(base, scale=1.3)))], datetime.now(UTC)
    )
    assert run.processes == 1 and run.slowdown_flagged == 0
    assert {m["verdict"] for m in run.details["metrics"]} == {"inconclusive"}


def test_calibrate_runs_separate_aa_invocations_then_interleaved_slowdowns(tmp_path):
    base = real_result("scan_sync-0.12.0.1")
    calls = []

    def run(arguments):
        calls.append(list(arguments))
        folder = Path(next(a for a in arguments if a.startswith("--results=")).removeprefix("--results="))
        sides = next((a.removeprefix("--sides=") for a in arguments if a.startswith("--sides=")), None)
        if sides is None:
            write_results(folder, [derive(base, profile=f"run{len(calls)}")])
            return 0
        for side in json.loads(Path(sides).read_text()):
            sizes = {**base["sizes"], **side.get("sizes", {})}
            scale = 1.3 if sizes["N"] == 110 else 1.0
            write_results(folder, [derive(base, sizes=sizes, scale=scale)])
        return 0

    result = calibrate(plan(pairs=2, slowdowns=3, overrides={"N": 100, "M": 500}), FAST, run=run)
    assert len(calls) == 4 + 3, "2 A/A pairs, then 3 interleaved slowdown runs"
    assert [any(a.startswith("--sides=") for a in c) for c in calls] == [False] * 4 + [True] * 3
    assert len({next(a for a in c if a.startswith("--results=")) for c in calls}) == 7, "each into its own folder"
    assert result.pairs == 2 and result.flagged == 0 and result.slowdown_runs == 3
    metrics = result.slowdown_comparisons // 3
    assert result.slowdown_flagged == 3 * (metrics - 1)


def test_a_run_that_stores_nothing_or_fails_stops_the_calibration(tmp_path):
    with pytest.raises(HarnessError, match="A/A pair 1/2, run A stored 0 results"):
        calibrate(plan(), FAST, run=lambda arguments: 0)
    with pytest.raises(HarnessError, match="run A exited with code 2"):
        calibrate(plan(), FAST, run=lambda arguments: 2)

    def crashed(arguments):
        folder = Path(next(a for a in arguments if a.startswith("--results=")).removeprefix("--results="))
        write_results(folder, [{**real_result("scan_sync-0.12.0.1"), "status": "crashed"}])
        return 0

    with pytest.raises(HarnessError, match="did not measure: its cell is crashed"):
        calibrate(plan(), FAST, run=crashed)


def a_calibration(created_at: datetime):
    base = real_result("scan_sync-0.12.0.1")
    pair = (stored(derive(base, profile="a")), stored(derive(base, profile="b")))
    return summarize_calibration(plan(pairs=1), FAST, [pair], [(pair[0], stored(derive(base, scale=1.3)))], created_at)


def test_calibrations_are_appended_per_machine_and_read_back(tmp_path):
    first = a_calibration(datetime(2026, 6, 1, tzinfo=UTC))
    second = a_calibration(datetime(2026, 6, 2, tzinfo=UTC))
    path = append_calibration(tmp_path, first)
    assert append_calibration(tmp_path, second) == path == calibration_path(tmp_path, first.machine)
    assert path.parent.name == CALIBRATION_FOLDER
    document = json.loads(path.read_text())
    assert document["schema"] == CALIBRATION_SCHEMA and document["machine"] == first.machine
    assert document["runs"][0]["aa"]["false_positive_rate"] == 0.0
    assert read_calibration(path) == [first, second]
    latest, problems = latest_calibrations(tmp_path)
    assert latest == {first.machine: second} and problems == []
    assert list(path.parent.iterdir()) == [path], "no temporary file left behind"


def test_a_bad_calibration_file_is_named_and_never_replaced(tmp_path):
    run = a_calibration(datetime(2026, 6, 1, tzinfo=UTC))
    path = append_calibration(tmp_path, run)
    document = json.loads(path.read_text())
    document["runs"][0]["aa"]["flagged"] = "none"
    path.write_text(json.dumps(document))
    (path.parent / "other.json").write_text("{not json")
    latest, problems = latest_calibrations(tmp_path)
    assert latest == {}
    assert sorted(problems) == sorted(
        [
            f"{path}: runs[0].aa.flagged: expected int, got str",
            f"{path.parent / 'other.json'}: unreadable JSON (Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1))",
        ]
    )
    with pytest.raises(HarnessError, match="not a usable calibration file"):
        append_calibration(tmp_path, run)
    assert json.loads(path.read_text()) == document


def test_the_results_loader_leaves_calibrations_alone(tmp_path):
    results = write_results(tmp_path / "scan_sync" / "jax-0.12.0.1" / "cpu", [real_result("scan_sync-0.12.0.1")])
    append_calibration(tmp_path, a_calibration(datetime(2026, 6, 1, tzinfo=UTC)))
    loaded, problems = load_results(tmp_path)
    assert len(loaded) == 1 and problems == []
    assert results.is_dir()


def test_calibrate_through_the_command_line(tmp_path, fixture_cases, capsys):
    # A pure-Python case, one pair, few samples: the real subprocesses, not a measurement worth keeping.
    code = main(
        [
            "calibrate",
            "--cases-dir",
            str(fixture_cases),
            "--case",
            "steady",
            "--pairs",
            "1",
            "--slowdowns",
            "1",
            "--results",
            str(tmp_path / "results"),
            "--",
            "--repeats",
            "3",
            "--max-seconds",
            "0.2",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("Noise floor of machine ") and "raising K from 1000 to 1100" in captured.out
    [path] = (tmp_path / "results" / CALIBRATION_FOLDER).iterdir()
    [run] = read_calibration(path)
    assert (run.case, run.sizes, run.pairs, run.settings["run_options"]) == (
        "steady",
        {"K": 1000},
        1,
        ["--repeats", "3", "--max-seconds", "0.2"],
    )
    assert run.comparisons > 0 and run.slowdown_comparisons > 0 and run.slowdown_runs == 1
    assert load_results(tmp_path / "results") == ([], []), "the calibration's runs are not left among the results"


def test_a_calibration_records_its_detectable_ratio_and_reads_it_back(tmp_path):
    run = a_calibration(datetime(2026, 6, 1, tzinfo=UTC))
    assert run.detectable_ratio is not None and run.detectable_ratio >= 1.1
    assert set(run.details["detectable"]) == {m["metric"] for m in run.details["metrics"]}
    [back] = read_calibration(append_calibration(tmp_path, run))
    assert back.detectable_ratio == run.detectable_ratio


def test_the_spread_between_invocations_comes_from_how_far_the_aa_runs_levels_moved():
    base = real_result("scan_sync-0.12.0.1")

    def pairs(*scales: float):
        return [
            (
                stored(derive(base, profile=f"a{i}", invocation=f"a{i}")),
                stored(derive(base, scale=s, invocation=f"b{i}")),
            )
            for i, s in enumerate(scales)
        ]

    assert invocation_spread(pairs(1.0, 1.0, 1.0)) == 0.0, "levels that agree better than their processes predict"
    # Each pair's levels ×1.5 apart: the excess of the squared difference over what the processes predict is
    # log(1.5)² less a little; twice the invocation variance, so the spread is a little under log(1.5)/√2.
    moved = invocation_spread(pairs(1.5, 1 / 1.5, 1.5))
    assert moved is not None and 0.7 * math.log(1.5) / math.sqrt(2) < moved < math.log(1.5) / math.sqrt(2)
    assert invocation_spread(pairs(1.2, 1.2)) < moved
    one = v1_result("scan_sync-0.12.0.1")
    assert invocation_spread([(stored(derive(one, profile="a")), stored(derive(one, profile="b")))]) is None


def test_a_calibration_records_the_spread_between_invocations_and_reads_it_back(tmp_path):
    run = a_calibration(datetime(2026, 6, 1, tzinfo=UTC))
    assert (run.invocation_spread, run.aa_loaded) == (0.0, False)
    [back] = read_calibration(append_calibration(tmp_path, run))
    assert (back.invocation_spread, back.aa_loaded) == (0.0, False)
    older = json.loads(calibration_path(tmp_path, run.machine).read_text())
    del older["runs"][0]["aa"]["invocation_spread"]
    del older["runs"][0]["aa"]["loaded"]
    calibration_path(tmp_path, run.machine).write_text(json.dumps(older))
    [old] = read_calibration(calibration_path(tmp_path, run.machine))
    assert (old.invocation_spread, old.aa_loaded) == (None, False)
    older["runs"][0]["aa"]["loaded"] = "yes"
    calibration_path(tmp_path, run.machine).write_text(json.dumps(older))
    with pytest.raises(ValueError, match=r"aa\.loaded: expected bool, got str"):
        read_calibration(calibration_path(tmp_path, run.machine))
