"""The seam's own parts: a side of one release with pins held under a label of its own, the kinds
asked in order with what the kinds before them found, and the budget."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.analysis.significance import Thresholds
from harness.catalogue.scripts import read_script
from harness.install.environments import Environments
from harness.measure.locks import Aside
from harness.measure.sides import Side
from harness.metric_names import Criterion, parse_metric_name
from harness.steps.evidence import Skipped, Spent, Step, StepSides, WhyBudget, gather


class Clock:
    """A clock the test moves: nothing here is timed."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def clocked(seconds: float | None = None, **more) -> tuple[WhyBudget, Clock]:
    """A budget whose own clock (its lock waits and installs aside) is the test's."""
    clock = Clock()
    return WhyBudget(seconds, aside=Aside(clock), **more), clock


def spent_budget(seconds: float, **more) -> WhyBudget:
    """A budget of ``seconds`` already spent: its first question long ago."""
    budget, clock = clocked(seconds, **more)
    budget.left()
    clock.now += 1e9
    return budget


@dataclass(frozen=True)
class FakeProber:
    """Stands in for ``ReleaseProber``: its releases' environments, and a side for any label it
    has."""

    environments: Environments
    envs: dict[str, str] = field(
        default_factory=lambda: {"0.4.31": "env-0.4.31", "0.4.33": "env-0.4.33"}
    )
    progress: Callable[[str], None] = lambda line: None

    @property
    def readiness(self) -> "FakeProber":
        return self  # makes its sides ready itself

    def side(self, label: str) -> Side:
        assert label in self.envs, f"{label} has no environment"
        held = " ".join(self.environments.held(label))
        return Side(label, "cpu", label=label, env={"VENV": self.envs[label], "HELD": held})


def test_a_held_side_has_a_label_of_its_own_the_release_s_environment_and_the_pins(tmp_path):
    script = tmp_path / "user.py"
    script.write_text("# /// script\n# dependencies = ['numpy']\n# ///\nimport numpy\n")
    environments = Environments(read_script(script), None)
    prober = FakeProber(environments)
    side = StepSides(prober).held_side("0.4.33", ["numpy==2.0.1"])  # type: ignore[arg-type]
    assert isinstance(side, Side) and side.release == "0.4.33+numpy.2.0.1"
    assert side.env == {"VENV": "env-0.4.33", "HELD": "numpy==2.0.1"}, (
        "the newer jax, the pins held"
    )
    assert "0.4.33+numpy.2.0.1" not in prober.envs, "the step's prober stays as it was"
    pins = [f"package-{n}==1.{n}.0" for n in range(12)]
    many = StepSides(prober).held_side("0.4.33", pins)  # type: ignore[arg-type]
    assert isinstance(many, Side) and many.release.startswith("0.4.33+package-0.1.0.0.and.11.more.")
    assert len(many.release) <= 64, "a name its results are stored under"
    assert environments.held("0.4.33+numpy.2.0.1") == (), "and so do its environments"


class Kind:
    def __init__(self, name, settles=False):
        self.name, self.settles, self.seen = name, settles, None

    def wanted(self, step, found):
        return True

    def gather(self, step, sides, found):
        self.seen = [each.kind for each in found]
        return Found(self.name, self.settles)


class Found:
    def __init__(self, kind, settles):
        self.kind, self.settles = kind, settles

    def data(self):
        return {"kind": self.kind}


M, N = parse_metric_name("m.wall_ns"), parse_metric_name("n.wall_ns")


class Sides:
    def progress(self, line):
        pass


def step() -> Step:
    return Step("a", "b", (Criterion.of(M),), "cpu", Thresholds(), Path("out"), "s")


def test_kinds_are_asked_in_order_with_what_came_before_until_one_settles():
    first, second, third = Kind("one"), Kind("two", settles=True), Kind("three")
    found = gather([first, second, third], step(), Sides())  # type: ignore[arg-type, list-item]
    assert [each.kind for each in found] == ["one", "two", "spent"]
    assert second.seen == ["one"] and third.seen is None
    spent = found[-1]
    assert isinstance(spent, Spent) and list(spent.seconds) == ["one", "two"], (
        "each kind asked, timed"
    )
    assert spent.data()["before"] == "a" and spent.data()["seconds"]["one"] >= 0
    assert spent.data()["asked"] == ["one", "two"], "the kinds asked, in order"
    from harness.render.why import step_lines

    (said,) = step_lines(spent)
    assert said.text.startswith("kinds asked, in order: one 0 s, two 0 s"), "on the page too"


def test_a_spent_budget_says_which_kinds_were_not_asked():
    spent = spent_budget(10.0)
    found = gather([Kind("one")], step(), Sides(), spent)  # type: ignore[arg-type, list-item]
    assert isinstance(found[0], Skipped) and "budget (10 s) ran out" in found[0].reason


class Keeping(Kind):
    """A kind that keeps its files beside the page, in the folder the step gives it."""

    def gather(self, step, sides, found):
        (step.folder(self.name, "0.4.31") / "kept.txt").write_text("mine")
        return super().gather(step, sides, found)


def test_a_kind_whose_folder_is_a_planted_link_is_not_asked_and_the_kinds_after_it_are(tmp_path):
    out, elsewhere = tmp_path / "reports", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "s-compiled").symlink_to(elsewhere)
    linked = Step("a", "b", (Criterion.of(M),), "cpu", Thresholds(), out, "s")
    after = Kind("defaults")
    found = gather([Keeping("compiled"), after], linked, Sides())  # type: ignore[arg-type, list-item]
    assert isinstance(found[0], Skipped) and found[0].name == "compiled"
    assert found[0].reason.startswith("its files cannot be kept beside the page: refusing to write")
    assert "it is a link" in found[0].reason
    assert after.seen == ["compiled"], "the kinds after it are asked"
    assert not any(elsewhere.iterdir()), "nothing written through the link"
    kept = gather([Keeping("compiled")], linked, Sides())  # type: ignore[arg-type, list-item]
    assert isinstance(kept[0], Skipped)
    linked.out.joinpath("s-compiled").unlink()
    assert not isinstance(gather([Keeping("compiled")], linked, Sides())[0], Skipped)  # type: ignore[arg-type, list-item]
    assert (out / "s-compiled" / "0.4.31" / "kept.txt").read_text() == "mine"


class Answering(Kind):
    """A kind that answers some of the step's metrics itself (library or JAX, say)."""

    def __init__(self, name, answers):
        super().__init__(name)
        self.answers = answers

    def gather(self, step, sides, found):
        super().gather(step, sides, found)
        return AnsweringFound(self.name, self.answers)


class AnsweringFound(Found):
    def __init__(self, kind, answers):
        super().__init__(kind, False)
        self.answers = answers

    def answered(self):
        return self.answers


class Seeing(Kind):
    def gather(self, step, sides, found):
        self.metrics = step.metrics
        return super().gather(step, sides, found)


def test_a_metric_a_kind_answered_is_not_asked_of_the_kinds_after_it():
    two = Step("a", "b", (Criterion.of(M), Criterion.of(N)), "cpu", Thresholds(), Path("out"), "s")
    later = Seeing("defaults")
    found = gather([Answering("library", (M,)), later], two, Sides())  # type: ignore[arg-type, list-item]
    assert later.metrics == (N,), "only the metric still open"
    assert [each.kind for each in found] == ["library", "defaults", "spent"]
    never = Seeing("defaults")
    found = gather([Answering("library", (M, N)), never], two, Sides())  # type: ignore[arg-type, list-item]
    assert never.seen is None and [each.kind for each in found] == ["library", "spent"], (
        "every metric answered: the step is settled"
    )
    spent = found[-1]
    assert isinstance(spent, Spent) and spent.unasked == ("defaults",), "the kinds it leaves named"
    from harness.render.why import step_lines

    (said,) = step_lines(spent)
    assert said.text.endswith("; not asked, the step being answered: defaults")
    budget = WhyBudget(again_every="nox -s triage -- … --why-every-kind")
    found = gather([Answering("library", (M, N)), Seeing("defaults")], two, Sides(), budget)  # type: ignore[arg-type, list-item]
    (said,) = step_lines(found[-1])
    assert said.text.endswith("defaults (asked by `nox -s triage -- … --why-every-kind`)")
    budget.every_kind = True
    asked_too = Seeing("defaults")
    found = gather([Answering("library", (M, N)), asked_too], two, Sides(), budget)  # type: ignore[arg-type, list-item]
    assert asked_too.metrics == (M, N), "--why-every-kind: every kind, of every metric"
    assert [each.kind for each in found] == ["library", "defaults", "spent"]


def test_a_kind_the_budget_left_out_is_named_with_the_command_that_asks_it():
    again = "nox -s triage -- --script s.py --from 0.4.31 --to 0.4.33 --why-budget 240"
    spent = spent_budget(60.0, again=again)
    found = gather([Kind("one")], step(), Sides(), spent)  # type: ignore[arg-type, list-item]
    assert isinstance(found[0], Skipped) and found[0].command == again
    from harness.render.why import skipped_lines

    said = skipped_lines(found[0])
    assert [line.text for line in said] == [
        f"one not asked: the why's time budget (60 s) ran out; asked by `{again}`"
    ]
    assert said[0].leads, "in the answer, however it is folded to fit a screen"


class Costly(Kind):
    """A kind whose first round needs ten of the step's processes, three seconds each."""

    def gather(self, step, sides, found):
        sides.afford(step, 10, "its first round")
        return super().gather(step, sides, found)


def test_a_kind_whose_first_round_the_budget_left_would_not_cover_is_not_started():
    from types import SimpleNamespace

    again = "nox -s triage -- --script s.py --from a --to b --why-budget 240"
    budget = WhyBudget(20.0, again=again)
    memo = {"process seconds a b": 3.0}  # the step's own processes took 3 s each
    prober = SimpleNamespace(progress=lambda line: None)
    sides = StepSides(prober, memo=dict(memo))  # type: ignore[arg-type]
    costly, cheap = Costly("costly"), Kind("cheap")
    found = gather([costly, cheap], step(), sides, budget)  # type: ignore[list-item]
    assert isinstance(found[0], Skipped) and costly.seen is None, "30 s of processes, 20 s left"
    assert "would not cover its first round: 10 processes, about 30 s" in found[0].reason
    assert found[0].command == again and cheap.seen == ["costly"], "the kinds after it are asked"
    found = gather([Costly("costly")], step(), StepSides(prober, memo=dict(memo)))  # type: ignore[arg-type, list-item]
    assert not isinstance(found[0], Skipped), "no budget: no bound"


def test_unless_the_user_set_one_the_budget_is_a_share_of_what_the_command_s_own_measuring_took():
    unset, given = WhyBudget(), WhyBudget(90.0)
    unset.at_most(200.0)
    given.at_most(200.0)
    assert unset.seconds == 80.0 and given.seconds == 90.0, "a why adds at most half again"


def test_a_watch_s_cap_bounds_the_why_however_its_budget_was_set():
    """Measured on optimistix: the cap spent, the why still took its minutes after it."""
    unset, given, spent = (
        WhyBudget(ceiling=30.0),
        WhyBudget(90.0, ceiling=30.0),
        WhyBudget(ceiling=0.0),
    )
    for budget in (unset, given, spent):
        budget.at_most(200.0)
    assert (unset.seconds, given.seconds, spent.seconds) == (30.0, 30.0, 0.0)


class Stopped(Kind):
    def gather(self, step, sides, found):
        raise KeyboardInterrupt


def test_a_why_stopped_inside_a_kind_hands_on_what_it_found_before_the_stop_goes_on():
    handed = []
    with pytest.raises(KeyboardInterrupt):
        gather(
            [Kind("one"), Stopped("two"), Kind("three")],  # type: ignore[list-item]
            step(),
            Sides(),  # type: ignore[arg-type]
            kept=handed.append,
        )
    first, last = handed
    assert [each.kind for each in first] == ["one", "spent"], "handed on as each kind settles"
    assert [each.kind for each in last] == ["one", "two", "spent"]
    assert isinstance(last[1], Skipped) and "stopped" in last[1].reason


@dataclass(frozen=True)
class _BoundedMeasurement:
    """A measurement that records the time budget each of its measurements until decided had."""

    time_budget: float | None
    seen: list = field(default_factory=list)

    def settings_for(self, processes, decide, sides, metrics=()):
        self.seen.append(self.time_budget)
        return None

    def sides(self, sides, settings, settled=None):
        return []


def test_a_kind_measuring_until_decided_stops_where_the_why_s_budget_runs_out():
    """The why's budget bounds a kind's own measuring (library or JAX can take longer than the
    triage it explains): what is left of it, never more than the prober's own bound."""
    from types import SimpleNamespace

    measurement = _BoundedMeasurement(time_budget=500.0)
    prober = SimpleNamespace(measurement=measurement, processes=5)
    StepSides(prober).together([], ["eager.wall_ns"])  # type: ignore[arg-type]
    spent = WhyBudget(seconds=60.0)
    StepSides(prober, budget=spent).together([], ["eager.wall_ns"])  # type: ignore[arg-type]
    gone = WhyBudget(seconds=0.0)
    StepSides(prober, budget=gone).together([], ["eager.wall_ns"])  # type: ignore[arg-type]
    unbound, bounded, none_left = measurement.seen
    assert unbound == 500.0, "no why budget: the prober's own"
    assert 0 < bounded <= 60.0 and none_left == 0.0


class Slow(Kind):
    """A kind that takes longer than the whole default budget (library or JAX: 46 s of 9)."""

    def __init__(self, name, clock):
        super().__init__(name)
        self.clock = clock

    def gather(self, step, sides, found):
        self.clock.now += 46.0
        return super().gather(step, sides, found)


def test_a_default_budget_is_named_as_such_and_the_command_offered_covers_what_was_left_out():
    budget, clock = clocked(again_with=lambda seconds: f"--why-budget {seconds:.0f}")
    budget.at_most(22.5)
    kinds = [Slow("library", clock), Kind("compiled"), Kind("crash")]
    found = gather(kinds, step(), Sides(), budget)  # type: ignore[arg-type, list-item]
    skipped = [each for each in found if isinstance(each, Skipped)]
    assert [each.kind for each in skipped] == ["compiled", "crash"]
    assert skipped[0].reason == (
        "the why's time budget (9 s, by default 40 % of the command's own measuring) ran out"
    )
    assert skipped[0].command == "--why-budget 138", "46 s asked, two kinds left at that pace"


class Measuring(Kind):
    """A kind that measures for ``own`` seconds of its own, after waiting ``wait`` seconds for
    another run's lock (or an install) first: the clock moves, nothing is timed."""

    def __init__(self, name, clock, aside, own=10.0, wait=0.0):
        super().__init__(name)
        self.clock, self.aside, self.own, self.wait = clock, aside, own, wait

    def gather(self, step, sides, found):
        with self.aside.span():  # another party holds the machine's lock meanwhile
            self.clock.now += self.wait
        self.clock.now += self.own
        return super().gather(step, sides, found)


def _why(shape: str, wait: float) -> list:
    """A value's or a cost's why under a budget of 30 s, its first kind waiting ``wait`` s for the
    lock: the kinds it found, in order (a skipped kind by what it says)."""
    from harness.analysis.significance import Shape

    budget, clock = clocked(30.0)
    order = {
        "value": ["defaults", "compiled", "flags", "library"],
        "cost": ["library", "reproducer", "defaults", "compiled"],
    }[shape]
    kinds = [Measuring(name, clock, budget.aside, wait=wait if i == 0 else 0.0) for i, name in
             enumerate(order)]  # fmt: skip
    settles = (Shape.VALUE if shape == "value" else Shape.COST).settles
    found = gather(kinds, step(), Sides(), budget, settles=settles)  # type: ignore[arg-type, list-item]
    return [
        each.kind if not isinstance(each, Skipped) else f"{each.kind} skipped" for each in found
    ]


def test_the_findings_are_the_same_with_the_machine_s_lock_held_for_a_while_by_another_run():
    """The budget counts the why's own measuring: a wait for another run's lock (or an install)
    does not eat it, on a value step and on a cost step alike."""
    for shape in ("value", "cost"):
        quiet, waited = _why(shape, wait=0.0), _why(shape, wait=500.0)
        assert quiet == waited, shape
        assert sum("skipped" in each for each in quiet) == 1, "30 s: three kinds of 10 s each"


def test_the_kind_that_settles_the_step_s_shape_is_asked_however_little_of_the_budget_is_left():
    budget = spent_budget(10.0)
    found = gather([Kind("library"), Kind("defaults"), Kind("compiled")], step(), Sides(), budget,
                   settles="defaults")  # type: ignore[arg-type, list-item]  # fmt: skip
    said = [each.kind if not isinstance(each, Skipped) else "skipped" for each in found]
    assert said == ["skipped", "defaults", "skipped", "spent"]


def test_the_kind_that_settles_the_step_measures_its_screen_where_the_whole_budget_covers_it():
    from types import SimpleNamespace

    memo = {"process seconds a b": 3.0}  # 10 processes of 3 s: 30 s, in a budget of 40 s
    prober = SimpleNamespace(progress=lambda line: None)
    sides = StepSides(prober, memo=dict(memo))  # type: ignore[arg-type]
    costly = Costly("defaults")
    found = gather([costly], step(), sides, spent_budget(40.0), settles="defaults")  # type: ignore[list-item]
    assert costly.seen == [] and not isinstance(found[0], Skipped)
    small = Costly("defaults")
    found = gather([small], step(), sides, spent_budget(20.0), settles="defaults")  # type: ignore[list-item]
    assert isinstance(found[0], Skipped) and "with 20 s in all" in found[0].reason


def test_a_step_is_shaped_by_its_two_sides_stored_results():
    from types import SimpleNamespace

    from harness.analysis.significance import Shape
    from tests.conftest import as_stored, derive, real_result

    def stored(release, scale):
        return as_stored(
            derive(real_result("async_dispatch-0.12.0.1"), release=release, scale=scale)
        )

    ends = {"a": stored("0.4.31", 1.0), "b": stored("0.4.33", 3.0)}

    class Stored(StepSides):
        def stored(self, release):
            return ends[release]

    sides = Stored(SimpleNamespace())  # type: ignore[arg-type]
    wall, nowhere = parse_metric_name("eager.wall_ns"), parse_metric_name("json.never_printed")
    asked = Step("a", "b", (Criterion.of(wall), Criterion.of(nowhere)), "cpu", Thresholds(),
                 Path("out"), "s")  # fmt: skip
    shaped = sides.shaped(asked)
    assert shaped.shapes == {wall: Shape.COST}, "a metric neither side printed: no shape said"
    assert shaped.shape is Shape.COST and shaped.criteria == asked.criteria


def test_the_kinds_before_the_settling_one_leave_it_half_the_budget():
    """A cost asks library or JAX and the reproducer before its changed defaults: they may spend
    half the budget, never what the settling kind needs, so the why stays within about half again
    the command's own time however long they would take."""
    budget, clock = clocked(100.0)
    seen = []

    class Settling(Kind):
        def gather(self, step, sides, found):
            seen.append(budget.left())
            return super().gather(step, sides, found)

    kinds = [Slow("library", clock), Slow("reproducer", clock), Kind("flags"), Settling("defaults")]
    found = gather(kinds, step(), Sides(), budget, settles="defaults")  # type: ignore[arg-type, list-item]
    assert [each.kind for each in found] == ["library", "reproducer", "flags", "defaults", "spent"]
    skipped = found[2]
    assert isinstance(skipped, Skipped) and skipped.reason == (
        "the why's time budget (100 s, 50 s of it kept for the kind that settles the step) ran out"
    ), "92 s spent: past the 50 the kinds before the settling one may spend"
    assert seen == [8.0], "the settling kind has the rest, none of it kept"
