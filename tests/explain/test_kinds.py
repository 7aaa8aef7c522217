"""The kinds in the order each shape of step asks them: data beside each shape, never a branch in a
kind."""

import dataclasses
from pathlib import Path

from harness.analysis.shapes import SHAPES
from harness.analysis.significance import Shape, Thresholds
from harness.explain.kinds import KINDS, NAMED, kinds_for
from harness.explain.profiles import OpProfile
from harness.metric_names import Criterion, parse_metric_name
from harness.steps.evidence import Step
from tests.explain.test_tried import ending_step

DRAW, TEMP, RUN = (parse_metric_name(n) for n in ("json.draw", "json.temp_mb", "process.run_ns"))


def step(shapes: dict) -> Step:
    criteria = tuple(Criterion.of(metric) for metric in shapes)
    return Step(
        "0.4.38", "0.5.0", criteria, "cpu", Thresholds(), Path("out"), "s", script="s.py",
        shapes=shapes,
    )  # fmt: skip


def names(step: Step) -> list[str]:
    return [kind.name for kind in kinds_for(step)]


def test_a_value_asks_the_changed_defaults_first_then_the_compiled_programs():
    value = step({DRAW: Shape.VALUE})
    assert value.shape is Shape.VALUE and names(value)[:2] == ["defaults", "compiled"]
    assert Shape.VALUE.settles == "defaults"
    assert "profile" not in names(value) and "host" not in names(value), "a value is no time"
    assert names(step({DRAW: Shape.PRESENCE}))[:2] == ["defaults", "compiled"]


def test_a_cost_asks_as_before_and_a_mix_of_shapes_as_a_cost():
    cost = step({RUN: Shape.COST})
    assert names(cost) == [
        "library", "reproducer", "defaults", "compiled", "flags", "profile", "host",
    ]  # fmt: skip
    assert step({RUN: Shape.COST, DRAW: Shape.VALUE}).shape is Shape.COST
    assert step({}).shape is Shape.COST, "a metric whose shape is not known is a cost"


def test_a_step_with_an_exact_metric_asks_what_settles_it_cheapest_first():
    """A cost constant in every process (a compiled buffer's bytes) is exact as a value is: two
    processes a side settle an old default's trial, so the changed defaults come first; it stays a
    cost (its ratio kept), and a mix with a value asks the value's order, then the cost's rest."""
    constant = dataclasses.replace(step({TEMP: Shape.COST}), constant=frozenset({TEMP}))
    assert constant.shape is Shape.COST and constant.exact == (TEMP,) and not constant.varying
    assert names(constant)[:3] == ["defaults", "compiled", "flags"]
    mixed = step({RUN: Shape.COST, DRAW: Shape.VALUE})
    assert mixed.exact == (DRAW,) and mixed.varying == (RUN,)
    assert names(mixed) == [
        "defaults", "compiled", "flags", "library", "reproducer", "profile", "host",
    ]  # fmt: skip
    assert names(step({TEMP: Shape.COST}))[0] == "library", "a varying cost: as before"


def test_the_op_profile_is_asked_only_for_a_time():
    profile = OpProfile()
    assert profile.wanted(step({RUN: Shape.COST}))
    assert not profile.wanted(step({DRAW: Shape.VALUE})), "a value"
    assert not profile.wanted(step({TEMP: Shape.COST})), "a memory figure"
    assert profile.wanted(step({DRAW: Shape.COST})), (
        "a script's number of no unit: most often a time"
    )
    ending = dataclasses.replace(step({}), criteria=(Criterion.named("status"),))
    assert ending.shape is Shape.ENDING and not profile.wanted(ending)
    assert "profile" not in names(ending)


def test_every_kind_is_in_some_shape_s_order_and_each_shape_has_one():
    assert {name for s in SHAPES for name in s.why} == set(NAMED), "each kind asked by a shape"
    assert all(s.settles in s.why for s in SHAPES), "asked, in its order"
    assert len({kind.name for kind in KINDS}) == len(KINDS)


def test_library_or_jax_settles_a_varying_cost_of_a_script_whose_declared_library_moved():
    from harness.explain.kinds import settling_kind

    moved = {"equinox": ("0.13.0", "0.13.1")}
    library = dataclasses.replace(step({RUN: Shape.COST}), libraries=moved, declared=("equinox",))
    assert settling_kind(library) == "library" and names(library)[0] == "library"
    assert settling_kind(step({RUN: Shape.COST})) == "defaults", "no library declared"
    undeclared = dataclasses.replace(library, declared=())
    assert settling_kind(undeclared) == "defaults", "jax's own dependencies moved, none declared"
    value = dataclasses.replace(step({DRAW: Shape.VALUE}), libraries=moved, declared=("equinox",))
    assert settling_kind(value) == "defaults", "an exact metric: an old default settles it cheapest"


def test_a_status_step_of_a_script_asks_the_kinds_that_judge_by_status_and_not_those_of_a_number():
    """Library or JAX, the compiled programs (whose names the crash kind's flags are matched to),
    the reproducer and the crash kind are asked for a status step; the defaults and profiles of a
    number not."""
    scripted = dataclasses.replace(
        ending_step(), script="repro.py", libraries={"numpy": ("2.4.6", "2.5.0")}
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
            ending_step(), script="repro.py", libraries=libraries, declared=declared
        )
        order = [kind.name for kind in kinds_for(scripted)]
        assert order[:3] == ["crash", "compiled", "crash flags"], order
        assert order.index("crash flags") < order.index("library") < order.index("reproducer")
    assert ending_step().shape.settles == "crash"
