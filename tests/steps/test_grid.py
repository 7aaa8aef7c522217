"""A triage's grid with fake measurements: the ends and every k-th release first, then only between
neighbours that differ, down to consecutive releases."""

import pytest

from harness.analysis.significance import Thresholds
from harness.metric_names import parse_metric_name
from harness.steps.grid import glance_processes, grid
from harness.steps.triage import triage
from tests.conftest import FakeReleases, FakeScriptReleases
from tests.steps.test_triage import FakeConfirmer

WALL = parse_metric_name("eager.wall_ns")
THIRTY = [f"r{i}" for i in range(30)]
GLANCE = glance_processes(with_claim=False)


class FusingReleases(FakeReleases):
    """Fake releases whose compiled program has ``fusions[release]`` fusions (its exact HLO facts;
    4 in the fixture's own)."""

    def __init__(self, scales, fusions):
        super().__init__(scales)
        self.fusions = fusions

    def __call__(self, release, again=False):
        self.current = release
        return super().__call__(release, again)

    def adjust(self, data, scale):
        for process in data["processes"]:
            for function in process["compiled"].values():
                function["hlo"]["fusions"] = self.fusions.get(self.current, 4)


def screened(scales, first=None, every_release=False):
    first = first or FakeReleases(scales)
    found = triage(
        list(scales),
        first,
        FakeConfirmer(FakeReleases(scales)),
        metrics=[WALL],
        with_claim=False,
        thresholds=Thresholds(),
        every_release=every_release,
    )
    return found, sorted({release for release, _ in first.calls}, key=list(scales).index)


def steps(found):
    return [(c.step.before, c.step.after, c.step.said) for c in found.changes()]


def test_a_single_step_in_thirty_releases_is_found_measuring_a_third_of_them():
    scales = {release: 1 if i < 17 else 3 for i, release in enumerate(THIRTY)}
    found, measured = screened(scales)
    assert steps(found) == [("r16", "r17", "slower")]
    assert measured == ["r0", "r5", "r10", "r15", "r16", "r17", "r20", "r25", "r29"], (
        "the grid (every 5th and the newest), then halving r15–r20 down to r16–r17"
    )
    assert len(found.first_round.measurements) == 9 and len(found.first_round.releases) == 30


def test_with_every_release_every_release_is_measured():
    scales = {release: 1 if i < 17 else 3 for i, release in enumerate(THIRTY)}
    found, measured = screened(scales, every_release=True)
    assert measured == THIRTY and len(found.first_round.measurements) == 30
    assert steps(found) == [("r16", "r17", "slower")]


def test_a_step_and_its_fix_inside_one_grid_interval_are_found_where_the_compiled_program_moved():
    # r17 and r18 slow; a fusion lost at r17 for good: the grid's r15 and r20 alike in time only
    scales = {release: 3 if release in ("r17", "r18") else 1 for release in THIRTY}
    fusions = {release: 3 for release in THIRTY[17:]}
    found, measured = screened(scales, FusingReleases(scales, fusions))
    assert steps(found) == [("r16", "r17", "slower"), ("r18", "r19", "faster")]
    assert len(measured) < 15


def test_the_same_step_and_fix_with_the_program_unchanged_is_not_seen_and_the_answer_says_so():
    from harness.render.triage_screen import grid_caveat

    scales = {release: 3 if release in ("r17", "r18") else 1 for release in THIRTY}
    found, measured = screened(scales)
    assert steps(found) == [] and len(measured) == 7
    assert grid_caveat(found).startswith("23 releases were not measured")
    assert "the claim and the compiled programs' facts, would not be seen" in grid_caveat(found)
    assert "--every-release measures every one" in grid_caveat(found)
    script, _ = screened(scales, FakeScriptReleases(scales))
    assert "and the claim (no compiled program's facts were recorded)" in grid_caveat(script), (
        "a plain script's processes record none: the answer does not lean on them"
    )


def test_where_the_range_begins_to_install_is_found_by_halving_towards_it():
    scales = {release: None if i < 12 else 1 if i < 27 else 3 for i, release in enumerate(THIRTY)}
    found, measured = screened(scales)
    assert measured[:4] == ["r0", "r5", "r10", "r11"], "r12 is the first that installs"
    assert "r12" in measured and steps(found) == [("r26", "r27", "slower")]


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (4, [0, 1, 2, 3]),
        (8, list(range(8))),
        (9, [0, 3, 6, 8]),
        (35, [0, 5, 10, 15, 20, 25, 30, 34]),
    ],
)
def test_the_grid_is_every_kth_release_k_the_root_of_the_count(count, expected):
    assert grid(count) == expected


class TogetherReleases(FakeReleases):
    """Fake releases that, as the real prober, measure each round's releases in one run."""

    def __init__(self, scales):
        super().__init__(scales)
        self.rounds = []

    def measure_together(self, releases, decide):
        self.rounds.append((list(releases), decide))


def test_each_round_is_one_interleaved_run_of_its_new_releases_only():
    scales = {release: 1 if i < 17 else 3 for i, release in enumerate(THIRTY)}
    first = TogetherReleases(scales)
    screened(scales, first)
    assert first.rounds == [
        (["r0", "r5", "r10", "r15", "r20", "r25", "r29"], "off"),
        (["r17"], "off"),
        (["r16"], "off"),
    ]


class Counting:
    """A fake prober's mixin: each release measured in its fixture's first ``processes`` processes,
    every one counted (``spent``), and ``json.checksum`` a value: ``values[release]`` (1 elsewhere)
    in every process."""

    def __init__(self, scales, processes, values=None, **more):
        super().__init__(scales, **more)
        self.processes, self.values, self.spent = processes, values or {}, 0

    def __call__(self, release, again=False):
        self.current = release
        probe = super().__call__(release, again)
        self.spent += len(probe.result.result.processes) if probe.result is not None else 0
        return probe

    def adjust(self, data, scale):
        super().adjust(data, scale)
        data["processes"] = data["processes"][: self.processes]
        for record in data["processes"]:
            record["figures"] = {**record.get("figures", {}), "json.checksum": 1.0}
            record["figures"]["json.checksum"] = self.values.get(self.current, 1)


class CountedScript(Counting, FakeScriptReleases):
    pass


class CountedFusing(Counting, FusingReleases):
    pass


class CountedCase(Counting, FakeReleases):
    pass


def glanced(scales, values=None, *, glance=True, kind=CountedScript, with_claim=False, **more):
    """A triage (of every metric but with ``metrics``) from a fake first round of 10 processes a
    release, glanced at first in ``glance_processes`` (``glance``); its outcome and the processes
    its first round ran."""
    metrics = more.pop("metrics", None)
    full = kind(scales, 10, values, **more)
    cheap = kind(scales, glance_processes(with_claim), values, **more) if glance else None
    found = triage(
        list(scales),
        full,
        FakeConfirmer(kind(scales, 10, values, **more)),
        metrics=metrics,
        with_claim=with_claim,
        thresholds=Thresholds(),
        every_release=False,
        glance=cheap,
    )
    return found, full.spent + (cheap.spent if cheap is not None else 0)


def named_steps(found):
    return sorted((c.step.criterion.name, c.step.before, c.step.after) for c in found.changes())


def test_a_glance_first_finds_the_same_cost_and_value_steps_in_fewer_processes():
    scales = {release: 1 if i < 17 else 1.5 for i, release in enumerate(THIRTY)}
    values = {release: 2 for release in THIRTY[8:]}
    found, spent = glanced(scales, values)
    today, spent_today = glanced(scales, values, glance=False)
    assert named_steps(found) == named_steps(today)
    assert ("json.checksum", "r7", "r8") in named_steps(found)
    assert ("process.wall_ns", "r16", "r17") in named_steps(found)
    assert spent < spent_today / 2, (spent, spent_today)
    assert spent == GLANCE * 11 + 10 * 2, (
        "glanced: the grid's 7, then r7 and r17, r8 and r16; the cost step's two ends in full"
    )


def test_a_glance_over_a_range_where_nothing_changed_finds_nothing_and_measures_only_the_grid():
    found, spent = glanced(dict.fromkeys(THIRTY, 1))
    assert found.first_round.steps == [] and found.confirmations == []
    assert spent == GLANCE * len(grid(30))


def test_a_glanced_value_step_and_its_fix_inside_one_grid_gap_are_found_through_compiled_facts():
    # r17 and r18 compute another checksum; a fusion lost at r17 for good: the grid's r15 and r20
    # alike in their values, apart in their compiled programs
    values = {release: 2 for release in ("r17", "r18")}
    fusions = {release: 3 for release in THIRTY[17:]}
    scales = dict.fromkeys(THIRTY, 1)
    found, spent = glanced(scales, values, kind=CountedFusing, fusions=fusions)
    assert [(c.step.criterion.name, c.step.before, c.step.after) for c in found.changes()] == [
        ("json.checksum", "r16", "r17"),
        ("json.checksum", "r18", "r19"),
    ]
    assert spent < GLANCE * 15, "glanced only: no cost differs"
    unseen, _ = glanced(scales, values, kind=CountedFusing, fusions={})
    assert unseen.changes() == [], "the program unchanged: the grid's neighbours alike"


class TightPair(CountedScript):
    """``process.trace_ns`` scattering ±20 % between processes, but ±0.5 % on r16 and r17 (×1.08
    from r17 on), whatever the release's scale."""

    def adjust(self, data, scale):
        super().adjust(data, scale)
        tight = self.current in ("r16", "r17")
        level = 8e6 * (1.08 if int(self.current[1:]) >= 17 else 1)
        for index, record in enumerate(data["processes"]):
            jitter = 1 + (0.005 if tight else 0.2) * ((index % 3) - 1)
            record["figures"]["process.trace_ns"] = level * jitter


def test_a_cost_within_what_the_range_s_process_spread_could_show_is_no_candidate():
    scales = {release: 1 if i < 17 else 1.5 for i, release in enumerate(THIRTY)}
    found, _ = glanced(scales, kind=TightPair)
    listed = {step.criterion.name for step in found.first_round.steps}
    assert "process.wall_ns" in listed, "the step the glance found, measured in full"
    r17 = found.first_round.comparisons[(parse_metric_name("process.trace_ns"), "r17")]
    assert r17.verdict == "slower", "the two tight sides alone decide ×1.08"
    assert "process.trace_ns" not in listed, "within what the range's ±20 % could show by chance"


def test_a_glance_with_the_claim_settles_it_in_three_processes_and_finds_its_flip():
    holds = {release: i < 17 for i, release in enumerate(THIRTY)}
    scales = dict.fromkeys(THIRTY, 1)
    found, spent = glanced(scales, kind=CountedCase, with_claim=True, holds=holds, metrics=[WALL])
    assert named_steps(found) == [("claim", "r16", "r17")]
    assert spent == 3 * 9, "glanced only, in 3: the grid's 7, then r17 and r16"


def test_where_neighbours_differ_across_most_of_the_range_every_release_is_measured_once_in_full():
    """A plain script's memory moves at nearly every release: halving would glance at each and
    then measure most of them again in full (measured: 34 and 38 of 38 releases, more processes
    than --every-release); past the grid's glance, every release is measured once, in full."""
    values = {release: i for i, release in enumerate(THIRTY)}
    found, spent = glanced(dict.fromkeys(THIRTY, 1), values)
    assert len(named_steps(found)) == 29, "a value step between every two releases"
    assert spent == GLANCE * len(grid(30)) + 10 * 30, "the grid glanced at, then each in full"
