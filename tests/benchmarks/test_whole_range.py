"""benchmarks/whole_range.py without running it: its command line, the two nox commands it runs,
and how it reads and sets side by side what two runs left in their folders."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "whole_range.py"
spec = importlib.util.spec_from_file_location("whole_range", SCRIPT)
assert spec is not None and spec.loader is not None
whole_range = importlib.util.module_from_spec(spec)
sys.modules.setdefault("whole_range", whole_range)  # its dataclasses look their module up
spec.loader.exec_module(whole_range)


def test_its_help_says_what_it_runs():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True
    )
    assert "--every-release" in done.stdout and "--script-arg" in done.stdout


def test_each_run_is_a_whole_range_triage_without_the_why_into_folders_of_its_own(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    args = whole_range.parse_args([str(script), "--script-arg=-n", "--to", "0.5.3"])
    assert (args.script_arg, args.first, args.last) == (["-n"], None, "0.5.3")
    adaptive = whole_range.triage_argv(args, tmp_path / "a", "adaptive")
    every = whole_range.triage_argv(args, tmp_path / "e", "every-release")
    assert adaptive[adaptive.index("-s") + 1] == "triage" and "--no-why" in adaptive
    assert "--from" not in adaptive and "--script-arg=-n" in adaptive
    assert str(tmp_path / "a" / "results") in adaptive and "--every-release" not in adaptive
    assert every[-1] == "--every-release" and str(tmp_path / "e" / "results") in every


def test_the_runs_and_their_order_are_chosen_and_one_kind_may_run_twice(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    assert whole_range.parse_args([str(script)]).runs is None, "default: adaptive, every-release"
    twice = whole_range.parse_args([str(script), "--run", "adaptive", "--run", "adaptive"])
    assert twice.runs == ["adaptive", "adaptive"]


def test_a_missing_script_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        whole_range.parse_args([str(tmp_path / "nothing.py")])
    assert "no such file" in capsys.readouterr().err


def _folder(
    root: Path,
    measured: int,
    steps: list[tuple[str, str]],
    processes: list[int],
    small: tuple[tuple[str, str], ...] = (),
    unmeasured: tuple[tuple[str, str], ...] = (),
) -> None:
    (root / "results" / "x").mkdir(parents=True)
    confirmations = [
        {"metric": "process.wall_ns", "before": a, "after": b, "outcome": "confirmed"}
        for a, b in steps
    ]
    confirmations += [
        {"metric": "process.peak_rss_bytes", "before": a, "after": b, "outcome": "confirmed"}
        | {"twice_safe": False}
        for a, b in small
    ]
    confirmations += [
        {
            "metric": "process.wall_ns",
            "before": a,
            "after": b,
            "outcome": "small, not measured again",
        }
        for a, b in unmeasured
    ]
    first = {"releases": [{}] * measured, "in_range": 30}
    (root / "triage.json").write_text(
        json.dumps({"first_round": first, "confirmations": confirmations})
    )
    for number, count in enumerate(processes):
        stored = {"processes": [{}] * count}
        (root / "results" / "x" / f"{number}.json").write_text(json.dumps(stored))


def test_two_runs_are_read_and_set_side_by_side_with_whether_they_agree(tmp_path):
    _folder(tmp_path / "a", 9, [("r16", "r17")], [5] * 9 + [10, 10])
    _folder(tmp_path / "e", 30, [("r16", "r17")], [5] * 30 + [10, 10])
    runs = [
        whole_range.read_run("adaptive", tmp_path / "a", 0, 100.0),
        whole_range.read_run("every-release", tmp_path / "e", 0, 300.0),
    ]
    assert [(r.measured, r.in_range, r.processes) for r in runs] == [(9, 30, 65), (30, 30, 170)]
    table = whole_range.side_by_side(runs)
    assert "9 of 30" in table and "30 of 30" in table and "100 s" in table
    assert table.splitlines()[-1] == "the same confirmed steps"
    runs[1].steps = []
    assert whole_range.side_by_side(runs).splitlines()[-1] == "the confirmed steps DIFFER"


def test_small_steps_are_listed_apart_and_do_not_decide_whether_the_runs_agree(tmp_path):
    """Two runs of one script, 2026-12-06: peak memory steps ×0.9–×1.2 confirmed in one run and not
    the other, each judged within what another run's first round lists nine times in ten."""
    _folder(tmp_path / "a", 9, [("r16", "r17")], [5] * 9, small=(("r3", "r4"),))
    _folder(tmp_path / "b", 9, [("r16", "r17")], [5] * 9, small=(("r7", "r8"), ("r8", "r9")))
    runs = [whole_range.read_run("adaptive", tmp_path / name, 0, 100.0) for name in ("a", "b")]
    assert runs[0].small == ["process.peak_rss_bytes r3 → r4"]
    table = whole_range.side_by_side(runs)
    [row] = [line for line in table.splitlines() if line.startswith("small, not twice-safe")]
    assert "r3 → r4" in row and "r7 → r8" in row
    assert table.splitlines()[-1] == "the same confirmed steps"


def test_a_step_past_the_bound_in_one_run_and_small_in_the_other_is_named_by_both(tmp_path):
    """Two runs of rank8_reduce_crash.py, 2026-12-06: lowering ×0.71 0.10.1 → 0.11.1 confirmed past
    its bound in one, small and not measured again in the other (its bound ×1.44 there)."""
    _folder(tmp_path / "a", 9, [("r16", "r17"), ("r3", "r4")], [5] * 9)
    _folder(tmp_path / "b", 9, [("r16", "r17")], [5] * 9, unmeasured=(("r3", "r4"),))
    runs = [whole_range.read_run("adaptive", tmp_path / name, 0, 100.0) for name in ("a", "b")]
    assert runs[1].small == ["process.wall_ns r3 → r4 (first round)"]
    agree, said = whole_range.agreement(runs)
    assert agree and said.endswith(
        "past the bound in one run, small in another: process.wall_ns r3 → r4"
    )
    runs[1].small = []
    assert whole_range.agreement(runs) == (False, "the confirmed steps DIFFER")
