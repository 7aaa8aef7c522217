"""Library or JAX with fake measurements: the step split at a middle side (the newer jax with the
older libraries, or the other way where that cannot be had), and its one line."""

import dataclasses
from pathlib import Path

from harness.analysis.significance import CostDetail, Thresholds, Verdict
from harness.analysis.spending import ALL, CHANGES
from harness.explain.held_library import APART, JAX, LIBRARIES, HeldLibrary
from harness.measure.sides import Side
from harness.metric_names import Criterion, parse_metric_name
from harness.render.why import held_line
from harness.steps.evidence import Step
from harness.store.results import StoredResult
from tests.conftest import derive, real_result

METRIC = "eager.wall_ns"
KEY = parse_metric_name(METRIC)


class FakeSides:
    """Stands in for ``StepSides``: each side's result the real one scaled by its label's factor; a
    held side that cannot be had where ``refused`` names its release."""

    def __init__(self, scales: dict[str, float], refused=(), processes: int = 40) -> None:
        self.scales, self.refused, self.processes = scales, refused, processes
        self.measured: list[list[str]] = []
        self.decided: list[str] = []
        self.lines: list[str] = []
        self.screens: list[list[str]] = []
        self.shared_out: list[bool] = []

    def progress(self, line: str) -> None:
        self.lines.append(line)

    def afford(self, step, processes, what) -> None:
        """No budget here: every kind's first round fits."""

    def side(self, label: str) -> Side:
        return Side(label, "cpu", label=label)

    def held_side(self, release: str, pins) -> Side | str:
        if release in self.refused:
            return f"not installable with jax {release}: {', '.join(pins)}"
        return self.side(f"{release}+held")

    def screened(self, sides, processes):
        self.screens.append([side.label for side in sides])
        return self.together(sides, (), decide="off")

    def together(self, sides, metrics, decide=CHANGES, settled=None):
        self.measured.append([side.label for side in sides])
        self.decided.append(decide)
        self.compared_with = {side.label: side.compare_with for side in sides if side.compare_with}
        found = {side.label: self.result(side.label, side.release) for side in sides}
        # The first look's processes, as the runner hands them to ``settled``.
        processes = {label: list(stored.result.processes) for label, stored in found.items()}
        self.shared_out.append(settled is not None and bool(settled(processes)))
        return found

    def stored(self, label: str) -> StoredResult | None:
        """The triage's confirmed result of a release: as measured, unless ``unconfirmed``."""
        return None if self.unconfirmed else self.result(label, label)

    unconfirmed = False

    def result(self, label: str, release: str) -> StoredResult:
        data = derive(
            real_result("async_dispatch-0.12.0.1"),
            release=release,
            scale=self.scales[label],
            processes=self.processes,
            invocation="one-run",
        )
        return StoredResult.from_document(Path(f"{data['id']}.json"), data)


def step() -> Step:
    return Step(
        "0.4.31",
        "0.4.33",
        (Criterion.of(parse_metric_name(METRIC)),),
        "cpu",
        Thresholds(),
        Path("out"),
        "triage",
        script="user.py",
        libraries={"numpy": ("2.0.1", "2.1.1")},
    )


def gathered(scales, refused=(), processes=40, *, confirmed=True):
    sides = FakeSides(scales, refused, processes)
    sides.unconfirmed = not confirmed
    return HeldLibrary().gather(step(), sides), sides  # type: ignore[arg-type]


def test_a_step_the_older_library_keeps_on_the_newer_jax_comes_with_jax_at_its_first_look():
    answer, sides = gathered({"0.4.31": 1.0, "0.4.33+held": 2.0, "0.4.33": 2.0})
    assert sides.measured == [["0.4.31", "0.4.33+held", "0.4.33"]], "three sides in one run"
    assert sides.decided == [ALL] and sides.shared_out == [True], (
        "the libraries' part holds less than half of the ×2 step: the look settles it"
    )
    parts = answer.parts[KEY]
    assert parts.comes_with() == JAX and parts.by_share == JAX and not answer.settles
    line = held_line(answer)
    assert line.startswith("comes with jax 0.4.33 (numpy 2.0.1 held) on eager.wall_ns")
    assert line.endswith(": under half of the step's ×2)") and "jax's part ×2;" in line


def test_once_a_metric_comes_with_jax_no_metric_is_looked_at_again():
    from harness.explain.held_library import _shares_settled, by_share

    answer, sides = gathered({"0.4.31": 1.0, "0.4.33+held": 2.0, "0.4.33": 2.0})
    parts = answer.parts[KEY]
    assert by_share(parts.whole, parts.jax, parts.libraries) == JAX
    other = parse_metric_name("other.wall_ns")  # a second metric with no step to share at all
    confirmed = {parse_metric_name(METRIC): parts.whole, other: parts.whole}
    labels = ("0.4.31", "0.4.33+held", "0.4.33")
    settled = _shares_settled(step(), labels, "0.4.33", confirmed)
    assert settled is not None
    processes = {label: list(sides.result(label, label).result.processes) for label in labels}
    assert settled(processes) == {KEY, other}, (
        "jax's kinds come next anyway: the metric left open is said as the first look left it"
    )


def test_a_step_whose_parts_cannot_be_shared_out_is_measured_until_decided():
    answer, sides = gathered({"0.4.31": 1.0, "0.4.33+held": 1.4, "0.4.33": 2.0})
    assert sides.decided == [ALL] and sides.shared_out == [False], (
        "×1.4 and ×1.43 of a ×2 step: neither part under half of it, so each is decided either way"
    )
    assert not answer.parts[KEY].by_share


def test_without_the_triages_confirmed_step_nothing_is_shared_out():
    _, sides = gathered({"0.4.31": 1.0, "0.4.33+held": 2.0, "0.4.33": 2.0}, confirmed=False)
    assert sides.decided == [ALL] and sides.shared_out == [False]


def test_a_part_under_half_of_the_step_is_the_whole_of_its_interval_not_its_ratio():
    from harness.explain.held_library import by_share

    answer, _ = gathered({"0.4.31": 1.0, "0.4.33+held": 2.0, "0.4.33": 2.0})
    parts = answer.parts[KEY]
    assert parts.jax is not None and parts.libraries is not None and parts.whole is not None
    assert by_share(parts.whole, parts.jax, parts.libraries) == JAX
    wide = dataclasses.replace(
        parts.libraries, cost=CostDetail(parts.libraries.cost.ratio, margin=1.5)
    )  # within ±50%: not under ×1.41
    assert by_share(parts.whole, parts.jax, wide) == ""
    assert by_share(parts.whole, parts.libraries, parts.jax) == LIBRARIES
    unmoved = dataclasses.replace(parts.whole, verdict=Verdict.UNDECIDED)
    assert by_share(unmoved, parts.jax, parts.libraries) == ""


def test_a_step_that_goes_away_with_the_older_library_comes_with_the_library_and_settles_the_why():
    answer, _ = gathered({"0.4.31": 1.0, "0.4.33+held": 1.0, "0.4.33": 2.0}, confirmed=False)
    assert answer.parts[KEY].comes_with() == LIBRARIES and answer.settles
    line = held_line(answer)
    assert line.startswith("comes with the libraries: numpy 2.0.1 → 2.1.1 (jax 0.4.33 held)")
    assert "jax's part unchanged" in line and "the libraries' ×2" in line


def test_a_library_step_whose_jax_part_did_not_move_is_answered_though_not_shown_unchanged():
    answer, _ = gathered(
        {"0.4.31": 1.0, "0.4.33+held": 1.0, "0.4.33": 2.0}, processes=10, confirmed=False
    )
    assert answer.parts[KEY].comes_with() == LIBRARIES
    assert answer.answered() == (KEY,) and answer.settles, (
        "jax's part only within ±7.5%, not moved: jax's defaults are not asked for a library's "
        "change"
    )


def test_a_library_step_whose_jax_part_moved_too_leaves_the_why_to_go_on():
    answer, _ = gathered({"0.4.31": 1.0, "0.4.33+held": 0.7, "0.4.33": 2.0}, confirmed=False)
    assert answer.parts[KEY].comes_with() == LIBRARIES, "the libraries' part moved as the step"
    assert answer.parts[KEY].jax is not None and answer.parts[KEY].jax.verdict == "faster"
    assert answer.answered() == () and not answer.settles, "jax's own part moved: asked on"


def test_the_whole_step_is_compared_so_the_older_side_is_measured_as_long_as_it_needs():
    _, sides = gathered({"0.4.31": 1.0, "0.4.33+held": 1.0, "0.4.33": 2.0}, confirmed=False)
    assert sides.compared_with == {"0.4.33": "0.4.31"}, (
        "the newer side names the older as its partner: the older does not stop when its own part "
        "closes"
    )


def test_a_whole_step_not_shown_moved_in_this_run_is_told_by_its_parts():
    from harness.explain.held_library import Parts

    answer, _ = gathered({"0.4.31": 1.0, "0.4.33+held": 1.0, "0.4.33": 2.0}, confirmed=False)
    parts = answer.parts[KEY]
    undecided = dataclasses.replace(parts.whole, verdict=Verdict.UNDECIDED)
    assert Parts(undecided, parts.jax, parts.libraries).comes_with() == LIBRARIES, (
        "3 processes against 7 cannot pass the rank guard; jax's part unchanged and the libraries' "
        "moved still say which"
    )
    assert Parts(undecided, parts.libraries, parts.jax).comes_with() == JAX
    assert Parts(undecided, parts.jax, parts.jax).comes_with() == APART


def test_where_the_older_library_cannot_be_had_on_the_newer_jax_the_newer_is_held_on_the_older():
    answer, sides = gathered({"0.4.31": 1.0, "0.4.31+held": 2.0, "0.4.33": 2.0}, ("0.4.33",))
    assert answer.jax_of_middle == "0.4.31" and answer.held() == {"numpy": "2.1.1"}
    assert answer.parts[KEY].comes_with() == LIBRARIES, "the older jax moved with the library alone"
    assert any("0.4.33 with numpy==2.0.1" in line for line in sides.lines)


def test_where_neither_middle_can_be_had_it_is_said_and_nothing_is_measured():
    answer, sides = gathered({}, ("0.4.31", "0.4.33"))
    assert sides.measured == [] and not answer.settles
    assert held_line(answer) == (
        "library or JAX not told apart (numpy 2.0.1 → 2.1.1): not installable with jax 0.4.33: "
        "numpy==2.0.1; not installable with jax 0.4.31: numpy==2.1.1"
    )


def test_a_step_that_moved_in_neither_part_alone_is_not_told_apart():
    answer, _ = gathered({"0.4.31": 1.0, "0.4.33+held": 1.4, "0.4.33": 2.0})
    assert answer.parts[KEY].comes_with() in (APART, "both")
    assert not answer.settles


def test_only_a_plain_scripts_release_step_whose_libraries_moved_is_asked():
    kind, asked = HeldLibrary(), step()
    assert kind.wanted(asked)
    import dataclasses

    assert not kind.wanted(dataclasses.replace(asked, libraries={}))
    assert not kind.wanted(dataclasses.replace(asked, script=""))
    assert not kind.wanted(dataclasses.replace(asked, after="0.4.31+numpy.2.1.1"))


def test_a_library_step_asks_no_jax_side_kind():
    """jax's part within ±7.5% (undecided, not moved): the change is answered for the library; the
    real registry's jax-side kinds (reproducer, defaults, dumps, flags, profiles) are never asked
    (this fake offers none of what they gather with)."""
    from harness.explain.kinds import KINDS
    from harness.steps.evidence import gather

    sides = FakeSides({"0.4.31": 1.0, "0.4.33+held": 1.0, "0.4.33": 2.0}, processes=10)
    found = gather(KINDS, step(), sides)  # type: ignore[arg-type]
    assert [each.kind for each in found] == ["library", "spent"]
    assert held_line(found[0]).startswith("comes with the libraries: numpy 2.0.1 → 2.1.1")  # type: ignore[arg-type]


class NoOldNumpy(FakeSides):
    """jax 0.4.33 needs the newer numpy, and 0.4.31 the older: no middle holds numpy at all."""

    def held_side(self, release, pins):
        if any(pin.startswith("numpy==") for pin in pins):
            return f"not installable with jax {release}: {', '.join(pins)}"
        return self.side(f"{release}+held")


def test_where_every_moved_package_cannot_be_held_the_declared_libraries_alone_are():
    moved = Step(
        "0.4.31",
        "0.4.33",
        (Criterion.of(parse_metric_name(METRIC)),),
        "cpu",
        Thresholds(),
        Path("out"),
        "triage",
        script="user.py",
        libraries={"equinox": ("0.11.4", "0.11.6"), "numpy": ("2.0.1", "2.1.1")},
        declared=("equinox",),
    )
    sides = NoOldNumpy({"0.4.31": 1.0, "0.4.33+held": 2.0, "0.4.33": 2.0})
    answer = HeldLibrary().gather(moved, sides)  # type: ignore[arg-type]
    assert answer.middle == "0.4.33+held" and answer.held() == {"equinox": "0.11.4"}
    assert dict(answer.moved) == {"equinox": ("0.11.4", "0.11.6")}, "what the middle side held"
    tried = [line for line in sides.lines if "library or jax" in line]
    assert "numpy==2.0.1" in tried[0] and "numpy" not in tried[-1], "every package first"


def test_library_or_jax_for_a_crash_is_told_by_how_the_middle_side_s_processes_end():
    """Judged on the middle side's counts of processes that died against each release's, as the
    step was: like the crashing release, like the running one, or told from both or neither."""
    from harness.analysis.statuses import summarise
    from harness.explain.held_library import HeldAnswer, status_part
    from tests.conftest import SEGFAULT, as_stored, died
    from tests.explain.test_tried import ok, segfaults

    dies, runs = summarise(segfaults()), summarise(ok())
    ends, rule = (dies, runs), Thresholds()
    assert status_part(dies, ends, rule, with_crashing_jax=True) == JAX
    assert status_part(runs, ends, rule, with_crashing_jax=True) == LIBRARIES
    assert status_part(runs, ends, rule, with_crashing_jax=False) == JAX, (
        "the older jax, the newer libraries"
    )
    assert status_part(dies, ends, rule, with_crashing_jax=False) == LIBRARIES
    mixed = summarise(
        as_stored(
            died(derive(real_result("async_dispatch-0.12.0.1")), {**SEGFAULT, "processes": 1})
        )
    )
    assert status_part(mixed, ends, rule, with_crashing_jax=True) == APART
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
