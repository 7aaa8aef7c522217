"""How a process ended, in words: the error's line."""

import pytest

from harness.analysis.significance import Thresholds
from harness.analysis.statuses import change_between, end_verb, end_words, error_line, summary_of
from harness.store.schema import EndKind, ProcessEnd, ProcessRun, RunStatus

JAX_TRAILER = """Traceback (most recent call last):
  File "repro.py", line 42, in <module>
    out, grad = vjp_run(init, xs, ct_out)
ValueError: Closure-converted function called with different dynamic arguments.
--------------------
For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set
JAX_TRACEBACK_FILTERING=off to include these.
"""  # noqa: E501


def test_the_error_s_line_is_the_exception_s_not_a_trailer_jax_prints_after_it():
    end = ProcessEnd(EndKind.EXIT, exit_status=1, last_lines=JAX_TRAILER)
    assert error_line(end).startswith("ValueError: Closure-converted function")
    assert end_words(end) == "exit 1 (ValueError)"
    plain = ProcessEnd(EndKind.SIGNAL, signal="SIGSEGV", exit_status=139, last_lines="(10, 4)\n\n")
    assert error_line(plain) == "(10, 4)", "no exception named: the last line that is not blank"
    qualified = "jax.errors.JaxRuntimeError: INTERNAL: oops"
    assert error_line(ProcessEnd(EndKind.RAISED, last_lines=qualified)) == qualified


@pytest.mark.parametrize(
    ("last_lines", "words"),
    [
        ("retrying with a token\nAuthorization: Bearer <redacted>", "exit 1"),
        ("ERROR: usage: pytest [options]\n  inifile: None\n  rootdir: /home/me/suite", "exit 1"),
        ("warning: something\nValueError: printed, never raised", "exit 1"),
        (JAX_TRAILER, "exit 1 (ValueError)"),
        (
            '  File "x.py", line 3, in f\n    g()\njax.errors.JaxRuntimeError: INTERNAL',
            "exit 1 (JaxRuntimeError)",
        ),
        (
            'Traceback (most recent call last):\n  File "x.py", line 1\n    raise Stop\nStop',
            "exit 1 (Stop)",
        ),
    ],
)
def test_an_exit_s_exception_is_named_from_a_traceback_never_from_a_name_value_line(
    last_lines, words
):
    """R8-16: a stderr line `NAME: value` was taken for the exception (`exit 1 (Authorization)`),
    and pytest's usage error was `exit 4 (rootdir)`; a cut traceback (its header gone) still
    names its exception."""
    assert end_words(ProcessEnd(EndKind.EXIT, exit_status=1, last_lines=last_lines)) == words


def test_with_no_exception_named_the_error_is_never_jax_s_trailer_nor_the_script_s_json_line():
    """A process killed after JAX's trailer, or a result's detail quoted as text: the line
    before."""
    trailer = JAX_TRAILER[JAX_TRAILER.index("----") :]
    cut = '{"loop_ms": 1.5}\nSegmentation fault in step 3\n' + trailer
    assert error_line(cut) == "Segmentation fault in step 3"
    assert error_line('ran\n{"loop_ms": 1.5}\n') == "ran"
    assert error_line(f"failed in 5 of 5 processes\n{JAX_TRAILER}").startswith("ValueError: ")


def test_a_json_line_the_script_printed_is_never_its_error():
    printed = 'starting\n{"loop_ms": 3.2, "steps": 10}\n[1, 2]\n'
    end = ProcessEnd(EndKind.SIGNAL, signal="SIGSEGV", exit_status=139, last_lines=printed)
    assert error_line(end) == "starting"
    only = ProcessEnd(EndKind.EXIT, exit_status=1, last_lines='{"loop_ms": 3.2}')
    assert error_line(only) == "" and end_words(only) == "exit 1"
    assert error_line(ProcessEnd(EndKind.EXIT, last_lines="[E] {broken")) == "[E] {broken"


def _processes(end: ProcessEnd | None, count: int = 5) -> list[ProcessRun]:
    status = RunStatus.OK if end is None else RunStatus.CRASHED
    return [ProcessRun(index, status, died=end) for index in range(count)]


@pytest.mark.parametrize(
    ("end", "verb"),
    [
        (ProcessEnd(EndKind.SIGNAL, signal="SIGSEGV", exit_status=139), "crashes"),
        (ProcessEnd(EndKind.SIGNAL, signal="SIGKILL", exit_status=137), "is killed"),
        (ProcessEnd(EndKind.TIMEOUT, timeout_s=60.0), "hangs"),
        (ProcessEnd(EndKind.EXIT, exit_status=1), "fails"),
        (ProcessEnd(EndKind.RAISED, last_lines="ValueError: x"), "fails"),
    ],
)
def test_an_ending_s_verb_comes_from_how_its_processes_ended_never_from_its_words(end, verb):
    assert end_verb(end) == verb
    ok, dead = summary_of(_processes(None)), summary_of(_processes(end))
    for was, now in ((ok, dead), (dead, ok)):
        change = change_between(was, now, Thresholds())
        assert change is not None and change.verb == verb, (end, str(change))


SIX_WAYS = [
    ProcessEnd(EndKind.SIGNAL, signal="SIGSEGV", exit_status=139),
    ProcessEnd(EndKind.EXIT, exit_status=3),
    ProcessEnd(EndKind.SIGNAL, signal="SIGABRT", exit_status=134),
    ProcessEnd(EndKind.RAISED, last_lines="ValueError: bad input"),
    ProcessEnd(EndKind.TIMEOUT, timeout_s=60.0),
    ProcessEnd(EndKind.SIGNAL, signal="SIGKILL", exit_status=137),
]


def _each(ends: list[ProcessEnd]) -> list[ProcessRun]:
    return [ProcessRun(i, RunStatus.CRASHED, died=end) for i, end in enumerate(ends)]


@pytest.mark.parametrize("ends", [SIX_WAYS, SIX_WAYS[::-1], [SIX_WAYS[4], SIX_WAYS[0]] * 3])
def test_processes_that_all_died_each_their_own_way_are_an_ending_whose_detail_is_how(ends):
    """Six processes, six ways (or hangs and segfaults), against six ok: a change, with or without
    the counts' test, named the same whatever order they died in; 'dies' where their verbs
    differ."""
    from harness.analysis.significance import Verdict
    from harness.analysis.statuses import compare_endings

    ok, dead = summary_of(_processes(None, 6)), summary_of(_each(ends))
    assert dead.alike is not None and " other ending" in dead.alike
    change = change_between(ok, dead, Thresholds())
    assert change is not None and change.stops_running and change.verb == "dies", str(change)
    back = change_between(dead, ok, Thresholds())
    assert back is not None and not back.stops_running
    assert compare_endings(ok, dead, Thresholds()).verdict is Verdict.CHANGED
    again = change_between(ok, summary_of(_each(SIX_WAYS[::-1])), Thresholds())
    assert again is not None and again.stops_running == change.stops_running, (
        "measured again, another commonest ending: the same way round"
    )
    assert "SIGSEGV (exit 139) in " in dead.words() and "timed out" in dead.words()


def test_a_process_killed_from_outside_keeps_a_dead_side_a_fault_never_an_ending():
    outside = ProcessEnd(EndKind.SIGNAL, signal="SIGTERM", exit_status=143, from_outside=True)
    dead = summary_of(_each([*SIX_WAYS[:5], outside]))
    assert dead.alike is None and dead.fault()
    assert change_between(summary_of(_processes(None, 6)), dead, Thresholds()) is None
