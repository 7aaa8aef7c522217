"""What a suite's watch costs, said after its first process of each side, and the benchmarks it
does not measure on in vain: sized from the spread within each side, never the difference, so the
A/A stays at its level."""

import functools
import itertools
import math
import random
import sys
from dataclasses import replace

import pytest

from harness.analysis.metrics import process_samples
from harness.analysis.power import pooled_spreads
from harness.analysis.significance import Thresholds, Verdict
from harness.catalogue import discovery
from harness.catalogue.sizes import Budget
from harness.measure import attempts
from harness.measure.launch import WorkerPool
from harness.measure.runner import Recorder
from harness.measure.sides import Side
from harness.metric_names import Criterion, MetricKey, parse_metric_name
from harness.steps.confirm import PairConfirmer
from harness.steps.probes import ReleaseProber, interleaved
from harness.steps.suite_floor import (
    ProcessCost,
    SuiteCap,
    cap_line,
    fewest,
    floor,
    out_of_reach,
    processes_needed,
    reach,
)
from harness.steps.triage import SCREEN_ALPHA, triage
from harness.store.schema import ProcessRun, RunStatus, Settings, StoredProgram, TimedSample
from harness.units import format_seconds
from tests.analysis.simulated_runs import (
    KEY,
    Noise,
    binomial_upper,
    judged,
    measure_together,
    settings_of,
)
from tests.conftest import FIXTURES, FakeReleases

RULE = Thresholds()
OTHER = parse_metric_name("json.u_ms")
BENCH = MetricKey("bench.test_runtime_bfgs", "wall")
S = 10**9


def suite_process(wall_s, import_s=None, collection_s=None, benchmarks_s=None):
    parts = {"import_ns": import_s, "collection_ns": collection_s, "benchmarks_ns": benchmarks_s}
    phases = {name: round(s * S) for name, s in parts.items() if s is not None}
    record = {"wall_ns": round(wall_s * S), "suite_phases": phases}
    return ProcessRun(0, RunStatus.OK, script=record)


def test_the_floor_says_what_a_process_costs_and_what_a_verdict_needs_before_it_is_paid():
    """Issue 78 #1: the optimistix suite's floor (about 70 s a process, 7 a side for the rank test
    at 0.002), said after the first process of each side."""
    first = {
        "A": [suite_process(66, 59, 5, 1.6)],
        "B": [suite_process(70, 63, 5, 1.8)],
    }
    said = floor(first, RULE, None)
    assert said is not None
    print(said.line())
    assert said.line() == (
        "a process costs 68 s: import 61 s, collection 5 s, benchmarks 1.7 s; a verdict at ×1.05 "
        "needs at least 7 a side: about 15 min 52 s"
    )
    assert said.to_json() == {
        "process_s": 68.0,
        "import_s": 61.0,
        "collection_s": 5.0,
        "benchmarks_s": 1.7,
        "processes_needed": 7,
        "seconds_needed": 952.0,
        "seconds_in_all": None,
        "max_time_s": None,
    }
    planned = floor(first, RULE, None, planned=5)
    assert planned is not None and planned.line().endswith(
        "about 15 min 52 s; with the first round's 5 a side, at least 29 min 28 s in all where a "
        "benchmark moves"
    )
    assert planned.to_json()["seconds_in_all"] == 2 * (5 + 7 + 1) * 68, "and where import goes"
    bounded = floor(first, RULE, 1200.0, planned=5)
    assert bounded is not None and bounded.first_round == 2, "the cap's bound, not --processes"
    capped = floor(first, RULE, 600.0)
    assert capped is not None
    print(capped.line())
    assert capped.line().endswith(
        "about 15 min 52 s; --max-time leaves 10 min 00 s, 4 more a side: too few for a verdict at "
        "level 0.002: measuring stops here"
    )
    assert capped.stops() == (
        "a verdict at ×1.05 needs at least 7 a side: about 15 min 52 s; the cap leaves 10 min 00 s"
    )
    assert capped.most() == 1, "the first round stops at the process each side has paid"
    roomy = floor(first, RULE, 1200.0)
    assert roomy is not None and "too few" not in roomy.line() and not roomy.stops()
    assert roomy.most() == 2, "the one paid, and one more: 8 afforded, 7 left to confirm"
    assert said.most() is None and not said.stops(), "no cap, no bound"


def test_a_floor_whose_first_process_filled_the_compilation_cache_is_said_again_after_the_second():
    """Issue 78: with ``--compile-cache`` optimistix's first process (fixed sif2jax) took 20 s and
    the next ones 11 s: sized on the first alone the floor said twice the time the run took."""
    said: list[str] = []
    cap = SuiteCap(RULE, None, said.append)
    first = {"A": [suite_process(20, 12, 2, 1.7)], "B": [suite_process(20, 12, 2, 1.7)]}
    assert cap(first) is None and len(said) == 1 and "about 4 min 40 s" in said[0]
    for side in first.values():
        side.append(suite_process(10, 4, 2, 1.7))
    cap(first)
    assert said[1] == (
        "a process costs 10 s: import 4 s, collection 2 s, benchmarks 1.7 s; a verdict at ×1.05 "
        "needs at least 7 a side: about 2 min 20 s (sized again on the second process of each "
        "side: the first took 20 s)"
    )
    assert cap.said is not None and cap.said.cost.wall_s == 10
    for side in first.values():
        side.append(suite_process(5, 1, 2, 1.7))
    cap(first)
    assert len(said) == 2, "said again once, after the second process alone"
    steady = SuiteCap(RULE, None, said.append)
    again = {side: [suite_process(20, 12, 2, 1.7), suite_process(18, 10, 2, 1.7)] for side in "AB"}
    steady({side: processes[:1] for side, processes in again.items()})
    steady(again)
    assert len(said) == 3, "a second process a tenth cheaper: the floor stands"


def test_a_confirmation_s_first_look_is_the_processes_the_moved_benchmark_s_spread_needs(tmp_path):
    """Issue 78 #2: processes by the spread between them: a benchmark whose process medians scatter
    by 2 % is confirmed from its first look at the processes a verdict at ×1.05 needs, said with
    the time it makes, not from the first round's 5 and its looks after."""
    said: list[str] = []
    cap = SuiteCap(RULE, None, said.append)

    def process(index, ms):
        rounds = tuple(TimedSample((), ms * 1e6 * (1 + 0.001 * r)) for r in range(3))
        bench = StoredProgram(("run",), rounds, kinds=("wall",))
        record = {"wall_ns": 10 * S}
        return ProcessRun(
            index,
            RunStatus.OK,
            script=record,
            programs={BENCH.name: bench},
            figures={"json.u_ms": ms},
        )

    scatter = [1.0, 1.025, 0.975, 1.0125, 0.9875]
    first = {side: [process(i, 50 * f) for i, f in enumerate(scatter)] for side in "AB"}
    for paid in range(1, 6):
        cap({side: processes[:paid] for side, processes in first.items()})
    prober = suite_prober(tmp_path, lambda *a, **k: [])
    pairs = {("0.1", "0.2"): (Criterion.of(BENCH), Criterion.of(OTHER))}
    sized = cap.sized(prober, pairs)
    need = processes_needed(cap.spreads[BENCH], RULE)
    assert need is not None and 5 < need < 20
    assert sized.processes == need and sized.max_processes == 20
    assert said[-1] == (
        f"confirming 1 benchmark(s): their spread between processes needs {need} a side for a "
        f"verdict at ×1.05: about {format_seconds(need * 20)}"
    )
    assert cap.sized(prober, {("0.1", "0.2"): (Criterion.of(KEY),)}) is prober, "no spread known"
    own = {("0.1", "0.2"): (Criterion.of(OTHER),)}
    assert OTHER in cap.spreads and cap.sized(prober, own) is prober, "a script's number: as it was"
    tight = SuiteCap(RULE, None, said.append)
    tight({side: [process(i, 50 * (1 + 0.001 * i)) for i in range(5)] for side in "AB"})
    assert tight.sized(prober, pairs).processes == fewest(RULE) == 7, "the rank test's fewest"
    roomy = replace(prober, settings=replace(prober.settings, processes=10))
    assert tight.sized(roomy, pairs) is roomy, "its own first look already enough: as it was"


def test_a_cap_says_at_the_start_how_long_a_process_may_take_for_a_verdict():
    said = cap_line(1200.0, RULE)
    print(said)
    assert said == (
        "--max-time 20 min 00 s: a verdict at ×1.05 needs at least 7 processes a side (the rank "
        "test at level 0.002), so a process may take at most 86 s; said after the first of each "
        "side"
    )


def test_a_process_without_the_wrapper_s_phases_is_said_by_its_whole_time_and_none_ok_says_none():
    assert ProcessCost.of([suite_process(3.0)]).words() == "a process costs 3 s"  # type: ignore[union-attr]
    failed = ProcessRun(0, RunStatus.FAILED, "no", script={"wall_ns": S})
    assert floor({"A": [failed], "B": []}, RULE, None) is None


def test_the_processes_a_verdict_needs_grow_with_the_spread_between_processes():
    assert processes_needed(0.0, RULE) == 7, "the rank test's fewest at 0.002"
    needs = [processes_needed(spread, RULE) for spread in (0.005, 0.01, 0.02, 0.04)]
    assert needs[0] == 7 and all(a <= b for a, b in itertools.pairwise(needs))
    assert needs[-1] is not None and needs[-1] > 20
    assert processes_needed(0.5, RULE) is None, "none within 200 a side"


def test_a_benchmark_out_of_reach_says_the_smallest_change_it_could_still_see():
    """Issue 78 #2: a benchmark whose processes scatter by 4 % needs more than 20 a side at ×1.05;
    it is said, with what 20 could see, not measured to the cap in vain."""
    beyond = out_of_reach({KEY: 0.04, OTHER: 0.002}, RULE, 20, "--max-processes allows")
    assert list(beyond) == [KEY]
    said, seen = beyond[KEY]
    print(said)
    assert said.startswith("its process medians scatter by 4.0%: a verdict at ×1.05 needs ")
    assert (
        "more than the 20 --max-processes allows; the smallest change 20 a side could see" in said
    )
    assert 1.05 < seen < 1.2
    few = out_of_reach({KEY: 0.01}, RULE, 4, "the 10 min --max-time leaves affords")
    assert "could see is none (too few for the rank test)" in few[KEY][0]


def test_what_the_time_left_affords_caps_measuring_again():
    ran = [suite_process(60.0), suite_process(60.0)]
    assert reach(ran, 20, None) == (20, "--max-processes allows")
    assert reach(ran, 20, 3600.0) == (20, "--max-processes allows")
    assert reach(ran, 20, 1200.0) == (10, "the 20 min 00 s --max-time leaves affords")


def spread_of(sides):
    return pooled_spreads(process_samples(side) for side in sides)[KEY]


def test_the_stop_reads_the_spread_within_each_side_never_the_difference():
    """A stop rule that looked at how far the sides are apart would make every difference look
    real; the same processes with one side moved by ×1.3 are stopped (or not) alike."""
    rng = random.Random(78)
    for _ in range(20):
        a, b = measure_together(
            [1.0, 1.0], Noise("lognormal", 0.05), settings_of(5, None, None), rng
        )
        moved = [replace(p, figures={k: v * 1.3 for k, v in p.figures.items()}) for p in b]
        assert math.isclose(spread_of([a, b]), spread_of([a, moved]))
        stops = [out_of_reach({KEY: spread_of(s)}, RULE, 20, "") for s in ([a, b], [a, moved])]
        assert list(stops[0]) == list(stops[1])


def suite_watch(noise, rng, most=20):
    """The watch of one benchmark over the same release twice: the first round of 5 a side
    screened, a candidate confirmed until decided; undecided, measured again until decided only
    where its first round's spread puts a verdict within ``most`` a side. What is flagged: a
    confirmed change, or (stricter than the watch, which calls none) any change measuring again
    shows; and whether it stopped."""
    fixed = settings_of(5, None, None)
    first = measure_together([1.0, 1.0], noise, fixed, rng)
    screen = replace(RULE, alpha=max(SCREEN_ALPHA, RULE.alpha), rank_guard=False)
    deciding = settings_of(5, most)
    if judged(*first, fixed, screen).verdict in (Verdict.SLOWER, Verdict.FASTER):
        again = measure_together([1.0, 1.0], noise, deciding, rng)
        return judged(*again, deciding, RULE).verdict in (Verdict.SLOWER, Verdict.FASTER), False
    if judged(*first, fixed, RULE).verdict != Verdict.UNDECIDED:
        return False, False
    if out_of_reach({KEY: spread_of(first)}, RULE, most, ""):
        return False, True
    again = measure_together([1.0, 1.0], noise, deciding, rng)
    return judged(*again, deciding, RULE).verdict in (Verdict.SLOWER, Verdict.FASTER), False


def test_the_stop_rule_keeps_the_suite_s_a_a_at_its_level():
    """Issue 78 #2: the same release twice, its processes scattering as a loaded runner's do; the
    watch sized from each benchmark's spread flags a change in at most α of runs (the binomial
    bound of the runs simulated), and the rule did stop some runs, so it was exercised."""
    runs, rng = 300, random.Random(7878)
    flagged = stopped = 0
    for noise in (Noise("lognormal", 0.04), Noise("two-level", 0.02, slow=0.3)):
        for _ in range(runs // 2):
            changed, stop = suite_watch(noise, rng)
            flagged += changed
            stopped += stop
    assert flagged <= binomial_upper(RULE.alpha, runs), flagged
    assert stopped > 0, "no run was out of reach: the rule was never exercised"


class FakeSuite:
    """A suite whose every process costs ``cost`` s of a fake clock, measured by the runner's own
    rounds, looks and time budget; every comparison, counts included, stays open until
    ``decides_at`` processes a side."""

    def __init__(self, cost, decides_at):
        self.now, self.cost, self.decides_at = 0.0, cost, decides_at
        self.extents: list[str] = []  # each side's, as the runner stored it

    def clock(self):
        return self.now

    def run_process(self, worker, index, case, settings):
        self.now += self.cost
        record = {"wall_ns": round(self.cost * S)}
        return ProcessRun(index, RunStatus.OK, "", self.cost, (index, index + 1), script=record)

    def undecided(self, a, b, settings, **asked):
        return [] if len(a) >= self.decides_at else ["pair x ×1.1, p=0.01 (needs < 0.002)"]

    def measure(self, plan, sides, settings, results_dir, *, first_round=None, **ignored):
        with Recorder(
            results_dir,
            sides,
            settings,
            seed=1,
            budget=Budget(),
            progress=lambda line: None,
            undecided=self.undecided,
            first_round=first_round,
        ) as recorder:
            return recorder.run_plan(plan[:1])

    def keep(self, item, run, others):
        self.extents.append(run.extent)


def suite_prober(tmp_path, measure):
    steady = discovery.discover(FIXTURES / "cases")["steady"]
    settings = Settings(timeout_s=5, repeats=5, max_seconds=1, processes=5)
    where = (steady.anchors[0], "cpu", tmp_path, settings, lambda line: None)
    return ReleaseProber({}, steady, *where, machine="here", max_processes=20, measure=measure)


SIDES = [Side("0.0.0", f"aa-{n}", sys.executable, label=n) for n in "AB"]
CAP_S = 300.0


@pytest.mark.parametrize(
    ("cost", "decides_at", "decides"),
    [
        (1.0, 7, True),
        (10.0, 7, True),
        (18.0, 7, True),  # the most whose 7 a side, and the first process each, fit 300 s
        (5.0, 30, False),  # open past what the cap pays for: looks and counts stop at it
        (19.0, 7, False),
        (80.0, 7, False),  # optimistix's: 2 processes paid, 140 s left, too few for 7 a side
        (150.0, 7, False),
    ],
)
def test_a_cap_is_kept_on_the_whole_path_and_a_cheap_process_decides_within_it(
    tmp_path, monkeypatch, cost, decides_at, decides
):
    """Issue 78: the first round told each side's first process, then the confirmation held to
    what is left: the time spent never passes the cap by more than one process, and the same cap
    decides where a process is cheap enough for a verdict's processes."""
    suite = FakeSuite(cost, decides_at)
    monkeypatch.setattr(attempts, "run_process", suite.run_process)
    monkeypatch.setattr(WorkerPool, "worker", lambda self, side: None)
    monkeypatch.setattr(Recorder, "_store", suite.keep)
    said: list[str] = []
    cap = SuiteCap(RULE, CAP_S, said.append, clock=suite.clock)
    prober = suite_prober(tmp_path, suite.measure)
    first = replace(prober, measure=functools.partial(suite.measure, first_round=cap))
    interleaved(first.measurement, SIDES, first.processes, decide="off")
    held = cap.confirming(prober)
    if held is not None:
        interleaved(held.measurement, SIDES, held.processes)
    print(cost, suite.now, said, suite.extents[-1:])
    assert suite.now <= CAP_S + cost
    assert any(extent.startswith("decided at") for extent in suite.extents) == decides
    assert (held is None) == (cap.stopped != "") == (2 * cost * 8 > CAP_S)
    if cost == 80.0:
        assert said[-1] == (
            "measuring stopped at --max-time: a verdict at ×1.05 needs at least 7 a side: about "
            "18 min 40 s; the cap leaves 2 min 20 s"
        )
        assert [len(e) for e in suite.extents] == [0, 0], "the first round only, one a side"


def test_where_no_verdict_is_in_reach_the_confirmer_measures_nothing_and_says_why(tmp_path):
    clock = [160.0]
    cap = SuiteCap(RULE, 300.0, lambda line: None, clock=lambda: clock[0])
    first = {"A": [suite_process(80, 70, 5, 1.7)], "B": [suite_process(80, 70, 5, 1.7)]}
    assert cap(first) == 1, "the first round stops at the process each side paid"

    def never(*args, **kwargs):
        raise AssertionError("measured past the cap")

    stopped = (
        "measuring stopped at --max-time: a verdict at ×1.05 needs at least 7 a side: about "
        "18 min 40 s; the cap leaves 2 min 20 s"
    )
    confirm = cap.held(PairConfirmer(suite_prober(tmp_path, never)))
    before, after = confirm({("0.1", "0.2"): (Criterion.of(KEY),)})[("0.1", "0.2")]
    assert before.result is None and after.result is None and before.note == stopped
    found = triage(
        ["old", "new"],
        FakeReleases({"old": 1, "new": 3}),
        confirm,
        metrics=None,
        with_claim=False,
        thresholds=RULE,
    )
    assert found.confirmations and not found.changes()
    left_open = cap.unmeasured(found, [OTHER])
    candidates = {c.step.criterion.metric for c in found.confirmations} - {None}
    assert set(left_open) == {OTHER, *candidates}, "each benchmark left open, one by one"
    said, seen = left_open[OTHER]
    assert said == f"{stopped}; the smallest change still detectable within it: none"
    assert seen == math.inf
    finding = cap.at_cap(left_open)
    assert finding is not None and finding.kind == "undecided"
    assert finding.text.startswith(f"{stopped}; what it left open was not measured again")
    assert cap.at_cap({}) is None


def test_the_cap_is_held_at_what_the_harness_spent_a_process_not_its_own_clock(tmp_path):
    """Measured on optimistix with the fix: processes of 13.9 s on their own clock, and the watch
    ran 32 s past a 600 s cap; the harness spends more a process (its start, storing, the wait)."""
    clock = [0.0]
    cap = SuiteCap(RULE, 600.0, lambda line: None, clock=lambda: clock[0])
    first: dict[str, list[ProcessRun]] = {"A": [], "B": []}
    for _ in range(5):
        clock[0] += 2 * 16.0  # a round of two processes of 14 s each, 2 s apart
        for side in first.values():
            side.append(suite_process(14, 6.6, 3.2, 1.9))
        cap(first)
    assert cap.pace_s == 16.0 and cap.said is not None and cap.said.cost.wall_s == 14
    held = cap.confirming(suite_prober(tmp_path, lambda *a, **k: []))
    assert held is not None and held.max_processes == (600 - 160) // 32, "13 a side, not 15"
