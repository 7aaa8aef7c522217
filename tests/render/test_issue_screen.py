"""What issue prints fits one screen however much the scripts printed: each run in a line with its
last lines, a failed one with its error, the draft's path last."""

from harness.render.issue_draft import ScriptRun
from harness.render.issue_screen import issue_screen
from harness.render.screen import fits


def run(code=0, lines=500, error=""):
    printed = "\n".join(f"metric two_scans wall_ns median={i} " + "x" * 200 for i in range(lines))
    return ScriptRun("0.4.33", "cpu", {}, code, printed, error, 60.0)


def test_long_outputs_become_a_line_each_and_their_last_lines():
    runs = [
        ("full script on jax 0.4.33", run()),
        ("short script on jax 0.4.31 (last good)", run(lines=3)),
        ("short script on jax 0.4.33 (first bad)", run(None, error="Traceback\nTimeout")),
    ]
    text = issue_screen(
        "`scan` lower ×1.39 slower since jax 0.4.33 (53 ms → 73.6 ms) on CPU",
        runs,
        ["reports/issues/scan_sync.py", "reports/issues/scan_sync-full.py"],
        "reports/issues/scan_sync.md",
    )
    assert fits(text), text
    lines = text.splitlines()
    assert lines[0].startswith("Issue draft: `scan` lower ×1.39 slower since jax 0.4.33")
    assert "full script on jax 0.4.33: ok, 500 line(s) printed" in lines
    assert "short script on jax 0.4.33 (first bad): timed out, 500 line(s) printed" in lines
    assert "  error: Timeout" in lines
    assert lines[-1] == "Draft: reports/issues/scan_sync.md"
    assert lines[-2] == (
        "Scripts beside it: reports/issues/scan_sync.py, reports/issues/scan_sync-full.py"
    )


def test_what_issue_measured_itself_is_said_whole_under_the_title():
    said = (
        "still on 0.12.0.1: ×0.0512 against jax 0.4.31",
        "Not measured here (the JAX installed here is one release): the step confirmed, the "
        "reproducer with jax alone and the newest release on the index, by `nox -s issue -- "
        "--script repro.py --good 0.4.31 --bad 0.4.33 --metric json.dispatch_ms`",
    )
    text = issue_screen("t", [("full script on jax 0.4.33", run(lines=2))], ["a.py"], "d.md", said)
    assert fits(text), text
    lines = text.splitlines()
    assert lines[1] == "still on 0.12.0.1: ×0.0512 against jax 0.4.31"
    measured = " ".join(lines[1 : lines.index("full script on jax 0.4.33: ok, 2 line(s) printed")])
    assert measured.endswith("--metric json.dispatch_ms`") and "…" not in measured, (
        "no sentence cut"
    )
