"""What ``issue`` measures itself: whether the newest release on the index still shows the step,
said as a maintainer reads it, and the reproducer as the draft reads it (logic on stand-in results;
the real run is ``tests/commands/test_issue.py``)."""

from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.explain.reproducer import ReproducerAnswer
from harness.install.venvs import ReleaseEnv
from harness.metric_names import parse_metric_name
from harness.store.schema import Settings
from harness.units import version_key
from harness.upstream.step_measured import IssueRequest, StepRequest, as_reproduced, newest_line
from tests.conftest import FakeScriptReleases

LOOP = parse_metric_name("json.loop_ms")


def step_request(tmp_path: Path, newest: str = "0.6.2") -> StepRequest:
    plan = [
        ReleaseEnv(v, v, "3.12", (f"jax=={v}",), tmp_path / f"release-jax-{v}")
        for v in ("0.5.3", "0.6.0", "0.6.1", "0.6.2")
        if version_key(v) <= version_key(newest)
    ]
    asked = IssueRequest(
        case=None,  # type: ignore[arg-type]  # newest_line reads neither the case nor its folders
        sizes={},
        settings=Settings(),
        profile="cpu",
        platform="cpu",
        results_dir=tmp_path / "results",
        out_dir=tmp_path / "reports",
        plan=plan,
    )
    return StepRequest(asked, "0.5.3", "0.6.0", print)


def test_the_newest_release_still_shows_it_or_not(tmp_path):
    request = step_request(tmp_path)
    assert request.newest == "0.6.2"
    still = FakeScriptReleases({"0.5.3": 1.0, "0.6.0": 9.8, "0.6.2": 9.7})
    target = ["--script", "loop.py"]
    assert newest_line(still, request, LOOP, Thresholds(), target) == (
        "still on 0.6.2: ×9.7 against jax 0.5.3",
        "",
    )
    gone = FakeScriptReleases({"0.5.3": 1.0, "0.6.0": 9.8, "0.6.2": 1.0})
    line, fixed_by = newest_line(gone, request, LOOP, Thresholds(), target)
    assert line == "gone on 0.6.2 (×1 against jax 0.5.3): fixed by then"
    assert fixed_by.endswith(
        "bisect -- --script loop.py --broken 0.6.0 --fixed 0.6.2 --metric json.loop_ms "
        "--profile cpu"
    ), "the bisect that finds the release that fixed it, from the one command builder"
    missing = FakeScriptReleases({"0.5.3": 1.0, "0.6.0": 9.8, "0.6.2": None})
    line, _ = newest_line(missing, request, LOOP, Thresholds(), target)
    assert "gave no figure of json.loop_ms" in line
    assert newest_line(still, step_request(tmp_path, "0.6.0"), LOOP, Thresholds(), target) == (
        "",
        "",
    ), "the first release with it is the newest: nothing more to say"


def test_a_reproducer_that_ran_is_named_as_a_bisect_answer_names_it_and_one_that_did_not_is_none():
    answer = ReproducerAnswer(
        "0.5.3", "0.6.0", "issue-x-reproducer/", "repro_0123456789.py", "0.5.3", 35
    )
    found = as_reproduced(answer)
    assert found is not None and found.folder == "issue-x-reproducer/" and found.lines == 35
    assert (
        as_reproduced(ReproducerAnswer("0.5.3", "0.6.0", problem="jax 0.5.3 exported no program"))
        is None
    )


def test_the_newest_release_of_a_crash_is_placed_on_its_counts_against_each_side(tmp_path):
    """Judged as the step was, on the counts of processes that died (10 a side here): dead in most
    still crashes, ok in all runs again, a share that tells it from neither is said as it is."""
    from harness.upstream.change import ending_between
    from harness.upstream.step_measured import newest_status_line
    from tests.conftest import SEGFAULT

    request, target = step_request(tmp_path), ["--script", "loop.py"]

    def said(newest):
        releases = FakeScriptReleases({"0.5.3": 1.0, "0.6.0": SEGFAULT, "0.6.2": newest})
        dead = ending_between(releases("0.5.3").result, releases("0.6.0").result, Thresholds())
        assert dead is not None and dead.crashes == "0.6.0"
        return newest_status_line(releases, request, dead, target)

    assert said(SEGFAULT) == ("still crashes on 0.6.2 (SIGSEGV in 10 of 10 processes)", "")
    runs, bisect = said(1.0)
    assert runs == "runs again on 0.6.2 (ok in 10 of 10 processes)"
    assert "--status --broken 0.6.0 --fixed 0.6.2" in bisect
    mostly = said({**SEGFAULT, "processes": 9})[0]
    assert mostly.startswith("still crashes on 0.6.2"), "9 of 10 dead: like the crashing side"
    half = said({**SEGFAULT, "processes": 5})[0]
    assert half.startswith("on 0.6.2: ok in 5"), "5 of 10: told from neither side"
