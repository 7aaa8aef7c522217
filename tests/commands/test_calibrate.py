"""calibrate's plan, its runs as ``harness run`` subprocesses, and a real run through the CLI."""

import json
from pathlib import Path

import pytest

from harness.analysis.significance import Thresholds
from harness.catalogue import discovery
from harness.cli.calibrate import plan_calibration
from harness.commands.calibrate import calibrate
from harness.errors import HarnessError, UsageError
from harness.main import main
from harness.store.calibrations import read_calibration
from harness.store.results import CALIBRATION_FOLDER, load_results
from tests.conftest import derive, real_result, write_results

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
    assert (plan(raise_spec="M").raised, plan(raise_spec="M").raised_to) == ("M", 3), (
        "at least one more"
    )
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
    assert "--sides=s.json" in interleaved and not any(
        a.startswith("--profile") for a in interleaved
    )
    unchanged, raised = chosen.sides_plan("0.12.0.1")
    assert "sizes" not in unchanged and raised["sizes"] == {"N": 660}
    assert {unchanged["profile"], raised["profile"]} == {"cpu"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"raise_spec": "Q"}, "scan_sync has no size Q"),
        ({"raise_spec": "N=big"}, "'big' is not an integer"),
        ({"raise_spec": "N=600"}, "must be above N=600"),
        ({"raise_spec": "N=20000"}, "leaves its range [16, 10000]"),
        ({"overrides": {"Q": 3}}, "no selected case has size Q"),
        ({"run_options": ("--results=x",)}, "calibrate chooses --results=x itself"),
        ({"run_options": ("--size", "N=3")}, "calibrate chooses --size itself"),
        # argparse's abbreviation
        ({"run_options": ("--repeats", "5", "--prof", "x")}, "calibrate chooses --prof itself"),
    ],
)
def test_a_plan_that_cannot_be_run_is_refused(changes, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        plan(**changes)


def test_calibrate_runs_separate_aa_invocations_then_interleaved_slowdowns(tmp_path):
    base = real_result("scan_sync-0.12.0.1")
    calls = []

    def run(arguments):
        calls.append(list(arguments))
        folder = Path(
            next(a for a in arguments if a.startswith("--results=")).removeprefix("--results=")
        )
        sides = next(
            (a.removeprefix("--sides=") for a in arguments if a.startswith("--sides=")), None
        )
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
    assert len({next(a for a in c if a.startswith("--results=")) for c in calls}) == 7, (
        "each into its own folder"
    )
    assert result.pairs == 2 and result.flagged == 0 and result.slowdown_runs == 3
    metrics = result.slowdown_comparisons // 3
    assert result.slowdown_flagged == 3 * (metrics - 2), (
        "every timing but the cold trace; the memory, as it was"
    )


def test_a_run_that_stores_nothing_or_fails_stops_the_calibration(tmp_path):
    with pytest.raises(HarnessError, match="A/A pair 1/2, run A stored 0 results"):
        calibrate(plan(), FAST, run=lambda arguments: 0)
    with pytest.raises(HarnessError, match="run A exited with code 2"):
        calibrate(plan(), FAST, run=lambda arguments: 2)

    def crashed(arguments):
        folder = Path(
            next(a for a in arguments if a.startswith("--results=")).removeprefix("--results=")
        )
        write_results(folder, [{**real_result("scan_sync-0.12.0.1"), "status": "crashed"}])
        return 0

    with pytest.raises(HarnessError, match="did not measure: its cell is crashed"):
        calibrate(plan(), FAST, run=crashed)


def test_calibrate_through_the_command_line(tmp_path, fixture_cases, capsys):
    # A pure-Python case, one pair, few samples: the real subprocesses, not a measurement worth
    # keeping.
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
    assert (
        captured.out.startswith("Noise floor of machine ")
        and "raising K from 1000 to 1100" in captured.out
    )
    [path] = (tmp_path / "results" / CALIBRATION_FOLDER).iterdir()
    [run] = read_calibration(path)
    assert (run.case, run.sizes, run.pairs, run.settings["run_options"]) == (
        "steady",
        {"K": 1000},
        1,
        ["--repeats", "3", "--max-seconds", "0.2"],
    )
    assert run.comparisons > 0 and run.slowdown_comparisons > 0 and run.slowdown_runs == 1
    assert load_results(tmp_path / "results") == ([], []), (
        "the calibration's runs are not left among the results"
    )
