"""Progress on stderr: one updating line in a terminal, plain lines in a CI log."""

import io

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
