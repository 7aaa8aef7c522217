"""``issue --status`` without nox's plan: the step from a stored answer or --good/--bad, the crash
from the stored results, the draft written with what it could not measure and the command that
does."""

import shutil

import pytest

from harness.catalogue import discovery
from harness.commands.crash_issue import write_crash_issue
from harness.commands.issue import IssueRequest, crash_request, write_issue
from harness.errors import HarnessError, UsageError
from harness.install.venvs import ReleaseEnv
from harness.store.schema import Settings

from ..conftest import FIXTURES, SEGFAULT, derive, died, real_result, write_results

ANSWER = "bisect-async_dispatch-0.4.31-0.4.34-status-N.1000-cpu.json"
STACK = 'Current thread 0x1 (most recent call first):\n  File "/tmp/case.py", line 12 in programs'


def fields(tmp_path) -> dict:
    return {
        "case": discovery.discover()["async_dispatch"],
        "sizes": {"N": 1000},
        "settings": Settings(repeats=3, min_repeats=3, warmup=1, max_seconds=1.0),
        "profile": "cpu",
        "platform": "cpu",
        "results_dir": tmp_path / "results",
        "out_dir": tmp_path / "reports",
    }


def request(tmp_path, **changes):
    return crash_request(IssueRequest(**(fields(tmp_path) | {"status": True} | changes)))


def stored(tmp_path, *, crashed: bool = True) -> None:
    base = real_result("async_dispatch-0.12.0.1")
    ok = derive(base, release="0.4.31", processes=3)
    dead = derive(base, release="0.4.33", processes=3)
    if crashed:
        died(dead, {**SEGFAULT, "stack": STACK})
    write_results(tmp_path / "results" / "async_dispatch", [ok, dead])


def test_with_nothing_stored_nor_given_there_is_nothing_to_draft_and_it_says_how_to_find_it(
    tmp_path,
):
    with pytest.raises(UsageError, match=r"nothing to draft about.*--status --good V --bad W"):
        write_crash_issue(request(tmp_path))


def test_a_stored_bisect_by_status_and_its_results_make_the_draft_with_its_workaround(tmp_path):
    (tmp_path / "reports").mkdir()
    shutil.copy(FIXTURES / "crash" / ANSWER, tmp_path / "reports" / ANSWER)
    stored(tmp_path)
    path, title, script, said = write_crash_issue(request(tmp_path))
    assert path.name == "async_dispatch-crash.md" and script == "async_dispatch.py"
    assert title == "async_dispatch crashes since jax 0.4.33 on CPU: SIGSEGV (exit 139)"
    draft = path.read_text()
    assert (
        "Workaround: on jax 0.4.33 it runs with `XLA_FLAGS=--xla_cpu_use_thunk_runtime=false`"
        in draft
    )
    assert "a bisect of jax releases by how the script's processes end" in draft
    assert 'File "/tmp/case.py", line 12 in programs' in draft
    command = (
        "nox -s issue -- --case async_dispatch --status --good 0.4.31 --bad 0.4.33 --size N=1000"
    )
    [line] = said
    assert line.startswith("Not measured here (one JAX installed)") and command in line
    assert command in draft and (path.parent / script).is_file(), "the case's standalone script"


def test_releases_that_make_no_status_step_are_refused_in_one_line(tmp_path):
    stored(tmp_path, crashed=False)
    with pytest.raises(
        HarnessError, match=r"no crash to draft between jax 0\.4\.31 and jax 0\.4\.33: jax"
    ):
        write_crash_issue(request(tmp_path, good="0.4.31", bad="0.4.33"))


def test_a_stored_answer_its_stored_results_deny_is_one_line_naming_both_and_what_to_measure(
    tmp_path,
):
    """Results merged from another machine, or a rerun that no longer crashes: the answer says a
    crash, the results say ok."""
    (tmp_path / "reports").mkdir()
    shutil.copy(FIXTURES / "crash" / ANSWER, tmp_path / "reports" / ANSWER)
    stored(tmp_path, crashed=False)
    with pytest.raises(HarnessError) as refused:
        write_crash_issue(request(tmp_path))
    line = str(refused.value)
    assert "\n" not in line and line.startswith("the stored answer and the stored results disagree")
    assert ANSWER in line and "jax 0.4.31 → 0.4.33" in line and "results" in line
    assert "jax 0.4.33 ok in 3 of 3 processes" in line
    run = "nox -s run -- --case async_dispatch --jax {} --size N=1000"
    assert run.format("0.4.31") in line and run.format("0.4.33") in line


def test_a_timing_draft_never_takes_a_crash_s_answer_and_points_to_status(tmp_path):
    """``issue`` without ``--status``: a stored bisect by status is no timing change; with nothing
    else to draft about it says so in one line with the command that drafts the crash."""
    (tmp_path / "reports").mkdir()
    shutil.copy(FIXTURES / "crash" / ANSWER, tmp_path / "reports" / ANSWER)
    plan = [ReleaseEnv("0.4.33", "0.4.33", "3.12", ("jax==0.4.33",), tmp_path / "venv")]
    asked = IssueRequest(**(fields(tmp_path) | {"plan": plan}))
    with pytest.raises(
        UsageError, match=r"nothing to draft about.*\(a crash: `nox -s issue -- .* --status`\)"
    ):
        write_issue(asked)
