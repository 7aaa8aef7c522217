"""What ``bisect``, ``sweep`` and ``triage`` share: the release plan read (written by their nox
sessions from the package index and ``harness.pins``), the prober built, the answers' names, their
setting and where they are written, and the advice an answer gives.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.cli.options import prove_writable, undeclared
from harness.cli.ranges import RangeOptions, bounded, target_words
from harness.commands.progress import Progress
from harness.errors import UsageError
from harness.explain.defaults import repo_at_hand
from harness.explain.kinds import kinds_for, refuse_unknown_kinds, settling_kind
from harness.findings import Finding, FollowUp, nox_command
from harness.host.environment import shown_path
from harness.install.environments import INDEX_TIMES, Environments
from harness.install.index import nearby
from harness.install.upload_times import UploadTimes
from harness.install.venvs import ReleaseEnv, read_plan
from harness.measure.locks import ASIDE
from harness.measure.storing import check_results_folder
from harness.metric_names import Criterion, Judged, MetricKey
from harness.names import inside
from harness.pins import PROFILE_BY_NAME, hardware
from harness.render.json_out import document, dumps
from harness.render.release_answers import Answer
from harness.render.why import step_lines
from harness.steps.answers import RangeLibraries, Setting, answer_stem, varied_version
from harness.steps.bisection import SweepOutcome
from harness.steps.evidence import Found, Pair, Spent, Step, StepSides, WhyBudget, gather
from harness.steps.judge import metric_names
from harness.steps.probes import ReleaseProber
from harness.store.files import replace_file, write_text
from harness.store.results import load_results
from harness.store.schema import RunStatus
from harness.units import version_key

# The stages of a bisect, sweep or triage and each step's outcome stay on screen; each release
# installed and each process measured update one line in a terminal (``Progress``).
progress = Progress(milestones=("[triage]", "[bisect", "[sweep]", "written:"))
# The exit status of a sweep or triage that could measure fewer than two releases (every one not
# installable, say): no answer at all, never "no change".
UNMEASURED = 4


def release_plan(plan: Path | None, command: str, which: str) -> list[ReleaseEnv]:
    """The release plan ``--releases`` names; without one, the nox session of ``command`` that
    writes it (which ``which``)."""
    if plan is None:
        session = nox_command(command, [], [], {}, "")
        raise UsageError(f"--releases PLAN is missing: run this through `{session}`, which {which}")
    return read_plan(plan)


def plan_for(options: RangeOptions) -> list[ReleaseEnv]:
    plan = options.places.releases_plan
    envs = release_plan(plan, options.command, "lists the releases for it")
    bounded(options.command, len(envs), f"the release plan {plan}")
    ends = (envs[0].jax, envs[-1].jax) if envs else None
    held = options.libraries.jax
    wanted = (options.first, options.last) if options.libraries.vary is None else (held, held)
    if ends != wanted:
        raise UsageError(f"the release plan {plan} does not run from {wanted[0]} to {wanted[1]}")
    return envs


def _prerelease(version: str) -> bool:
    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return False


def labelled(
    options: RangeOptions, envs: list[ReleaseEnv]
) -> tuple[RangeOptions, dict[str, ReleaseEnv], dict[str, tuple[str, ...]]]:
    """What the range's releases are called and where each installs from: the plan's jax releases;
    with ``--vary``, the varied library's releases on the index from ``first`` to ``last``, each on
    the one jax release held (labelled ``0.4.33+equinox.0.11.4``: the options then name the labels),
    with the pin each holds."""
    choice = options.libraries
    if choice.vary is None:
        return options, {env.jax: env for env in envs}, {}
    [held] = envs
    times = UploadTimes(held.venv.parent / INDEX_TIMES)
    listed = [version for version, _ in times.versions_with_times(choice.vary)]
    for end in (options.first, options.last):
        if end not in listed:
            near = ", ".join(nearby(listed, end))
            raise UsageError(
                f"{choice.vary} {end} is not a release on the package index; nearby: {near}"
            )
    low, high = version_key(options.first), version_key(options.last)
    # Two final releases asked: a pre-release between them is no release of that range.
    finals = not any(map(_prerelease, (options.first, options.last)))
    versions = [
        version
        for version in listed
        if low <= version_key(version) <= high and not (finals and _prerelease(version))
    ]
    bounded(options.command, len(versions), f"{choice.vary} {options.first}–{options.last}")
    labels = {choice.label(version): held for version in versions}
    pins: dict[str, tuple[str, ...]] = {
        choice.label(version): (f"{choice.vary}=={version}",) for version in versions
    }
    renamed = dataclasses.replace(
        options, first=choice.label(options.first), last=choice.label(options.last)
    )
    return renamed, labels, pins


def refuse_unknown(names: Sequence[str], options: RangeOptions) -> None:
    """A usage error for the metric asked for where the case's ``names`` (metrics) lack it."""
    metric = options.metric
    if metric is not None and names and metric.metric_name not in names:
        raise UsageError(
            f"unknown metric {metric.metric_name} for case {options.case.name}; its metrics: "
            f"{', '.join(sorted(names))}"
        )


def stored_metric_names(options: RangeOptions) -> list[str]:
    """Every metric a stored ok result of the case has (a results folder holds one script's)."""
    folder = options.places.results / options.case.name
    if not folder.is_dir():
        return []
    ok = [r for r in load_results(folder)[0] if r.result.status is RunStatus.OK]
    return sorted({name for r in ok for name in metric_names(r)})


def prober_for(
    options: RangeOptions,
    labels: dict[str, ReleaseEnv],
    pins: dict[str, tuple[str, ...]] | None = None,
) -> ReleaseProber:
    """The prober of ``labels``, each release in its case's or script's environment."""
    measuring, choice = options.measuring, options.libraries
    environments = Environments(
        options.case,
        PROFILE_BY_NAME.get(options.profile),
        choice.policy,
        choice.hold,
        pins or {},
        progress,
    )
    return ReleaseProber(
        labels,
        options.case,
        options.sizes,
        options.profile,
        options.places.results,
        measuring.settings,
        progress,
        max_processes=measuring.max_processes,
        time_budget=measuring.time_budget,
        # one metric, or how the processes end (on its counts): what the looks go on deciding
        decide_on=(options.criterion,) if options.criterion.explained else (),
        environments=environments,
    )


def triage_command(options: RangeOptions, every_release: bool = False) -> str:
    """The ``nox -s triage`` command over ``options``' range and setting (``every_release``: one
    that measures each release, where the ends agree and a grid would see no more than they do)."""
    choice = options.libraries
    target = target_words(options.case, choice)
    span = ["--from", options.first, "--to", options.last]
    if choice.vary is not None:
        low, high = (varied_version(label, choice.vary) for label in (options.first, options.last))
        span = ["--vary", choice.vary, "--jax", str(choice.jax), "--from", low, "--to", high]
    words = [*span, *options.criterion.words()]
    words += ["--processes", str(options.measuring.processes)]
    words += ["--every-release"] if every_release else []
    return nox_command("triage", target, words, options.sizes, options.profile)


def rerun_command(options: RangeOptions, why_budget_s: float, every_kind: bool = False) -> str:
    """The command run again with a why budget of ``why_budget_s`` (what it measured is reused): the
    one that asks the kinds a spent budget left out (``every_kind``: or an answered step did)."""
    budget = ["--why-budget", f"{max(60, 60 * math.ceil(why_budget_s / 60))}"]
    budget += ["--why-every-kind"] if every_kind or options.why_every_kind else []
    budget += ["--why-kinds", shlex.quote(",".join(options.why_kinds))] if options.why_kinds else []
    if options.command == "triage":
        return f"{triage_command(options, options.every_release)} {' '.join(budget)}"
    ends = ["--broken", "--fixed"] if options.fix else ["--good", "--bad"]
    criterion = options.criterion.words()
    words = [*(["--commits"] if options.commits else []), ends[0], options.first, ends[1]]
    words += [options.last, *criterion, *budget]
    target = target_words(options.case, options.libraries)
    return nox_command("bisect", target, words, options.sizes, options.profile)


def no_change_hint(options: RangeOptions) -> Finding:
    return Finding(
        f"The endpoints agree, but a change introduced and undone between {options.first} and "
        f"{options.last} hides from a bisect; every release between them is measured by",
        (FollowUp("", triage_command(options, every_release=True)),),
    )


def undecided_hint(options: RangeOptions, open_: Sequence[str] = ()) -> Finding:
    """What was left undecided (``open_``: those comparisons), and how more processes may decide."""
    most, which = options.measuring.max_processes, f" ({', '.join(open_)})" if open_ else ""
    budget = options.measuring.time_budget
    # Either bound may have stopped the looks: the advice raises both, never only the one not hit.
    within = f" or {budget:g} s" if budget else ""
    larger = f" --time-budget {2 * budget:g}" if budget else ""
    return Finding(
        f"Undecided, not unchanged{which}: the endpoints were measured together up to {most} "
        f"processes each{within} and the statistics could tell neither a change nor its absence. "
        f"More processes may decide: the same command with `--max-processes {2 * most}{larger}` "
        "(what ran out of processes is measured again, the rest reused), best while nothing else "
        "loads the machine"
    )


def refuse_unknown_metric(found: SweepOutcome, options: RangeOptions) -> None:
    """A metric none of the measured results has, refused; one declared (``--higher-is-better``,
    ``--value``, ``--cost``) that none has, said in one line."""
    names = sorted(
        {name for m in found.ok() if m.result is not None for name in metric_names(m.result)}
    )
    say_unknown_declared(names, options)
    refuse_unknown(names, options)


def say_unknown_declared(names: Sequence[str], options: RangeOptions) -> None:
    """One line for each metric declared that no measured result has (``names``: theirs)."""
    for flag, name, shown in undeclared(options.thresholds, names):
        progress.keep(
            f"[{options.command}] {flag} {name}: no metric of {options.case.name} has that name, "
            f"so it changes nothing (its metrics: {shown})"
        )


def swept(options: RangeOptions) -> tuple[list[MetricKey] | None, bool]:
    """The metrics a sweep or triage compares (the one asked for, none with --claim, every one:
    None), and whether it judges the claim."""
    with_claim = options.criterion.by in (Judged.CLAIM, Judged.EVERY)
    if options.metric is not None:
        return [options.metric], with_claim
    return (None if options.criterion.by is Judged.EVERY else []), with_claim


def stored_libraries(
    options: RangeOptions, labels: Iterable[str], prober: ReleaseProber
) -> RangeLibraries:
    """A plain script's declared libraries as each release's stored result has them, what was
    installed beside them, and what was held (a case declares none, and its results record none)."""
    choice = options.libraries
    names = [
        str(canonicalize_name(Requirement(requirement).name))
        for requirement in options.case.subject.requirements
    ]
    versions, installed = {}, {}
    for label in labels:
        stored = prober.reuse.stored(label)
        had = stored.result.libraries if stored is not None else None
        if had is not None:
            versions[label] = {name: version for name in names if (version := had.version_of(name))}
            # the installed set, ``name==version`` each, by canonical name
            pins = (pin.partition("==") for pin in had.installed)
            installed[label] = {str(canonicalize_name(n)): version for n, _, version in pins}
    return RangeLibraries(
        versions, choice.hold, choice.vary, choice.jax, choice.policy, installed=installed
    )


@dataclass
class RangeRun:
    """A bisect, sweep or triage under way: its checked options, its plan, its prober."""

    options: RangeOptions  # with --vary, naming the labels
    envs: list[ReleaseEnv]  # the release plan
    # the range's releases, oldest first, and where each installs from
    labels: dict[str, ReleaseEnv]
    prober: ReleaseProber
    started: float = field(default_factory=time.monotonic)
    why_budget: WhyBudget = field(default_factory=WhyBudget)
    own: tuple[float, float] = field(default_factory=ASIDE.mark)  # its own work's start (``Aside``)

    def __post_init__(self) -> None:
        # one per run: what a kind reads once is reused on every step
        self.sides = StepSides(self.prober)

    @classmethod
    def start(cls, options: RangeOptions) -> RangeRun:
        """Stored results checked and the release plan read, before anything is installed."""
        # A results folder that holds another version of the script is refused, and so is a metric
        # that no stored ok result of the case has.
        check_results_folder(options.places.results, options.case)
        if options.metric is not None:
            refuse_unknown(stored_metric_names(options), options)
        refuse_unknown_kinds(options.why_kinds)
        envs = plan_for(options)
        options, labels, pins = labelled(options, envs)
        # A folder that takes no writes (read-only, full) is one line now, not a traceback or a
        # release "not measured" after the measuring.
        prove_writable(options.places.results, "results")
        prove_writable(options.places.out, "pages")
        budget = WhyBudget(options.why_budget_s)
        run = cls(options, envs, labels, prober_for(options, labels, pins), why_budget=budget)
        run.stem()  # a name too long for the answer's page is refused now, not after the measuring
        return run

    @property
    def releases(self) -> list[str]:
        return list(self.labels)

    def setting(self, **more: Any) -> Setting:
        """What was searched, with the wall time so far."""
        options = self.options
        jaxlib = {label: env.jaxlib for label, env in self.labels.items()}
        return Setting(
            options.case.name,
            options.sizes,
            options.profile,
            options.criterion,
            jaxlib,
            options.thresholds,
            time.monotonic() - self.started,
            target=tuple(target_words(options.case, options.libraries)),
            libraries=self.libraries(),
            **more,
        )

    @property
    def asks_why(self) -> bool:
        """Not with ``--no-why``, nor on a library's own releases (jax held: no defaults change)."""
        return self.options.explain and not self.options.libraries.vary

    def explain(
        self,
        pair: Pair,
        criteria: Sequence[Criterion],
        stem: str,
        releases: Pair | None = None,
        kept: Callable[[tuple[Found, ...]], None] = lambda found: None,
    ) -> tuple[Found, ...]:
        """Why the step ``pair`` moved on ``criteria`` (its metrics, or how its processes end):
        every kind asked in the order its shape asks them (``kinds_for``), within the why's budget,
        its files beside the answer ``stem``, what is found so far handed to ``kept`` as each kind
        settles; the defaults compared are those of the range's ``releases``."""
        # Unless the user set one, the budget is a share of the command's own work before its first
        # why (lock waits and installs left out); with the commands that ask what it leaves out.
        budget, options = self.why_budget, self.options
        budget.at_most(ASIDE.own_since(self.own))
        fourfold = 4 * (budget.seconds or 0)
        budget.again = budget.again or rerun_command(options, fourfold)
        budget.again_with = budget.again_with or (
            lambda seconds: rerun_command(options, max(seconds, fourfold))
        )
        budget.every_kind = options.why_every_kind
        budget.again_every = budget.again_every or rerun_command(options, fourfold, every_kind=True)
        progress(f"[{options.command}] why {' → '.join(pair)} moved: asking each kind of evidence")
        libraries = self.libraries()
        step = Step(
            *pair,
            tuple(criteria),
            hardware(options.profile),
            options.thresholds,
            options.places.out,
            stem,
            repo_at_hand(options.jax_repo, self.envs[0].venv.parent),
            script=options.case.subject.script_file,
            libraries=libraries.moved_with_jax(*pair),
            declared=tuple(libraries.moved(*pair)),
            defaults_between=releases,
        )
        step = self.sides.shaped(step)
        kinds = kinds_for(step, only=options.why_kinds)
        return gather(kinds, step, self.sides, budget, kept, settling_kind(step))

    def libraries(self) -> RangeLibraries:
        return stored_libraries(self.options, self.labels, self.prober)

    def stem(self, options: RangeOptions | None = None) -> str:
        """The answer's file name without suffix: per case, range, criterion, sizes and profile."""
        o = options or self.options
        return answer_stem(
            o.command,
            o.case.name,
            o.first,
            o.last,
            criterion=o.criterion,
            sizes=o.sizes,
            profile=o.profile,
        )

    def publish(
        self,
        answer: Answer,
        stem: str,
        *,
        data_file: bool,
        printed: bool = True,
        quiet: bool = False,
    ) -> None:
        """The answer printed (unless not ``printed``: a bisect of several metrics prints them on
        one screen), its page (and ``data_file``) written; ``quiet``: as each kind of a why does."""
        if printed:
            progress.done()
            print(answer.text, end="")
        out = self.options.places.out
        files = [(f"{stem}.md", answer.markdown)]
        files += [(f"{stem}.json", dumps(answer.data))] if data_file else []
        for name, text in files:
            path = inside(out, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            # the reports folder may hold a link planted at this name: replaced, not followed
            replace_file(path, text)
            if not quiet:
                progress(f"written: {path}")

    def answer_then_why(
        self,
        steps: Mapping[Pair, Sequence[Criterion]],
        stem: str,
        answer_of: Callable[[dict[Pair, tuple[Found, ...]]], Answer],
        *,
        printed: bool = True,
        releases: Pair | None = None,
    ) -> Answer:
        """The answer first, its why after: the page and its data written (its answers said) at
        once, then again as each kind of each step's why settles (its lines said); the screen
        printed (unless not ``printed``) once the why is done, or when stopped (Ctrl-C, a CI's
        time-out) with what it had found."""
        evidence: dict[Pair, tuple[Found, ...]] = {}
        first = answer_of(evidence)
        self.publish(first, stem, data_file=True, printed=False)
        said = first.data.get("answers") or [first.data.get("answer")]
        for line in (each for each in said if isinstance(each, str)):
            progress(f"[{self.options.command}] answer: {line}")

        def kept(pair: Pair, found: tuple[Found, ...]) -> None:
            for each in found[len(evidence.get(pair, ())) :]:
                for line in step_lines(each):
                    said = line.markdown()
                    progress(f"[{self.options.command}] why {pair[0]} → {pair[1]}: {said}")
            evidence[pair] = tuple(each for each in found if not isinstance(each, Spent))
            self.publish(answer_of(evidence), stem, data_file=True, printed=False, quiet=True)

        try:
            for pair, criteria in steps.items():
                keep = functools.partial(kept, pair)
                evidence[pair] = self.explain(pair, criteria, stem, releases, keep)
        except KeyboardInterrupt:
            self.publish(answer_of(evidence), stem, data_file=True, printed=printed)
            raise
        if steps:
            answer = answer_of(evidence)
            self.publish(answer, stem, data_file=True, printed=printed)
            return answer
        progress.done()
        if printed:
            print(first.text, end="")
        return first

    def report(self, stem: str) -> str:
        """The answer ``stem``'s page, as its screen's last line says it (``shown_path``)."""
        return shown_path(inside(self.options.places.out, f"{stem}.md"))

    def write_json(self, kind: str, body: dict[str, Any]) -> None:
        """``--json FILE``: the answer as data, where the user asked for it."""
        where = self.options.places.json
        if where is not None:
            write_text(where, dumps(document(kind, body)))
            progress(f"written: {where}")
