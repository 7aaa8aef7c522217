"""Flags named like what XLA compiled anew: found from the compiled programs' one-sided names,
matched against the newer jaxlib's flags, each set to its other value on the newer release and
judged."""

from collections import Counter
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.explain.defaults import XLA, Option
from harness.explain.dumps import CompiledAnswer, Module, ModuleChange
from harness.explain.matching_flags import (
    Candidate,
    CrashFlags,
    FlagsNamedLikeTheProgram,
    candidates,
    one_sided_names,
    words_of,
)
from harness.explain.tried import CHANGED, CrashAnswer, StatusTried, Trial
from harness.metric_names import Criterion, parse_metric_name
from harness.render.why import crash_lines, matched_lines, step_lines, trial_lines
from harness.steps.evidence import Step
from tests.explain.test_held_library import FakeSides
from tests.explain.test_tried import THUNK, ending_step

METRIC = "eager.wall_ns"
KEY = parse_metric_name(METRIC)
LISTING = {
    "xla_cpu_use_xnnpack": Option("xla_cpu_use_xnnpack", "true", XLA, "bool"),
    "xla_cpu_use_onednn": Option("xla_cpu_use_onednn", "false", XLA, "bool"),
    "xla_gpu_enable_xnn_fusion": Option("xla_gpu_enable_xnn_fusion", "true", XLA, "bool"),
    "xla_cpu_xnn_threads": Option("xla_cpu_xnn_threads", "4", XLA, "int32"),
    "xla_dump_to": Option("xla_dump_to", "", XLA, "string"),
}


def compiled() -> CompiledAnswer:
    old = Module("jit_f", after=Counter(fusion=2), fusion_kinds=Counter(kLoop=2))
    new = Module(
        "jit_f",
        after=Counter(fusion=2),
        fusion_kinds=Counter({"kLoop": 1, "kCustom(__xnn_fusion)": 1}),
    )
    same = Module("jit_g", after=Counter(dot=1), custom_calls=Counter({"__onednn$matmul": 1}))
    return CompiledAnswer(
        "0.4.31", "0.4.33", [ModuleChange("jit_f", old, new), ModuleChange("jit_g", same, same)]
    )


def test_names_on_one_release_only_give_the_words_a_flag_may_carry():
    assert one_sided_names((compiled(),)) == ("kCustom(__xnn_fusion)",), (
        "the unchanged module says nothing"
    )
    assert words_of(["kCustom(__xnn_fusion)", "__onednn$matmul"]) == {"xnn", "onednn", "matmul"}


def test_only_boolean_flags_of_the_platform_not_tried_already_are_candidates():
    found = candidates(LISTING, {"xnn", "onednn"}, "cpu", skip=set())
    assert [c.name for c in found] == ["xla_cpu_use_onednn", "xla_cpu_use_xnnpack"]
    assert all(c.before == c.after for c in found), "their defaults did not change"
    assert [c.name for c in candidates(LISTING, {"xnn"}, "cpu", {"xla_cpu_use_xnnpack"})] == []


class FlagSides(FakeSides):
    def __init__(self, scales):
        super().__init__(scales)
        self.memo = {"xla_flags": {}}

    def side(self, label):
        found = super().side(label)
        self.memo["xla_flags"][found.interpreter] = LISTING
        return found


def step() -> Step:
    return Step(
        "0.4.31",
        "0.4.33",
        (Criterion.of(parse_metric_name(METRIC)),),
        "cpu",
        Thresholds(),
        Path("out"),
        "s",
    )


def test_a_flag_named_like_the_new_fusion_that_brings_the_old_number_back_is_said_so():
    label = "jax 0.4.33 · cpu · XLA_FLAGS=--xla_cpu_use_xnnpack=false"
    sides = FlagSides({"0.4.31": 1.0, "0.4.33": 2.0, label: 1.0})
    kind, found = FlagsNamedLikeTheProgram(), (compiled(),)
    assert kind.wanted(step(), found) and not kind.wanted(step(), ())
    answer = kind.gather(step(), sides, found)  # type: ignore[arg-type]
    assert [t.words() for t in answer.trials] == ["XLA_FLAGS=--xla_cpu_use_xnnpack=false"]
    assert isinstance(answer.trials[0], Candidate) and answer.trials[0].back
    assert (
        [f.text for f in step_lines(answer)]
        == matched_lines(answer)
        == [
            "flags named like kCustom(__xnn_fusion) (their defaults unchanged), tried on 0.4.33: "
            "`XLA_FLAGS=--xla_cpu_use_xnnpack=false`"
        ]
    )
    whole = answer.tried(parse_metric_name(METRIC))[0]
    assert whole.vs_after is not None and whole.vs_after.verdict == "faster"
    lines = trial_lines(answer, whole.vs_before and sides_step(sides), parse_metric_name(METRIC))
    assert lines and "xla_cpu_use_xnnpack=false" in lines[0].text


def sides_step(sides):
    """The step itself (0.4.31 → 0.4.33) as the fake measured it: a comparison that moved ×2."""
    from harness.analysis.metrics import compare_results

    measured = sides.together([sides.side("0.4.31"), sides.side("0.4.33")], [METRIC])
    return compare_results(measured["0.4.31"], measured["0.4.33"], parse_metric_name(METRIC))


def test_a_workaround_a_changed_default_found_ends_the_search_for_one():
    from harness.explain.defaults import Change
    from harness.explain.tried import DefaultsAnswer, Trial
    from tests.explain.test_tried import results

    thunk = Change("xla_cpu_use_thunk_runtime", XLA, "false", "true")
    back = Trial(thunk, "0.4.33", "false")

    def defaults(trial_scale):
        measured = {back: results({"before": 1.0, "after": 3.0, "trial": trial_scale})}
        return DefaultsAnswer("0.4.31", "0.4.33", [thunk], [back], measured, metrics=(KEY,))

    kind = FlagsNamedLikeTheProgram()
    assert defaults(1.0).brings_back(KEY) and not defaults(3.0).brings_back(KEY)
    assert not kind.wanted(step(), (defaults(1.0), compiled())), "the old number is back: settled"
    assert kind.wanted(step(), (defaults(3.0), compiled())), "no workaround yet: flags are tried"


def test_string_flags_named_like_what_xla_compiled_anew_are_set_empty():
    listing = {
        "xla_cpu_experimental_ynn_fusion_type": Option(
            "xla_cpu_experimental_ynn_fusion_type", '""', XLA, "string"
        ),
        "xla_cpu_use_ynn_thing": Option("xla_cpu_use_ynn_thing", "true", XLA, "bool"),
        "xla_dump_to": Option("xla_dump_to", '""', XLA, "string"),
    }
    [change] = candidates(listing, {"ynn"}, "cpu", set(), emptied=True)
    trial = Trial(change, "0.10.2", "")
    assert trial.words() == "XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type="
    assert trial.environment({})["XLA_FLAGS"] == "--xla_cpu_experimental_ynn_fusion_type="
    assert candidates(listing, {"ynn"}, "cpu", {change.name}, emptied=True) == []


def test_the_flags_named_like_what_was_compiled_are_tried_after_it_only_where_no_default_ran():
    flags = CrashFlags()
    nothing = CompiledAnswer("0.10.1", "0.10.2", [])
    assert not flags.wanted(ending_step(), (CrashAnswer("0.10.1", "0.10.2"), nothing)), (
        "nothing compiled on one release only: no name to match"
    )
    named = compiled()
    assert flags.wanted(ending_step(), (CrashAnswer("0.10.1", "0.10.2"), named))
    ran = StatusTried(Trial(THUNK, "0.10.2", "false"), CHANGED, "ok in 3 of 3 processes", True)
    found = CrashAnswer("0.10.1", "0.10.2", tried=(ran,))
    assert not flags.wanted(ending_step(), (found, named)), "a workaround ends the search"
    said = crash_lines(CrashAnswer("0.10.1", "0.10.2", "0.10.2", named_only=True))
    assert not any("not asked" in str(line) for line in said), "said once, by the crash kind"
