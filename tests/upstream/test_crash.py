"""What a crash report is about: the status step read from stored answers and stored results."""

import pytest

from harness.store.results import StoredResult
from harness.upstream.change import BisectAnswer, read_bisect_answers, read_triage_answers
from harness.upstream.crash import (
    MAX_WORKAROUND_CHARS,
    crash_between,
    newest_stored,
    sides_words,
    status_answer,
    workaround_of,
)

from ..conftest import FIXTURES, SEGFAULT, as_stored, derive, died, real_result

ANSWERS = FIXTURES / "crash"
WHERE = {"case": "async_dispatch", "sizes": {"N": 1000}, "profile": "cpu"}
STACK = (
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n"
    '  File "repro.py", line 9 in <module>'
)


def side(release: str, *, dead: bool = False, created: str = "") -> StoredResult:
    """A result of ``release`` in five processes, every one ok or every one segfaulted."""
    data = derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=5)
    if created:
        data["created_at"] = created
    if dead:
        died(data, {**SEGFAULT, "stack": STACK})
    return as_stored(data)


def test_a_bisect_by_status_gives_the_step_and_the_workaround_its_why_found():
    found = status_answer(read_bisect_answers(ANSWERS, "async_dispatch"), [], **WHERE)
    assert found is not None
    assert (found.before, found.after) == ("0.4.31", "0.4.33")
    assert found.workaround == "XLA_FLAGS=--xla_cpu_use_thunk_runtime=false"
    assert "status" in found.source
    assert found.reproducer is None, (
        "its reproducer ran ok on both: it does not reproduce the crash"
    )


def test_a_reproducer_is_taken_only_where_it_died_as_the_script_did():
    [stored] = read_bisect_answers(ANSWERS, "async_dispatch")
    data = stored.data | {
        "reproducer": [dict(stored.data["reproducer"][0], status={"reproduces": True})]
    }
    found = status_answer([BisectAnswer(stored.name, data)], [], **WHERE)
    assert found is not None and found.reproducer is not None
    assert found.reproducer.script == "repro_0123456789.py"


def test_a_triage_s_confirmed_status_step_is_one_its_unconfirmed_ones_are_not():
    found = status_answer([], read_triage_answers(ANSWERS, "async_dispatch"), **WHERE)
    assert found is not None and (found.before, found.after) == ("0.4.31", "0.4.33")
    assert found.workaround == "", "the triage found none: the draft has no such line"


@pytest.mark.parametrize(
    "data",
    [
        {
            **WHERE,
            "criterion": "metric",
            "metric": "jit.wall_ns",
            "last_good": "1",
            "first_bad": "2",
        },
        {**WHERE, "criterion": "status", "sizes": {"N": 10}, "last_good": "1", "first_bad": "2"},
        {**WHERE, "criterion": "status", "last_good": 1, "first_bad": None},
        ["not", "an", "answer"],
        None,
    ],
)
def test_an_answer_of_another_criterion_size_or_shape_gives_no_step(data):
    answer = BisectAnswer("bisect-async_dispatch-x.json", data)
    assert status_answer([answer], [BisectAnswer("triage-x.json", data)], **WHERE) is None


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"workaround": 3},
        {"next": "text", "findings": {"a": 1}},
        {"next": [{"purpose": "the workaround", "command": "x", "shell": True}]},
        {
            "findings": [
                {"follow_ups": [{"purpose": "which commit", "command": "x", "shell": False}]}
            ]
        },
    ],
)
def test_no_workaround_is_read_where_the_answer_does_not_say_one(data):
    assert workaround_of(data) == ""


def test_a_workaround_is_read_in_each_shape_bounded_to_one_line():
    assert workaround_of({"workaround": {"setting": "jax.config.update('a', 1)"}}) == (
        "jax.config.update('a', 1)"
    )
    offered = {"purpose": "the workaround, on 2", "command": "XLA_FLAGS=--a", "shell": False}
    assert workaround_of({"findings": [{"follow_ups": [offered]}]}) == "XLA_FLAGS=--a"
    crash = {"before": "1", "after": "2", "workaround": {"setting": "XLA_FLAGS=--b", "runs": True}}
    assert workaround_of({"crash": [crash]}, ("1", "2")) == "XLA_FLAGS=--b"
    assert workaround_of({"crash": [crash]}, ("0", "2")) == "", "another step's"
    failed = crash | {"workaround": {"setting": "XLA_FLAGS=--b", "runs": False}}
    assert workaround_of({"crash": [failed]}, ("1", "2")) == ""
    long = workaround_of({"workaround": "XLA_FLAGS=" + "--x\n" * 200})
    assert "\n" not in long and len(long) == MAX_WORKAROUND_CHARS


def test_the_crash_is_every_process_ok_on_one_release_and_dead_alike_on_the_other():
    ok, dead = side("0.4.31"), side("0.4.33", dead=True)
    crash = crash_between(ok, dead)
    assert crash is not None and crash.regression and crash.verb == "crashes"
    assert (crash.runs, crash.crashes, crash.how) == ("0.4.31", "0.4.33", "SIGSEGV (exit 139)")
    assert crash.dead_words == "SIGSEGV (exit 139) in 5 of 5 processes"
    assert crash.end is not None and "repro.py" in crash.end.stack
    assert crash.cpu_model, "the machine the crashing release ran on"
    fixed = crash_between(side("0.4.31", dead=True), side("0.4.33"))
    assert fixed is not None and not fixed.regression and fixed.runs == "0.4.33"


def test_no_crash_where_both_run_or_one_crashed_in_some_processes_only():
    assert crash_between(side("0.4.31"), side("0.4.33")) is None
    some = derive(real_result("async_dispatch-0.12.0.1"), release="0.4.33", processes=5)
    died(some, {**SEGFAULT, "processes": 2})
    assert crash_between(side("0.4.31"), as_stored(some)) is None
    assert "ok in 5 of 5" in sides_words(side("0.4.31"), side("0.4.33"))


def test_the_newest_stored_result_of_a_release_counts_whatever_its_status():
    older = side("0.4.33", created="2026-01-01T00:00:00+00:00")
    newer = side("0.4.33", dead=True, created="2026-02-01T00:00:00+00:00")
    assert newest_stored([older, newer], "0.4.33", {"N": 1000}, "cpu") is newer
    assert newest_stored([older, newer], "0.4.33", {"N": 10}, "cpu") is None
