"""Where a process died, for real: a script that segfaults, one that hangs past its time-out and one
that raises, each run as the harness runs a script (a side's worker, a case process, the start-up
hook), and what is kept."""

import faulthandler
import hashlib
import os
import re
import sys
import threading
import time

import pytest

from harness.measure import deaths, script_hook
from harness.measure.attempts import run_process
from harness.measure.launch import Worker
from harness.store.schema import EndKind, ProcessEnd, RunStatus, Settings
from tests.conftest import FIXTURES

DIES = FIXTURES / "scripts" / "dies.py"


def run_dies(tmp_path, how: str, timeout_s: float = 60.0):
    worker = Worker(
        sys.executable, {**os.environ, "HARNESS_TEST_DIES": how}, "spawn", tmp_path / "w.log"
    )
    try:
        worker.ready()
        script = {
            "case_file": str(DIES),
            "sizes": {},
            "script_sha256": hashlib.sha256(DIES.read_bytes()).hexdigest(),
        }
        return run_process(worker, 0, script, Settings(timeout_s=timeout_s))
    finally:
        worker.close()


def test_a_segfault_keeps_its_signal_its_last_lines_and_the_scripts_stack(tmp_path):
    process = run_dies(tmp_path, "segfault")
    assert process.status is RunStatus.CRASHED
    died = process.died
    assert died is not None and died.how is EndKind.SIGNAL
    assert (died.signal, died.exit_status, died.from_outside) == ("SIGSEGV", 139, False)
    assert "eyJ" not in str(process.to_json()), "the token it wrote, redacted before storing"
    assert died.last_lines == "Authorization: <redacted>\nretrying with <redacted>", "its stderr"
    assert "Segmentation fault" in died.stack and 'dies.py", line' in died.stack
    assert "in main" in died.stack, "the script's own frames, where it died"
    assert deaths.first_line(died) == "SIGSEGV (exit 139)"


def test_a_hang_keeps_where_it_waited_a_little_before_its_time_out(tmp_path):
    process = run_dies(tmp_path, "hang", timeout_s=6.0)
    assert process.status is RunStatus.TIMEOUT
    died = process.died
    assert died is not None and died.how is EndKind.TIMEOUT and died.timeout_s == 6.0
    assert "Timeout" in died.stack and "in wait_in_a_loop" in died.stack
    assert "dies.py: about to hang" in died.last_lines, "the script's own output, read back"


def test_an_error_keeps_the_exit_status_and_the_traceback(tmp_path):
    process = run_dies(tmp_path, "raise")
    assert process.status is RunStatus.FAILED
    died = process.died
    assert died is not None and (died.how, died.exit_status) == (EndKind.EXIT, 1)
    assert "RuntimeError: this release refuses the flag" in died.last_lines
    assert died.stack == "", "no fatal signal, no time-out: no faulthandler stack"


def test_a_script_that_runs_ok_has_no_death_and_sees_none_of_the_hooks_variables(tmp_path):
    process = run_dies(tmp_path, "ok")
    assert process.status is RunStatus.OK and process.died is None


@pytest.mark.parametrize(
    ("returncode", "first", "outside"),
    [(-11, "SIGSEGV (exit 139)", False), (-9, "SIGKILL (exit 137)", True), (3, "exit 3", False)],
)
def test_how_a_process_ended_in_a_few_words(returncode, first, outside):
    end = deaths.ended(returncode, "a\nb\n")
    assert deaths.first_line(end) == first and end.from_outside is outside
    assert end.last_lines == "a\nb"


def test_the_last_lines_are_bounded_and_scrubbed():
    kept = deaths.last_lines("x\n" * 100 + "y" * 10_000)
    assert len(kept) <= deaths.LAST_CHARS + 1 and kept.endswith("y")


def test_the_stack_is_written_before_the_time_out():
    for timeout in (2.0, 10.0, 60.0, 600.0):
        assert 0 < deaths.dump_after(timeout) < timeout


def test_a_time_out_without_its_seconds_is_stored_as_its_kind_alone():
    assert ProcessEnd(EndKind.TIMEOUT).to_json() == {"how": "timeout"}


def waiting_for_the_dump(path, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not path.read_text().endswith("\n\n"):  # whole
        time.sleep(0.02)
    return path.read_text()


def test_the_stack_at_the_time_out_is_written_by_python_never_by_faulthandlers_watchdog(
    tmp_path, monkeypatch
):
    """faulthandler's ``dump_traceback_later`` reads the other threads' frames while they run and
    can crash the process: a slow suite's processes were recorded as SIGSEGV at the dump."""

    def never(*args, **kwargs):
        raise AssertionError("faulthandler's watchdog dumps unsafely")

    monkeypatch.setattr(faulthandler, "dump_traceback_later", never)
    path = tmp_path / "faults.txt"
    was_enabled = faulthandler.is_enabled()
    other = threading.Event()
    threading.Thread(target=other.wait, daemon=True).start()
    try:
        script_hook.watch_faults(str(path), time.time() + 0.2)
        stack = waiting_for_the_dump(path)
    finally:
        other.set()
        faulthandler.disable()
        script_hook._armed.pop().close()
        if was_enabled:
            faulthandler.enable(sys.__stderr__)
    first = stack.splitlines()[0]
    assert re.fullmatch(r"Timeout \(\d+:\d\d:\d\d\.\d\d\)!", first), first
    main = stack[stack.rindex("Thread 0x") :].splitlines()  # the main thread last, whole
    assert main[0].startswith("Thread 0x") and "(most recent call first):" in main[0]
    assert "in waiting_for_the_dump" in main[1], "its most recent call first"
    # This thread and the other one (pytest-xdist's worker has a thread of its own too).
    assert stack.count("Thread 0x") >= 2 and "in wait" in stack[: stack.rindex("Thread 0x")]


def test_a_frame_in_a_venv_is_shown_from_site_packages_in_the_stack_and_the_last_lines(tmp_path):
    venv = "/home/u/.cache/jax-repro/nox/triage/script-envs/0.4.33/lib/python3.12"
    frame = f'  File "{venv}/site-packages/jax/_src/dispatch.py", line 90 in apply'
    mine = '  File "/home/u/repro.py", line 3 in <module>'
    (tmp_path / "faults.txt").write_text(f"Fatal Python error: Segmentation fault\n{frame}\n{mine}")
    stack = deaths.read_stack(tmp_path / "faults.txt")
    assert 'File "site-packages/jax/_src/dispatch.py", line 90 in apply' in stack
    assert "repro.py" in stack and "script-envs" not in stack, "the script's own path kept"
    assert deaths.last_lines(frame + ", in apply").strip().startswith('File "site-packages/jax/')


def test_a_failed_process_keeps_the_end_of_its_output_capped_by_characters(tmp_path):
    log = tmp_path / "output.log"
    log.write_text("first line\n" + "x" * 10_000_000 + "\nTraceback: the last line\n")
    end = deaths.read_end(log)
    assert len(end) <= 16 * deaths.LAST_CHARS and end.endswith("Traceback: the last line\n")
    detail = deaths.last_lines(end)
    assert len(detail) <= deaths.LAST_CHARS + 1 and detail.endswith("Traceback: the last line")
