"""``--pytest-args`` read as pytest's own parser reads them (no abbreviations, ``@FILE``, ``-xvs``
clusters, ``-kEXPR``, ``--opt=value``), without pytest: each option by what it takes and does.

None may reach outside: an option that writes or deletes a file, moves where pytest finds the suite,
loads code from outside it, or ends the measurement early is refused in one line naming it and why;
a path they name stays inside the suite once ``~`` and ``$VARIABLES`` are expanded.  Stdlib only.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import PurePosixPath

from harness.catalogue.scripts import MAX_ARG_CHARS, MAX_ARGS
from harness.errors import UsageError
from harness.store.bounds import string_problem

WRITES = "writes or deletes files (a watch writes only into its own output folder)"
MOVES = "moves where pytest finds the suite (its rootdir, configuration, conftests or testpaths)"
CODE = "loads code from outside the suite"
ENDS = "ends the measurement before every benchmark ran"
NONE_RUN = "runs no benchmark"
OWN = "is the watch's own to set: it runs and stores the benchmarks, one process at a time"
CACHE = "needs pytest's cache, which a watch's runs go without"
PERSON = "waits for a person"
SENDS = "sends the output to a web service"


# pytest's options, and those of the plugins a suite's venv holds (pytest-benchmark; xdist where
# the suite's --with names it): (takes a value, None where allowed or why it is refused).
# An option taking an optional value (nargs="?") is refused, so what it consumes never matters.
TAKES_VALUE = """
    -k -m --durations --durations-min --verbosity -r --report-chars --tb --capture --show-capture
    --color --code-highlight -W --pythonwarnings --max-warnings --import-mode --doctest-report
    --doctest-glob --junitprefix --junit-prefix --assert --log-level --log-format
    --log-date-format --log-cli-level --log-cli-format --log-cli-date-format --log-file-mode
    --log-file-level --log-file-format --log-file-date-format --log-auto-indent --log-disable
    --benchmark-min-time --benchmark-max-time --benchmark-min-rounds
    --benchmark-calibration-precision --benchmark-warmup --benchmark-warmup-iterations
    --benchmark-sort --benchmark-group-by --benchmark-columns --benchmark-name
    --benchmark-time-unit --benchmark-cprofile --benchmark-cprofile-loops --benchmark-cprofile-top
    --ignore --ignore-glob --deselect -o --override-ini -p
"""
FLAGS = """
    -v --verbose -q --quiet -s -l --showlocals --no-showlocals --strict --strict-markers
    --strict-config --runxfail --no-header --no-summary --no-fold-skipped --force-short-summary
    --disable-warnings --disable-pytest-warnings --xfail-tb --fulltrace --full-trace --noconftest
    --keepduplicates --keep-duplicates --collect-in-virtualenv --continue-on-collection-errors
    --doctest-modules --doctest-ignore-import-errors --doctest-continue-on-failure --setupshow
    --setup-show --traceconfig --trace-config --benchmark-disable-gc --benchmark-enable
    --benchmark-verbose --benchmark-quiet --benchmark-only
"""
REFUSED_WITH_VALUE = {
    WRITES: "--basetemp --junitxml --junit-xml --log-file",
    MOVES: "--rootdir -c --config-file --confcutdir",
    CODE: "--pdbcls --benchmark-timer",
    SENDS: "--pastebin",
    ENDS: "--maxfail",
    CACHE: "--lfnf --last-failed-no-failures",
    OWN: "--benchmark-json --benchmark-save --benchmark-compare-fail --benchmark-storage "
    "--benchmark-netrc --benchmark-histogram --benchmark-csv --benchmark-cprofile-dump -n "
    "--numprocesses --maxprocesses --dist --tx --px -d --rsyncdir --rsyncignore "
    "--max-worker-restart --testrunuid --maxschedchunk",
}
REFUSED_FLAGS = {
    WRITES: "--debug --benchmark-save-data",
    CODE: "--pyargs",
    ENDS: "-x --exitfirst --disable-plugin-autoload",
    NONE_RUN: "--co --collect-only --collectonly --setuponly --setup-only --setupplan --setup-plan "
    "--fixtures --funcargs --fixtures-per-test --markers -h --help -V --version --benchmark-skip "
    "--benchmark-disable",
    CACHE: "--lf --last-failed --ff --failed-first --nf --new-first --sw --stepwise --sw-skip "
    "--stepwise-skip --sw-reset --stepwise-reset --cache-clear --cache-show",
    PERSON: "--pdb --trace -f --looponfail",
    OWN: "--benchmark-autosave --benchmark-compare",
}
OPTIONS: dict[str, tuple[bool, str | None]] = {
    **dict.fromkeys(TAKES_VALUE.split(), (True, None)),  # -o: by key (SAFE_INI), -p: no:NAME
    **dict.fromkeys(FLAGS.split(), (False, None)),
    **{name: (True, why) for why, names in REFUSED_WITH_VALUE.items() for name in names.split()},
    **{name: (False, why) for why, names in REFUSED_FLAGS.items() for name in names.split()},
}
# Ini keys ``-o`` may set: how tests are named, marked and reported; none names a path or code.
SAFE_INI_KEYS = """
    markers empty_parameter_set_mark strict_config strict_markers strict filterwarnings
    norecursedirs python_files python_classes python_functions usefixtures xfail_strict
    strict_xfail console_output_style verbosity_test_cases verbosity_assertions log_level
    log_cli log_cli_level log_cli_format log_cli_date_format log_format log_date_format
    doctest_optionflags doctest_encoding truncation_limit_lines truncation_limit_chars
"""
SAFE_INI = frozenset(SAFE_INI_KEYS.split())
NUMBER = re.compile(r"-\d+(\.\d*)?$")  # a negative number is a value, as argparse reads it
VARIABLE = re.compile(r"\$(\w|\{)")
WHAT = "--pytest-args"


def refused(option: str, why: str) -> UsageError:
    return UsageError(f"{WHAT}: {option} is refused: it {why}")


def _inside(value: str, what: str, suite_file: str | None) -> None:
    """A path or node id pytest (or the suite's code) would read: relative, inside the suite (a
    file suite: that file), once ``~`` and ``$VARIABLES`` are expanded as pytest expands them."""
    expanded = os.path.expandvars(os.path.expanduser(value))
    place = PurePosixPath(expanded.partition("::")[0])
    if place.is_absolute() or ".." in place.parts or expanded.startswith("~"):
        give = "give node ids and paths relative to its folder, inside it"
        raise UsageError(f"{WHAT}: {what} {value!r} is not inside the suite: {give}")
    if expanded != value or VARIABLE.search(value):  # set or not here, the process may have it
        raise UsageError(f"{WHAT}: {what} {value!r} names a variable or home: give the path itself")
    if suite_file is not None and str(place) not in (suite_file, "."):
        raise UsageError(f"{WHAT}: {what} {value!r} is not a test of the suite's file {suite_file}")


def _option(name: str, value: str | None) -> None:
    why = OPTIONS[name][1]
    if why is not None:
        raise refused(name, why)
    if name == "-p" and not (value or "").startswith("no:"):
        raise refused(f"-p {value}", CODE)
    if name == "-p" and "benchmark" in (value or ""):
        raise refused(f"-p {value}", NONE_RUN)
    key = (value or "").partition("=")[0].strip()
    if name in ("-o", "--override-ini") and key not in SAFE_INI:
        raise UsageError(
            f"{WHAT}: -o {key} is refused: only ini keys that name no path or code may be set "
            "(markers, filterwarnings, python_files, ...)"
        )
    if name in ("--ignore", "--ignore-glob", "--deselect"):
        _inside(value or "", name, None)


def _cluster(token: str, following: str | None) -> bool:
    """A single-dash token (``-xvs``, ``-kbfgs``, ``-k=bfgs``): each option in it checked; whether
    it consumed the next token as its value."""
    for at in range(1, len(token)):
        name = "-" + token[at]
        rest = token[at + 1 :]
        if name not in OPTIONS:  # the suite's own option: its value, if any, must stay inside
            if rest and any(("-" + char) in OPTIONS for char in rest.lstrip("=")):
                raise UsageError(f"{WHAT}: {token}: pytest's options cannot be told apart in it")
            if rest:
                _inside(rest.lstrip("="), token, None)
            return False
        takes, _ = OPTIONS[name]
        if takes:
            value = rest.removeprefix("=") if rest else following
            _option(name, value)
            return not rest and following is not None
        _option(name, None)
    return False


def checked(text: str, suite_file: str | None = None) -> tuple[str, ...]:
    """``--pytest-args`` checked; UsageError naming the first that would reach outside the suite or
    end the measurement.  ``suite_file``: the file's name where the suite is one file."""
    try:
        tokens = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"{WHAT}: not split as a shell would: {exc}") from None
    if len(tokens) > MAX_ARGS or any(len(t) > MAX_ARG_CHARS or "\x00" in t for t in tokens):
        raise UsageError(f"{WHAT}: at most {MAX_ARGS} words of {MAX_ARG_CHARS} characters, no NUL")
    for token in tokens:
        if any(ord(char) < 32 for char in token) or string_problem(token):
            raise UsageError(f"{WHAT}: {token!r} is not text pytest can be given")
        if token.startswith("@"):  # argparse reads more arguments from that file
            raise UsageError(f"{WHAT}: {token} would read arguments from a file: give them here")
    _read(tokens, suite_file)
    return tokens


def _read(tokens: tuple[str, ...], suite_file: str | None) -> None:
    """Each token as argparse takes it: an option with its value, or a node id or path; a word after
    an option of the suite's own may be its value, so it stays inside the suite too."""
    at, after_own = 0, False
    while at < len(tokens):
        token = tokens[at]
        following = tokens[at + 1] if at + 1 < len(tokens) else None
        if following is not None and _optional(following):
            following = None  # argparse gives an option no word that is an option itself
        at += 1
        if not _optional(token):
            _inside(token, "node id", None if after_own else suite_file)
            after_own = False
            continue
        after_own = False
        if token == "--":  # the wrapper's own options follow the suite's: they would be paths
            raise UsageError(f"{WHAT}: -- is refused: give node ids without it")
        elif token.startswith("--"):
            name, equals, value = token.partition("=")
            if name not in OPTIONS:  # the suite's own option; its value may be the next word
                if equals:
                    _inside(value, name, None)
                after_own = not equals
            elif OPTIONS[name][0] and not equals:
                _option(name, following)
                at += following is not None
            else:
                _option(name, value if equals else None)
        elif "=" in token and token.partition("=")[0] in OPTIONS:  # -k=bfgs, -o=key=value
            _option(*token.split("=", 1))
        else:
            at += _cluster(token, following)


def _optional(token: str) -> bool:
    """Whether argparse reads a word as an option (``-``, a negative number: a value)."""
    return token.startswith("-") and token != "-" and not NUMBER.match(token)
