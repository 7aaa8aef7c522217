"""Progress on stderr: one updating line in a terminal, plain lines in a CI log."""

import io
import subprocess
import sys

from harness.commands.progress import CLEAR_LINE, Progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_in_a_log_every_line_is_its_own():
    stream = io.StringIO()
    progress = Progress(("[triage]",), stream, tty=False)
    progress("[triage] first round: 4 releases")
    progress("  (1/4) 0.4.30:")
    progress.done()
    assert stream.getvalue() == "[triage] first round: 4 releases\n  (1/4) 0.4.30:\n"


def test_in_a_terminal_lines_update_one_line_and_milestones_stay():
    stream, clock = io.StringIO(), Clock()
    progress = Progress(("[triage]",), stream, tty=True, clock=clock)
    progress("[triage] first round: 4 releases")
    clock.now = 65
    progress("  (1/4) 0.4.30:")
    progress("  (2/4) 0.4.31: 1 min 05 s elapsed, about 2 min 10 s left")
    progress("[triage] (1/1) json.loop_ms 0.4.31 → 0.4.33: confirmed")
    progress("x" * 300)
    progress.done()
    shown = stream.getvalue()
    assert shown.startswith("[triage] first round: 4 releases\n")
    assert f"{CLEAR_LINE}[1 min 05 s] (1/4) 0.4.30:{CLEAR_LINE}[1 min 05 s] (2/4) 0.4.31: " in shown
    assert f"left{CLEAR_LINE}[triage] (1/1) json.loop_ms 0.4.31 → 0.4.33: confirmed\n" in shown
    last = shown.rsplit(CLEAR_LINE, 2)[1]
    assert len(last) < 100 and last.endswith("…"), "an updating line never wraps"
    assert shown.endswith(CLEAR_LINE), "cleared before the answer is printed"


# What a hostile script writes to its standard error: a window title (OSC), clear-screen, colour,
# and a mark that shows the rest of the line backwards.
HOSTILE_STDERR = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u202etxt.exe"


def test_no_escape_or_reordering_mark_reaches_the_terminal_or_the_log():
    for tty in (False, True):
        stream = io.StringIO()
        progress = Progress(("[triage]",), stream, tty=tty)
        progress(f"    {HOSTILE_STDERR}")
        progress.keep(f"[triage] {HOSTILE_STDERR}")
        shown = stream.getvalue().replace(CLEAR_LINE, "")
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown, repr(shown)
        assert "red" in shown and "txt.exe" in shown


def test_a_failing_script_s_stderr_is_shown_in_progress_without_its_escapes(tmp_path):
    script = tmp_path / "hostile.py"
    script.write_text(f"import sys\nsys.stderr.write({HOSTILE_STDERR!r} + '\\n')\nsys.exit(3)\n")
    argv = [sys.executable, "-m", "harness", "run", "--script", str(script), "--processes", "1"]
    done = subprocess.run(
        [*argv, "--results", str(tmp_path / "results")], capture_output=True, text=True, timeout=300
    )
    assert "txt.exe" in done.stderr, done.stderr[-3000:]
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr, repr(done.stderr[-3000:])


def test_a_credential_a_script_wrote_never_reaches_the_log_or_the_terminal():
    for tty in (False, True):
        stream = io.StringIO()
        progress = Progress(("[triage]",), stream, tty=tty)
        progress("  process 1: SIGSEGV; its last line: Authorization: Bearer 0123456789abcdef")
        progress.keep("[triage] died with token ghp_0123456789abcdefghijklmnop")
        shown = stream.getvalue()
        assert "0123456789" not in shown and shown.count("<redacted>") == 2, shown
