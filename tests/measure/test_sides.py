"""Sides plans are input: every problem is one line naming the file, exit 2."""

import json
import os
import sys

import pytest

from harness import main as cli
from harness.errors import UsageError
from harness.measure.sides import Side, load_plan
from tests.conftest import FIXTURES, document


def write_plan(tmp_path, entries):
    path = tmp_path / "plan.json"
    path.write_text(entries if isinstance(entries, str) else json.dumps(entries))
    return path


def test_a_plan_names_interpreter_environment_release_and_profile(tmp_path):
    plan = write_plan(
        tmp_path,
        [
            {
                "release": "0.4.26",
                "profile": "cpu8",
                "interpreter": sys.executable,
                "env": {"XLA_FLAGS": "x"},
            },
            {
                "release": "0.4.26",
                "profile": "cpu",
                "label": "old release",
                "env": {"HOME": None},
                "compare_next": False,
            },
        ],
    )
    first, second = load_plan(plan)
    assert (first.compare_next, second.compare_next) == (True, False), (
        "compared with the next side unless told"
    )
    assert (
        not first.claims_only
        and load_plan(
            write_plan(tmp_path, [{"release": "1", "profile": "p", "claims_only": True}])
        )[0].claims_only
    ), "every case on a side unless the plan says the main command's"
    assert first.compare_metrics == () and load_plan(
        write_plan(
            tmp_path,
            [{"release": "1", "profile": "p", "compare_metrics": ["scan.wall_ns", "json.x"]}],
        )
    )[0].compare_metrics == ("scan.wall_ns", "json.x")
    assert (first.label, first.interpreter, first.env) == (
        "jax 0.4.26 · cpu8",
        sys.executable,
        {"XLA_FLAGS": "x"},
    )
    assert (second.label, second.interpreter) == ("old release", sys.executable)
    environ = second.environment({"HOME": "/root", "PATH": "/bin"})
    assert environ == {"PATH": "/bin"}, (
        "null removes a variable, the rest is the harness's environment"
    )
    assert first.environment({"XLA_FLAGS": "old", "PATH": "/bin"}) == {
        "XLA_FLAGS": "x",
        "PATH": "/bin",
    }


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ("[{", "unreadable JSON"),
        ("[]", "must be a non-empty list of sides"),
        ('{"release": "1"}', "must be a non-empty list of sides"),
        (["0.4.26"], "side 1: a side is an object"),
        ([{"release": "0.4.26"}], "side 1: missing 'profile'"),
        ([{"release": "0.4.26", "profile": "cpu", "python": "x"}], "unknown key 'python'"),
        ([{"release": "", "profile": "cpu"}], "'release' must be a non-empty line of text"),
        ([{"release": "0.4.26", "profile": "a\nb"}], "'profile' must be a non-empty line of text"),
        ([{"release": "0.4.26", "profile": 8}], "'profile' must be a non-empty line of text"),
        (
            [{"release": "1", "profile": "p", "interpreter": "/nonexistent/python"}],
            "is not an executable file",
        ),
        ([{"release": "1", "profile": "p", "env": ["A=1"]}], "'env' must be an object"),
        (
            [{"release": "1", "profile": "p", "env": {"A=B": "1"}}],
            "'A=B' is not an environment variable name",
        ),
        (
            [{"release": "1", "profile": "p", "env": {"A": 1}}],
            "the value of A must be a string or null",
        ),
        (
            [{"release": "1", "profile": "p"}, {"release": "1", "profile": "p"}],
            "sides 1 and 2 share the label",
        ),
        (
            [
                {"release": "1", "profile": "p", "label": "a"},
                {"release": "1", "profile": "p", "label": "b"},
            ],
            "sides 1 and 2 are both release 1 under profile p",
        ),
        (
            [
                {"release": "1", "profile": "p", "sizes": {"K": 2}},
                {"release": "1", "profile": "p", "label": "b", "sizes": {"K": 2}},
            ],
            "sides 1 and 2 are both release 1 under profile p at the same sizes",
        ),
        ([{"release": "1", "profile": "p", "sizes": ["K=2"]}], "'sizes' must be an object"),
        (
            [{"release": "1", "profile": "p", "sizes": {"K": "2"}}],
            "the size 'K' must be a whole number",
        ),
        (
            [{"release": "1", "profile": "p", "sizes": {"K": True}}],
            "the size 'K' must be a whole number",
        ),
        ([{"release": "1", "profile": "p", "sizes": {"K": 0}}], "sizes must be positive"),
        ([{"release": "1", "profile": "p", "sizes": {"../K": 3}}], "malformed size"),
        (
            [{"release": "1", "profile": "p", "compare_next": "no"}],
            "'compare_next' must be true or false",
        ),
        (
            [{"release": "1", "profile": "p", "claims_only": 1}],
            "'claims_only' must be true or false",
        ),
        (
            [{"release": "1", "profile": "p", "compare_metrics": "a.wall_ns"}],
            "'compare_metrics' must be a list",
        ),
        (
            [{"release": "1", "profile": "p", "compare_metrics": ["../x"]}],
            "'compare_metrics': malformed metric",
        ),
    ],
)
def test_bad_plans_are_refused_naming_the_file(tmp_path, entries, message):
    plan = write_plan(tmp_path, entries)
    with pytest.raises(UsageError, match=message) as refused:
        load_plan(plan)
    assert str(plan) in str(refused.value) and "\n" not in str(refused.value)


def test_an_unreadable_plan_is_refused(tmp_path):
    with pytest.raises(UsageError, match="cannot read the sides plan"):
        load_plan(tmp_path / "absent.json")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="cannot read the sides plan"):
        load_plan(tmp_path / "binary.json")


def test_the_command_line_refuses_a_bad_plan_with_one_line(tmp_path, capsys):
    plan = write_plan(tmp_path, [{"release": "1"}])
    argv = [
        "run",
        "--cases-dir",
        str(FIXTURES / "cases"),
        "--results",
        str(tmp_path / "r"),
        "--sides",
        str(plan),
    ]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: sides plan") and err.count("\n") == 1
    assert not (tmp_path / "r").exists()
    good = write_plan(tmp_path, [{"release": "1", "profile": "p"}])
    assert cli.main([*argv[:-1], str(good), "--profile", "cpu"]) == 2
    assert "--profile is for a run without --sides" in capsys.readouterr().err


def test_a_side_defaults_to_this_interpreter_and_environment():
    side = Side("0.4.26", "cpu")
    assert side.interpreter == sys.executable and side.label == "jax 0.4.26 · cpu"
    assert side.environment() == dict(os.environ)


def test_an_aa_plan_of_one_interpreter_runs_interleaved_through_the_command_line(tmp_path, capsys):
    from harness.store.results import load_results

    plan = write_plan(
        tmp_path,
        [
            {
                "release": "aa",
                "profile": "first",
                "interpreter": sys.executable,
                "env": {"AA_SIDE": "1"},
            },
            {
                "release": "aa",
                "profile": "second",
                "interpreter": sys.executable,
                "label": "second side",
            },
        ],
    )
    argv = [
        "run",
        "--cases-dir",
        str(FIXTURES / "cases"),
        "--case",
        "steady",
        "--results",
        str(tmp_path / "r"),
    ]
    assert (
        cli.main(
            [*argv, "--sides", str(plan), "--processes", "2", "--repeats", "2", "--decide", "off"]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "(1/1) steady K=1000 · 2 processes on each of 2 sides, interleaved" in err
    assert "[second side] (1/1) steady K=1000 · process 2/2 → ok" in err
    assert "1 cells on 2 sides, 2 results stored" in err
    stored = {r.result.profile: document(r) for r in load_results(tmp_path / "r")[0]}
    assert set(stored) == {"first", "second"} and {r["release"] for r in stored.values()} == {"aa"}
    assert stored["first"]["interleaved_with"] == ["second side"]
    assert stored["second"]["interleaved_with"] == ["jax aa · first"]
    assert all(len(r["processes"]) == 2 for r in stored.values())


def test_sides_at_other_sizes_measure_more_work_in_the_same_rounds(tmp_path, capsys):
    from harness.store.results import load_results

    plan = write_plan(
        tmp_path,
        [
            {"release": "aa", "profile": "p"},
            {"release": "aa", "profile": "p", "sizes": {"K": 1100}},
        ],
    )
    argv = [
        "run",
        "--cases-dir",
        str(FIXTURES / "cases"),
        "--case",
        "steady",
        "--results",
        str(tmp_path / "r"),
    ]
    assert cli.main([*argv, "--sides", str(plan), "--processes", "2", "--repeats", "2"]) == 0
    err = capsys.readouterr().err
    assert "[jax aa · p · K=1100] (1/1) steady K=1000 · process 2/2 → ok" in err
    stored = {r.result.sizes["K"]: r.result for r in load_results(tmp_path / "r")[0]}
    assert set(stored) == {1000, 1100}
    assert stored[1100].size_source == "explicit" and stored[1000].size_source == "anchor"
    assert stored[1000].interleaved_with == ("jax aa · p · K=1100",)
    # Resuming finds both cells measured, each at its own sizes.
    assert cli.main([*argv, "--sides", str(plan), "--processes", "2", "--repeats", "2"]) == 0
    assert "already measured" in capsys.readouterr().err


def test_a_side_size_no_case_has_is_refused(tmp_path, capsys):
    plan = write_plan(tmp_path, [{"release": "aa", "profile": "p", "sizes": {"Q": 3}}])
    argv = [
        "run",
        "--cases-dir",
        str(FIXTURES / "cases"),
        "--case",
        "steady",
        "--results",
        str(tmp_path / "r"),
    ]
    assert cli.main([*argv, "--sides", str(plan)]) == 2
    assert "no selected case has size Q" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"release": "../../x", "profile": "cpu"}]', "release"),
        ('[{"release": "0.4.26", "profile": "a/b"}]', "profile"),
        ('[{"release": "0.4.26", "profile": "cpu 8"}]', "profile"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
        (
            '[{"release": "0.4.26", "profile": "cpu", "sizes": {"N": ' + "9" * 5000 + "}}]",
            "unreadable JSON",
        ),
        (" " * (2 * 1024 * 1024), "too large"),
    ],
)
def test_a_plan_whose_names_would_become_paths_or_that_is_hostile_is_refused_in_one_line(
    tmp_path, text, message
):
    plan = tmp_path / "plan.json"
    plan.write_text(text)
    with pytest.raises(UsageError, match=message):
        load_plan(plan)


def test_an_interpreter_deep_in_a_user_s_cache_is_taken_whatever_its_path_s_length(tmp_path):
    """A venv in the user's cache under a deep home folder: its interpreter's path ran past the 120
    characters of a label and the installed command's ``run`` was refused as bad input."""
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 8, "bin")
    deep.mkdir(parents=True)
    python = deep / "python"
    python.symlink_to(sys.executable)
    assert len(str(python)) > 200
    plan = [{"release": "1", "profile": "cpu", "interpreter": str(python)}]
    [side] = load_plan(write_plan(tmp_path, plan))
    assert side.interpreter == str(python)
