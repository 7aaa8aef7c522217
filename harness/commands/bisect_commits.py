"""``bisect --commits``: the release plan's two ends, jax's commits between them (``--jax-repo``),
each installed with a jaxlib (``commit_venvs``) and probed by the release prober and judge, so it is
measured exactly as a release; the answer beside the release bisect's, ``…-commits.{md,json}``."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.cli.ranges import RangeOptions
from harness.commands.ranges import RangeRun, progress
from harness.errors import UsageError
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
from harness.metric_names import Criterion
from harness.pins import DEFAULT_PROFILE, PROFILE_BY_NAME, index_release
from harness.render.commit_answer import commit_bisect_answer
from harness.render.release_answers import Answer
from harness.steps.commit_bisect import CommitBisect, CommitSearch
from harness.steps.evidence import Found, Pair
from harness.steps.judge import FIX, REGRESSION, Judge
from harness.store.schema import Libraries
from harness.units import version_key

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
