"""``--pytest-args`` read as pytest reads them: nothing reaches outside the suite, nothing ends the
measurement, each refusal one line naming the option."""

import pytest

from harness.catalogue.scripts import MAX_ARGS
from harness.catalogue.suite_args import checked
from harness.errors import UsageError

# Issue 74 #5 and #6, R8-14: each wrote outside the suite, or into it, or moved what was measured.
REFUSED = [
    ("--basetemp=tests", "--basetemp is refused: it writes or deletes files"),
    ("--basetemp tests", "--basetemp is refused"),
    ("--junitxml=$VAR/x.xml", "--junitxml is refused: it writes"),
    ("--junit-xml x.xml", "--junit-xml is refused"),
    ("--debug", "--debug is refused"),
    ("--log-file=run.log", "--log-file is refused"),
    ("-o log_file=/abs", "-o log_file is refused"),
    ("-olog_file=x", "-o log_file is refused"),
    ("-o=testpaths=../other", "-o testpaths is refused"),
    ("--override-ini addopts=--basetemp=tests", "-o addopts is refused"),
    ("--rootdir=/", "--rootdir is refused: it moves where pytest finds the suite"),
    ("-c ../pytest.ini", "-c is refused"),
    ("--confcutdir=..", "--confcutdir is refused"),
    ("-p myplugin", "-p myplugin is refused: it loads code"),
    ("-pmyplugin", "-p myplugin is refused"),
    ("-p no:benchmark", "-p no:benchmark is refused: it runs no benchmark"),
    ("--pyargs os", "--pyargs is refused"),
    ("--pastebin=all", "--pastebin is refused"),
    ("@args.txt", "@args.txt would read arguments from a file"),
    ("-k @names", "@names would read arguments from a file"),
    ("tests/../../etc", "node id 'tests/../../etc' is not inside the suite"),
    ("/etc/passwd", "is not inside the suite"),
    ("$HOME/bench", "node id '$HOME/bench' is not inside the suite"),
    ("~/bench", "is not inside the suite"),
    ("--min-dimension=/abs", "--min-dimension '/abs' is not inside the suite"),
    ("--ignore=../x", "--ignore '../x' is not inside the suite"),
    ("--deselect /abs/t.py::t", "is not inside the suite"),
    ("bench/${SUBDIR}", "names a variable or home"),
    # R8-15 and the low item: options that end the measurement
    ("-x", "-x is refused: it ends the measurement"),
    ("-vx", "-x is refused"),
    ("-xvs", "-x is refused"),
    ("--exitfirst", "--exitfirst is refused"),
    ("--maxfail=1", "--maxfail is refused"),
    ("--co", "--co is refused: it runs no benchmark"),
    ("--setup-only", "--setup-only is refused"),
    ("--lf", "--lf is refused: it needs pytest's cache"),
    ("--sw", "--sw is refused"),
    ("--cache-clear", "--cache-clear is refused"),
    ("--benchmark-disable", "--benchmark-disable is refused"),
    ("--benchmark-skip", "--benchmark-skip is refused"),
    ("--benchmark-json=x.json", "--benchmark-json is refused"),
    ("--benchmark-autosave", "--benchmark-autosave is refused"),
    ("-n4", "-n is refused"),
    ("-n auto", "-n is refused"),
    ("--dist=load", "--dist is refused"),
    ("--pdb", "--pdb is refused: it waits for a person"),
    ("-k 'unclosed", "not split as a shell would"),
    # the campaign's: the wrapper's own options after it would be read as paths
    ("-- --basetemp=tests", "-- is refused"),
    ("tests/test_b.py --", "-- is refused"),
    ("-k '\x1b[2J'", "is not text pytest can be given"),
]


@pytest.mark.parametrize(("given", "message"), REFUSED)
def test_an_argument_that_reaches_outside_or_ends_the_measurement_is_refused_in_one_line(
    given, message
):
    with pytest.raises(UsageError, match=r"^--pytest-args: ") as refused:
        checked(given)
    assert message in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "given",
    [
        "-k 'bfgs and not slow' -m benchmark test_b.py::test_b --min-dimension=8",
        "-kbfgs -rA -W error::DeprecationWarning -vv -q",
        "--min-dimension 8 --durations -1 -pno:randomly",
        "-o python_files=bench_*.py --override-ini=markers=slow",
        "--benchmark-min-rounds=5 --benchmark-max-time=0.05 --deselect tests/t.py::slow",
        "tests/ünïcödé.py",
    ],
)
def test_a_maintainer_s_selection_passes_unchanged(given):
    import shlex

    assert checked(given) == tuple(shlex.split(given))


def test_a_file_suite_s_node_ids_are_of_its_file():
    assert checked("bench.py::test_a -k a", "bench.py") == ("bench.py::test_a", "-k", "a")
    assert checked("--min-dimension 8", "bench.py") == ("--min-dimension", "8")
    with pytest.raises(UsageError, match=r"not a test of the suite's file bench\.py"):
        checked("other.py::test_a", "bench.py")


def test_limits_are_said_in_pytest_args_own_words():
    """R8-15: 65 to 100 words were refused as `--script-arg: at most 64 arguments`."""
    assert len(checked(" ".join(["-v"] * MAX_ARGS))) == MAX_ARGS
    with pytest.raises(UsageError, match=f"^--pytest-args: at most {MAX_ARGS} words"):
        checked(" ".join(["-v"] * (MAX_ARGS + 1)))
    with pytest.raises(UsageError, match=r"^--pytest-args: at most"):
        checked("-k " + "a" * 1001)
