"""The why's findings: a plain script's libraries on a step (the library or JAX?), every kind's
lines, and what to run next, which follows what was found."""

import dataclasses

from harness.analysis.significance import Verdict
from harness.explain.held_library import HeldAnswer, Parts
from harness.explain.kinds import KINDS
from harness.findings import Finding
from harness.metric_names import Criterion, Judged, parse_metric_name
from harness.render.why import STEP_LINES, libraries_line, next_steps
from harness.steps.judge import FIX, REGRESSION
from harness.units import format_ratio

LOOP = Criterion.of(parse_metric_name("json.loop_ms"))
EAGER = Criterion.of(parse_metric_name("eager.wall_ns"))

LOOP_KEY, RUN_KEY = parse_metric_name("json.loop_ms"), parse_metric_name("json.run_ms")


def script_setting(**libraries):
    from harness.analysis.significance import Thresholds
    from harness.steps.answers import RangeLibraries, Setting

    versions = {
        "0.4.31": {"equinox": "0.11.4"},
        "0.4.33": {"equinox": "0.11.6"},
        "0.4.34": {"equinox": "0.11.6"},
    }
    return Setting(
        "script-repro",
        {},
        "cpu",
        Criterion(Judged.CLAIM),
        {},
        Thresholds(),
        1.0,
        target=("--script", "repro.py"),
        libraries=RangeLibraries(**({"versions": versions, "policy": "as-of"} | libraries)),
    )


def test_a_step_where_a_library_moved_with_jax_offers_the_commands_that_tell_them_apart():
    found = libraries_line(script_setting(), "0.4.31", "0.4.33")
    assert found is not None and found.leads
    assert found.text == (
        "the script's libraries changed along with jax (equinox 0.11.4 → 0.11.6): the library or "
        "JAX?"
    )
    triage = "nox -s triage -- --script repro.py"
    assert [f.command for f in found.follow_ups] == [
        f"{triage} --from 0.4.31 --to 0.4.33 --hold equinox==0.11.4 --profile cpu",
        f"{triage} --vary equinox --jax 0.4.33 --from 0.11.4 --to 0.11.6 --profile cpu",
    ], "the commands apart from the sentence"
    said = found.markdown()
    assert said.startswith(found.text + " the two jax releases with equinox held: `nox -s triage")


def test_a_step_the_libraries_did_not_move_with_comes_with_jax_and_a_varied_one_with_the_library():
    assert libraries_line(script_setting(), "0.4.33", "0.4.34") == Finding(
        "comes with jax 0.4.34 (equinox 0.11.6 on both)", leads=True
    )
    held = libraries_line(script_setting(held=("equinox==0.11.6",)), "0.4.33", "0.4.34")
    assert held == Finding("comes with jax 0.4.34 (equinox 0.11.6 held)", leads=True)
    varied = script_setting(vary="equinox", jax="0.4.33", versions={})
    assert libraries_line(varied, "0.4.33+equinox.0.11.4", "0.4.33+equinox.0.11.5") == Finding(
        "comes with equinox 0.11.5 (jax 0.4.33 held)", leads=True
    )
    assert libraries_line(script_setting(versions={}), "0.4.31", "0.4.33") is None, (
        "a case's step says nothing of them"
    )


class Compared:
    """Stands in for a Comparison: its direction, ratio and word."""

    def __init__(self, verdict, ratio):
        self.verdict, self.said = verdict, str(verdict)
        self.ratio_cell = format_ratio(ratio)


def test_a_reproducer_that_moved_as_the_script_did_reproduces_it_with_both_ratios():
    from harness.analysis.significance import Verdict
    from harness.explain.reproducer import ReproducerAnswer
    from harness.render.why import reproduced_lines, reproducer_lines

    step = Compared(Verdict.SLOWER, 6.5)
    answer = ReproducerAnswer(
        "0.4.31", "0.4.33", "s-reproducer/", "repro_ab.py", "0.4.31", 34,
        ({"name": "f", "calls": 3, "inputs": [{"saved": False}]},),
        measured={LOOP_KEY: (RUN_KEY, Compared(Verdict.SLOWER, 5.9))},
        matched=(1, 1),
    )  # fmt: skip
    [found] = reproduced_lines(answer, step, LOOP_KEY)
    assert found == Finding(
        "reproduces it with jax alone on json.run_ms, its counterpart of json.loop_ms: ×5.9 (your "
        "script: ×6.5)",
        leads=True,
    )
    flat = ReproducerAnswer(**{**answer.__dict__, "measured": {
        LOOP_KEY: (RUN_KEY, Compared(Verdict.UNCHANGED, 1.0))}})  # fmt: skip
    [found] = reproduced_lines(flat, step, LOOP_KEY)
    assert found.leads and found.text.startswith("does not reproduce it")
    assert "outside the compiled programs" in found.text
    cut_short = ReproducerAnswer(**{**answer.__dict__, "measured": {
        LOOP_KEY: (RUN_KEY, Compared(Verdict.UNDECIDED, 6.28))}})  # fmt: skip
    [found] = reproduced_lines(cut_short, step, LOOP_KEY)
    assert "undecided" in found.text and "does not reproduce" not in found.text, (
        "too few processes are no evidence that the change is outside the compiled programs"
    )
    assert not found.leads
    trace = parse_metric_name("process.trace_ns")
    unmatched = ReproducerAnswer(**{**answer.__dict__, "unmatched": {trace: "it happens before"}})
    [found] = reproduced_lines(unmatched, step, trace)
    assert found.text == (
        "the reproducer has no counterpart of process.trace_ns: it happens before; it is not "
        "judged by it"
    )
    assert not found.leads
    [head] = reproducer_lines(answer)
    assert "`s-reproducer/repro_ab.py` (34 lines, 1 program(s) exported on 0.4.31" in head
    assert "1 input(s) generated" in head
    fewer = ReproducerAnswer(**{**answer.__dict__, "left_out": 2})
    assert "; 2 more whose own time did not move left out" in reproducer_lines(fewer)[0]


def test_every_kind_in_the_registry_has_its_lines():
    """A new kind is a module, a registry entry and a lines function: the registry's each has
    lines."""
    assert [kind.name for kind in KINDS if kind.name not in STEP_LINES] == []


def held(comes_with_libraries):
    moved = Compared(Verdict.SLOWER, 3.0)
    still = Compared(Verdict.UNCHANGED, 1.0)
    jax, libraries = (still, moved) if comes_with_libraries else (moved, still)
    return HeldAnswer(
        "0.4.31",
        "0.4.33",
        {"equinox": ("0.11.4", "0.11.6")},
        "0.4.33+equinox.0.11.4",
        "0.4.33",
        {LOOP_KEY: Parts(moved, jax, libraries)},
    )


def test_the_next_command_follows_the_attribution_each_once():
    setting = script_setting()
    step = Compared(Verdict.SLOWER, 3.0)

    def offered(answer, terms=REGRESSION):
        evidence = {("0.4.31", "0.4.33"): (answer,)}
        with_it = dataclasses.replace(setting, evidence=evidence)
        return [f.command for f in next_steps(with_it, "0.4.31", "0.4.33", LOOP, step, terms)]

    [library] = offered(held(comes_with_libraries=True))
    assert library == (
        "nox -s triage -- --script repro.py --vary equinox --jax 0.4.33 --from 0.11.4 --to 0.11.6 "
        "--metric json.loop_ms --profile cpu"
    ), "a library's change: its own releases with jax held, and no jax commit bisect"
    [commits] = offered(held(comes_with_libraries=False))
    assert commits == (
        "nox -s bisect -- --script repro.py --commits --good 0.4.31 --bad 0.4.33 --metric "
        "json.loop_ms --profile cpu"
    ), "jax's change: its commits"
    [fixed] = offered(held(comes_with_libraries=False), FIX)
    assert "--commits --broken 0.4.31 --fixed 0.4.33" in fixed


def test_a_workaround_found_is_offered_once_and_ends_the_commit_bisect_where_its_commit_is_known():
    from harness.explain.defaults import OptionCommit
    from harness.explain.tried import Trial
    from tests.explain.test_tried import THUNK, answer_of, derive_step, results

    back = Trial(THUNK, "0.4.33", "false")
    answer = answer_of(
        "0.4.31",
        "0.4.33",
        [THUNK],
        [back],
        {back: results({"before": 1.0, "after": 3.0, "trial": 1.01})},
    )
    step = derive_step(Verdict.SLOWER)
    with_it = dataclasses.replace(script_setting(), evidence={("0.4.31", "0.4.33"): (answer,)})
    said = next_steps(with_it, "0.4.31", "0.4.33", EAGER, step, REGRESSION)
    assert [(f.command, f.shell) for f in said] == [
        ("XLA_FLAGS=--xla_cpu_use_thunk_runtime=false", False),
        (
            "nox -s bisect -- --script repro.py --commits --good 0.4.31 --bad 0.4.33 --metric "
            "eager.wall_ns --profile cpu",
            True,
        ),
    ]
    known = dataclasses.replace(
        answer, commits={THUNK.name: OptionCommit(THUNK.name, "f" * 40, "T")}
    )
    with_commit = dataclasses.replace(with_it, evidence={("0.4.31", "0.4.33"): (known,)})
    said = next_steps(with_commit, "0.4.31", "0.4.33", EAGER, step, REGRESSION)
    assert [f.shell for f in said] == [False], "the default's commit is known: no commit bisect"


def test_trials_are_judged_once_when_the_answer_is_made_with_its_thresholds(monkeypatch):
    from harness.analysis.significance import Thresholds
    from harness.explain import tried
    from harness.explain.tried import Trial
    from harness.render.why import trial_lines
    from tests.explain.test_tried import THUNK, answer_of, derive_step, results

    back = Trial(THUNK, "0.4.33", "false")
    measured = {back: results({"before": 1.0, "after": 1.2, "trial": 1.0})}
    strict = answer_of("0.4.31", "0.4.33", [THUNK], [back], measured)
    loose = answer_of(
        "0.4.31", "0.4.33", [THUNK], [back], measured, thresholds=Thresholds(factor=2.0)
    )
    assert strict.tried(parse_metric_name("eager.wall_ns"))[0].vs_after.verdict == Verdict.FASTER
    assert loose.tried(parse_metric_name("eager.wall_ns"))[0].vs_after.verdict != Verdict.FASTER, (
        "the run's thresholds"
    )

    def judged_again(*args, **kwargs):
        raise AssertionError("judged again while the page is written")

    monkeypatch.setattr(tried, "compare_metric", judged_again)
    assert trial_lines(strict, derive_step(Verdict.SLOWER), parse_metric_name("eager.wall_ns"))


def test_each_kind_of_step_is_judged_by_the_reproducer_s_counterpart_of_its_own_metric():
    """A memory step by the programs' temporary bytes, a compile step by their compile, a run step
    by their run time, a value by none: never a conclusion drawn from another metric (a ×6.55
    temp buffer was once 'does not reproduce it (×2.79 on json.run_ms)')."""
    from harness.analysis.significance import Shape, Verdict
    from harness.explain.reproducer import COMPILE, MEMORY, RUN, ReproducerAnswer, counterpart
    from harness.render.why import reproduced_lines

    temp, compile_s = parse_metric_name("json.temp_mb"), parse_metric_name("json.compile_s")
    assert counterpart(temp) == MEMORY and counterpart(compile_s) == COMPILE
    compiled = parse_metric_name("json.compile_ms")
    assert counterpart(parse_metric_name("process.compile_ns")) == COMPILE == compiled
    assert counterpart(parse_metric_name("json.solve_ms")) == RUN
    assert isinstance(counterpart(parse_metric_name("json.draw"), Shape.VALUE), str)
    assert isinstance(counterpart(parse_metric_name("json.gflops")), str), "no time, no size"
    answer = ReproducerAnswer(
        "0.4.38", "0.5.0", "s-reproducer/", "repro_ab.py", "0.4.38", 34,
        measured={temp: (MEMORY, Compared(Verdict.UNCHANGED, 1.0))},
    )  # fmt: skip
    [found] = reproduced_lines(answer, Compared(Verdict.SLOWER, 6.55), temp)
    assert found.text.startswith(
        "does not reproduce it on json.temp_bytes, its counterpart of json.temp_mb (×1"
    )
    assert "outside the compiled programs" not in found.text and "json.run_ms" not in found.text
    assert "temporary bytes" in found.text


def test_the_compiled_programs_read_a_memory_step_by_their_temporary_bytes_never_by_run_time():
    from collections import Counter

    from harness.explain.dumps import CompiledAnswer, Module, ModuleChange
    from harness.render.why import compiled_lines

    def module(temp):
        return Module("jit_f", after=Counter(dot=1), temp_bytes=temp)

    same = [ModuleChange("jit_f", module(1024), module(1024))]
    run = CompiledAnswer("0.4.38", "0.5.0", same, "s-compiled/", reads=("run",))
    assert "what runs them changed" in compiled_lines(run)[0].text
    memory = CompiledAnswer("0.4.38", "0.5.0", same, "s-compiled/", reads=("memory",))
    head, counterpart = compiled_lines(memory)
    assert "what runs them changed" not in head.text, "a conclusion of a run time, not of memory"
    assert counterpart.leads and counterpart.text.endswith(
        ": the same on both (1 KiB): it moved outside them"
    )
    moved = [ModuleChange("jit_f", module(1024), module(6707))]
    grown = CompiledAnswer("0.4.38", "0.5.0", moved, "s-compiled/", reads=("memory",))
    said = [f.text for f in compiled_lines(grown)]
    assert any(text.endswith("of memory: 1 KiB → 6.55 KiB (×6.55)") for text in said), said
    value = CompiledAnswer("0.4.38", "0.5.0", same, "s-compiled/", reads=("value",))
    head, none = compiled_lines(value)
    assert "what runs them changed" not in head.text and none.text == (
        "XLA's dumps hold no counterpart of a value the programs compute: not judged by them"
    )
