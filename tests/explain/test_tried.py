"""Changed defaults, tried: each set on the other release in one measurement with both, and
judged."""

import dataclasses
import json

from harness.analysis.significance import Comparison, CostDetail, Thresholds, Verdict
from harness.catalogue import discovery
from harness.explain import tried
from harness.explain.defaults import JAX, XLA, Change, Option
from harness.explain.tried import (
    CHANGED,
    MAX_STATUS_TRIED,
    MAX_TRIED,
    CrashAnswer,
    DefaultsAnswer,
    StatusTried,
    Trial,
    Tried,
    crashing_side,
    judge_counts,
    planned_trials,
    side_of,
    stopped,
    trials,
    try_in_turn,
)
from harness.install.environments import Prepared
from harness.install.venvs import ReleaseEnv
from harness.measure.runner import Measured
from harness.measure.sides import Side
from harness.metric_names import ENDING, Criterion, parse_metric_name
from harness.render.why import crash_lines, defaults_listing, trial_lines, tried_text
from harness.stats import summarize
from harness.steps.evidence import Step, StepSides
from harness.steps.probes import ReleaseProber
from harness.store.results import read_result, write_result
from harness.store.schema import Settings
from tests.conftest import REPO, SEGFAULT, as_stored, derive, died, real_result

THUNK = Change("xla_cpu_use_thunk_runtime", XLA, "false", "true")
ASYNC = Change("jax_cpu_enable_async_dispatch", JAX, "False", "True")
EAGER = parse_metric_name("eager.wall_ns")
YNN = Change("xla_cpu_experimental_ynn_fusion_type", XLA, "", "default")
ADDED = Change("xla_cpu_new_flag", XLA, None, "true")


def test_each_changed_default_is_tried_back_on_the_newer_release_and_forward_on_the_older():
    added = Change("jax_no_tracing", JAX, None, "False")
    expression = Change("jax_dynamic_shapes", JAX, "False", "bool(os.getenv('X', ''))")
    gpu = Change("xla_gpu_enable_triton", XLA, "false", "true")
    planned, left = trials([added, gpu, ASYNC, expression, THUNK], "0.4.31", "0.4.33", "cpu")
    assert [(t.release, t.words()) for t in planned] == [
        ("0.4.33", 'jax.config.update("jax_cpu_enable_async_dispatch", False)'),
        ("0.4.31", 'jax.config.update("jax_cpu_enable_async_dispatch", True)'),
        ("0.4.33", "XLA_FLAGS=--xla_cpu_use_thunk_runtime=false"),
        ("0.4.31", "XLA_FLAGS=--xla_cpu_use_thunk_runtime=true"),
        ("0.4.33", 'jax.config.update("jax_dynamic_shapes", False)'),
    ], (
        "cpu-named changes first; the GPU flag left out; an expression cannot be set; an added "
        "option only forward"
    )
    assert [t.back for t in planned] == [True, False, True, False, True] and left == 0
    many = [Change(f"xla_cpu_flag_{i}", XLA, "0", "1") for i in range(5)]
    assert trials(many, "a", "b", "cpu") == (
        trials(many, "a", "b", "cpu")[0][:MAX_TRIED],
        10 - MAX_TRIED,
    )


def test_a_trial_sets_xla_flags_after_the_profile_s_and_a_jax_option_for_the_process_to_set():
    back = Trial(THUNK, "0.4.33", "false")
    side = side_of(
        back, Side("0.4.33", "cpu8", env={"XLA_FLAGS": "--xla_force_host_platform_device_count=8"})
    )
    assert (
        side.env["XLA_FLAGS"]
        == "--xla_force_host_platform_device_count=8 --xla_cpu_use_thunk_runtime=false"
    )
    assert side.profile == "cpu8+xla_cpu_use_thunk_runtime.false" and not side.compare_next
    assert side.label == "jax 0.4.33 · cpu8 · XLA_FLAGS=--xla_cpu_use_thunk_runtime=false"
    jax_side = side_of(Trial(ASYNC, "0.4.33", "False"), Side("0.4.33", "cpu"))
    assert json.loads(jax_side.env["HARNESS_JAX_CONFIG"]) == {
        "jax_cpu_enable_async_dispatch": False
    }


def answer_of(*args, **named):
    """A step's answer judged on ``eager.wall_ns`` (as gathered: each metric's trials judged when
    made)."""
    return DefaultsAnswer(*args, metrics=(EAGER,), **named)


def said(answer, step, key):
    """Every line an answer says of a step on ``key``: the trials', then the defaults that
    changed."""
    return [*texts(trial_lines(answer, step, key)), *defaults_listing(answer)]


def texts(findings):
    return [finding.text for finding in findings]


def results(scales):
    data = real_result("async_dispatch-0.12.0.1")
    return {name: as_stored(derive(data, scale=scale)) for name, scale in scales.items()}


def test_the_setting_that_brings_the_old_number_back_is_named_a_workaround():
    back, forward = Trial(THUNK, "0.4.33", "false"), Trial(THUNK, "0.4.31", "true")
    answer = answer_of(
        "0.4.31",
        "0.4.33",
        [THUNK],
        [back, forward],
        {
            back: results({"before": 1.0, "after": 3.0, "trial": 1.01}),
            forward: results({"before": 1.0, "after": 3.0, "trial": 3.02}),
        },
    )
    step = answer.tried(EAGER)[0].vs_after  # the trial against the newer release: faster
    assert step is not None and step.verdict == Verdict.FASTER
    slower_step = derive_step(Verdict.SLOWER)
    lines = said(answer, slower_step, EAGER)
    assert lines[0].startswith(
        "on 0.4.33, XLA_FLAGS=--xla_cpu_use_thunk_runtime=false gives ×1.01 of 0.4.31"
    )
    assert lines[0].endswith(": a workaround, and a strong hint at the cause")
    assert lines[1].startswith(
        "on 0.4.31, XLA_FLAGS=--xla_cpu_use_thunk_runtime=true gives ×3.02 of 0.4.31"
    )
    assert (
        lines[-1]
        == "defaults that changed from 0.4.31 to 0.4.33: xla_cpu_use_thunk_runtime: false → true"
    )
    none = answer_of(
        "0.4.31", "0.4.33", [THUNK], [back], {back: results({"before": 1, "after": 3, "trial": 3})}
    )
    assert said(none, slower_step, EAGER)[0] == (
        "none of the 1 changed defaults tried brought the old eager.wall_ns back"
    )
    [tried] = none.metric_data(EAGER)["tried"]
    assert tried["vs_before"] == "slower" and tried["vs_after"] != "faster" and tried["back"]


def test_a_setting_that_undoes_most_of_the_step_brings_it_back_though_the_older_is_told_apart():
    back = Trial(THUNK, "0.4.33", "false")
    answer = answer_of(
        "0.4.31",
        "0.4.33",
        [THUNK],
        [back],
        {back: results({"before": 1.0, "after": 3.0, "trial": 1.2})},
    )
    [tried] = answer.tried(EAGER)
    assert tried.vs_before is not None and tried.vs_before.verdict == Verdict.SLOWER, (
        "×1.2 of 0.4.31: told apart"
    )
    [line, *_] = said(answer, derive_step(Verdict.SLOWER), EAGER)
    assert line.startswith(
        "on 0.4.33, XLA_FLAGS=--xla_cpu_use_thunk_runtime=false gives ×1.2 of 0.4.31"
    )
    assert line.endswith(
        "(it undoes 83% of the step): a workaround, and a strong hint at the cause"
    ), line
    halfway = answer_of(
        "0.4.31",
        "0.4.33",
        [THUNK],
        [back],
        {back: results({"before": 1.0, "after": 3.0, "trial": 1.7})},
    )
    assert said(halfway, derive_step(Verdict.SLOWER), EAGER)[0].startswith("none of the 1 changed")


def test_a_trial_whose_processes_failed_says_the_error_s_last_line():
    forward = Trial(THUNK, "0.4.31", "true")
    found = results({"before": 1.0, "after": 3.0, "trial": 1.0})
    failed = real_result("async_dispatch-0.12.0.1")
    failed["status"] = "failed"
    failed["processes"] = [
        dict(
            p,
            status="failed",
            detail="Traceback ...\nXlaRuntimeError: UNIMPLEMENTED: Custom call target x\n",
        )
        for p in failed["processes"]
    ]
    found["trial"] = as_stored(failed)
    answer = answer_of("0.4.31", "0.4.33", [THUNK], [forward], {forward: found})
    assert said(answer, derive_step(Verdict.SLOWER), EAGER)[1] == (
        "on 0.4.31, XLA_FLAGS=--xla_cpu_use_thunk_runtime=true: not judged (its processes failed: "
        "XlaRuntimeError: UNIMPLEMENTED: Custom call target x)"
    ), "after the line that none brought the number back"


def test_bringing_back_the_old_number_of_a_speed_up_is_no_workaround_unless_the_new_is_called_bad():
    back = Trial(THUNK, "0.4.33", "false")
    answer = answer_of(
        "0.4.31",
        "0.4.33",
        [THUNK],
        [back],
        {back: results({"before": 3.0, "after": 1.0, "trial": 3.02})},
    )
    faster = derive_step(Verdict.FASTER)
    [line, *_] = texts(trial_lines(answer, faster, EAGER))
    assert line.endswith(": the old behaviour back: a hint at why")
    [line, *_] = texts(trial_lines(answer, faster, EAGER, unwanted=True))
    assert line.endswith(": a workaround, and a strong hint at the cause"), (
        "a bisect's bad release, however it moved"
    )


def derive_step(verdict, ratio=3.0):
    from harness.analysis.processes import compare_processes

    return dataclasses.replace(
        compare_processes([[1.0]] * 3, [[2.0]] * 3), verdict=verdict, cost=CostDetail(ratio)
    )


def test_the_prober_lists_and_tries_a_step_s_defaults_in_one_measurement_with_both_releases(
    tmp_path, monkeypatch
):
    case = discovery.discover(REPO / "cases")["async_dispatch"]
    options = {
        "0.4.31": {"xla_cpu_use_thunk_runtime": Option("xla_cpu_use_thunk_runtime", "false", XLA)},
        "0.4.33": {"xla_cpu_use_thunk_runtime": Option("xla_cpu_use_thunk_runtime", "true", XLA)},
    }
    monkeypatch.setattr(
        tried, "options_of", lambda interpreter, listed: (options[interpreter.parent.name], "")
    )
    measured = []

    def measure(plan, sides, settings, results_dir, **kwargs):
        measured.append((sides, settings))
        scales = {"0.4.31": 1.0, "0.4.33": 3.0}
        out = []
        for side in sides:
            scale = 1.02 if "thunk_runtime=false" in side.label else scales[side.release]
            record = derive(
                real_result("async_dispatch-0.12.0.1"),
                release=side.release,
                profile=side.profile,
                scale=scale,
            )
            record["id"] += f"-{len(measured)}"  # the screen's and the decision's results apart
            out.append(Measured(side, None, read_result(write_result(results_dir, record))))
        return out

    class Ready:
        def matches(self, label, libraries):
            return True

        def prepare(self, label, env):
            return Prepared(tmp_path / label / "python")

    envs = {r: ReleaseEnv(r, r, "python3.12", (), tmp_path / r) for r in ("0.4.31", "0.4.33")}
    prober = ReleaseProber(
        envs,
        case,
        {"N": 1000},
        "cpu",
        tmp_path / "results",
        Settings(processes=5),
        print,
        max_processes=10,
        measure=measure,
        environments=Ready(),
    )
    step = Step("0.4.31", "0.4.33", (Criterion.of(EAGER),), "cpu", Thresholds(), tmp_path, "answer")
    answer = tried.ChangedDefaults().gather(step, StepSides(prober))
    [(screened, screen), (sides, settings)] = measured
    assert [side.label for side in screened] == [
        "jax 0.4.31 · cpu",
        "jax 0.4.33 · cpu",
        "jax 0.4.33 · cpu · XLA_FLAGS=--xla_cpu_use_thunk_runtime=false",
        "jax 0.4.31 · cpu · XLA_FLAGS=--xla_cpu_use_thunk_runtime=true",
    ], "every trial screened at once with both releases"
    assert screen.processes == tried.SCREEN_PROCESSES and screen.decide is None
    assert [side.label for side in sides] == [
        "jax 0.4.31 · cpu",
        "jax 0.4.33 · cpu",
        "jax 0.4.33 · cpu · XLA_FLAGS=--xla_cpu_use_thunk_runtime=false",
    ], "the trial that moved nothing toward 0.4.33 (0.4.31 with the thunk runtime) dropped"
    assert settings.decide == "changes" and settings.decide_metrics == ("eager.wall_ns",)
    assert [t.words() for t in answer.screened_out] == [
        "XLA_FLAGS=--xla_cpu_use_thunk_runtime=true"
    ]
    assert defaults_listing(answer)[-1] == (
        "screened at 3 processes a side and dropped (they moved no metric toward the other "
        "release): XLA_FLAGS=--xla_cpu_use_thunk_runtime=true on 0.4.31"
    )
    lines = said(answer, derive_step(Verdict.SLOWER), EAGER)
    assert lines[0].startswith(
        "on 0.4.33, XLA_FLAGS=--xla_cpu_use_thunk_runtime=false gives ×1.02 of 0.4.31"
    )


def test_a_trial_whose_flag_the_script_replaced_is_void_never_counted_as_tried():
    back = Trial(THUNK, "0.4.33", "false")
    found = results({"before": 1.0, "after": 3.0, "trial": 3.0})
    replaced = real_result("async_dispatch-0.12.0.1")
    record = {"lost": ["--xla_cpu_use_thunk_runtime"], "read": "--xla_cpu_multi_thread_eigen=false"}
    replaced["processes"] = [
        dict(p, script={**(p.get("script") or {}), "xla_flags": record})
        for p in replaced["processes"]
    ]
    found["trial"] = as_stored(replaced)
    answer = answer_of("0.4.31", "0.4.33", [THUNK], [back], {back: found})
    [trial] = answer.tried(EAGER)
    assert trial.void and trial.vs_before is None
    lines = texts(trial_lines(answer, derive_step(Verdict.SLOWER), EAGER))
    assert lines == [
        "void, not tried: XLA_FLAGS=--xla_cpu_use_thunk_runtime=false on 0.4.33: the script sets "
        "XLA_FLAGS itself before jax starts, so XLA never got the flag (append to "
        "os.environ.get('XLA_FLAGS', '') instead of replacing it)"
    ], "not 'none of the 1 changed defaults tried brought the old number back'"
    assert answer.metric_data(EAGER)["tried"][0]["void"] is True
    jax_option = Trial(ASYNC, "0.4.33", "False")
    kept = answer_of("0.4.31", "0.4.33", [ASYNC], [jax_option], {jax_option: found})
    assert not kept.tried(EAGER)[0].void, "a jax option does not go through XLA_FLAGS"


def test_a_trial_the_statistics_left_undecided_is_said_undecided_not_told_apart():
    summary = summarize([1.0, 2.0])
    undecided = Comparison(
        summary, summary, 0.2, Verdict.UNDECIDED, (), cost=CostDetail(2.0, 0.9, 4.0)
    )
    slower = dataclasses.replace(undecided, cost=CostDetail(3.0), verdict=Verdict.SLOWER)
    back = Trial(THUNK, "0.4.33", "false")
    answer = answer_of("0.4.31", "0.4.33", [THUNK], [back])
    line = tried_text(Tried(back, undecided, slower), answer)
    assert line == (
        "on 0.4.33, XLA_FLAGS=--xla_cpu_use_thunk_runtime=false gives ×2 of 0.4.31 (undecided "
        f"against 0.4.31, {slower.said} than 0.4.33: more processes could tell)"
    )
    assert "not told apart" not in line


def test_whether_a_trial_brings_the_old_number_back_is_read_from_the_judgements_never_judged_again(
    monkeypatch,
):
    back = Trial(THUNK, "0.4.33", "false")
    measured = {back: results({"before": 1.0, "after": 3.0, "trial": 1.0})}
    answer = answer_of("0.4.31", "0.4.33", [THUNK], [back], measured)

    def judged_again(*args, **kwargs):
        raise AssertionError("a trial judged again")

    monkeypatch.setattr(tried, "judged", judged_again)
    assert answer.brings_back(EAGER)
    assert not answer.brings_back(parse_metric_name("json.other_ms")), (
        "a metric it was never judged on"
    )


def test_a_value_brought_back_exactly_by_the_old_default_is_the_workaround_the_reverse_a_hint():
    """jax_threefry_partitionable turned True in jax 0.5.0 and changed every draw from a fixed key:
    set back to False on 0.5.0 it gives 0.4.38's values exactly (the answer); set True on 0.4.38 it
    gives 0.5.0's (a hint only). Judged by equality per process, never by a ratio of two draws."""
    from harness.analysis.shapes import compare_values
    from harness.explain.defaults import JAX, Change
    from harness.explain.tried import Trial, Tried
    from harness.render.why import trial_lines

    key = parse_metric_name("json.draw_sum")
    old, new = [[4.338]] * 5, [[4.462]] * 5
    step = compare_values(old, new, key)
    change = Change("jax_threefry_partitionable", JAX, "False", "True")
    back = Tried(
        Trial(change, "0.5.0", "False"),
        compare_values(old, old, key),
        compare_values(new, old, key),
    )
    forward = Tried(
        Trial(change, "0.4.38", "True"),
        compare_values(old, new, key),
        compare_values(new, new, key),
    )
    assert back.brings_back(step) and not forward.brings_back(step)
    assert forward.brings_forward(step)
    answer = DefaultsAnswer("0.4.38", "0.5.0", [change], metrics=(key,))
    object.__setattr__(answer, "judgements", {key: (back, forward)})
    lines = texts(trial_lines(answer, step, key))
    assert lines[0] == (
        'on 0.5.0, jax.config.update("jax_threefry_partitionable", False) '
        "gives the same as 0.4.38, "
        "not what 0.5.0 gives (changed from 4.462 to 4.338 in every process): a workaround, and a "
        "strong hint at the cause"
    )
    assert lines[1].endswith("it brings the new number to 0.4.38 too")


def _screened(shapes, verdicts, monkeypatch):
    """``tried.screen`` of two trials on a step of ``shapes``, each trial judged on every metric as
    ``verdicts`` says (by trial, against both releases); the processes a side it asked, and what it
    kept, dropped and answered."""

    asked = []
    planned = [Trial(THUNK, "0.4.33", "false"), Trial(ASYNC, "0.4.33", "False")]

    def measure_trials(step, sides, ends, trials, processes=None):
        asked.append(processes)
        return {trial: {} for trial in trials}

    def judged(trial, results, key, thresholds):
        verdict = verdicts[trial.change.name]
        return Tried(trial, derive_step(verdict), derive_step(verdict))

    monkeypatch.setattr(tried, "measure_trials", measure_trials)
    monkeypatch.setattr(tried, "judged", judged)
    monkeypatch.setattr(tried, "toward", lambda trial, results, key, thresholds: False)
    criteria = tuple(Criterion.of(metric) for metric in shapes)
    step = Step("0.4.38", "0.5.0", criteria, "cpu", Thresholds(), None, "s", shapes=shapes)  # type: ignore[arg-type]
    kept, dropped, answered = tried.screen(step, None, (None, None), planned)  # type: ignore[arg-type]
    names = lambda trials: [t.change.name for t in trials]
    return asked, names(kept), names(dropped), names(answered)


def test_a_value_is_screened_at_two_processes_a_side_and_a_trial_it_decides_is_answered_by_it(
    monkeypatch,
):
    """A value is exact: equality in two processes a side settles whether a default brings it
    back; only a trial the screen left undecided is measured further (by its counts)."""
    from harness.analysis.significance import Shape

    draw = parse_metric_name("json.draw")
    verdicts = {THUNK.name: Verdict.CHANGED, ASYNC.name: Verdict.UNDECIDED}
    asked, kept, dropped, answered = _screened({draw: Shape.VALUE}, verdicts, monkeypatch)
    assert asked == [2], "not the three processes a side of a cost's screen"
    assert answered == [THUNK.name] and kept == [ASYNC.name] and dropped == []
    asked, kept, dropped, answered = _screened({EAGER: Shape.COST}, verdicts, monkeypatch)
    assert asked == [tried.SCREEN_PROCESSES] and dropped == [THUNK.name, ASYNC.name], (
        "a cost: the sequential test, for the trials that move it toward the other release"
    )


def test_a_trial_against_a_constant_cost_says_which_way_it_moved_not_its_figures_than_a_release():
    """A cost constant in every process (a compiled buffer, ``json.temp_mb``) says its figures as
    its verdict; against a release the trial is *higher* or *lower* than it."""
    summary = summarize([12.58])
    slower = Comparison(
        summary,
        summarize([6.292]),
        0.0,
        Verdict.FASTER,
        (),
        metric=parse_metric_name("json.temp_mb"),
        constant=True,
        cost=CostDetail(0.5, 0.5, 0.5),
    )
    back = Trial(THUNK, "0.4.33", "false")
    answer = answer_of("0.4.31", "0.4.33", [THUNK], [back])
    unchanged = dataclasses.replace(slower, cost=CostDetail(1.0), verdict=Verdict.UNCHANGED)
    line = tried_text(Tried(back, unchanged, slower), answer)
    assert line.endswith("(the same as 0.4.31, lower than 0.4.33)"), line


def test_an_exact_step_s_screen_runs_only_its_trials_against_the_releases_stored_results():
    """A cost constant in every process (a compiled buffer's bytes) is exact: its trials need no
    interleaving with the releases, whose stored results they are compared with, and the screen's
    processes settle them; a varying cost's screen measures both releases beside its trials."""
    from harness.analysis.significance import Shape

    class Sides:
        def __init__(self):
            self.run, self.afforded = [], []

        def afford(self, step, processes, what):
            self.afforded.append(processes)

        def screened(self, every, processes):
            self.run.append(([side.label for side in every], processes))
            return {side.label: f"measured {side.label}" for side in every}

        def stored(self, release):
            return f"stored {release}"

    ends = (Side("0.4.31", "cpu"), Side("0.4.33", "cpu"))
    back = Trial(THUNK, "0.4.33", "false")
    temp = parse_metric_name("json.temp_mb")
    exact = Step(
        "0.4.31", "0.4.33", (Criterion.of(temp),), "cpu", Thresholds(), None, "s",  # type: ignore[arg-type]
        shapes={temp: Shape.COST}, constant=frozenset({temp}),
    )  # fmt: skip
    sides = Sides()
    screened = tried.measure_trials(exact, sides, ends, [back], tried.screen_processes(exact))  # type: ignore[arg-type]
    trial_label = side_of(back, ends[1]).label
    assert sides.run == [([trial_label], tried.SCREEN_PROCESSES)] and sides.afforded == [3]
    assert screened[back] == {
        "before": "stored 0.4.31", "after": "stored 0.4.33", "trial": f"measured {trial_label}",
    }  # fmt: skip
    varying = dataclasses.replace(exact, constant=frozenset())
    sides = Sides()
    tried.measure_trials(varying, sides, ends, [back], tried.screen_processes(varying))  # type: ignore[arg-type]
    assert sides.run == [
        (["jax 0.4.31 · cpu", "jax 0.4.33 · cpu", trial_label], tried.SCREEN_PROCESSES)
    ]


def test_a_workaround_answers_the_metrics_it_brings_back_so_the_kinds_after_it_are_not_asked():
    back = Trial(THUNK, "0.4.33", "false")
    brings = answer_of(
        "0.4.31", "0.4.33", [THUNK], [back],
        {back: results({"before": 1.0, "after": 3.0, "trial": 1.0})},
    )  # fmt: skip
    assert brings.answered() == (EAGER,)
    keeps = answer_of(
        "0.4.31", "0.4.33", [THUNK], [back],
        {back: results({"before": 1.0, "after": 3.0, "trial": 3.0})},
    )  # fmt: skip
    assert keeps.answered() == ()


def test_the_settling_kind_s_screen_is_its_own_but_its_kept_trials_fit_in_what_is_left(
    monkeypatch,
):
    """The changed defaults settle a cost: their screen is measured whatever the budget has left,
    but measuring the kept trials until decided is not: it fits in what is left, or is said left
    out, so the why stays within its budget."""
    back = Trial(THUNK, "0.4.33", "false")
    seen = []
    screened = results({"before": 1.0, "after": 3.0, "trial": 1.0})
    monkeypatch.setattr(
        tried, "screen", lambda step, sides, ends, planned: ({back: screened}, [], {})
    )

    def measure_trials(step, sides, ends, planned, processes=None):
        seen.append(sides.settling)
        raise tried.OverBudget("the why's time budget (19 s) would not cover its trials")

    monkeypatch.setattr(tried, "measure_trials", measure_trials)
    sides = StepSides(None, settling=True)  # type: ignore[arg-type]
    answer = tried.screen_and_measure(
        Step("0.4.31", "0.4.33", (Criterion.of(EAGER),), "cpu", Thresholds(), None, "s"),  # type: ignore[arg-type]
        sides, (None, None), [back], answer_of("0.4.31", "0.4.33", [THUNK]),  # type: ignore[arg-type]
    )  # fmt: skip
    assert seen == [False], "the kept trials measured as any kind's, within what is left"
    assert "screened and kept, not measured further (the why's time budget (19 s)" in answer.problem
    assert answer.trials == [back] and answer.measured == {back: screened}, (
        "judged on its screen: a value it brought back exactly stands beside a time left open"
    )


# An ending's why: settings tried on the release that dies, judged on counts as the step was.
SCREEN = 3  # processes a side in these tests


def ok(processes=SCREEN, release="0.10.1"):
    return as_stored(
        derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=processes)
    )


def segfaults(processes=SCREEN, release="0.10.2"):
    base = derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=processes)
    return as_stored(died(base, SEGFAULT))


def ending_step(before="0.10.1", after="0.10.2"):
    return Step(before, after, (Criterion.of(ENDING),), "cpu", Thresholds(), None, "answer")  # type: ignore[arg-type]


def test_an_ending_s_step_is_one_whose_only_metric_is_process_end():
    assert ending_step().ending and ending_step().changed and not ending_step().metrics
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
    assert crashing_side(ending_step(), stored.get) == ("0.10.2", "ok → SIGSEGV (exit 139)", (3, 3))
    fixed = {"0.10.1": segfaults(release="0.10.1"), "0.10.2": ok(release="0.10.2")}
    assert crashing_side(ending_step(), fixed.get) == ("0.10.1", "SIGSEGV (exit 139) → ok", (3, 3))
    assert "no change" in str(crashing_side(ending_step(), {"0.10.1": ok(), "0.10.2": ok()}.get))
    assert "could not both be read" in str(crashing_side(ending_step(), {"0.10.1": ok()}.get))


def test_a_crash_in_some_processes_only_is_told_by_the_step_s_own_counts():
    """The step's own comparison (the counts at its thresholds) tells the release that dies, in
    every process or in some: one rule, no "every process ok beside every one dead alike"."""
    base = derive(real_result("async_dispatch-0.12.0.1"), release="0.10.2", processes=20)
    some = as_stored(died(base, {**SEGFAULT, "processes": 10}))
    crashing, ending, counts = crashing_side(ending_step(), {"0.10.1": ok(20), "0.10.2": some}.get)  # type: ignore[misc]
    assert (crashing, ending, counts) == ("0.10.2", "ok → SIGSEGV (exit 139)", (10, 20)), (
        "the crash kind tries it by its counts"
    )
    few = as_stored(
        died(
            derive(real_result("async_dispatch-0.12.0.1"), release="0.10.2"),
            {**SEGFAULT, "processes": 1},
        )
    )
    said = crashing_side(ending_step(), {"0.10.1": ok(), "0.10.2": few}.get)
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
    planned = planned_trials([THUNK, ASYNC, ADDED, YNN], "0.10.2", "0.10.1", "cpu")
    words = [trial.words() for trial, _ in planned]
    assert "XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=" in words
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


def test_a_trial_the_screen_cannot_rule_out_is_kept_and_one_it_rules_out_is_dropped(monkeypatch):
    """Measured in a real bisect of 0.4.31 → 0.4.33 under load: async dispatch set back on 0.4.33
    moved dispatch less than a quarter of the way in the screen's point, and was dropped, though it
    is the setting that brings dispatch back. A screen of 3 processes drops only what its interval
    rules out."""
    from harness.analysis.shapes import ProcessSamples

    def side(level, scatter):
        return ProcessSamples([[level * (1 + scatter * s)] * 5 for s in (-1, 0, 1)])

    noisy = {"before": side(100.0, 0.02), "after": side(20.0, 0.02), "trial": side(28.0, 0.6)}
    tight = dict(noisy, trial=side(21.0, 0.02))
    back = Trial(ASYNC, "0.4.33", "False")
    for results, kept in ((noisy, True), (tight, False)):
        monkeypatch.setattr(tried, "_samples", lambda result, key, results=results: result)
        assert tried.toward(back, results, EAGER, Thresholds()) is kept, results["trial"]
