"""One measurement of given sides: the settings that settle it, several sides interleaved (a
bisect's endpoints compared with each other, a triage's steps only within their pairs), and a
measurement that cannot run."""

from pathlib import Path

from harness.catalogue import discovery
from harness.errors import HarnessError
from harness.measure.runner import Measured
from harness.measure.sides import Side
from harness.metric_names import Criterion, MetricKey
from harness.steps.probes import SideMeasurement, interleaved
from harness.store.schema import Settings
from tests.conftest import REPO

ASYNC_DISPATCH = discovery.discover(REPO / "cases")["async_dispatch"]
SETTINGS = Settings(repeats=7, max_seconds=1.0, processes=5)


class Recorded:
    """Measures nothing: each call's sides and settings are kept, and each side stores nothing."""

    def __init__(self):
        self.calls: list[tuple[list[Side], Settings]] = []

    def __call__(self, plan, sides, settings, results_dir, **kwargs):
        self.calls.append((list(sides), settings))
        return [Measured(side, None, None) for side in sides]


def measurement(measure, max_processes=None, lines=None) -> SideMeasurement:
    said = lines if lines is not None else []
    return SideMeasurement(
        ASYNC_DISPATCH,
        {"N": 1000},
        Path("results"),
        SETTINGS,
        said.append,
        max_processes=max_processes,
        decide_on=(Criterion.named("eager.wall_ns"),),
        measure=measure,
    )


def sides(*releases: str) -> list[Side]:
    return [Side(release, "cpu") for release in releases]


def test_only_sides_compared_with_a_most_to_go_to_are_measured_until_decided():
    assert measurement(Recorded()).settings_for(5, "changes", 2).decide is None, "no most"
    deciding = measurement(Recorded(), max_processes=20)
    assert deciding.settings_for(5, "changes", 1).decide is None, "one side: nothing to compare"
    settings = deciding.settings_for(5, "changes", 2)
    assert (settings.decide, settings.max_processes, settings.decide_metrics) == (
        "changes",
        20,
        ("eager.wall_ns",),
    )
    lower = [MetricKey("x", "lower")]
    assert deciding.settings_for(5, "changes", 2, lower).decide_metrics == ("x.lower_ns",)


def test_a_bisect_s_endpoints_are_compared_with_each_other_and_a_triage_s_only_within_its_steps():
    measure = Recorded()
    interleaved(measurement(measure), sides("a", "b", "c"), 5, endpoints=True)
    measured, _ = measure.calls[-1]
    assert [side.compare_with for side in measured] == ["", "", "jax a · cpu"]
    pairs = {("a", "b"): (Criterion.named("eager.wall_ns"),)}
    interleaved(measurement(measure), sides("a", "b", "c"), 5, pairs=pairs)
    measured, _ = measure.calls[-1]
    compared = [(side.compare_next, side.compare_metrics) for side in measured]
    assert compared == [(True, ("eager.wall_ns",)), (False, ()), (True, ())], "b → c is no step"


def test_one_side_is_not_interleaved_and_a_measurement_that_cannot_run_stores_nothing():
    measure = Recorded()
    assert interleaved(measurement(measure), sides("a"), 5) == {} and measure.calls == []

    def refuse(*args, **kwargs):
        raise HarnessError("the worker did not start")

    lines: list[str] = []
    found = interleaved(measurement(refuse, lines=lines), sides("a", "b"), 5)
    assert found == {"a": None, "b": None}
    assert "  not measured: the worker did not start" in lines
