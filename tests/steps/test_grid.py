"""A triage's grid with fake measurements: the ends and every k-th release first, then only between
neighbours that differ, down to consecutive releases."""

import pytest

from harness.analysis.significance import Thresholds
from harness.metric_names import parse_metric_name
from harness.steps.grid import grid
from harness.steps.triage import triage
from tests.conftest import FakeReleases, FakeScriptReleases
from tests.steps.test_triage import FakeConfirmer

WALL = parse_metric_name("eager.wall_ns")
THIRTY = [f"r{i}" for i in range(30)]


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
