"""The range commands' own options: how the commands a page offers name what was measured, and a
script's libraries held, varied or added."""

import dataclasses
import re
import shlex
from pathlib import Path

import pytest

from harness.catalogue import discovery
from harness.catalogue.scripts import read_script
from harness.cli.parser import parse
from harness.cli.ranges import LibraryChoice, bounded, check, target_words
from harness.errors import UsageError
from harness.host.environment import shown_path


def test_a_case_is_named_by_case_and_a_script_by_a_path_that_works_from_anywhere(
    tmp_path, monkeypatch
):
    assert target_words(discovery.discover()["scan_sync"]) == ["--case", "scan_sync"]
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    monkeypatch.chdir(tmp_path)
    assert target_words(read_script(Path("repro.py"), ("--n", "a b"))) == [
        "--script",
        str(script.resolve()),
        "--script-arg=--n",
        "--script-arg='a b'",
    ], "pasted in another folder, the command still finds the script"
    monkeypatch.setenv("HOME", str(tmp_path.parent))
    spaced = tmp_path / "my repro.py"
    spaced.write_text("print(1)\n")
    assert (
        shown_path(spaced, anywhere=True) == f"~/{shlex.quote(f'{tmp_path.name}/my repro.py')}"
    ), "home as ~, quoted after"


def test_the_libraries_a_command_line_adds_and_holds_are_in_the_commands_offered(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("# /// script\n# dependencies = ['equinox']\n# ///\nprint(1)\n")
    case = read_script(script, with_specs=["optax>=0.2"])
    choice = LibraryChoice("newest", ("equinox==0.11.4",))
    assert target_words(case, choice) == [
        "--script",
        str(script.resolve()),
        "--with",
        "'optax>=0.2'",
        "--deps",
        "newest",
        "--hold",
        "equinox==0.11.4",
    ]
    assert LibraryChoice(vary="equinox", jax="0.4.33").label("0.11.4") == "0.4.33+equinox.0.11.4"


def range_options(tmp_path, *more):
    script = tmp_path / "repro.py"
    script.write_text("# /// script\n# dependencies = ['Equinox', 'optax']\n# ///\nprint(1)\n")
    return check(
        parse(["triage", "--script", str(script), "--results", str(tmp_path / "r"), *more])
    )


def test_a_script_s_libraries_are_held_or_varied_by_name_and_resolved_as_of_the_release_by_default(
    tmp_path,
):
    chosen = range_options(
        tmp_path, "--from", "0.4.31", "--to", "0.4.33", "--hold", "equinox==0.11.4"
    ).libraries
    assert chosen == LibraryChoice("as-of", ("equinox==0.11.4",))
    varied = range_options(
        tmp_path, "--vary", "EQUINOX", "--jax", "0.4.33", "--from", "0.11.4", "--to", "0.11.6"
    )
    assert (
        varied.libraries == LibraryChoice("as-of", (), "equinox", "0.4.33")
        and varied.first == "0.11.4"
    )
    newest = range_options(tmp_path, "--from", "0.4.31", "--to", "0.4.33", "--deps", "newest")
    assert newest.libraries.policy == "newest"


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (["--hold", "equinox>=0.11"], "give one exact pin, PKG==VERSION"),
        (["--hold", "jaxlib==0.4.31"], "the release under test is the harness's to choose"),
        (["--vary", "jax", "--jax", "0.4.33"], "the release under test is the harness's to choose"),
        (["--vary", "numpy>=2", "--jax", "0.4.33"], "give a package's name alone, PKG"),
        (["--vary", "numpy[extra]", "--jax", "0.4.33"], "give a package's name alone, PKG"),
        (["--vary", "equinox"], "--vary holds one jax release: give it with --jax VERSION"),
        (["--jax", "0.4.33"], "--jax goes with --vary"),
        (
            ["--vary", "equinox", "--jax", "0.4.33", "--hold", "equinox==0.11.4"],
            "either varied or held",
        ),
        (["--with", "jax==0.4.31"], "the release under test is the harness's to choose"),
        (["--with", "jaxlib"], "the release under test is the harness's to choose"),
        (["--with", "jax-cuda12-plugin"], "the release under test is the harness's to choose"),
    ],
)
def test_what_cannot_be_held_varied_or_added_is_refused_in_one_line(tmp_path, more, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        range_options(tmp_path, "--from", "0.4.31", "--to", "0.4.33", *more)


def test_a_package_the_script_does_not_declare_is_held_or_varied_as_a_constraint_on_its_venv(
    tmp_path,
):
    """numpy moves with jax as jax's own dependency: holding it tells the library from JAX."""
    held = range_options(tmp_path, "--from", "0.4.31", "--to", "0.4.33", "--hold", "NumPy==2.4.6")
    assert held.libraries.hold == ("numpy==2.4.6",)
    varied = range_options(
        tmp_path, "--vary", "numpy", "--jax", "0.4.33", "--from", "2.3.0", "--to", "2.4.6"
    )
    assert varied.libraries == LibraryChoice("as-of", (), "numpy", "0.4.33")


def test_every_command_a_step_of_a_script_without_libraries_offers_is_accepted_when_run(
    tmp_path, monkeypatch
):
    from harness.render.why import libraries_line
    from harness.steps.answers import RangeLibraries
    from tests.render.test_why import script_setting

    script = tmp_path / "repro.py"
    script.write_text("import jax\nprint(1)\n")  # declares no library
    monkeypatch.chdir(tmp_path)
    installed = {"0.4.31": {"numpy": "2.3.0"}, "0.4.33": {"numpy": "2.4.6"}}
    libraries = RangeLibraries({"0.4.31": {}, "0.4.33": {}}, installed=installed)
    setting = dataclasses.replace(
        script_setting(), target=("--script", str(script)), libraries=libraries
    )
    found = libraries_line(setting, "0.4.31", "0.4.33")
    assert found is not None and "numpy 2.3.0 → 2.4.6" in found.text
    assert len(found.follow_ups) == 2
    for follow_up in found.follow_ups:
        words = shlex.split(follow_up.command)
        assert words[:4] == ["nox", "-s", "triage", "--"], follow_up.command
        for more in ([], ["--no-why"]):
            check(parse([words[2], *words[4:], "--results", str(tmp_path / "r"), *more]))


def test_a_hold_outside_what_the_script_declares_is_refused_before_any_release_is_resolved(
    tmp_path,
):
    with pytest.raises(
        UsageError,
        match=re.escape(
            "--hold six==1.16.0: the script declares six<1.10, which six 1.16.0 is not"
        ),
    ):
        range_options(tmp_path, "--with", "six<1.10", "--hold", "six==1.16.0")
    inside = range_options(tmp_path, "--with", "six<1.10", "--hold", "six==1.9.0")
    assert inside.libraries.hold == ("six==1.9.0",)
    assert range_options(tmp_path, "--hold", "equinox==0.11.4").libraries.hold == (
        "equinox==0.11.4",
    )


def test_a_case_takes_no_libraries(tmp_path):
    for more in (["--with", "equinox"], ["--deps", "newest"], ["--hold", "equinox==1"]):
        with pytest.raises(UsageError, match="for --script FILE: a case needs nothing but JAX"):
            check(parse(["triage", "--case", "scan_sync", "--results", str(tmp_path / "r"), *more]))


@pytest.mark.parametrize(("command", "most"), [("triage", 64), ("sweep", 64), ("bisect", 256)])
def test_a_range_over_its_command_s_bound_is_refused_in_one_line_that_says_the_bound(command, most):
    bounded(command, most, "numpy 1.3.0–2.5.4")  # at the bound: taken
    with pytest.raises(UsageError) as refused:
        bounded(command, most + 1, "numpy 1.3.0–2.5.4")
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith(f"numpy 1.3.0–2.5.4 is {most + 1} releases; a {command} ")
    assert f"takes at most {most}: give a narrower --from/--to" in line


def test_the_why_is_bounded_by_a_budget_of_seconds_or_not_at_all(tmp_path):
    assert range_options(tmp_path).why_budget_s is None
    assert range_options(tmp_path, "--why-budget", "90").why_budget_s == 90.0
    with pytest.raises(UsageError, match="--why-budget: '-5' must be a finite positive number"):
        range_options(tmp_path, "--why-budget", "-5")


def test_a_bisect_by_status_needs_no_metric_and_names_its_answer_and_triage_by_it(tmp_path):
    from harness.commands.ranges import swept, triage_command

    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    argv = ["bisect", "--script", str(script), "--status", "--good", "0.4.26", "--bad", "0.4.30"]
    options = check(parse([*argv, "--results", str(tmp_path / "r")]))
    assert options.criterion.ending and options.metric is None
    assert swept(options) == ([], False), "by status: no metric compared, nor the claim"
    assert "--status" in triage_command(options)
    spelt = [*argv[:3], "--metric", "process.end", *argv[4:], "--results", str(tmp_path / "r")]
    assert check(parse(spelt)).criterion == options.criterion, "--metric process.end"
    with pytest.raises(UsageError, match="--claim: not allowed with argument --status"):
        parse([*argv, "--claim"])
    case = ["bisect", "--case", "scan_sync", "--status", "--good", "0.4.26", "--bad", "0.4.30"]
    assert check(parse([*case, "--commits", "--results", str(tmp_path / "r")])).commits


@pytest.mark.parametrize("command", ["triage", "sweep", "bisect"])
def test_a_range_under_an_accelerator_profile_measures_the_discussions_sizes(tmp_path, command):
    ends = {
        "bisect": ["--good", "0.5.3", "--bad", "0.12.0.1"],
        "sweep": ["--from", "0.5.3", "--to", "0.12.0.1"],
    }.get(command, [])
    argv = [command, "--case", "async_dispatch", "--claim", *ends, "--results", str(tmp_path)]
    assert check(parse([*argv, "--profile", "tpu"])).sizes == {"N": 10000}
    assert check(parse([*argv, "--profile", "cuda12"])).sizes == {"N": 10000}
    assert check(parse([*argv, "--profile", "cpu"])).sizes == {"N": 1000}
    assert check(parse([*argv, "--profile", "tpu", "--size", "N=64"])).sizes == {"N": 64}


def test_a_triage_screens_on_a_grid_unless_told_to_measure_every_release(tmp_path):
    from harness.commands.ranges import no_change_hint, rerun_command, triage_command

    assert not range_options(tmp_path).every_release
    every = range_options(tmp_path, "--every-release")
    assert every.every_release and "--every-release" in rerun_command(every, 60)
    assert "--every-release" not in rerun_command(range_options(tmp_path), 60)
    assert "--every-release" in triage_command(every, every_release=True)
    [offered] = no_change_hint(range_options(tmp_path)).follow_ups
    assert "--every-release" in offered.command, "where the ends agree, a grid sees no more"
    with pytest.raises(UsageError, match="unrecognized arguments: --every-release"):
        parse(
            [
                "sweep",
                "--case",
                "scan_sync",
                "--from",
                "0.4.26",
                "--to",
                "0.4.30",
                "--every-release",
            ]
        )


def test_every_kind_of_why_is_asked_on_request_and_the_command_that_asks_it_carries_the_flag(
    tmp_path,
):
    from harness.commands.ranges import rerun_command

    assert not range_options(tmp_path).why_every_kind
    every = range_options(tmp_path, "--why-every-kind")
    assert every.why_every_kind and rerun_command(every, 60).endswith("--why-every-kind")
    plain = range_options(tmp_path)
    assert "--why-every-kind" not in rerun_command(plain, 60)
    assert rerun_command(plain, 60, every_kind=True).endswith("--why-budget 60 --why-every-kind")


def test_only_the_kinds_of_why_named_are_asked_and_an_unknown_one_is_refused_before_any_run(
    tmp_path,
):
    from harness.commands.ranges import RangeRun, rerun_command

    assert range_options(tmp_path).why_kinds == ()
    chosen = range_options(tmp_path, "--why-kinds", "library, crash flags,library")
    assert chosen.why_kinds == ("library", "crash flags")
    assert rerun_command(chosen, 60).endswith("--why-budget 60 --why-kinds 'library,crash flags'")
    with pytest.raises(UsageError, match="names no kind of why"):
        range_options(tmp_path, "--why-kinds", " , ")
    typo = range_options(tmp_path, "--why-kinds", "defaults,libary")
    with pytest.raises(UsageError, match=r"--why-kinds: no kind named 'libary' \(kinds: library, "):
        RangeRun.start(typo)
