"""Below releases: does a change between releases U and V come with jaxlib or with jax's Python, and
which commit.

*Attribution first.*  A commit that accepts two jaxlibs (U's and V's, else the nearest pair one
accepts) is measured with each, interleaved with U and V, and judged as any release probe: like U
with the older and V with the newer, the figure moves with jaxlib and nothing more is probed; like
V with both, jax's Python changed at or before it; like U with both, after it; else neither.

*Then the commits.*  U, its commits along V's first parents, V are bisected by
``bisection.bisect`` with the release judge, each commit with the jaxlib its run of commits shares
(``commits.segments``), else another it accepts, else set aside like ``git bisect skip``. The
measuring and installing come in as callables, tested with fake ones.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.install.commit_venvs import commit_label
from harness.install.commits import Commit, attribution_choices, segments
from harness.steps.bisection import BisectOutcome, JudgeRelease, bisect
from harness.steps.judge import REGRESSION, Judgement, ReleaseVerdict, Terms
from harness.units import version_key

# install jax at the commit with that jaxlib: None, or why not
Prepare = Callable[[Commit, str], str | None]
Together = Callable[[Sequence[str]], None]  # measure these labels in one interleaved run

JAXLIB = "jaxlib"  # the figure moves with jaxlib at one commit
BEFORE = "jax before"  # jax's Python: the attribution commit already shows the new behaviour
AFTER = "jax after"  # jax's Python: the attribution commit still shows the old behaviour
NEITHER = "neither"  # old behaviour with the newer jaxlib, new with the older: not one change


def expected_commit_probes(commits: int) -> int:
    """Both releases, the attribution commit twice, then halving the commits: ⌈log2 n⌉ + 4."""
    return math.ceil(math.log2(commits + 1)) + 4 if commits else 2


@dataclass(frozen=True)
class CommitProbe:
    """One probe: a release (``commit`` None) or a commit, the jaxlib it ran with, its judgement."""

    name: str  # the release, or the commit's full hash
    jaxlib: str
    judgement: Judgement
    commit: Commit | None = None
    stage: str = "bisect"  # "endpoint", "attribution" or "bisect"


@dataclass
class Attribution:
    commit: Commit | None = None
    older: str = ""
    newer: str = ""
    cause: str = ""  # JAXLIB, BEFORE, AFTER, NEITHER; empty: not attributed
    note: str = ""  # in words


@dataclass
class CommitBisect:
    first: str
    last: str
    commits: list[Commit]
    jaxlibs: dict[str, str]  # release → its jaxlib
    terms: Terms = REGRESSION
    attribution: Attribution = field(default_factory=Attribution)
    outcome: BisectOutcome | None = None  # over release and commit names
    probes: list[CommitProbe] = field(default_factory=list)
    not_installed: list[tuple[str, str, str]] = field(default_factory=list)  # (sha, jaxlib, why)
    stopped: str = ""
    # commit → the jaxlib of the probe the bisect took for it
    used: dict[str, str] = field(default_factory=dict)

    def commit(self, name: str | None) -> Commit | None:
        return next((c for c in self.commits if c.sha == name), None)

    def jaxlib_of(self, name: str | None) -> str:
        known = {**self.used, **self.jaxlibs}  # a release's own jaxlib over the bisect's pick
        if name in known:
            return known[name]
        return next((p.jaxlib for p in self.probes if p.name == name and p.commit is not None), "?")

    @property
    def first_bad_commit(self) -> Commit | None:
        return self.commit(self.outcome.first_bad) if self.outcome and self.outcome.found else None

    @property
    def jaxlib_change(self) -> str | None:
        if (attributed := self.attribution).cause == JAXLIB:
            return f"between jaxlib {attributed.older} and {attributed.newer}"
        found, last = self.outcome, self.jaxlibs.get(self.last)
        if found and found.found and found.first_bad == self.last and self.commit(found.last_good):
            return f"jaxlib {last}" if self.jaxlib_of(found.last_good) != last else None
        return None

    def label(self, name: str) -> str:
        return name if name in self.jaxlibs else commit_label(name, self.jaxlib_of(name))

    def step(self) -> tuple[str, str] | None:
        """The change's two sides by label, older first: a commit with its two jaxlibs where jaxlib
        takes part, else the last good and first bad; None: none found."""
        if (attributed := self.attribution).cause == JAXLIB and attributed.commit is not None:
            sha = attributed.commit.sha
            return commit_label(sha, attributed.older), commit_label(sha, attributed.newer)
        found = self.outcome
        if found is None or not found.found or found.last_good is None or found.first_bad is None:
            return None
        return self.label(found.last_good), self.label(found.first_bad)

    def describe(self, name: str | None) -> str:
        jaxlib = self.jaxlib_of(name)
        if (commit := self.commit(name)) is None:
            return f"release {name} (jaxlib {jaxlib})"
        pull = f", #{commit.pull_request}" if commit.pull_request else ""
        return f"{commit.short} “{commit.title}” ({commit.date[:10]}{pull}, jaxlib {jaxlib})"

    def answer(self) -> str:
        old, new = self.terms.old, self.terms.new
        if self.stopped:
            return f"no answer: {self.stopped}"
        if (attributed := self.attribution).cause in (JAXLIB, NEITHER):
            return attributed.note
        if (found := self.outcome) is None or not found.found:
            return f"no answer: {found.stopped if found else 'nothing was bisected'}"
        bad, good = self.first_bad_commit, found.last_good
        last = self.describe(good)
        between = found.between()
        aside = "commit(s) between them set aside (not installed, or not judged)"
        skipped = f"; {len(between)} {aside}" if between else ""
        if bad is None:
            if self.jaxlib_change:
                return (
                    f"jaxlib takes part ({self.jaxlib_change}, XLA / C++): the last commit probed, "
                    f"{last}, is {old}, release {self.last} is {new}{skipped}; "
                    "whether jax's Python takes part too is not measured here"
                )
            return f"no commit named: {last} is {old}, release {self.last} is {new}{skipped}"
        text = f"first {new} commit {self.describe(bad.sha)} {bad.url}; last {old}: {last}"
        if self.jaxlib_of(bad.sha) != self.jaxlib_of(good):
            text += (
                "; they ran with different jaxlibs, so the change is that commit's or comes with "
                f"jaxlib {self.jaxlib_of(bad.sha)}"
            )
        return text + skipped


class CommitSearch:
    """Attribution, then the bisect over commits; ``judge`` judges releases and commits alike."""

    def __init__(
        self,
        found: CommitBisect,
        candidates: Sequence[str],  # every jaxlib worth trying, oldest first
        judge: JudgeRelease,  # a release or commit label → its judgement
        prepare: Prepare,
        together: Together = lambda labels: None,
        progress: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.found = found
        self.candidates = list(candidates)
        self.judge, self.prepare, self.together, self.progress = judge, prepare, together, progress
        self.judged: dict[str, Judgement] = {}  # label → judgement: nothing is measured twice
        # name → the probe that stands for it in the bisect
        self.points: dict[str, CommitProbe] = {}
        ends = [version_key(found.jaxlibs[found.first]), version_key(found.jaxlibs[found.last])]
        step = [j for j in self.candidates if ends[0] <= version_key(j) <= ends[1]]
        cut = segments(found.commits, self.candidates, step)
        self.plan = {c.sha: s.jaxlib for s in cut for c in s.commits if s.jaxlib}

    def _label(self, label: str, jaxlib: str, commit: Commit | None, stage: str) -> CommitProbe:
        if label not in self.judged:
            self.progress(f"[bisect --commits] probe {len(self.judged) + 1}: {label} …")
            self.judged[label] = judged = self.judge(label)
            name = commit.sha if commit else label
            self.found.probes.append(CommitProbe(name, jaxlib, judged, commit, stage))
            word = self.found.terms.word(judged.verdict)
            self.progress(f"[bisect --commits] {label} is {word}: {judged.reason}")
        return next(p for p in self.found.probes if p.judgement is self.judged[label])

    def release(self, version: str) -> CommitProbe:
        return self._label(version, self.found.jaxlibs[version], None, "endpoint")

    def installed(self, commit: Commit, jaxlib: str) -> bool:
        if problem := self.prepare(commit, jaxlib):
            self.found.not_installed.append((commit.sha, jaxlib, problem))
            self.progress(f"[bisect --commits] {commit.short} with jaxlib {jaxlib}: {problem}")
        return problem is None

    def point(self, name: str) -> Judgement:
        """The bisect's judge: a release, or a commit with the first jaxlib it works with."""
        if name in self.found.jaxlibs:
            return self.release(name).judgement
        if name not in self.points:
            commit = self.found.commit(name)
            assert commit is not None
            first = self.plan.get(name)
            accepted = [j for j in commit.accepted(self.candidates) if j != first]
            tries = [first, *accepted] if first else accepted
            for jaxlib in tries:
                if self.installed(commit, jaxlib):
                    label = commit_label(commit.sha, jaxlib)
                    self.points[name] = self._label(label, jaxlib, commit, "bisect")
                    break
            else:
                why = "installs or imports with none of the jaxlibs it accepts"
                if not tries:
                    why = (
                        f"accepts none of jaxlib {', '.join(self.candidates)} (jax/version.py: "
                        f"{commit.version}, minimum jaxlib {commit.minimum_jaxlib})"
                    )
                skipped = Judgement(name, ReleaseVerdict.SKIPPED, why)
                self.points[name] = CommitProbe(name, "–", skipped, commit)
                self.found.probes.append(self.points[name])
        self.found.used[name] = self.points[name].jaxlib
        return dataclasses.replace(self.points[name].judgement, release=name)

    def attribute(self) -> None:
        found, attributed = self.found, self.found.attribution
        old, new = found.terms.old, found.terms.new
        ends = found.jaxlibs[found.first], found.jaxlibs[found.last]
        choices = attribution_choices(found.commits, self.candidates, *ends)
        for commit, older, newer in choices:
            if not (self.installed(commit, older) and self.installed(commit, newer)):
                continue
            labels = [commit_label(commit.sha, jaxlib) for jaxlib in (older, newer)]
            self.together([found.first, *labels, found.last])
            a = self._label(labels[0], older, commit, "attribution").judgement.verdict
            b = self._label(labels[1], newer, commit, "attribution").judgement.verdict
            attributed.commit, attributed.older, attributed.newer = commit, older, newer
            said = found.terms.word
            verdicts = f"{said(a)} with jaxlib {older} and {said(b)} with {newer}"
            at = f"jax at {commit.short} is {verdicts}"
            good, bad = ReleaseVerdict.GOOD, ReleaseVerdict.BAD
            attributed.cause, attributed.note = {
                (good, bad): (
                    JAXLIB,
                    f"jaxlib takes part (XLA / C++, between {found.first} and {found.last}): {at}; "
                    "whether jax's Python takes part too is not measured here (its commits before "
                    "and after that one would need the other jaxlib)",
                ),
                (bad, bad): (BEFORE, f"jax's Python, at or before {commit.short}: {at}"),
                (good, good): (AFTER, f"jax's Python, after {commit.short}: {at}"),
                (bad, good): (
                    NEITHER,
                    f"neither jax's Python nor jaxlib alone: {at} ({new} with the older jaxlib, "
                    f"{old} with the newer): not one change to bisect",
                ),
            }.get((a, b), ("", f"not attributed: {at}"))
            if attributed.cause:
                pick = self.plan.get(commit.sha)
                self.points[commit.sha] = next(
                    p
                    for p in reversed(found.probes)
                    if p.commit == commit and p.jaxlib in (pick, older)
                )
            return
        attributed.note = (
            "no commit accepting two jaxlibs installs and imports with both: not attributed"
            if choices
            else "no commit of the range accepts two of the jaxlibs: not attributed"
        )

    def run(self) -> CommitBisect:
        found = self.found
        for version in (found.first, found.last):
            judged = self.release(version).judgement
            wanted = ReleaseVerdict.GOOD if version == found.first else ReleaseVerdict.BAD
            if judged.verdict != wanted:
                word = found.terms.old if version == found.first else found.terms.new
                why = f"{judged.verdict}: {judged.reason}"
                found.stopped = f"the {word} release {version} is not {word} ({why})"
                return found
        self.attribute()
        cause, names = found.attribution.cause, [c.sha for c in found.commits]
        if cause in (JAXLIB, NEITHER):
            return found
        at = names.index(found.attribution.commit.sha) if found.attribution.commit else -1
        if cause == BEFORE:
            names = [found.first, *names[: at + 1]]
        elif cause == AFTER:
            names = [*names[at:], found.last]
        else:
            names = [found.first, *names, found.last]
        found.outcome = bisect(names, self.point, found.terms)
        return found
