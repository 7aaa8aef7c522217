"""The seam's own parts: a side of one release with pins held under a label of its own, the kinds asked in
order with what the kinds before them found, and the budget."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.catalogue.scripts import read_script
from harness.install.environments import Environments
from harness.measure.sides import Side
from harness.steps.evidence import Skipped, Step, StepSides, WhyBudget, gather


@dataclass(frozen=True)
class FakeProber:
    """Stands in for ``ReleaseProber``: its releases' environments, and a side for any label it has."""

    environments: Environments
    envs: dict[str, str] = field(
        default_factory=lambda: {"0.4.31": "env-0.4.31", "0.4.33": "env-0.4.33"}
    )
    progress: Callable[[str], None] = lambda line: None

    def prepared(self, label: str) -> Side:
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


class Sides:
    def progress(self, line):
        pass


def step() -> Step:
    return Step("a", "b", ("m",), "cpu", Thresholds(), Path("out"), "s")


def test_kinds_are_asked_in_order_with_what_came_before_until_one_settles():
    first, second, third = Kind("one"), Kind("two", settles=True), Kind("three")
    found = gather([first, second, third], step(), Sides())  # type: ignore[arg-type, list-item]
    assert [each.kind for each in found] == ["one", "two"]
    assert second.seen == ["one"] and third.seen is None


def test_a_spent_budget_says_which_kinds_were_not_asked():
    spent = WhyBudget(10.0, started=-1e9)
    found = gather([Kind("one")], step(), Sides(), spent)  # type: ignore[arg-type, list-item]
    assert isinstance(found[0], Skipped) and "budget (10 s) ran out" in found[0].reason
