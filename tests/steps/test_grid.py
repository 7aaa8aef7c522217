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
    from harness.render.triage_answer import grid_caveat

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
    """``process.trace_ns`` scattering ±20 % between processes, but ±``pair`` (0.5 %) on r16 and
    r17 (×``step``, 1.08, from r17 on), whatever the release's scale."""

    def __init__(self, *args, pair=0.005, step=1.08, **more):
        super().__init__(*args, **more)
        self.pair, self.step = pair, step

    def adjust(self, data, scale):
        super().adjust(data, scale)
        tight = self.current in ("r16", "r17")
        level = 8e6 * (self.step if int(self.current[1:]) >= 17 else 1)
        for index, record in enumerate(data["processes"]):
            jitter = 1 + (self.pair if tight else 0.2) * ((index % 3) - 1)
            record["figures"]["process.trace_ns"] = level * jitter


def test_a_cost_within_what_the_range_s_process_spread_could_show_is_no_candidate():
    scales = {release: 1 if i < 17 else 1.5 for i, release in enumerate(THIRTY)}
    found, _ = glanced(scales, kind=TightPair)
    listed = {step.criterion.name for step in found.first_round.steps}
    assert "process.wall_ns" in listed, "the step the glance found, measured in full"
    r17 = found.first_round.comparisons[(parse_metric_name("process.trace_ns"), "r17")]
    assert r17.verdict == "slower", "the two tight sides alone decide ×1.08"
    assert "process.trace_ns" not in listed, "within what the range's ±20 % could show by chance"


def test_a_change_within_that_bound_whose_interval_still_reaches_past_it_is_a_candidate(
    monkeypatch,
):
    """Measured 2026-12-06: ×1.375 at p 0.01 within the bound in one run of 0.4.31 → 0.4.33 (not
    listed), ×1.53 confirmed in the next: a change the data cannot yet tell from one past the
    bound is measured again, so both runs confirm it."""
    scales = {release: 1 if i < 17 else 1.5 for i, release in enumerate(THIRTY)}
    found, _ = glanced(scales, kind=TightPair, pair=0.08, step=1.2)
    r17 = found.first_round.comparisons[(parse_metric_name("process.trace_ns"), "r17")]
    assert r17.verdict == "slower" and r17.cost.margin > 1.3
    assert ("process.trace_ns", "r16", "r17") in named_steps(found), "listed and confirmed"
    monkeypatch.setattr("harness.steps.grid.reaches_past", lambda compared, bound: False)
    dropped, _ = glanced(scales, kind=TightPair, pair=0.08, step=1.2)
    assert ("process.trace_ns", "r16", "r17") not in named_steps(dropped), "within the bound"


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


TWELVE = THIRTY[:12]


class Occasion(CountedScript):
    """A plain script's triage on one occasion (a run from a results folder of its own): every
    figure ×3 from r10; ``process.trace_ns`` scattering by ``scatter`` between processes (±0.5 % on
    ``tight`` releases) and ×``trace`` from r6; peak memory within ±0.1 % in every run, but
    ×``memory`` from r8 on this occasion (a release's level, which moves between runs)."""

    def __init__(self, scales, processes, values=None, **occasion):
        self.scatter = occasion.pop("scatter", 0.1)
        self.tight = occasion.pop("tight", ())
        self.trace = occasion.pop("trace", 1.0)
        self.memory = occasion.pop("memory", 1.0)
        super().__init__(scales, processes, values, **occasion)

    def adjust(self, data, scale):
        super().adjust(data, scale)
        number = int(self.current[1:])
        scatter = 0.005 if self.current in self.tight else self.scatter
        trace = 8e6 * scale * (self.trace if number >= 6 else 1)
        memory = 2e8 * (self.memory if number >= 8 else 1)
        for index, record in enumerate(data["processes"]):
            record["figures"]["process.trace_ns"] = trace * (1 + scatter * ((index % 3) - 1))
            record["script"]["maxrss_bytes"] = round(memory * (1 + 0.001 * ((index % 3) - 1)))


def on_occasion(every_release, **occasion):
    """An every-release or adaptive triage of twelve releases on one ``Occasion``: its confirmed
    steps, and those of them past what another run's first round lists nine times in ten."""
    from harness.render.triage_answer import small_changes

    scales = {release: 1 if i < 10 else 3 for i, release in enumerate(TWELVE)}
    glance = None if every_release else Occasion(scales, GLANCE, **occasion)
    found = triage(
        TWELVE,
        Occasion(scales, 10, **occasion),
        FakeConfirmer(Occasion(scales, 10, **occasion)),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
        every_release=every_release,
        glance=glance,
    )
    small = {id(change) for change, _ in small_changes(found, Thresholds())}
    safe = [c for c in found.changes() if id(c) not in small]
    return named_steps(found), sorted(
        (c.step.criterion.name, c.step.before, c.step.after) for c in safe
    )


TRACE_STEP = ("process.trace_ns", "r5", "r6")
MEMORY_STEP = ("process.peak_rss_bytes", "r7", "r8")
LOOP_STEP = ("process.wall_ns", "r9", "r10")


@pytest.mark.parametrize("every_release", [True, False])
def test_a_phase_step_the_screen_s_processes_tell_apart_on_one_occasion_only_is_small(
    every_release,
):
    """Measured 2026-12-06: trace_ns ×1.3 0.4.26 → 0.4.27 a candidate and confirmed in one run, and
    undecided at 5 processes a side (p 0.02) in the next; within what another run's first round
    lists nine times in ten, it is named apart, so both runs name the same steps past it."""
    one, safe_one = on_occasion(every_release, trace=1.25, tight=("r5", "r6"))
    other, safe_other = on_occasion(every_release, trace=1.25, scatter=0.3)
    assert TRACE_STEP in one and TRACE_STEP not in other, "the confirmed steps differ"
    assert LOOP_STEP in safe_one and safe_one == safe_other
    assert TRACE_STEP not in safe_one


@pytest.mark.parametrize("every_release", [True, False])
def test_a_memory_step_whose_level_moves_between_runs_is_small(every_release):
    """Measured 2026-12-06: one release's peak memory 199, 199 and 201 MB in three runs and 171 in
    a fourth, within 0.3 % between the processes of each: ×1.18 over its predecessor in one run,
    ×1.02 in another, each tight; and ×0.941 (confirmed) against ×0.959 (inside the factor)."""
    one, safe_one = on_occasion(every_release, memory=1.1)
    other, safe_other = on_occasion(every_release, memory=1.01)
    near, safe_near = on_occasion(every_release, memory=0.941)
    assert MEMORY_STEP in one and MEMORY_STEP in near and MEMORY_STEP not in other
    assert safe_one == safe_other == safe_near and LOOP_STEP in safe_one


def test_the_every_release_and_the_adaptive_triage_name_the_same_steps_past_the_bound():
    occasion = {"trace": 1.25, "tight": ("r5", "r6"), "memory": 1.1}
    assert on_occasion(True, **occasion)[1] == on_occasion(False, **occasion)[1]


def test_a_step_past_the_bound_is_named_in_every_run_whatever_the_occasion():
    for occasion in ({"trace": 2.5}, {"trace": 2.5, "scatter": 0.02, "tight": ("r5",)}):
        assert TRACE_STEP in on_occasion(True, **occasion)[1], occasion


def test_a_cost_step_between_grid_points_too_small_for_a_glance_is_not_seen_and_the_page_says_so():
    """A phase ×1.25 between two grid points whose glances (2 processes, ±10 %) the range's spread
    could show by chance: not measured, not named; the answer says such a step is not seen."""
    from harness.render.triage_answer import grid_caveat

    scales = {release: 1 if i < 10 else 3 for i, release in enumerate(TWELVE)}
    found = triage(
        TWELVE,
        Occasion(scales, 10, trace=1.25),
        FakeConfirmer(Occasion(scales, 10, trace=1.25)),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
        every_release=False,
        glance=Occasion(scales, GLANCE, trace=1.25),
    )
    assert "r5" not in [m.release for m in found.first_round.measurements]
    assert TRACE_STEP not in named_steps(found) and LOOP_STEP in named_steps(found)
    caveat = grid_caveat(found)
    assert f"Nor would a cost's step that {GLANCE} processes a release could not tell" in caveat
    assert caveat.endswith("--every-release measures every one.")
    every, _ = screened(dict.fromkeys(THIRTY, 1), every_release=True)
    assert grid_caveat(every) == "", "every release measured: nothing to say"
