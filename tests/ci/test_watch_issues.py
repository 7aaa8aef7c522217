"""A draft issue per regression a watch confirmed, by ``nox -s issue`` (a fake one here): only new ones, argv as
the summary has it, never through a shell."""

import json

from harness.ci.watch_issues import main


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
