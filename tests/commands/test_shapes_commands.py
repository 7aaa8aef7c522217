"""Every shape of a change, end to end with real processes of a plain script in real release venvs
(two jax releases, each resolved into the script's venv): the script reads which jax it has and
stops printing a number, prints another value, or dies in some of its processes on one release
only (``HARNESS_TEST_SHAPES``)."""

import json
import re

import pytest

from harness.main import main
from harness.metric_names import parse_metric_name
from harness.store.results import load_results
from harness.upstream.change import change_from, read_steps, title
from tests.commands.test_status_commands import plan
from tests.conftest import FIXTURES

SCRIPT = FIXTURES / "scripts" / "shapes.py"


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """The two releases' plan, in a folder of this module's own: the script's venvs (each release
    resolved into one) are made under it by the first triage and reused by every other, as a user's
    are (about half a minute each to make, a few seconds to measure in)."""
    folder = tmp_path_factory.mktemp("shapes-releases")
    plan(folder, {"0.4.30": "ok", "0.4.31": "ok"})
    return folder / "plan.json"


def triage(tmp_path, capsys, monkeypatch, releases, shapes, *more):
    monkeypatch.setenv("HARNESS_TEST_SHAPES", shapes)
    answer = tmp_path / "triage.json"
    argv = ["triage", "--script", str(SCRIPT), "--from", "0.4.30", "--to", "0.4.31"]
    argv += ["--releases", str(releases), "--results", str(tmp_path / "results")]
    argv += ["--out", str(tmp_path / "reports"), "--processes", "3", "--no-why"]
    argv += ["--json", str(answer), *more]
    code = main(argv)
    captured = capsys.readouterr()
    return code, " ".join(captured.out.split()), json.loads(answer.read_text()), captured.err


def test_a_number_that_went_missing_is_a_change_never_no_change(
    tmp_path, capsys, monkeypatch, releases
):
    code, out, data, err = triage(tmp_path, capsys, monkeypatch, releases, "0.4.31=silent")
    assert code == 0, err[-3000:]
    assert "No change found" not in out
    # Three processes a side, or more where a loaded machine left another metric's confirmation
    # open: in every one of them on each side.
    [missing] = [a for a in data["answers"] if a.startswith("json.loop_ms")]
    every = r"json\.loop_ms: printed on 0\.4\.30 in (\d+) of \1, missing on 0\.4\.31 in \1 of \1"
    assert (found := re.fullmatch(every, missing)) and int(found[1]) >= 3, missing
    [confirmed] = [c for c in data["confirmations"] if c["metric"] == "json.loop_ms"]
    assert confirmed["again"]["shape"] == "presence" and confirmed["again"]["ratio"] is None
    title = drafted(tmp_path, data, "json.loop_ms")
    gone = r"`json\.loop_ms` no longer printed \(in 0 of (\d+) processes, was \1 of \1\) since jax"
    assert re.fullmatch(gone + r" 0\.4\.31 on CPU", title), title


def test_a_computed_value_that_changed_is_said_with_its_values_never_a_ratio(
    tmp_path, capsys, monkeypatch, releases
):
    code, out, data, err = triage(tmp_path, capsys, monkeypatch, releases, "0.4.31=value")
    assert code == 0, err[-3000:]
    [changed] = [a for a in data["answers"] if a.startswith("json.draw")]
    assert (
        changed
        == "json.draw: changed from 0.25 to -0.49 in every process since 0.4.31 (last 0.4.30)"
    )
    assert "×-1.96" not in out and "×-" not in out
    assert drafted(tmp_path, data, "json.draw") == (
        "`json.draw` changed from 0.25 to -0.49 in every process since jax 0.4.31 on CPU"
    )
    assert drafted(tmp_path, data, None) == drafted(tmp_path, data, "json.draw"), (
        "asked for no metric, the draft takes the step that changed"
    )
    stored = read_steps(tmp_path / "reports", data["first_round"]["case"])
    assert [(step.data["metric"], step.data["last_good"]) for step in stored] == [
        ("json.draw", "0.4.30")
    ], "the triage's JSON beside its page: its confirmed step, as issue reads it"
    assert drafted(tmp_path, data, None, ends=False) == drafted(tmp_path, data, "json.draw")


def drafted(tmp_path, data: dict, metric: str | None, *, ends: bool = True) -> str:
    """The title ``issue`` gives the triage's step, read from the results it stored: between the
    two releases given (``ends``), else the step its stored answer names."""
    results, _ = load_results(tmp_path / "results")
    first = data["first_round"]
    change = change_from(
        read_steps(tmp_path / "reports", first["case"]),
        results,
        case=first["case"],
        sizes=first["sizes"],
        profile=first["profile"],
        good="0.4.30" if ends else None,
        bad="0.4.31" if ends else None,
        metric=parse_metric_name(metric) if metric else None,
    )
    assert change is not None
    return title(change, "headline", "cpu")


def test_a_value_equal_on_both_sides_is_never_a_change(tmp_path, capsys, monkeypatch, releases):
    _, _, data, _ = triage(tmp_path, capsys, monkeypatch, releases, "")
    assert all(not a.startswith("json.draw") for a in data["answers"]), data["answers"]
    [draw] = [c for c in data["first_round"]["comparisons"] if c["metric"] == "json.draw"]
    assert draw["vs_previous"]["shape"] == "value", draw
    assert draw["vs_previous"]["verdict"] == "unchanged", draw


def every_other(tmp_path, capsys, monkeypatch, releases, how: str, *more: str):
    """A triage where the script does ``how`` in every other process on 0.4.31, up to 20 a side
    (counts still open then, more)."""
    counter = tmp_path / "processes"
    counter.mkdir()
    monkeypatch.setenv("HARNESS_TEST_DIES_MARKER", str(counter))
    shapes = f"0.4.31={how}"
    return triage(tmp_path, capsys, monkeypatch, releases, shapes, "--max-processes", "20", *more)


def test_a_crash_in_half_the_processes_is_measured_until_its_counts_decide(
    tmp_path, capsys, monkeypatch, releases
):
    code, out, data, err = every_other(tmp_path, capsys, monkeypatch, releases, "flaky")
    assert code == 0, err[-3000:]
    assert "Nothing could be measured" not in out
    [status] = [c for c in data["confirmations"] if c["metric"] == "process.end"]
    assert status["outcome"] == "confirmed", status
    [said] = [a for a in data["answers"] if a.startswith("status:")]
    assert said.startswith("status: crashes since 0.4.31: ok in ")
    assert "SIGSEGV (exit 139) in " in said and "0.4.30 ok in " in said


def test_a_number_missing_in_some_processes_is_measured_until_its_counts_decide(
    tmp_path, capsys, monkeypatch, releases
):
    code, out, data, err = every_other(tmp_path, capsys, monkeypatch, releases, "patchy")
    assert code == 0, err[-3000:]
    assert "No change found" not in out
    [confirmed] = [c for c in data["confirmations"] if c["metric"] == "json.loop_ms"]
    assert confirmed["outcome"] == "confirmed", confirmed
    assert confirmed["again"]["shape"] == "presence", confirmed
    [said] = [a for a in data["answers"] if a.startswith("json.loop_ms")]
    assert "missing on 0.4.31 in " in said, said


def test_a_number_missing_in_a_few_processes_stays_undecided_never_unchanged(
    tmp_path, capsys, monkeypatch, releases
):
    """Printed in 3 of 3 against 2 of 3, a candidate; measured again, one process of 0.4.31 leaves
    it out: counts no test can decide, and the processes that printed it alike are no evidence
    that nothing changed.  Past the most processes, counts still open go on until the time budget
    stops them (without one, to 200 processes a side: 40 s for the same answer)."""
    budget = ("--time-budget", "8")
    code, out, data, err = every_other(tmp_path, capsys, monkeypatch, releases, "rarely", *budget)
    assert code == 3, err[-3000:]  # undecided: not 1, "no change found"
    [again] = [c for c in data["confirmations"] if c["metric"] == "json.loop_ms"]
    assert (again["outcome"], again["again"]["shape"]) == ("undecided", "presence"), again
    assert "No change found" not in out


def test_processes_that_all_die_each_their_own_way_are_a_change_on_their_counts(
    tmp_path, capsys, monkeypatch, releases
):
    """On 0.4.31 every process dies, five ways in turn (SIGSEGV, exit 3, SIGABRT, a ValueError,
    SIGKILL), against none on 0.4.30: a change judged on its counts, how they died its detail."""
    code, out, data, err = every_other(tmp_path, capsys, monkeypatch, releases, "mixed")
    assert code == 0, err[-3000:]
    assert "No confirmed change" not in out and "No change found" not in out
    [status] = [c for c in data["confirmations"] if c["metric"] == "process.end"]
    assert status["outcome"] == "confirmed", status
    [said] = [a for a in data["answers"] if a.startswith("status:")]
    assert said.startswith("status: dies since 0.4.31: "), said
    assert "SIGSEGV (exit 139) in " in said and "ValueError" in said and "0.4.30 ok in " in said
