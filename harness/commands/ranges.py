"""What ``bisect``, ``sweep`` and ``triage`` share: the release plan read, the prober built, the answers' names,
their setting and where they are written, and the advice an answer gives.

The plan (written by ``nox -s bisect`` / ``sweep`` / ``triage`` from the package index and the release rules
of ``harness.pins``) lists every release of the range, oldest first, with what it installs.  Results go to
the results folder like any other run's and are reused from there; the answers go to
``reports/bisect-<case>-<range>-<key>.{md,json}`` (``harness.steps.answers``), ``reports/sweep-<case>.md``
and ``reports/triage-<case>-<range>-<key>.md``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.cli.ranges import RangeOptions, bounded, target_words
from harness.commands.progress import Progress
from harness.errors import UsageError
from harness.explain.kinds import KINDS
from harness.explain.option_commits import repo_at_hand
from harness.install.environments import INDEX_TIMES, Environments
from harness.install.index import nearby
from harness.install.upload_times import UploadTimes
from harness.install.venvs import ReleaseEnv, read_plan
from harness.measure.storing import check_results_folder
from harness.metric_names import MetricKey
from harness.names import inside, shown_path
from harness.pins import PROFILE_BY_NAME, nox_profile_words
from harness.render.json_out import document, dumps
from harness.render.release_answers import Answer
from harness.steps.answers import Libraries, Setting, answer_stem, criterion, varied_version
from harness.steps.bisection import SweepOutcome
from harness.steps.evidence import Found, Pair, Step, StepSides, WhyBudget, gather
from harness.steps.judge import metric_names
from harness.steps.probes import ReleaseProber
from harness.store.files import replace_file, write_text
from harness.store.results import load_results
from harness.store.schema import RunStatus
from harness.units import version_key

# The stages of a bisect, sweep or triage and each step's outcome stay on screen; each release installed and
# each process measured update one line in a terminal (``Progress``).
progress = Progress(milestones=("[triage]", "[bisect", "[sweep]", "written:"))
# The exit status of a sweep or triage that could measure fewer than two releases (every one not installable,
# say): no answer at all, never "no change".
UNMEASURED = 4


def plan_for(options: RangeOptions) -> list[ReleaseEnv]:
    command = f"nox -s {options.command}"
    if options.places.releases_plan is None:
        raise UsageError(
            f"--releases PLAN is missing: run this through `{command}`, which lists the releases for it"
        )
    envs = read_plan(options.places.releases_plan)
    bounded(options.command, len(envs), f"the release plan {options.places.releases_plan}")
    ends = (envs[0].jax, envs[-1].jax) if envs else None
    held = options.libraries.jax
    wanted = (options.first, options.last) if options.libraries.vary is None else (held, held)
    if ends != wanted:
        plan = options.places.releases_plan
        raise UsageError(f"the release plan {plan} does not run from {wanted[0]} to {wanted[1]}")
    return envs


def labelled(
    options: RangeOptions, envs: list[ReleaseEnv]
) -> tuple[RangeOptions, dict[str, ReleaseEnv], dict[str, tuple[str, ...]]]:
    """What the range's releases are called and where each installs from: the plan's jax releases; with ``--vary``,
    the varied library's releases on the index from ``first`` to ``last``, each on the one jax release held
    (labelled ``0.4.33+equinox.0.11.4``: the options then name the labels), with the pin each holds."""
    choice = options.libraries
    if choice.vary is None:
        return options, {env.jax: env for env in envs}, {}
    [held] = envs
    listed = [
        version
        for version, _ in UploadTimes(held.venv.parent / INDEX_TIMES).versions_with_times(
            choice.vary
        )
    ]
    for end in (options.first, options.last):
        if end not in listed:
            near = ", ".join(nearby(listed, end))
            raise UsageError(
                f"{choice.vary} {end} is not a release on the package index; nearby: {near}"
            )
    low, high = version_key(options.first), version_key(options.last)
    versions = [version for version in listed if low <= version_key(version) <= high]
    bounded(options.command, len(versions), f"{choice.vary} {options.first}–{options.last}")
    labels = {choice.label(version): held for version in versions}
    pins: dict[str, tuple[str, ...]] = {
        choice.label(version): (f"{choice.vary}=={version}",) for version in versions
    }
    renamed = dataclasses.replace(
        options, first=choice.label(options.first), last=choice.label(options.last)
    )
    return renamed, labels, pins


def check_stored(options: RangeOptions) -> None:
    """Before anything is installed: a results folder that holds another version of the script is refused, and so
    is a metric that no stored ok result of the case has."""
    results, case, metric = options.places.results, options.case, options.metric
    check_results_folder(results, case)
    if metric is None or not (results / case.name).is_dir():
        return
    known = {
        name
        for r in load_results(results / case.name)[0]
        if r.status is RunStatus.OK
        for name in metric_names(r)
    }
    if known and metric.metric_name not in known:
        raise UsageError(
            f"unknown metric {metric.metric_name} for case {case.name}; its metrics: {', '.join(sorted(known))}"
        )


def prober_for(
    options: RangeOptions,
    labels: dict[str, ReleaseEnv],
    pins: dict[str, tuple[str, ...]] | None = None,
) -> ReleaseProber:
    """The prober of the range's releases (``labels``), each in the environment its case or script runs in."""
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
        decide_metrics=() if options.metric is None else (options.metric.metric_name,),
        environments=environments,
    )


def triage_command(options: RangeOptions) -> str:
    """The ``nox -s triage`` command over ``options``' range and setting."""
    target = target_words(options.case, options.libraries)
    choice = options.libraries
    span = ["--from", options.first, "--to", options.last]
    if choice.vary is not None:
        versions = [varied_version(label, choice.vary) for label in (options.first, options.last)]
        span = [
            "--vary",
            choice.vary,
            "--jax",
            str(choice.jax),
            "--from",
            versions[0],
            "--to",
            versions[1],
        ]
    words = ["nox", "-s", "triage", "--", *target, *span]
    if options.metric is not None:
        words += ["--metric", options.metric.metric_name]
    elif options.claim:
        words.append("--claim")
    elif options.status:
        words.append("--status")
    words += [f"--size {name}={value}" for name, value in options.sizes.items()]
    words += [*nox_profile_words(options.profile), "--processes", str(options.measuring.processes)]
    return " ".join(words)


def no_change_hint(options: RangeOptions) -> str:
    return (
        f"The endpoints agree, but a change introduced and undone between {options.first} and {options.last} "
        f"hides from a bisect; every release between them is measured by: `{triage_command(options)}`"
    )


def undecided_hint(options: RangeOptions) -> str:
    most = options.measuring.max_processes
    return (
        f"Undecided, not unchanged: the endpoints were measured together up to {most} processes each and the "
        "statistics could tell neither a change nor its absence. More processes may decide: the same command "
        f"with `--max-processes {2 * most}` (what ran out of processes is measured again, the rest reused), best "
        "while nothing else loads the machine"
    )


def refuse_unknown_metric(found: SweepOutcome, options: RangeOptions) -> None:
    """A metric none of the measured results has, once they are measured (no stored result named them before)."""
    metric = options.metric
    names = sorted(
        {name for m in found.ok() if m.result is not None for name in metric_names(m.result)}
    )
    if metric is not None and names and metric.metric_name not in names:
        raise UsageError(
            f"unknown metric {metric.metric_name} for case {options.case.name}; its metrics: {', '.join(names)}"
        )


def swept_metrics(options: RangeOptions) -> list[MetricKey] | None:
    """The metrics a sweep or triage compares: the one asked for, none with --claim, every one (None) otherwise."""
    if options.metric is not None:
        return [options.metric]
    return [] if options.claim or options.status else None


@dataclass
class RangeRun:
    """A bisect, sweep or triage under way: its checked options, the releases of its plan, the prober that measures
    them, and when it started."""

    options: RangeOptions  # with --vary, naming the labels
    envs: list[ReleaseEnv]  # the release plan
    labels: dict[
        str, ReleaseEnv
    ]  # the range's releases, oldest first, and where each installs from
    prober: ReleaseProber
    started: float = field(default_factory=time.monotonic)
    why_budget: WhyBudget = field(default_factory=WhyBudget)

    def __post_init__(self) -> None:
        self.sides = StepSides(
            self.prober
        )  # one per run: what a kind reads once is reused on every step

    @classmethod
    def start(cls, options: RangeOptions) -> RangeRun:
        """Stored results checked and the release plan read, before anything is installed."""
        check_stored(options)
        envs = plan_for(options)
        options, labels, pins = labelled(options, envs)
        budget = WhyBudget(options.why_budget_s)
        return cls(options, envs, labels, prober_for(options, labels, pins), why_budget=budget)

    @property
    def releases(self) -> list[str]:
        return list(self.labels)

    def setting(self, **more: Any) -> Setting:
        """What was searched, with the wall time so far."""
        options = self.options
        jaxlib = {label: env.jaxlib for label, env in self.labels.items()}
        wall_s = time.monotonic() - self.started
        setting = Setting(
            options.case.name,
            options.sizes,
            options.profile,
            options.metric,
            jaxlib,
            options.thresholds,
            wall_s,
            target=tuple(target_words(options.case, options.libraries)),
            libraries=self.libraries(),
            **more,
        )
        return dataclasses.replace(setting, status=True) if options.status else setting

    @property
    def asks_why(self) -> bool:
        """Whether a step's changed defaults are tried and its compiled programs compared: not with
        ``--no-why``, nor on a library's own releases (jax held, so neither changes)."""
        return self.options.explain and not self.options.libraries.vary

    def explain(
        self, pair: Pair, metrics: Sequence[str], stem: str, releases: Pair | None = None
    ) -> tuple[Found, ...]:
        """Why the step ``pair`` moved on ``metrics``: every kind of evidence asked (``KINDS``), within the
        why's time budget; the files a kind keeps go beside the answer ``stem``.  Below releases, the
        defaults compared are those of the range's ``releases``."""
        before, after = pair
        progress(
            f"[{self.options.command}] why {before} → {after} moved: asking every kind of evidence"
        )
        step = Step(
            before,
            after,
            tuple(metrics),
            self.platform,
            self.options.thresholds,
            self.options.places.out,
            stem,
            repo_at_hand(self.options.jax_repo, self.envs[0].venv.parent),
            script=self.options.case.subject.script_file,
            libraries=self.libraries().moved(before, after),
            defaults_between=releases,
        )
        return gather(KINDS, step, self.sides, self.why_budget)

    @property
    def platform(self) -> str:
        profile = PROFILE_BY_NAME.get(self.options.profile)
        return profile.kind if profile is not None else "cpu"

    def libraries(self) -> Libraries:
        """A plain script's declared libraries as each release's stored result has them, and what was held (a
        case declares none, and its results record none)."""
        choice = self.options.libraries
        names = [
            str(canonicalize_name(Requirement(requirement).name))
            for requirement in self.options.case.subject.requirements
        ]
        versions = {}
        for label in self.labels:
            stored = self.prober.reuse.stored(label)
            had = stored.result.libraries if stored is not None else None
            if had is not None:
                versions[label] = {
                    name: version for name in names if (version := had.version_of(name))
                }
        return Libraries(versions, choice.hold, choice.vary, choice.jax, choice.policy)

    def stem(self, options: RangeOptions | None = None) -> str:
        """The answer's file name without suffix: per case, range, criterion, sizes and profile."""
        o = options or self.options
        return answer_stem(
            o.command,
            o.case.name,
            o.first,
            o.last,
            criterion=criterion(o.metric, o.claim, o.status),
            sizes=o.sizes,
            profile=o.profile,
        )

    def publish(self, answer: Answer, stem: str, *, data_file: bool, printed: bool = True) -> None:
        """The answer printed (unless not ``printed``: a bisect of several metrics prints them on one screen),
        its page written under the reports folder (with ``data_file``, its data beside it)."""
        progress.done()
        if printed:
            print(answer.text, end="")
        out = self.options.places.out
        _write(inside(out, f"{stem}.md"), answer.markdown)
        if data_file:
            _write(inside(out, f"{stem}.json"), json.dumps(answer.data, indent=1) + "\n")

    def report(self, stem: str) -> str:
        """Where the answer ``stem``'s page is written, as the last line of its screen says it: from the
        folder the command runs in where it is below it (``reports/…``), else whole."""
        return shown_path(inside(self.options.places.out, f"{stem}.md"))

    def write_json(self, kind: str, body: dict[str, Any]) -> None:
        """``--json FILE``: the answer as data, where the user asked for it."""
        where = self.options.places.json
        if where is not None:
            write_text(where, dumps(document(kind, body)))
            progress(f"written: {where}")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(
        path, text
    )  # the reports folder may hold a link planted at this name: replaced, not followed
    progress(f"written: {path}")
