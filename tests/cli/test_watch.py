"""``watch``'s command line, checked before anything is installed, and the pair it picks from the
index."""

import pytest

from harness.cli.parser import validate
from harness.cli.watch import watched_pair
from harness.errors import UsageError
from harness.install.script_envs import NEWEST


def checked(*argv):
    return validate(["watch", *argv])[1]


def test_without_scripts_or_a_suite_the_catalogue_is_watched():
    options = checked()
    assert {case.name for case in options.cases} >= {"scan_sync", "async_dispatch"}
    assert options.suite is None and options.explain and options.policy == NEWEST
    assert [c.name for c in checked("--case", "scan_sync").cases] == ["scan_sync"]


def test_a_folder_s_scripts_are_each_read_as_a_script(tmp_path):
    (tmp_path / "b.py").write_text("print(1)\n")
    (tmp_path / "a.py").write_text('# /// script\n# dependencies = ["equinox"]\n# ///\nprint(2)\n')
    options = checked("--scripts", str(tmp_path), "--no-why")
    assert [c.name for c in options.cases] == ["script-a", "script-b"]
    assert options.cases[0].subject.requirements == ("equinox",) and not options.explain


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scripts", "/no/such/folder"], "--scripts /no/such/folder: no such folder"),
        (["--pytest-benchmark", "/no/such/suite"], "no such file or folder"),
        (["--baseline", "0.4.33", "--release", "0.4.31"], "must be older than --release"),
        (
            ["--with", "equinox"],
            "--with and --requirements are for --scripts and --pytest-benchmark",
        ),
        (["--processes", "2"], "no verdict is possible with fewer than 3"),
        (["--case", "no_such_case"], "unknown case no_such_case"),
        (["--max-time", "600"], "--max-time is for --pytest-benchmark"),
        (["--max-time", "0"], "--max-time"),
        (["--compile-cache"], "--compile-cache is for --pytest-benchmark: a script's or case's"),
    ],
)
def test_bad_input_is_one_line(argv, message):
    with pytest.raises(UsageError, match=message):
        checked(*argv)


def test_a_folder_without_scripts_or_a_script_with_a_bad_block_is_refused(tmp_path):
    with pytest.raises(UsageError, match=r"no \*\.py script in it"):
        checked("--scripts", str(tmp_path))
    (tmp_path / "x.py").write_text("# /// script\n# dependencies = ['jax']\n# ///\n")
    with pytest.raises(UsageError, match="asks for jax"):
        checked("--scripts", str(tmp_path))


def test_a_suite_is_known_by_its_files(tmp_path):
    (tmp_path / "test_b.py").write_text("def test_b(benchmark):\n    benchmark(sum, [1])\n")
    options = checked("--pytest-benchmark", str(tmp_path), "--with", "equinox")
    assert options.suite is not None and len(options.suite.digest) == 64
    assert options.cases == () and options.with_specs == ("equinox",)
    assert options.max_time_s is None
    capped = checked("--pytest-benchmark", str(tmp_path), "--max-time", "1200")
    assert capped.max_time_s == 1200 and capped.suite is not None
    assert not capped.suite.compile_cache
    cached = checked("--pytest-benchmark", str(tmp_path), "--compile-cache")
    assert cached.suite is not None and cached.suite.compile_cache


def test_the_pair_is_the_newest_release_and_the_one_before_unless_named():
    listed = ["0.4.30", "0.4.31", "0.4.33", "0.4.34"]
    assert watched_pair(listed, None, None) == ("0.4.33", "0.4.34")
    assert watched_pair(listed, "0.4.33", None) == ("0.4.31", "0.4.33")
    assert watched_pair(listed, None, "0.4.30") == ("0.4.30", "0.4.34")
    with pytest.raises(UsageError, match=r"jax 0\.4\.32 is not an installable release"):
        watched_pair(listed, "0.4.32", None)
    with pytest.raises(UsageError, match=r"no release before jax 0\.4\.30"):
        watched_pair(listed, "0.4.30", None)


def test_the_load_threshold_is_run_s_unless_given():
    assert checked().measuring.settings.max_load == 0.5
    assert checked("--max-load", "1.5").measuring.settings.max_load == 1.5
    assert checked("--max-load", "off").measuring.settings.max_load is None


def test_the_why_s_budget_is_per_target_as_a_triage_s():
    from harness.commands.watch import Target, range_options

    options = checked("--case", "scan_sync", "--why-budget", "600")
    assert options.why_budget_s == 600 and checked().why_budget_s is None
    [case] = options.cases
    assert range_options(Target(case, "case"), options, "0.4.31", "0.4.33").why_budget_s == 600


def test_a_folder_s_linked_scripts_are_watched_and_a_link_to_nothing_is_refused(tmp_path):
    """Issue 57 #14: links in --scripts were skipped without a word; a folder of links was "no *.py
    script"."""
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "real_one.py").write_text("print(1)\n")
    folder = tmp_path / "scripts"
    folder.mkdir()
    (folder / "linked.py").symlink_to(kept / "real_one.py")
    options = checked("--scripts", str(folder))
    [case] = options.cases
    assert case.name == "script-linked" and case.path == (kept / "real_one.py").resolve()
    (folder / "gone.py").symlink_to(tmp_path / "no-such.py")
    with pytest.raises(UsageError, match=r"gone\.py is a link to nothing"):
        checked("--scripts", str(folder))


def test_the_maintainer_s_selection_reaches_the_suite_as_pytest_s_arguments(tmp_path):
    """Issue 66 #1: a real suite cannot be narrowed: -k, -m, node ids and the suite's own conftest
    options pass through, as typed after `pytest` in the suite's folder."""
    from harness.commands.watch import targets

    (tmp_path / "test_b.py").write_text("def test_b(benchmark):\n    benchmark(sum, [1])\n")
    given = "-k 'bfgs and not slow' -m benchmark test_b.py::test_b --min-dimension=8"
    options = checked(
        "--pytest-benchmark", str(tmp_path), f"--pytest-args={given}", "--out", str(tmp_path / "o")
    )
    assert options.suite is not None
    assert options.suite.args == (
        "-k",
        "bfgs and not slow",
        "-m",
        "benchmark",
        "test_b.py::test_b",
        "--min-dimension=8",
    )
    [target] = targets(options)
    assert target.case.subject.args == options.suite.args, "the selection identifies the results"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("/home/me/suite/test_b.py::test_b", "relative to its folder, inside it"),
        ("../other/test_x.py", "relative to its folder, inside it"),
        ("--rootdir=/home/me", "--rootdir is refused: it moves where pytest finds the suite"),
        ("--benchmark-json=x.json", "it runs and stores the benchmarks"),
        ("-n 4", "-n is refused"),
        ("-n4", "-n is refused"),
        ("-k 'unclosed", "not split as a shell would"),
        ("--basetemp=tests", "--basetemp is refused: it writes or deletes files"),
        (" ".join(["-v"] * 65), "--pytest-args: at most 64 words"),
    ],
)
def test_a_selection_that_would_leak_a_path_or_end_the_measurement_is_refused(
    tmp_path, given, message
):
    (tmp_path / "test_b.py").write_text("def test_b(benchmark):\n    benchmark(sum, [1])\n")
    with pytest.raises(UsageError, match=message):
        checked("--pytest-benchmark", str(tmp_path), f"--pytest-args={given}")
    with pytest.raises(UsageError, match="--pytest-args is for --pytest-benchmark"):
        checked("--pytest-args=-k x")


def test_a_file_suite_s_selection_names_no_other_file(tmp_path):
    """R8-14: a node id of a file beside a file suite measured that file under the suite's name."""
    bench = tmp_path / "bench.py"
    bench.write_text("def test_b(benchmark):\n    benchmark(sum, [1])\n")
    (tmp_path / "other.py").write_text("def test_o(benchmark):\n    benchmark(sum, [1])\n")
    options = checked("--pytest-benchmark", str(bench), "--pytest-args=bench.py::test_b")
    assert options.suite is not None and options.suite.args == ("bench.py::test_b",)
    with pytest.raises(UsageError, match=r"not a test of the suite's file bench\.py"):
        checked("--pytest-benchmark", str(bench), "--pytest-args=other.py::test_o")


def test_a_script_folder_is_narrowed_by_include_and_exclude(tmp_path):
    for name in ("bench_a.py", "bench_b.py", "helpers.py"):
        (tmp_path / name).write_text("print(1)\n")
    names = [c.name for c in checked("--scripts", str(tmp_path), "--include", "bench_*").cases]
    assert names == ["script-bench_a", "script-bench_b"]
    narrowed = checked("--scripts", str(tmp_path), "--exclude", "helpers.py", "--exclude", "*_b.py")
    assert [c.name for c in narrowed.cases] == ["script-bench_a"]
    with pytest.raises(UsageError, match="--include and --exclude leave no script"):
        checked("--scripts", str(tmp_path), "--include", "nothing*")
    with pytest.raises(UsageError, match="--include and --exclude are for --scripts"):
        checked("--include", "x*")
