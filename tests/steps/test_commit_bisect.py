"""The search below releases with a fake runner: attribution to jaxlib or jax, the bisect over
commits, skips."""

import math

import pytest

from harness.install.commits import Commit
from harness.steps.commit_bisect import (
    AFTER,
    BEFORE,
    JAXLIB,
    NEITHER,
    CommitBisect,
    CommitSearch,
    expected_commit_probes,
)
from harness.steps.judge import FIX, Judgement, ReleaseVerdict

GOOD, BAD = ReleaseVerdict.GOOD, ReleaseVerdict.BAD
JAXLIBS = {"0.4.31": "0.4.31", "0.4.33": "0.4.33"}
CANDIDATES = ["0.4.31", "0.4.32", "0.4.33"]


def made(number: int, version: str, minimum: str) -> Commit:
    sha = f"{number:04x}{'c' * 36}"
    return Commit(
        sha, f"commit {number}", "2024-08-01T00:00:00+00:00", version, minimum, 1000 + number
    )


def commits(n: int = 40) -> list[Commit]:
    """jax-v0.4.31..jax-v0.4.33 in small: 0.4.31 accepted, then 0.4.31 or 0.4.32, then 0.4.32 only,
    then the release's own."""
    return [
        *(made(i, "0.4.31", "0.4.30") for i in range(3)),
        *(made(i, "0.4.32", "0.4.31") for i in range(3, n - 6)),
        *(made(i, "0.4.32", "0.4.32") for i in range(n - 6, n - 1)),
        made(n - 1, "0.4.33", "0.4.33"),
    ]


class World:
    """Measures nothing: a label's verdict follows from where the change is, in jax's commits or in
    jaxlib."""

    def __init__(self, history, *, commit=None, jaxlib=None, broken=(), reverse=False):
        self.index = {c.sha[:12]: i for i, c in enumerate(history)}
        self.commit, self.jaxlib, self.broken, self.reverse = commit, jaxlib, set(broken), reverse
        self.judged, self.installed, self.together = [], [], []

    def new(self, label):
        if label == "0.4.31":
            return False
        if label == "0.4.33":
            return True
        _, sha, _, jaxlib = label.split("-")
        if self.reverse:  # old behaviour with the newer jaxlib, new with the older
            return jaxlib == "0.4.31"
        if self.jaxlib is not None:
            return jaxlib >= self.jaxlib
        return self.index[sha] >= self.commit

    def judge(self, label):
        self.judged.append(label)
        return Judgement(label, BAD if self.new(label) else GOOD, "scripted")

    def prepare(self, commit, jaxlib):
        self.installed.append((commit.sha[:12], jaxlib))
        return (
            "does not import: no attribute"
            if (self.index[commit.sha[:12]], jaxlib) in self.broken
            else None
        )

    def search(self, history, terms=None):
        found = CommitBisect("0.4.31", "0.4.33", history, JAXLIBS, *([terms] if terms else []))
        return CommitSearch(found, CANDIDATES, self.judge, self.prepare, self.together.append).run()


@pytest.mark.parametrize("change", [0, 1, 10, 20, 33, 34, 36, 38, 39])
def test_a_change_in_jax_is_bisected_to_its_commit_within_log2_n_plus_four_probes(change):
    history = commits()
    world = World(history, commit=change)
    found = world.search(history)
    assert found.first_bad_commit == history[change], found.answer()
    assert len(found.probes) <= expected_commit_probes(len(history)) == math.ceil(math.log2(41)) + 4
    assert len(set(world.judged)) == len(world.judged), "nothing is measured twice"
    assert world.judged[:2] == ["0.4.31", "0.4.33"], "the releases first"
    assert found.attribution.cause in (BEFORE, AFTER)
    assert found.answer().startswith(f"first bad commit {history[change].short} “commit {change}”")
    assert f"#{1000 + change}" in found.answer() and history[change].url in found.answer()


def test_attribution_measures_the_latest_commit_with_both_jaxlibs_interleaved_with_the_releases():
    history = commits()
    world = World(history, commit=5)
    found = world.search(history)
    late = history[33]  # the last commit accepting both 0.4.31 and 0.4.32
    assert world.judged[2:4] == [
        f"git-{late.sha[:12]}-jaxlib-0.4.31",
        f"git-{late.sha[:12]}-jaxlib-0.4.32",
    ]
    assert world.together[0] == ["0.4.31", *world.judged[2:4], "0.4.33"]
    assert (found.attribution.commit, found.attribution.cause) == (late, BEFORE)
    assert "jax's Python, at or before" in found.attribution.note


def test_a_figure_that_moves_with_jaxlib_is_attributed_to_jaxlib_and_the_bisect_stops():
    history = commits()
    world = World(history, jaxlib="0.4.32")
    found = world.search(history)
    assert found.attribution.cause == JAXLIB and len(found.probes) == 4 and found.outcome is None
    assert found.answer().startswith(
        "jaxlib takes part (XLA / C++, between 0.4.31 and 0.4.33): jax at"
    )
    assert (
        found.jaxlib_change == "between jaxlib 0.4.31 and 0.4.32" and found.first_bad_commit is None
    )


def test_new_with_the_older_jaxlib_and_old_with_the_newer_is_neither_and_said_so():
    history = commits()
    found = World(history, reverse=True).search(history)
    assert found.attribution.cause == NEITHER and found.outcome is None
    assert found.answer().startswith("neither jax's Python nor jaxlib alone")


def test_each_commit_runs_with_its_segments_jaxlib_and_the_answer_says_which():
    history = commits()
    world = World(history, commit=30)
    found = world.search(history)
    assert found.first_bad_commit == history[30] and "jaxlib 0.4.31" in found.answer()
    world = World(history, commit=37)  # in the run of commits that accept only 0.4.32
    found = world.search(history)
    assert found.first_bad_commit == history[37]
    bisected = {p.name: p.jaxlib for p in found.probes if p.stage == "bisect"}
    for name, jaxlib in bisected.items():
        index = next(i for i, c in enumerate(history) if c.sha == name)
        assert jaxlib == ("0.4.31" if index < 34 else "0.4.32" if index < 39 else "0.4.33")
    assert "jaxlib 0.4.32" in found.answer()


def test_a_commit_that_does_not_import_with_its_jaxlib_tries_another_it_accepts():
    history = commits(20)
    # Commit 6, the first one bisected after the attribution (commit 13, bad), does not import with
    # its run's jaxlib, 0.4.31, but does with 0.4.32, which it accepts too.
    world = World(history, commit=5, broken={(6, "0.4.31")})
    found = world.search(history)
    assert found.first_bad_commit == history[5]
    assert (history[6].sha, "0.4.31", "does not import: no attribute") in found.not_installed
    assert {p.jaxlib for p in found.probes if p.name == history[6].sha} == {"0.4.32"}


def test_a_commit_that_works_with_no_jaxlib_is_set_aside_like_git_bisect_skip():
    history = commits(20)
    world = World(history, commit=10, broken={(10, "0.4.31"), (10, "0.4.32")})
    found = world.search(history)
    assert found.outcome is not None and found.outcome.between() == [history[10].sha]
    assert found.first_bad_commit == history[11]
    assert "1 commit(s) between them set aside" in found.answer()
    skipped = [p for p in found.probes if p.judgement.verdict == ReleaseVerdict.SKIPPED]
    assert [p.name for p in skipped] == [history[10].sha]
    assert "installs or imports with none of the jaxlibs it accepts" in skipped[0].judgement.reason


def test_when_the_attribution_commit_does_not_import_an_earlier_one_is_tried():
    history = commits()
    world = World(history, commit=3, broken={(33, "0.4.32")})
    found = world.search(history)
    assert found.attribution.commit == history[32] and found.first_bad_commit == history[3]


def test_every_commit_old_but_the_release_new_is_jaxlibs():
    history = commits(12)  # no commit accepts two jaxlibs a pair away: attribution does not happen
    only_one = [made(i, "0.4.31", "0.4.31") for i in range(5)]
    world = World(only_one, commit=99)
    found = World.search(world, only_one)
    assert "not attributed" in found.attribution.note
    assert found.outcome is not None and found.outcome.first_bad == "0.4.33"
    assert found.jaxlib_change == "jaxlib 0.4.33"
    assert found.answer().startswith("jaxlib takes part (jaxlib 0.4.33, XLA / C++)")
    assert history  # the shape used elsewhere is untouched


def test_a_release_endpoint_that_is_not_good_stops_before_anything_is_installed():
    history = commits(8)
    world = World(history, commit=2)
    world.new = lambda label: True
    found = world.search(history)
    assert found.stopped.startswith("the good release 0.4.31 is not good") and world.installed == []
    assert found.answer().startswith("no answer:")


def test_a_fix_is_named_in_its_own_terms():
    history = commits(16)
    found = World(history, commit=6).search(history, FIX)
    assert (
        found.answer().startswith(f"first fixed commit {history[6].short}")
        and "last broken" in found.answer()
    )


def test_a_first_bad_commit_that_ran_with_another_jaxlib_than_the_last_good_one_says_so():
    history = commits()
    found = World(history, commit=34).search(history)  # the first commit that accepts only 0.4.32
    assert found.first_bad_commit == history[34]
    assert found.answer().endswith("so the change is that commit's or comes with jaxlib 0.4.32")


def test_the_jaxlib_named_for_a_commit_is_the_one_of_the_probe_the_bisect_took():
    history = commits()
    world = World(history, commit=34)
    found = CommitBisect("0.4.31", "0.4.33", history, JAXLIBS)
    search = CommitSearch(found, CANDIDATES, world.judge, world.prepare)
    search.plan[history[33].sha] = "0.4.32"  # as if its run of commits took the newer jaxlib
    search.run()
    assert found.outcome is not None and found.outcome.last_good == history[33].sha
    assert (
        found.jaxlib_of(history[33].sha) == "0.4.32" and "different jaxlibs" not in found.answer()
    )
