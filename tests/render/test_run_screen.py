"""A run's last lines fit one screen, however many cells failed: each one's first line of why, the
rest counted, and the command that makes their report."""

from harness.render.run_screen import NotOk, run_screen
from harness.render.screen import fits
from harness.store.schema import RunStatus

SUMMARY = "60 cells, 60 results stored under results: 3 failed, 57 ok"


def test_every_failed_cell_is_a_line_with_the_first_line_of_why_and_the_rest_are_counted():
    detail = "exit code 1\nTraceback (most recent call last):\n  RuntimeError: fake " + "x" * 300
    failed = [
        NotOk(f"scan_sync M={m} N=600 · jax 0.4.31", RunStatus.FAILED, detail) for m in range(60)
    ]
    lines = run_screen(SUMMARY, failed, "results")
    assert fits("\n".join(lines)), lines
    assert lines[0] == SUMMARY and lines[1] == "60 cell(s) did not run ok:"
    assert lines[2] == "  scan_sync M=0 N=600 · jax 0.4.31: failed: exit code 1"
    assert lines[-2] == "  … and 27 more: each one's stored result keeps its status and why"
    assert lines[-1] == "Their report: `nox -s report`"


def test_a_run_that_went_well_is_its_summary_and_the_report_of_its_folder():
    assert run_screen("2 cells, 2 results stored under /tmp/r: 2 ok", [], "/tmp/r") == [
        "2 cells, 2 results stored under /tmp/r: 2 ok",
        "Their report: `nox -s report -- --results /tmp/r`",
    ]


def test_the_first_cell_that_did_not_run_ok_says_where_it_died():
    cells = [
        NotOk(
            "repro · jax 0.10.2", "crashed", "killed by SIGSEGV", 'SIGSEGV (exit 139); File "r.py"'
        ),
        NotOk("repro · jax 0.10.3", "crashed", "killed by SIGSEGV", "SIGSEGV (exit 139)"),
    ]
    lines = run_screen("2 cells", cells, "results")
    assert lines[3] == '    where it died: SIGSEGV (exit 139); File "r.py"'
    assert sum("where it died" in line for line in lines) == 1
