"""An ending's why: settings tried on the release that dies, judged on counts as the step was."""

import dataclasses

from harness.analysis.significance import Thresholds
from harness.explain.crash import (
    CHANGED,
    MAX_STATUS_TRIED,
    CrashAnswer,
    CrashFlags,
    StatusTried,
    crashing_side,
    judge_counts,
    planned_trials,
    stopped,
    try_in_turn,
)
from harness.explain.defaults import JAX, XLA, Change
from harness.explain.dumps import CompiledAnswer
from harness.explain.kinds import KINDS, kinds_for
from harness.explain.tried import Trial
from harness.metric_names import ENDING, Criterion, parse_metric_name
from harness.render.why import crash_lines
from harness.steps.evidence import Step
from tests.conftest import SEGFAULT, as_stored, derive, died, real_result
from tests.explain.test_matching_flags import compiled

YNN = Change("xla_cpu_experimental_ynn_fusion_type", XLA, "", "default")
THUNK = Change("xla_cpu_use_thunk_runtime", XLA, "false", "true")
ASYNC = Change("jax_cpu_enable_async_dispatch", JAX, "False", "True")
ADDED = Change("xla_cpu_new_flag", XLA, None, "true")


SCREEN = 3  # processes a side in these tests


def ok(processes=SCREEN, release="0.10.1"):
    return as_stored(
        derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=processes)
    )


def segfaults(processes=SCREEN, release="0.10.2"):
    base = derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=processes)
    return as_stored(died(base, SEGFAULT))


def step(before="0.10.1", after="0.10.2"):
    return Step(before, after, (Criterion.of(ENDING),), "cpu", Thresholds(), None, "answer")  # type: ignore[arg-type]


def test_an_ending_s_step_is_one_whose_only_metric_is_process_end():
    assert step().ending and step().changed and not step().metrics
    assert not Step(
        "a",
        "b",
        (Criterion.of(parse_metric_name("eager.wall_ns")),),
        "cpu",
        Thresholds(),
        None,
        "s",
    ).ending  # type: ignore[arg-type]


def test_the_release_that_dies_is_read_from_the_two_releases_results_either_way_round():
    stored = {"0.10.1": ok(), "0.10.2": segfaults()}
    assert crashing_side(step(), stored.get) == ("0.10.2", "ok → SIGSEGV (exit 139)", (3, 3))
    fixed = {"0.10.1": segfaults(release="0.10.1"), "0.10.2": ok(release="0.10.2")}
    assert crashing_side(step(), fixed.get) == ("0.10.1", "SIGSEGV (exit 139) → ok", (3, 3))
    assert "no change" in str(crashing_side(step(), {"0.10.1": ok(), "0.10.2": ok()}.get))
    assert "could not both be read" in str(crashing_side(step(), {"0.10.1": ok()}.get))


def test_a_crash_in_some_processes_only_is_told_by_the_step_s_own_counts():
    """The step's own comparison (the counts at its thresholds) tells the release that dies, in
    every process or in some: one rule, no "every process ok beside every one dead alike"."""
    base = derive(real_result("async_dispatch-0.12.0.1"), release="0.10.2", processes=20)
    some = as_stored(died(base, {**SEGFAULT, "processes": 10}))
    crashing, ending, counts = crashing_side(step(), {"0.10.1": ok(20), "0.10.2": some}.get)  # type: ignore[misc]
    assert (crashing, ending, counts) == ("0.10.2", "ok → SIGSEGV (exit 139)", (10, 20)), (
        "the crash kind tries it by its counts"
    )
    few = as_stored(
        died(
            derive(real_result("async_dispatch-0.12.0.1"), release="0.10.2"),
            {**SEGFAULT, "processes": 1},
        )
    )
    said = crashing_side(step(), {"0.10.1": ok(), "0.10.2": few}.get)
    assert isinstance(said, str) and "no change" in said, "1 of 3 against 0 of 3: no step"


def test_a_trial_on_a_partly_crashing_release_runs_until_one_dies_or_as_many_ran_ok():
    """A flaky crash (10 of 20 dead): a setting that still crashes is dropped at its first death,
    about two processes at that rate; one that runs ok in as many processes as the release measured
    is the workaround where Fisher's exact test tells 0 of 20 from 10 of 20."""
    trials = [(Trial(change, "0.10.2", "false"), CHANGED) for change in (ASYNC, THUNK, YNN)]
    asked = []

    def run(trial, processes):
        asked.append((trial.change.name, processes))
        if trial.change is ASYNC and len(asked) > 1:
            return segfaults(processes)
        return ok(processes)

    tried, untried = try_in_turn(trials, run, against=((10, 20), Thresholds()))
    assert asked[:2] == [(ASYNC.name, 1), (ASYNC.name, 2)], "doubling rounds, stopped at a death"
    assert [n for name, n in asked if name == THUNK.name] == [1, 2, 4, 8, 5], "20 in all"
    assert [t.runs for t in tried] == [False, True] and untried == 1
    assert tried[0].ended == "SIGSEGV (exit 139) in 2 of 2 processes"
    assert tried[1].ended == (
        "ok in 20 of 20 processes (told apart from 10 of 20 dead on the release)"
    )
    few = try_in_turn(trials[1:2], run, against=((1, 4), Thresholds()))[0][0]
    assert not few.runs and "not told apart from 1 of 4" in few.ended, "4 ok cannot tell 1 of 4"


def test_each_changed_default_is_set_on_the_release_that_dies_to_the_other_s_value():
    planned = planned_trials([THUNK, ASYNC, ADDED, YNN], "0.10.2", "0.10.1", "cpu", {"ynn"})
    words = [trial.words() for trial, _ in planned]
    assert words[0] == "XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=", (
        "a default named like what XLA compiled anew first"
    )
    assert "XLA_FLAGS=--xla_cpu_use_thunk_runtime=false" in words
    assert 'jax.config.update("jax_cpu_enable_async_dispatch", False)' in words
    assert not any("new_flag" in each for each in words), "no older value to set it back to"
    assert {trial.release for trial, _ in planned} == {"0.10.2"}
    assert {source for _, source in planned} == {CHANGED}
    runs_again = planned_trials([THUNK], "0.10.1", "0.10.1", "cpu")
    assert [t.words() for t, _ in runs_again] == ["XLA_FLAGS=--xla_cpu_use_thunk_runtime=true"], (
        "a step where the older release dies: the newer one's value set on the older"
    )


def test_a_trial_on_a_release_dead_in_every_process_is_judged_on_its_counts_as_well():
    """A crash in every process is tried as a flaky one is: doubling rounds until a process dies,
    or as many ran ok as the release measured; the first that runs ends the search."""
    trials = [(Trial(change, "0.10.2", "false"), CHANGED) for change in (ASYNC, THUNK, YNN)]
    asked = []

    def run(trial, processes):
        asked.append((trial.change.name, processes))
        return ok(processes) if trial.change is THUNK else segfaults(processes)

    tried, untried = try_in_turn(trials, run, against=((3, 3), Thresholds()))
    assert asked == [(ASYNC.name, 1), (THUNK.name, 1), (THUNK.name, 2)], (
        "a trial that dies in its first process is not run again; one that runs is run to 3"
    )
    assert [t.runs for t in tried] == [False, True] and untried == 1
    assert tried[0].ended == "SIGSEGV (exit 139) in 1 of 1 process"
    assert tried[1].ended == "ok in 3 of 3 processes (told apart from 3 of 3 dead on the release)"
    asked.clear()
    [ten] = try_in_turn(trials[1:2], run, ((10, 10), Thresholds()))[0]
    assert asked == [(THUNK.name, 1), (THUNK.name, 2)] and ten.runs, (
        "dead in every process of ten: three ok tell it apart exactly, no need for ten"
    )
    many = [(Trial(ASYNC, "0.10.2", str(n)), CHANGED) for n in range(MAX_STATUS_TRIED + 2)]
    tried, untried = try_in_turn(many, lambda trial, p: segfaults(p), ((3, 3), Thresholds()))
    assert len(tried) == MAX_STATUS_TRIED and untried == 2 and not any(t.runs for t in tried)


def test_one_ok_process_of_one_is_no_workaround():
    trial = Trial(THUNK, "0.10.2", "false")
    assert not judge_counts(trial, CHANGED, 1, (3, 3), Thresholds()).runs, (
        "one process is one draw of the machine"
    )
    assert judge_counts(trial, CHANGED, 3, (3, 3), Thresholds()).runs
    said = stopped(trial, CHANGED, None)
    assert said is not None and said.ended == "no result stored" and not said.runs
    assert stopped(trial, CHANGED, ok(3)) is None, "every process ran ok: the trial goes on"


def test_the_answer_names_the_workaround_and_its_setting_and_says_once_what_is_not_asked():
    back = Trial(THUNK, "0.10.2", "false")
    answer = CrashAnswer(
        "0.10.1",
        "0.10.2",
        "0.10.2",
        "SIGSEGV (exit 139)",
        (
            StatusTried(
                Trial(ASYNC, "0.10.2", "False"), CHANGED, "SIGSEGV (exit 139) in 1 of 1 process"
            ),
            StatusTried(back, CHANGED, "ok in 3 of 3 processes", runs=True),
        ),
        untried=2,
    )
    lines = crash_lines(answer)
    lead = lines[0]
    assert lead.leads and lead.text.startswith(
        "runs with XLA_FLAGS=--xla_cpu_use_thunk_runtime=false on 0.10.2: ok in 3 of 3 processes"
    )
    assert [f.command for f in lead.follow_ups] == ["XLA_FLAGS=--xla_cpu_use_thunk_runtime=false"]
    texts = [getattr(line, "text", line) for line in lines]
    assert any("jax_cpu_enable_async_dispatch" in t and "SIGSEGV" in t for t in texts)
    assert "2 more setting(s) not tried: a workaround ends the search" in texts
    assert sum("not asked" in t for t in texts) == 1
    data = answer.data()
    assert data["workaround"]["setting"] == "XLA_FLAGS=--xla_cpu_use_thunk_runtime=false"
    assert data["workaround"]["release"] == "0.10.2" and data["workaround"]["runs"]
    none = CrashAnswer("0.10.1", "0.10.2", "0.10.2", "SIGSEGV (exit 139)", answer.tried[:1])
    assert crash_lines(none)[0].text.startswith(
        "none of the 1 setting(s) tried on 0.10.2 made it run"
    )
    assert none.data()["workaround"] is None


def test_string_flags_named_like_what_xla_compiled_anew_are_set_empty():
    from harness.explain.crash import emptied
    from harness.explain.defaults import Option

    listing = {
        "xla_cpu_experimental_ynn_fusion_type": Option(
            "xla_cpu_experimental_ynn_fusion_type", '""', XLA, "string"
        ),
        "xla_cpu_use_ynn_thing": Option("xla_cpu_use_ynn_thing", "true", XLA, "bool"),
        "xla_dump_to": Option("xla_dump_to", '""', XLA, "string"),
    }
    [change] = emptied(listing, {"ynn"}, "cpu", set())
    trial = Trial(change, "0.10.2", "")
    assert trial.words() == "XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type="
    assert trial.environment({})["XLA_FLAGS"] == "--xla_cpu_experimental_ynn_fusion_type="
    assert emptied(listing, {"ynn"}, "cpu", {change.name}) == []


def test_a_status_step_of_a_script_asks_the_kinds_that_judge_by_status_and_not_those_of_a_number():
    """Library or JAX, the compiled programs (whose names the crash kind's flags are matched to),
    the reproducer and the crash kind are asked for a status step; the defaults and profiles of a
    number not."""
    scripted = dataclasses.replace(
        step(), script="repro.py", libraries={"numpy": ("2.4.6", "2.5.0")}
    )
    asked = [kind.name for kind in KINDS if kind.wanted(scripted)]
    assert {"library", "compiled", "reproducer", "crash"} <= set(asked)
    assert not {"defaults", "profile", "host"} & set(asked)


def test_an_ending_asks_the_crash_kind_first_then_what_was_compiled_and_the_flags_named_like_it():
    """R8-18: the crash kind, which holds the workaround, is asked before the compiled programs
    (whose one process each can take a minute), whatever moved with jax; the flags named like what
    XLA compiled anew come right after them, where no changed default made it run."""
    for libraries, declared in (({}, ()), ({"numpy": ("2.4.6", "2.5.0")}, ("numpy",))):
        scripted = dataclasses.replace(
            step(), script="repro.py", libraries=libraries, declared=declared
        )
        order = [kind.name for kind in kinds_for(scripted)]
        assert order[:3] == ["crash", "compiled", "crash flags"], order
        assert order.index("crash flags") < order.index("library") < order.index("reproducer")
    assert step().shape.settles == "crash"


def test_the_flags_named_like_what_was_compiled_are_tried_after_it_only_where_no_default_ran():
    flags = CrashFlags()
    nothing = CompiledAnswer("0.10.1", "0.10.2", [])
    assert not flags.wanted(step(), (CrashAnswer("0.10.1", "0.10.2"), nothing)), (
        "nothing compiled on one release only: no name to match"
    )
    named = compiled()
    assert flags.wanted(step(), (CrashAnswer("0.10.1", "0.10.2"), named))
    ran = StatusTried(Trial(THUNK, "0.10.2", "false"), CHANGED, "ok in 3 of 3 processes", True)
    found = CrashAnswer("0.10.1", "0.10.2", tried=(ran,))
    assert not flags.wanted(step(), (found, named)), "a workaround ends the search"
    said = crash_lines(CrashAnswer("0.10.1", "0.10.2", "0.10.2", named_only=True))
    assert not any("not asked" in str(line) for line in said), "said once, by the crash kind"
