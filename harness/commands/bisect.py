"""``bisect``: the first release where a metric (or the claim) changed, probed release by release
against both ends.  With ``--commits``, on below the releases: the release plan's two ends, jax's
commits between them (``--jax-repo``), each installed with a jaxlib (``commit_venvs``) and probed by
the release prober and judge, so it is measured exactly as a release; the answer beside the release
bisect's, ``…-commits.{md,json}``."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Sequence
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.analysis.metrics import compare_runs
from harness.analysis.significance import MOVED, Verdict
from harness.cli.ranges import RangeOptions
from harness.commands.ranges import (
    RangeRun,
    no_change_hint,
    progress,
    say_unknown_declared,
    stored_metric_names,
    triage_command,
    undecided_hint,
)
from harness.errors import HarnessError, UsageError
from harness.findings import Finding, FollowUp
from harness.install import commit_venvs
from harness.install.commit_venvs import CommitEnv
from harness.install.commits import (
    Commit,
    candidate_jaxlibs,
    first_parent_commits,
    is_url,
    open_repo,
    release_commit,
)
from harness.install.venvs import ReleaseEnv, release_env
from harness.metric_names import Criterion, Judged
from harness.pins import DEFAULT_PROFILE, PROFILE_BY_NAME, index_release
from harness.render.bisect_screen import Bisected, bisect_screen, nothing_to_bisect_screen
from harness.render.commit_answer import commit_bisect_answer
from harness.render.release_answers import Answer, bisect_answer
from harness.steps.answers import Setting
from harness.steps.bisection import BisectOutcome, bisect, expected_probes, next_probe
from harness.steps.commit_bisect import CommitBisect, CommitSearch
from harness.steps.evidence import Found, Pair
from harness.steps.judge import FIX, REGRESSION, Judge, Judgement
from harness.store.schema import Libraries
from harness.units import time_left, version_key


def execute(options: RangeOptions) -> int:
    """Exit status 0 when a first bad release was found, 3 when the endpoints stayed undecided, else
    1 (``bisect_exit``)."""
    if options.commits:
        return run_commit_bisect(options)
    run = RangeRun.start(options)
    options = run.options  # with --vary, the range's ends are the labels its releases were given
    # The endpoints, against which every probe is judged, measured together until decided; the first
    # probe's release installed meanwhile.
    first_probe = next_probe(0, len(run.releases) - 1)
    run.prober.prepare_ahead([run.releases[first_probe]] if first_probe is not None else [])
    run.prober.measure_together(
        [options.first, options.last], decide="all" if options.metric else "changes"
    )
    say_unknown_declared(stored_metric_names(options), options)
    # a plain script: every metric that moved, each bisected
    if options.criterion.by is Judged.EVERY:
        return _bisect_every_changed_metric(run)
    bisected, data = _bisect(run, options)
    run.write_json("bisect", {"answers": [data]})
    return bisect_exit(bisected.found)


def bisect_exit(found: BisectOutcome) -> int:
    return 0 if found.found else 3 if found.undecided else 1


def _bisect_every_changed_metric(run: RangeRun) -> int:
    """Bisect each metric the endpoints differ on (later ones reuse the probes' stored results)."""
    options, prober = run.options, run.prober
    good, bad = prober(options.first), prober(options.last)
    if good.result is None or bad.result is None:
        missing = good if good.result is None else bad
        raise HarnessError(
            f"jax {missing.release}: {missing.note}; no endpoint to compare the metrics of"
        )
    compared, _, _ = compare_runs(good.result, bad.result, options.thresholds)
    if any(
        c.comparison.verdict == Verdict.UNDECIDED and c.comparison.invocation_spread
        for c in compared
    ):
        # Results of separate runs: the endpoints are measured again together, until decided.
        prober.measure_together([options.first, options.last], anew=True)
        good, bad = prober(options.first), prober(options.last)
        if good.result is not None and bad.result is not None:
            compared, _, _ = compare_runs(good.result, bad.result, options.thresholds)
    moved = [c.key for c in compared if c.comparison.verdict in MOVED]
    names = ", ".join(k.metric_name for k in moved) or "none"
    progress(
        f"[bisect {options.case.name}] metrics that differ between {options.first} and "
        f"{options.last}: {names}"
    )
    if not moved:
        open_ = [
            f"{c.key.metric_name} {c.comparison.ratio_cell}"
            for c in compared
            if c.comparison.verdict == Verdict.UNDECIDED and c.comparison.past(options.thresholds)
        ]
        progress.done()
        said = [
            Finding(
                f"No metric of {options.case.name} differs significantly between jax "
                f"{options.first} and {options.last}: nothing to bisect."
            )
        ]
        if open_:
            said.append(undecided_hint(options, open_))
        follow_up = FollowUp("", triage_command(options, every_release=True))
        said.append(Finding("Every release between them is measured by", (follow_up,)))
        print(nothing_to_bisect_screen(run.setting(), options.first, options.last, said), end="")
        run.write_json("bisect", {"answers": [], "moved": [], "undecided": open_})
        return 3 if open_ else 1
    # Each metric's page and data are its own; the terminal shows them all on one screen.
    each = [(key, dataclasses.replace(options, criterion=Criterion.of(key))) for key in moved]
    found = [_bisect(run, metric_options, printed=False) for _, metric_options in each]
    reports = [run.report(run.stem(metric_options)) for _, metric_options in each]
    print(bisect_screen([b for b, _ in found], run.setting(), reports), end="")
    run.write_json(
        "bisect", {"answers": [data for _, data in found], "moved": [k.metric_name for k in moved]}
    )
    return min(bisect_exit(b.found) for b, _ in found)


def _bisect(
    run: RangeRun, options: RangeOptions, *, printed: bool = True
) -> tuple[Bisected, dict[str, Any]]:
    """One metric's (or the claim's) bisect, its answer written (and ``printed``), and its data."""
    case = options.case
    terms = FIX if options.fix else REGRESSION
    judge = Judge(
        run.prober, options.first, options.last, options.criterion, options.thresholds, terms
    )
    count, expected = 0, expected_probes(len(run.labels))
    probing = time.monotonic()

    def judged(release: str) -> Judgement:
        nonlocal count
        pace = time_left(count, max(expected - count, 1), time.monotonic() - probing)
        count += 1
        progress(
            f"[bisect {case.name}] probe {count} (about {expected} expected for {len(run.labels)} "
            f"releases{'; ' + pace if pace else ''}): jax {release} …"
        )
        verdict = judge(release)
        said = terms.word(verdict.verdict)
        progress(f"[bisect {case.name}] probe {count}: jax {release} is {said}: {verdict.reason}")
        return verdict

    # the next probe's venvs are installed while this one is measured
    found = bisect(run.releases, judged, terms, ahead=run.prober.prepare_ahead)
    hint = no_change_hint(options) if found.no_change else None
    if found.undecided:
        hint = undecided_hint(options)
    steps: dict[Pair, list[Criterion]] = {}
    asked = options.criterion.explained
    if found.found and found.last_good and found.first_bad and asked and run.asks_why:
        steps[(found.last_good, found.first_bad)] = [options.criterion]
    stem = run.stem(options)
    settings: list[Setting] = []

    def answer_of(evidence: dict[Pair, tuple[Found, ...]]) -> Answer:
        # The run's setting, judged by this bisect's criterion.
        setting = run.setting(terms=terms, evidence=evidence)
        settings[:] = [dataclasses.replace(setting, criterion=options.criterion)]
        return bisect_answer(found, settings[0], hint, run.report(stem))

    answer = run.answer_then_why(steps, stem, answer_of, printed=printed)
    return Bisected(found, settings[0], hint), answer.data


# How a script's libraries are had on a commit: the good release's versions, held.
HELD = "held"


def jaxlib_number(env: ReleaseEnv) -> str:
    """The jaxlib a release installs (a CUDA build's extra picks the release's number)."""
    return env.jaxlib if version_key(env.jaxlib)[0] else env.jax


def held_libraries(run: RangeRun) -> Libraries:
    """A plain script's own libraries on every commit, held at its good release's versions, so that
    only jax moves between the commits."""
    options = run.options
    requirements = options.case.subject.requirements
    good = run.prober.reuse.stored(options.first)
    had = good.result.libraries if good is not None else None  # a case's results record none
    if had is None:
        return Libraries(HELD, (), hashlib.sha256(b"").hexdigest())
    names = {canonicalize_name(Requirement(requirement).name) for requirement in requirements}
    pins = tuple(pin for pin in had.installed if canonicalize_name(pin.partition("==")[0]) in names)
    return Libraries(
        HELD, pins, hashlib.sha256("\n".join(pins).encode()).hexdigest(), None, requirements, pins
    )


def run_commit_bisect(options: RangeOptions) -> int:
    """Exit status 0 when a commit (or jaxlib) was named, 1 when not."""
    run = RangeRun.start(options)
    envs, prober = run.envs, run.prober
    cache = envs[0].venv.parent
    repo = open_repo(options.jax_repo, cache)
    # a clone of the harness's own, under .nox/
    kept = options.jax_repo is None or is_url(options.jax_repo)
    good, bad = (
        release_commit(repo, version, fetch=kept) for version in (options.first, options.last)
    )
    commits = first_parent_commits(repo, good, bad)
    if not commits:
        raise UsageError(
            f"no jax commits from {options.first} to {options.last} along the first parents in "
            f"{repo}"
        )
    jaxlibs = {envs[0].jax: jaxlib_number(envs[0]), envs[-1].jax: jaxlib_number(envs[-1])}
    candidates = candidate_jaxlibs(
        commits, [jaxlib_number(env) for env in envs], jaxlibs[options.first], jaxlibs[options.last]
    )
    progress(
        f"[bisect --commits] {len(commits)} jax commits from {options.first} to {options.last} in "
        f"{repo}; jaxlibs to try: {', '.join(candidates)}"
    )
    profile = PROFILE_BY_NAME.get(options.profile, DEFAULT_PROFILE)
    environ = {**os.environ, **profile.env}
    prober.measure_together([options.first, options.last])
    held = held_libraries(run)
    terms = FIX if options.fix else REGRESSION
    judge = Judge(prober, options.first, options.last, options.criterion, options.thresholds, terms)

    def base(jaxlib: str) -> ReleaseEnv:
        listed = [env for env in envs if jaxlib_number(env) == jaxlib]
        if listed:
            return listed[-1]
        return release_env(index_release(jaxlib, jaxlib), profile, envs[0].python, cache)

    def prepare(commit: Commit, jaxlib: str) -> str | None:
        env = CommitEnv(commit.sha, jaxlib, base(jaxlib), repo, held.held)
        progress(
            f"  jax at {commit.short} with jaxlib {jaxlib} into {env.env.venv} (installed once, "
            "then reused)"
        )
        problem = commit_venvs.ensure(env, environ)
        if problem is None:
            prober.add_commit(env.label, env.env, held)
        return problem

    def together(labels: Sequence[str]) -> None:
        prober.measure_together(
            labels, anew=any(prober.reuse.reusable(label) is None for label in labels)
        )

    found = CommitBisect(options.first, options.last, commits, jaxlibs, terms)
    CommitSearch(found, candidates, judge, prepare, together, progress).run()
    step, stem = found.step(), f"{run.stem()}-commits"
    steps: dict[Pair, list[Criterion]] = {}
    asked = options.criterion.explained
    if step is not None and asked and run.asks_why:
        steps[step] = [options.criterion]

    def answer_of(evidence: dict[Pair, tuple[Found, ...]]) -> Answer:
        return commit_bisect_answer(
            found, run.setting(terms=terms, evidence=evidence), run.report(stem)
        )

    releases = (options.first, options.last)
    answer = run.answer_then_why(steps, stem, answer_of, releases=releases)
    run.write_json("bisect-commits", answer.data)
    return 0 if found.first_bad_commit is not None or found.jaxlib_change else 1
