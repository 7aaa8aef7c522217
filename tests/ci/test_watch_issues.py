"""A draft issue per regression a watch confirmed, by ``nox -s issue`` (a fake one here): only new
ones, argv as the summary has it, never through a shell."""

import json
import os
import subprocess
import sys

import pytest

from harness.ci.watch_issues import main
from tests.conftest import REPO


def summary(tmp_path, targets):
    path = tmp_path / "watch.json"
    path.write_text(json.dumps({"schema": "jax-repro-harness/watch", "targets": targets}))
    return str(path)


def target(name, issue, remembered=None):
    return {"target": name, "issue": issue, "remembered": remembered}


def test_each_new_regression_gets_its_draft_and_a_remembered_one_none(tmp_path, capsys):
    calls = []
    path = summary(
        tmp_path,
        [
            target("script-a", ["--script", "a b.py", "--good", "0.4.31", "--bad", "0.4.33"]),
            target("script-b", ["--script", "b.py"], remembered="2026-12-01 10:00 UTC"),
            target("quiet", []),
        ],
    )
    assert main([path, "--out", "drafts"], run=lambda argv: calls.append(argv) or 0) == 0
    assert calls == [
        ["--script", "a b.py", "--good", "0.4.31", "--bad", "0.4.33", "--out", "drafts"]
    ]
    assert "drafting the issue of script-a" in capsys.readouterr().out


def test_a_draft_that_fails_is_said_and_the_exit_status_is_1(tmp_path, capsys):
    path = summary(tmp_path, [target("a", ["--case", "a"]), target("b", ["--case", "b"])])
    assert main([path], run=lambda argv: 1 if "a" in argv else 0) == 1
    assert "the issue of a could not be drafted" in capsys.readouterr().out


def test_what_is_not_a_watch_summary_is_one_line(tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "jax-repro-harness/triage"}))
    assert main([str(other)], run=lambda argv: 0) == 2
    bad = summary(tmp_path, [target("a", ["--case", 3])])
    assert main([bad], run=lambda argv: 0) == 2
    assert main([str(tmp_path / "missing.json")], run=lambda argv: 0) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 3 and all(line.startswith("harness: error: ") for line in errors)


@pytest.mark.parametrize(
    "document",
    [
        {"schema": "jax-repro-harness/watch", "targets": "script-a"},
        {"schema": "jax-repro-harness/watch", "targets": [{"issue": ["--case", "a"]}]},
        {"schema": "jax-repro-harness/watch", "targets": [["--case", "a"]]},
        {
            "schema": "jax-repro-harness/watch",
            "targets": [{"target": f"t{n}", "issue": ["--case", "a"]} for n in range(501)],
        },
        '{"schema": "jax-repro-harness/watch", "targets": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
)
def test_a_malformed_summary_is_one_line_never_a_traceback(tmp_path, document):
    """Issue 57 #11: ``targets`` a string (AttributeError), a target without a name (KeyError),
    nesting past the recursion limit (RecursionError), each read by the module as CI runs it."""
    path = tmp_path / "watch.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    done = run_module(path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("harness: error: ") and "Traceback" not in done.stderr


def run_module(path, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "harness.ci.watch_issues", str(path), "--out", "nowhere"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_fifo_or_dev_zero_is_refused_without_reading_it(tmp_path):
    """Issue 57 #11: /dev/zero was read without bound, a FIFO waited on for ever."""
    fifo = tmp_path / "watch.json"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        done = run_module(path, timeout=30)
        assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr


def test_a_target_s_name_reaches_the_log_without_its_escapes(tmp_path, capsys):
    """Issue 57 #11: a name's ESC (an OSC title, a cleared screen) was printed raw into the job's
    log."""
    name = "script-a\x1b]0;owned\x07\x1b[2J"
    path = summary(tmp_path, [target(name, ["--script", "a.py\x1b[31m"])])
    assert main([path], run=lambda argv: 1) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "script-a\ufffd]0;owned" in out
