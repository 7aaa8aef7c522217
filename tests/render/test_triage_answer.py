"""A triage's report: the answers first, each step with both measurements, the plot or why there is
none."""

import dataclasses
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.explain.defaults import XLA, Change
from harness.explain.dumps import CompiledAnswer, compare_dumps, read_dump
from harness.explain.tried import DefaultsAnswer
from harness.metric_names import Criterion, Judged, parse_metric_name
from harness.render.triage_answer import (
    plotted_metrics,
    triage_json,
    triage_markdown,
    triage_screen,
)
from harness.steps.answers import Setting
from harness.steps.triage import triage
from tests.conftest import SEGFAULT, TERMINATED, FakeReleases
from tests.steps.test_triage import FakeConfirmer

WALL = parse_metric_name("eager.wall_ns")
NO_PLOT = (None, "no plot")


def outcome(scales, again=None, metric=None, claim=False, holds=None):
    metrics = [metric] if metric else [] if claim else None
    found = triage(
        list(scales),
        FakeReleases(scales, holds=holds),
        FakeConfirmer(FakeReleases(again or scales, holds=holds)),
        metrics=metrics,
        with_claim=metric is None,
        thresholds=Thresholds(),
    )
    setting = Setting(
        "async_dispatch",
        {"N": 1000},
        "cpu",
        Criterion.of(metric, Judged.EVERY if metrics is None else Judged.CLAIM),
        {},
        Thresholds(),
        12.0,
    )
    return found, setting


def test_a_step_that_did_not_hold_is_shown_but_not_answered():
    found, setting = outcome({"a": 1, "b": 3}, again={"a": 1, "b": 1}, metric=WALL)
    text = triage_markdown(found, setting, 5, (None, "matplotlib is not installed"))
    assert "**No confirmed change**" in text
    assert (
        "\n- Undecided, not unchanged: eager.wall_ns a → b (10 processes a side, within ±7.5%): "
        "measured again, the "
        "statistics could tell neither the change nor its absence within --max-processes" in text
    ), "an answer of its own, not the tail of the one before"
    [row] = [line for line in text.splitlines() if line.startswith("| eager.wall_ns |")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert (
        cells[:2] == ["eager.wall_ns", "a → b"]
        and cells[2].endswith("slower")
        and cells[3].endswith("within ±7.5%")
    )
    assert cells[4] == "no"
    assert "Plot not drawn: matplotlib is not installed." in text
    assert "2 releases on the index in the range, 2 ran ok (5 processes each" in text
    assert "0 confirmed on measuring again until decided, 10 processes a side, 1 undecided" in text
    assert (
        "the chance that any confirmed change is a false alarm is at most 1 × 0.002 = 0.002" in text
    )


def test_the_claim_answers_and_the_plot_of_every_wall_time():
    found, setting = outcome(dict.fromkeys("abc", 1), claim=True, holds={"b": False})
    text = triage_markdown(found, setting, 3, NO_PLOT)
    assert "- claim stops holding in b (last held in a)" in text
    assert "- claim holds again from c (last failed in b)" in text
    assert [k.metric_name for k in plotted_metrics(found, setting)] == [
        "eager.wall_ns",
        "jit.wall_ns",
    ]


def test_without_a_step_the_report_says_so_and_plots_the_metric_asked_for(tmp_path):
    found, setting = outcome({"a": 1, "b": 1}, metric=WALL)
    assert (
        "No change found: no step between consecutive releases passed the first round"
        in triage_markdown(found, setting, 5, NO_PLOT)
    )
    assert plotted_metrics(found, setting) == [WALL]
    text = triage_markdown(found, setting, 5, ("plots/x.png", ""))
    assert (
        "![the metric over releases](plots/x.png)" in text and "No step to measure again." in text
    )


def test_a_triage_where_no_release_could_be_installed_says_nothing_could_be_measured():
    found, setting = outcome({"a": None, "b": None, "c": 1}, metric=WALL)
    assert found.first_round.unmeasured()
    text = " ".join(triage_screen(found, setting, 5, "r.md").split())
    assert "No change found" not in text
    assert (
        "Nothing could be measured: 1 of the 3 releases ran ok, and a step needs two; each "
        "release's status in "
        "the table says why. This is no evidence of no change." in text
    )
    page = triage_markdown(found, setting, 5, (None, "no plot"))
    assert "**Nothing could be measured**" in page and "**No confirmed change**" not in page
    measured, _ = outcome({"a": 1, "b": 1}, metric=WALL)
    assert not measured.first_round.unmeasured(), "two ran ok: 'No change found' stands"


def test_a_confirmed_step_says_what_its_releases_compiled():
    found, setting = outcome({"a": 1, "b": 3}, metric=WALL)
    dumps = Path(__file__).parent.parent / "fixtures" / "dumps"
    changes = compare_dumps(read_dump(dumps / "0.4.31"), read_dump(dumps / "0.4.33"))
    compiled = CompiledAnswer("a", "b", changes, "s-compiled/")
    setting = dataclasses.replace(setting, evidence={("a", "b"): (compiled,)})
    text = triage_markdown(found, setting, 5, NO_PLOT)
    said = (
        "  - compiled programs of a and b (XLA's dumps in `s-compiled/<release>/`): 1 module(s) "
        "compared, the same before and after optimisation (only the text of `jit_f.diff` differs): "
        "what runs them changed, not what was compiled\n"
    )
    assert said in text
    assert "compiled jit_f" not in text, "no module is listed when none differs"
    assert "what runs them changed, not what was compiled" in triage_markdown(
        found, setting, 5, (None, "no plot")
    )
    [data] = triage_json(found, setting)["compiled"]
    assert data["modules"][0]["same_after_optimisation"] is True


def test_a_step_where_several_metrics_and_the_claim_moved_says_its_findings_once():
    found, setting = outcome({"a": 1, "b": 3}, holds={"b": False})
    dumps = Path(__file__).parent.parent / "fixtures" / "dumps"
    changes = compare_dumps(read_dump(dumps / "0.4.31"), read_dump(dumps / "0.4.33"))
    thunk = Change("xla_cpu_use_thunk_runtime", XLA, "false", "true")
    setting = dataclasses.replace(
        setting,
        evidence={
            ("a", "b"): (
                DefaultsAnswer("a", "b", [thunk]),
                CompiledAnswer("a", "b", changes, "s-compiled/"),
            )
        },
    )
    text = triage_markdown(found, setting, 5, NO_PLOT)
    answers = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(answers) >= 3 and any(line.startswith("- claim") for line in answers), answers
    assert text.count("compiled programs of a and b") == 1
    assert (
        text.count("defaults that changed from a to b: xla_cpu_use_thunk_runtime: false → true")
        == 1
    )


def crashing(end=None):
    """A segfault with its stack, as the harness keeps it, in every process of the release."""
    stack = (
        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x01 (most recent call first):\n"
        '  File "repro.py", line 7 in reduce\n  File "repro.py", line 12 in <module>'
    )
    return {**SEGFAULT, "stack": stack, **(end or {})}


def test_a_crash_since_a_release_is_answered_with_where_it_died():
    found, setting = outcome({"0.10.1": 1, "0.10.2": crashing()})
    screen_text = triage_screen(found, setting, 5, "r.md")
    text = " ".join(screen_text.split())
    assert "Nothing could be measured" not in text
    assert "ok → SIGSEGV (exit 139)" in text
    assert (
        "where jax 0.10.2 died: SIGSEGV (exit 139) in 10 of 10 processes; first process: "
        'File "repro.py", line 7 in reduce' in text
    )
    assert "--status" in text, "the bisect below the releases is offered on the status"
    assert "0.10.2 crashed (SIGSEGV (exit 139) in 10 of 10 processes)" in text
    page = triage_markdown(found, setting, 5, NO_PLOT)
    assert "**Answers**" in page
    assert "- status: crashes since 0.10.2: SIGSEGV (exit 139) in 10 of 10 processes" in page
    assert "line 7 in reduce" in page and "Python's stack:" in page
    cpu = found.confirmations[0].after.result.result.host.cpu_model
    assert cpu and f"  - on {cpu}" in page, "the CPU a crash happened on"
    assert "crashed: SIGSEGV (exit 139) in 10 of 10 processes" in page, (
        "the releases table says how"
    )
    data = triage_json(found, setting)
    [confirmation] = data["confirmations"]
    assert confirmation["metric"] == "process.end" and confirmation["outcome"] == "confirmed"
    [_, crashed] = data["first_round"]["releases"]
    assert crashed["died"][0]["signal"] == "SIGSEGV" and "in reduce" in crashed["died"][0]["stack"]


def test_a_release_killed_from_outside_is_said_as_a_fault_not_as_no_change():
    found, setting = outcome({"a": 1, "b": {**TERMINATED, "processes": 1}, "c": 1}, metric=WALL)
    text = " ".join(triage_screen(found, setting, 5, "r.md").split())
    assert "jax b: killed from outside in 1 of 10 processes" in text
    page = triage_markdown(found, setting, 5, NO_PLOT)
    assert "- jax b: killed from outside in 1 of 10 processes" in page
    assert triage_json(found, setting)["faults"][0]["release"] == "b"


def test_a_crash_s_workaround_is_said_on_the_page_and_the_screen_and_kept_in_the_json():
    from harness.explain.tried import CHANGED, CrashAnswer, StatusTried, Trial

    found, setting = outcome({"0.10.1": 1, "0.10.2": crashing()})
    flag = Change("xla_cpu_experimental_ynn_fusion_type", XLA, '""', '""')
    workaround = StatusTried(
        Trial(flag, "0.10.2", ""), CHANGED, "ok in 3 of 3 processes", runs=True
    )
    answer = CrashAnswer("0.10.1", "0.10.2", "0.10.2", "SIGSEGV (exit 139)", (workaround,))
    setting = dataclasses.replace(setting, evidence={("0.10.1", "0.10.2"): (answer,)})
    said = (
        "runs with XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type= on 0.10.2: ok in 3 of 3 "
        "processes"
    )
    assert said in triage_markdown(found, setting, 5, NO_PLOT)
    assert said in " ".join(triage_screen(found, setting, 5, "r.md").split())
    [crash] = triage_json(found, setting)["crash"]
    assert crash["workaround"]["setting"] == "XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type="
    assert crash["crashing"] == "0.10.2" and crash["dead"] == "SIGSEGV (exit 139)"


def test_an_answer_is_literal_text_on_the_page_whatever_its_names_hold():
    # A metric a script names `_em_`, or any name with markup, is shown as written, not emphasised.
    found, setting = outcome({"a": 1, "b._c_": 3}, metric=WALL)
    text = triage_markdown(found, setting, 5, NO_PLOT)
    [answer] = [line for line in text.splitlines() if line.startswith("- eager.wall_ns")]
    assert "since b.\\_c\\_ (last good a;" in answer, answer
    found, setting = outcome({"a": 1, "b._c_": 3}, again={"a": 1, "b._c_": 1}, metric=WALL)
    text = triage_markdown(found, setting, 5, NO_PLOT)
    assert "- Undecided, not unchanged: eager.wall_ns a → b.\\_c\\_ (" in text


def test_a_grid_s_answer_says_how_many_releases_it_measured_and_what_it_could_not_see():
    scales = {f"r{i}": 1 if i < 17 else 3 for i in range(30)}
    found = triage(
        list(scales),
        FakeReleases(scales),
        FakeConfirmer(FakeReleases(scales)),
        metrics=[WALL],
        with_claim=False,
        thresholds=Thresholds(),
        every_release=False,
    )
    _, setting = outcome({"a": 1}, metric=WALL)
    text = triage_markdown(found, setting, 5, NO_PLOT)
    assert "- 9 of 30 releases measured on the index in the range, 9 ran ok (5 processes" in text
    assert "\n- 21 releases were not measured: the ends and a grid first" in text
    screen = triage_screen(found, setting, 5, "report.md")
    assert "9 of 30 releases measured, 9 ran ok (5 processes each" in screen
    assert "--every-release measures every one." in " ".join(screen.split())
    assert triage_json(found, setting)["first_round"]["in_range"] == 30


def test_a_glanced_grid_s_answer_says_in_how_many_processes_it_measured():
    from tests.steps.test_grid import glanced

    scales = {f"r{i}": 1 if i < 17 else 1.5 for i in range(30)}
    found, _ = glanced(scales)
    _, setting = outcome({"a": 1}, metric=WALL)
    text = triage_markdown(found, setting, 10, NO_PLOT)
    assert "releases measured on the index in the range, 9 ran ok (2 processes each, 10 where " in (
        text
    )
    assert "costs differed, measured together)" in " ".join(text.split())


def test_a_small_confirmed_step_is_named_apart_on_the_page_and_in_the_json():
    from tests.steps.test_grid import TWELVE, Occasion

    scales = {release: 1 if i < 10 else 3 for i, release in enumerate(TWELVE)}
    occasion = {"trace": 1.25, "tight": ("r5", "r6")}
    found = triage(
        TWELVE,
        Occasion(scales, 10, **occasion),
        FakeConfirmer(Occasion(scales, 10, **occasion)),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    _, setting = outcome({"a": 1}, metric=WALL)
    text = " ".join(triage_markdown(found, setting, 6, NO_PLOT).split())
    small = "- Small, not twice-safe: process.trace_ns r5 → r6 ×1.25 (within ×1."
    assert small in text and "- process.trace_ns: slower ×3 since r10" in text
    assert "r6" not in text[: text.index(small)], "not among the answers above it"
    screen = " ".join(triage_screen(found, setting, 6, "report.md").split())
    assert "Small, not twice-safe: process.trace_ns r5 → r6 ×1.25" in screen
    assert "r5 → r6" not in screen[: screen.index("Small, not")], "no block of its own"
    data = {
        (c["metric"], c["after"]): (c["outcome"], c["twice_safe"])
        for c in triage_json(found, setting)["confirmations"]
    }
    assert data["process.trace_ns", "r6"] == ("confirmed", False)
    assert data["process.wall_ns", "r10"] == ("confirmed", True)


def test_a_range_s_small_step_whose_first_round_allows_nothing_past_it_is_not_measured_again():
    """A range triage does not confirm a cost whose first-round interval stays within what another
    run's first round would list nine times in ten: confirmed, it would still be named apart."""
    from tests.steps.test_grid import TWELVE, Occasion

    scales = {release: 1 if i < 10 else 3 for i, release in enumerate(TWELVE)}
    occasion = {"trace": 1.25, "tight": ("r5", "r6")}
    confirmer = FakeConfirmer(Occasion(scales, 10, **occasion))
    found = triage(
        TWELVE,
        Occasion(scales, 10, **occasion),
        confirmer,
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
        confirm_small=False,
    )
    assert ("r5", "r6") not in confirmer.calls[0] and ("r9", "r10") in confirmer.calls[0]
    _, setting = outcome({"a": 1}, metric=WALL)
    text = " ".join(triage_markdown(found, setting, 6, NO_PLOT).split())
    assert "- Small, not twice-safe: process.trace_ns r5 → r6 ×1.25 (within ×1." in text
    assert ", not measured again)" in text and "- process.trace_ns: slower ×3 since r10" in text
    data = {
        (c["metric"], c["after"]): (c["outcome"], c["twice_safe"])
        for c in triage_json(found, setting)["confirmations"]
    }
    assert data["process.trace_ns", "r6"] == ("small, not measured again", False)
    assert data["process.wall_ns", "r10"] == ("confirmed", True)
