"""The release commands' first screen, on stored results (the real async_dispatch result posing as
each release, scaled): at most 40 lines of 100 columns whatever the number of releases and steps,
the report last."""

from harness.analysis.significance import Thresholds
from harness.metric_names import Criterion
from harness.render.range_screen import head_line, sweep_screen
from harness.render.screen import fits
from harness.steps.answers import Setting
from harness.steps.bisection import sweep
from tests.conftest import SEGFAULT, FakeReleases

RELEASES = [f"0.4.{n}" for n in range(26, 64)]


def setting(sizes=None, metric=None):
    return Setting(
        "async_dispatch",
        {"N": 1000} if sizes is None else sizes,
        "cpu",
        Criterion.of(metric),
        {},
        Thresholds(),
        358.0,
    )


def test_a_sweep_of_38_releases_and_many_steps_fits_one_screen_with_the_report_last():
    scales = {r: 1 + (i // 3) % 2 * 2 for i, r in enumerate(RELEASES)}  # a step every third release
    scales["0.4.32"] = None
    found = sweep(
        RELEASES, FakeReleases(scales), metrics=None, with_claim=True, thresholds=Thresholds()
    )
    assert len(found.steps) > 40
    text = sweep_screen(found, setting(), "reports/sweep-async_dispatch.md")
    assert fits(text), text
    lines = text.splitlines()
    assert lines[0] == "Sweep: async_dispatch at N=1000 · profile cpu · jax 0.4.26 → 0.4.63"
    assert lines[-1] == "Report: reports/sweep-async_dispatch.md"
    assert "1 did not run ok: 0.4.32 not installed" in text
    assert "more steps: the report lists every one" in text
    first = [
        line.split()[0]
        for line in lines
        if line.startswith("  eager.") or line.startswith("  jit.")
    ]
    assert first[:2] == ["eager.wall_ns", "eager.dispatch_ns"], (
        "within a step, the case's own programs first"
    )


def test_a_script_without_sizes_has_no_at_and_no_step_says_so():
    found = sweep(
        RELEASES[:3],
        FakeReleases(dict.fromkeys(RELEASES[:3], 1)),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    assert (
        head_line("Sweep", setting(sizes={}), "a", "b")
        == "Sweep: async_dispatch · profile cpu · jax a → b"
    )
    text = sweep_screen(found, setting(), "r.md")
    assert "No significant step between consecutive releases." in text and fits(text)


def test_a_sweep_where_no_release_could_be_installed_says_nothing_could_be_measured():
    found = sweep(
        RELEASES[:3],
        FakeReleases(dict.fromkeys(RELEASES[:3])),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    text = sweep_screen(found, setting(), "r.md")
    assert "No significant step" not in text and fits(text)
    assert "Nothing could be measured: 0 of the 3 releases ran ok, and a step needs two" in text


def test_a_sweep_lists_a_release_that_crashes_in_every_process_as_a_step_and_says_how():
    scales = {"0.4.30": 1, "0.4.31": SEGFAULT, "0.4.33": 1}
    found = sweep(
        list(scales), FakeReleases(scales), metrics=None, with_claim=False, thresholds=Thresholds()
    )
    text = sweep_screen(found, setting(), "r.md")
    assert "Nothing could be measured" not in text and fits(text)
    rows = [line.split(None, 2) for line in text.splitlines() if line.startswith("  process.end")]
    assert [row[1] for row in rows] == ["0.4.30", "0.4.31"]
    assert "ok → SIGSEGV (exit 139)" in rows[0][2] and "SIGSEGV (exit 139) → ok" in rows[1][2]
    assert "0.4.31 crashed (SIGSEGV (exit 139) in 10 of 10 processes)" in text
