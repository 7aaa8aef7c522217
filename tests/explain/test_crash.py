"""A status step's why: settings tried on the release that dies, judged by how its processes end."""

import dataclasses

from harness.analysis.significance import Thresholds
from harness.analysis.statuses import Ending
from harness.explain.crash import (
    CHANGED,
    MAX_STATUS_TRIED,
    STATUS_SCREEN,
    CrashAnswer,
    CrashFlags,
    StatusTried,
    ends_of,
    judge_status,
    partly_crashing,
    planned_trials,
    status_reproduced,
    try_in_turn,
)
from harness.explain.defaults import JAX, XLA, Change
from harness.explain.dumps import CompiledAnswer
from harness.explain.kinds import KINDS, kinds_for
from harness.explain.tried import Trial
from harness.metric_names import Criterion, Judged, parse_metric_name
from harness.render.why import crash_lines
from harness.steps.evidence import Step
from tests.conftest import SEGFAULT, as_stored, derive, died, real_result
from tests.explain.test_matching_flags import compiled

YNN = Change("xla_cpu_experimental_ynn_fusion_type", XLA, "", "default")
THUNK = Change("xla_cpu_use_thunk_runtime", XLA, "false", "true")
ASYNC = Change("jax_cpu_enable_async_dispatch", JAX, "False", "True")
ADDED = Change("xla_cpu_new_flag", XLA, None, "true")


def ok(processes=STATUS_SCREEN, release="0.10.1"):
    return as_stored(
        derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=processes)
    )


def segfaults(processes=STATUS_SCREEN, release="0.10.2"):
    base = derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=processes)
    return as_stored(died(base, SEGFAULT))


def step(before="0.10.1", after="0.10.2"):
    return Step(before, after, (Criterion(Judged.STATUS),), "cpu", Thresholds(), None, "answer")  # type: ignore[arg-type]


def test_a_status_step_is_one_whose_only_metric_is_status():
    assert step().by_status and step().changed and not step().metrics
    assert not Step(
        "a",
        "b",
        (Criterion.of(parse_metric_name("eager.wall_ns")),),
        "cpu",
        Thresholds(),
        None,
        "s",
    ).by_status  # type: ignore[arg-type]


def test_the_release_that_dies_is_read_from_the_two_releases_results_either_way_round():
    stored = {"0.10.1": ok(), "0.10.2": segfaults()}
    assert ends_of(step(), stored.get) == ("0.10.2", "ok → SIGSEGV (exit 139)")
    fixed = {"0.10.1": segfaults(release="0.10.1"), "0.10.2": ok(release="0.10.2")}
    assert ends_of(step(), fixed.get) == ("0.10.1", "SIGSEGV (exit 139) → ok")
    assert "no status step" in str(ends_of(step(), {"0.10.1": ok(), "0.10.2": ok()}.get))
    assert "could not both be read" in str(ends_of(step(), {"0.10.1": ok()}.get))


def test_a_crash_in_some_processes_only_is_not_tried_one_process_at_a_time():
    base = derive(real_result("async_dispatch-0.12.0.1"), release="0.10.2", processes=20)
    some = as_stored(died(base, {**SEGFAULT, "processes": 10}))
    said = ends_of(step(), {"0.10.1": ok(processes=20), "0.10.2": some}.get)
    assert isinstance(said, str) and said.startswith("a new ending in some processes only")
    crashing, ending, counts = partly_crashing(step(), {"0.10.1": ok(20), "0.10.2": some}.get)  # type: ignore[misc]
    assert (crashing, ending, counts) == ("0.10.2", "ok → SIGSEGV (exit 139)", (10, 20)), (
        "the crash kind tries it by its counts"
    )
    assert partly_crashing(step(), {"0.10.1": ok(), "0.10.2": segfaults()}.get) is None


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


def test_trials_run_one_process_first_and_the_first_that_runs_in_every_process_ends_the_search():
    trials = [(Trial(change, "0.10.2", "false"), CHANGED) for change in (ASYNC, THUNK, YNN)]
    asked = []

    def run(trial, processes):
        asked.append((trial.change.name, processes))
        return ok(processes) if trial.change is THUNK else segfaults(processes)

    tried, untried = try_in_turn(trials, run)
    assert asked == [
        (ASYNC.name, 1),
        (THUNK.name, 1),
        (THUNK.name, STATUS_SCREEN),
    ], "a trial that dies in its one process is not run again; one that runs is confirmed"
    assert [t.runs for t in tried] == [False, True] and untried == 1
    assert tried[0].ended == "SIGSEGV (exit 139) in 1 of 1 process"
    assert tried[1].ended == f"ok in {STATUS_SCREEN} of {STATUS_SCREEN} processes"
    many = [(Trial(ASYNC, "0.10.2", str(n)), CHANGED) for n in range(MAX_STATUS_TRIED + 2)]
    tried, untried = try_in_turn(many, lambda trial, processes: segfaults(processes))
    assert len(tried) == MAX_STATUS_TRIED and untried == 2 and not any(t.runs for t in tried)


def test_a_trial_judged_by_status_one_ok_process_of_one_is_no_workaround():
    trial = Trial(THUNK, "0.10.2", "false")
    assert not judge_status(trial, CHANGED, ok(1)).runs, "one process is one draw of the machine"
    assert judge_status(trial, CHANGED, ok(3)).runs
    assert judge_status(trial, CHANGED, None).ended == "no result stored"


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


def test_the_reproducer_reproduces_a_crash_where_its_processes_flip_the_same_way_round():
    results = {"0.10.1": ok(), "0.10.2": segfaults()}
    found = status_reproduced(step(), results, Ending("ok", "SIGSEGV (exit 139)", "crashes"))
    assert found.reproduces
    assert found.ended == {
        "0.10.1": "ok in 3 of 3 processes",
        "0.10.2": "SIGSEGV (exit 139) in 3 of 3 processes",
    }
    both_ok = status_reproduced(
        step(), {"0.10.1": ok(), "0.10.2": ok()}, Ending("ok", "SIGSEGV (exit 139)", "crashes")
    )
    assert not both_ok.reproduces and both_ok.data()["reproduces"] is False


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


def test_library_or_jax_for_a_crash_is_told_by_how_the_middle_side_s_processes_end():
    from harness.analysis.statuses import summarise
    from harness.explain.held_library import APART, JAX, LIBRARIES, HeldAnswer, status_part
    from harness.render.why import held_line

    dies, runs = summarise(segfaults()), summarise(ok())
    assert status_part(dies, with_crashing_jax=True) == JAX
    assert status_part(runs, with_crashing_jax=True) == LIBRARIES
    assert status_part(runs, with_crashing_jax=False) == JAX, "the older jax, the newer libraries"
    assert status_part(dies, with_crashing_jax=False) == LIBRARIES
    mixed = summarise(
        as_stored(
            died(derive(real_result("async_dispatch-0.12.0.1")), {**SEGFAULT, "processes": 1})
        )
    )
    assert status_part(mixed, with_crashing_jax=True) == APART
    answer = HeldAnswer(
        "0.10.1",
        "0.10.2",
        {"numpy": ("2.4.6", "2.5.0")},
        middle="0.10.2+numpy.2.4.6",
        jax_of_middle="0.10.2",
        middle_ended=dies.words(),
        status_comes_with=JAX,
        crashing="0.10.2",
    )
    assert held_line(answer) == (
        "comes with jax 0.10.2 (jax 0.10.2 with numpy 2.4.6 held: SIGSEGV (exit 139) in 3 of 3 "
        "processes)"
    )
    assert not answer.settles and answer.answered() == ()
    libraries = HeldAnswer(**{**answer.__dict__, "status_comes_with": LIBRARIES})
    assert libraries.settles and libraries.answered() == ()
    assert libraries.data()["status"] == {"comes_with": LIBRARIES, "middle_ended": dies.words()}


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
