"""Every command's --help renders, shows its defaults and exit codes; an unknown option names the
nearest one."""

import subprocess

import pytest

from harness.cli.parser import COMMANDS, parse, validate
from harness.cli.run import RunOptions
from harness.errors import UsageError
from harness.main import main
from harness.metric_names import Judged
from tests.conftest import FIXTURES, harness_command


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_renders_its_help_with_defaults_and_exit_codes(command, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([command, "--help"])
    assert stopped.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith(f"usage: jax-repro {command}")
    assert "exit status: " in out and "2 bad input" in out
    full = "5 a write failed (a disk full, or one that stopped taking writes): what was stored so "
    assert out.endswith(f"{full}far is kept"), "a full disk's own status: never 1 (triage's 'none')"
    if "--results" in out:
        assert "(default: results)" in out


def test_help_from_a_real_process_has_no_traceback():
    done = subprocess.run(
        harness_command("run", "--help"), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "--target-ratio R" in out and "in 90% of comparisons" in out


def test_the_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)


@pytest.mark.parametrize(
    ("argv", "nearest"),
    [
        (["run", "--proceses", "3"], "--processes"),
        # abbreviations are not taken: a typo must not pass for an option
        (["run", "--proc", "1"], "--processes"),
        (["report", "--baseine", "0.4.26"], "--baseline"),
        (["bisect", "--case", "scan_sync", "--claim", "--goood", "0.4.26"], "--good"),
    ],
)
def test_an_unknown_option_names_the_nearest_known_one(argv, nearest):
    with pytest.raises(UsageError, match=f"did you mean {nearest}"):
        parse(argv)


def test_an_option_far_from_every_known_one_points_to_help():
    with pytest.raises(UsageError, match="run --help` lists its options"):
        parse(["run", "--zzzzzz"])


def test_the_same_option_has_one_default_in_every_command_that_takes_it():
    """Sampling defaults come from the effort alone: one table, whatever the command."""
    defaults: dict[str, set[object]] = {}
    for command in COMMANDS.values():
        parser = __import__("argparse").ArgumentParser()
        command.add_arguments(parser)
        for action in parser._actions:
            # by its name; an older spelling kept beside it is not a second option
            if action.option_strings:
                defaults.setdefault(action.option_strings[0], set()).add(repr(action.default))
    shared_differently = {o: d for o, d in defaults.items() if len(d) > 1}
    # --effort: a standalone script (export, issue) is for numbers to quote, so it samples as full
    # does; --case: repeatable in run and compare, and calibrate has a default case.  Every other
    # option means and defaults the same everywhere.
    assert set(shared_differently) <= {"--effort", "--case"}, shared_differently


def test_validate_gives_the_commands_typed_options_without_running_anything(tmp_path):
    args, checked = validate(
        ["run", "--case", "scan_sync", "--effort", "full", "--results", str(tmp_path / "r")]
    )
    assert args.command == "run" and isinstance(checked, RunOptions)
    assert (checked.settings.repeats, checked.settings.max_seconds, checked.settings.processes) == (
        20,
        2.0,
        10,
    )
    assert not (tmp_path / "r").exists()


def test_a_case_named_the_old_way_still_works_and_two_different_names_are_refused():
    _, by_option = validate(["export", "--case", "scan_sync"])
    _, by_position = validate(["export", "scan_sync"])
    assert by_option == by_position
    with pytest.raises(UsageError, match="two cases named"):
        validate(["export", "scan_sync", "--case", "nested_scan"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--min-sample-time", "1e300"], "more than an hour"),
        (["run", "--max-seconds", "1e300"], "more than a week"),
        (["run", "--timeout", "nan"], "must be a finite number"),
        (["search", "--case", "scan_sync", "--processes", "1"], "fewer than 3 processes a size"),
    ],
)
def test_numbers_that_would_overflow_or_cannot_give_a_verdict_are_refused(argv, message):
    with pytest.raises(UsageError, match=message):
        validate(argv)


def test_a_results_folder_that_cannot_be_written_is_refused_before_anything_is_measured(
    tmp_path, capsys
):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["run", "--case", "scan_sync", "--results", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert "cannot write results under" in err and len(err.strip().splitlines()) == 1


def test_a_bisect_of_a_script_needs_no_metric_but_a_bisect_of_a_case_does(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    _, checked = validate(
        ["bisect", "--script", str(script), "--good", "0.4.31", "--bad", "0.4.33"]
    )
    assert checked.criterion.by is Judged.EVERY, "every metric its endpoints differ on"
    with pytest.raises(UsageError, match="bisect a case by --metric"):
        validate(["bisect", "--case", "scan_sync", "--good", "0.4.31", "--bad", "0.4.33"])


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--effort", "quick", "--effort", "full"],
        ["run", "--budget", "memory=1G", "--budget", "memory=2G"],
        [
            "bisect",
            "--case",
            "scan_sync",
            "--metric",
            "a.wall_ns",
            "--metric",
            "b.wall_ns",
            "--good",
            "1",
        ],
        ["report", "--baseline", "0.4.26", "--baseline", "0.4.30"],
    ],
)
def test_an_option_given_twice_is_refused_rather_than_the_last_quietly_kept(argv):
    with pytest.raises(UsageError, match="given more than once"):
        validate(argv)


def test_a_metric_is_declared_a_value_or_a_cost_never_both():
    script = str(FIXTURES / "scripts" / "shapes.py")
    _, options = validate(["triage", "--script", script, "--value", "json.loss"])
    assert options.thresholds.values == ("json.loss",)
    with pytest.raises(UsageError, match=r"both a value and a cost: json\.loss"):
        validate(["triage", "--script", script, "--value", "json.loss", "--cost", "json.loss"])


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        (["--value", "json.loss", "--higher-is-better", "json.loss"], "value and higher-is-better"),
        (["--value", "process.wall_ns"], r"process\.wall_ns: measured by the harness, a cost"),
        (["--value", "scan.wall_ns"], r"scan\.wall_ns: measured by the harness, a cost"),
    ],
)
def test_a_value_is_a_number_the_script_prints_with_no_better_direction(declared, said):
    script = str(FIXTURES / "scripts" / "shapes.py")
    with pytest.raises(UsageError, match=said):
        validate(["triage", "--script", script, *declared])


def test_flags_measures_as_run_does_but_always_anew_and_on_its_two_sides_only(tmp_path):
    common = ["--case", "scan_sync", "--processes", "7", "--results", str(tmp_path / "r")]
    _, run = validate(["run", *common])
    _, flags = validate(["flags", *common])
    assert flags.run.settings.processes == run.settings.processes == 7
    assert flags.run.device == run.device and flags.run.cases == run.cases
    assert flags.run.budget.limits["flops"] == run.budget.limits["flops"]
    for option in ("--sides", "--strict", "--force", "--retry-failed"):
        with pytest.raises(UsageError, match=f"unrecognized arguments: {option}"):
            validate(["flags", *common, option, *(["p.json"] if option == "--sides" else [])])
