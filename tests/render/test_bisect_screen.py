"""A bisect's first screen, on stored results (a real run of a plain script posing as each release):
one screen whatever the number of metrics bisected, one block per step found (not one a metric), the
script's own metrics first, each follow-up command once, the reports last."""

import dataclasses

from harness.analysis.significance import Thresholds
from harness.findings import Finding, FollowUp
from harness.metric_names import ENDING, Criterion, Judged, parse_metric_name
from harness.render.bisect_screen import (
    Bisected,
    bisect_follow_ups,
    bisect_screen,
    nothing_to_bisect_screen,
)
from harness.render.release_answers import bisect_json
from harness.render.screen import fits
from harness.steps.answers import Setting
from harness.steps.bisection import bisect
from harness.steps.judge import Judge
from tests.conftest import FakeScriptReleases
from tests.render.test_triage_screen import commands

RELEASES = ["0.4.30", "0.4.31", "0.4.33", "0.4.34"]
SCALES = dict(zip(RELEASES, [1, 1, 2, 2], strict=True))
METRICS = ["process.import_ns", "process.wall_ns", "json.steps", "process.compile_ns"]
SETTING = Setting(
    "script-loop_json",
    {},
    "cpu",
    Criterion(Judged.CLAIM),
    {r: r for r in RELEASES},
    Thresholds(),
    120.0,
    target=("--script", "loop_json.py"),
)


def bisected(metric, scales=SCALES, hint=None):
    key = parse_metric_name(metric)
    found = bisect(
        RELEASES,
        Judge(
            FakeScriptReleases(scales), RELEASES[0], RELEASES[-1], Criterion.of(key), Thresholds()
        ),
    )
    return Bisected(
        found, dataclasses.replace(SETTING, criterion=Criterion.of(key, Judged.CLAIM)), hint
    )


def report(metric):
    return f"reports/bisect-script-loop_json-0.4.30-0.4.34-{metric}-cpu.md"


def test_one_metric_bisected_names_the_step_its_probes_and_what_to_run_next():
    each = bisected("json.steps")
    text = bisect_screen([each], each.setting, [report("json.steps")])
    assert fits(text), text
    lines = text.splitlines()
    assert (
        lines[0] == "Bisect: script-loop_json · profile cpu · jax 0.4.30 → 0.4.34 · by json.steps"
    )
    assert "probed: 0.4.30 good, 0.4.34 bad, 0.4.31 good, 0.4.33 bad" in text
    assert "First bad: jax 0.4.33 · last good: jax 0.4.31" in lines
    assert lines[-1] == f"Report: {report('json.steps')}"
    assert commands(text) == [
        "nox -s bisect -- --script loop_json.py --commits --good 0.4.31 --bad 0.4.33 --metric "
        "json.steps --profile cpu",
        "nox -s issue -- --script loop_json.py --metric json.steps --good 0.4.31 --bad 0.4.33 "
        "--profile cpu",
    ]


def test_every_metric_that_moved_in_one_step_is_one_block_its_own_numbers_first():
    answers = [bisected(m) for m in METRICS]
    text = bisect_screen(answers, SETTING, [report(m) for m in METRICS])
    assert fits(text), text
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("First bad")] == [
        "First bad: jax 0.4.33 · last good: jax 0.4.31"
    ], "one block for the step, not one a metric"
    shown = [line.split()[0] for line in lines if line.startswith(("  json.", "  process."))]
    assert shown[0] == "json.steps" and shown[-1] == "process.import_ns", shown
    assert "4 metrics moved between the endpoints, each bisected" in text
    offered = commands(text)
    assert len(offered) == len(set(offered)) == 2, (
        "each follow-up once, for the step's first metric"
    )
    assert lines[-5:] == ["Reports, one per metric:", *(f"  {report(m)}" for m in METRICS)]


def test_a_bisect_that_found_nothing_says_what_to_run_with_the_command_whole():
    triage = (
        "nox -s triage -- --script loop_json.py --from 0.4.30 --to 0.4.34 --metric json.steps "
        "--profile cpu --processes 5"
    )
    hint = Finding(
        "The endpoints agree, but a change introduced and undone between 0.4.30 and 0.4.34 hides "
        "from a bisect; every release between them is measured by",
        (FollowUp("", triage),),
    )
    each = bisected("json.steps", dict.fromkeys(RELEASES, 1), hint)
    text = bisect_screen([each], each.setting, [report("json.steps")])
    assert fits(text), text
    assert "json.steps: no answer: the bad endpoint 0.4.34 is not bad" in text
    assert commands(text) == [triage]
    assert "every release between them is measured by:" in text


def test_nothing_to_bisect_fits_with_its_command():
    triage = (
        "nox -s triage -- --script loop_json.py --from 0.4.30 --to 0.4.34 --profile cpu "
        "--processes 5 --size N=100000000 --size M=100000000"
    )
    sentences = [
        Finding(
            "No metric of script-loop_json differs significantly between jax 0.4.30 and 0.4.34: "
            "nothing to bisect."
        ),
        Finding("Every release between them is measured by", (FollowUp("", triage),)),
    ]
    text = nothing_to_bisect_screen(SETTING, "0.4.30", "0.4.34", sentences)
    assert fits(text), text
    assert len(commands(text)) == 1 and text.count(" \\\n") >= 1


def test_a_step_that_came_with_the_libraries_offers_no_jax_commit_bisect():
    from harness.explain.held_library import HeldAnswer, Parts
    from tests.explain.test_held_library import gathered

    answer, _ = gathered({"0.4.31": 1.0, "0.4.33+held": 1.0, "0.4.33": 2.0})
    [parts] = answer.parts.values()
    came = HeldAnswer(
        "0.4.31", "0.4.33", answer.moved, "m", "0.4.33", {parse_metric_name("json.steps"): parts}
    )
    each = bisected("json.steps")
    with_why = dataclasses.replace(each.setting, evidence={("0.4.31", "0.4.33"): (came,)})
    text = bisect_screen([dataclasses.replace(each, setting=with_why)], with_why, [report("x")])
    assert not any("--commits" in command for command in commands(text)), text
    jax_s = HeldAnswer(
        "0.4.31",
        "0.4.33",
        answer.moved,
        "m",
        "0.4.33",
        {parse_metric_name("json.steps"): Parts(parts.whole, parts.libraries, parts.jax)},
    )
    with_jax = dataclasses.replace(each.setting, evidence={("0.4.31", "0.4.33"): (jax_s,)})
    text = bisect_screen([dataclasses.replace(each, setting=with_jax)], with_jax, [report("x")])
    assert any("--commits" in command for command in commands(text)), "jax's: which commit"


def test_a_status_step_offers_the_crash_report_on_the_screen_and_in_the_answer_s_data():
    """A bisect by status (``--status``) offers ``issue … --status`` as its next command, and its
    answer's data names its criterion, which the draft reads back."""
    found = bisected("json.steps").found
    setting = dataclasses.replace(SETTING, criterion=Criterion.of(ENDING))
    offered = [each.command for each in bisect_follow_ups(Bisected(found, setting))]
    draft = (
        "nox -s issue -- --script loop_json.py --status --good 0.4.31 --bad 0.4.33 --profile cpu"
    )
    assert offered[-1] == draft, offered
    data = bisect_json(found, setting)
    assert data["criterion"] == "process.end" and data["metric"] is None
    assert draft in [each["command"] for each in data["next"]]


def test_a_status_bisect_says_how_each_probe_ended_never_good_for_one_that_crashed():
    """Crashes on both ends: the good endpoint is no "good" on the screen."""
    from tests.conftest import SEGFAULT, as_stored, died

    found = bisected("json.steps").found
    first = found.probes[0]
    assert first.result is not None
    dead = died(first.result.result.to_json(), SEGFAULT)
    crashed = dataclasses.replace(first, result=as_stored(dead))
    found = dataclasses.replace(found, probes=[crashed, *found.probes[1:]])
    setting = dataclasses.replace(SETTING, criterion=Criterion.of(ENDING))
    text = bisect_screen([Bisected(found, setting)], setting, [report("status")])
    assert "probed: 0.4.30 SIGSEGV (exit 139), 0.4.34 ok" in text and "0.4.30 good" not in text
