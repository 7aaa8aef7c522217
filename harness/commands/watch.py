"""``watch``: each script, suite or case triaged over two releases with the triage's own machinery
(``RangeRun``, ``harness.steps.triage``), the findings summed up (``harness.steps.watch``), the
settled ones remembered.  Every target is checked before anything is measured, so a script that
cannot be watched is one line, not an hour lost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.catalogue.benchmark_suite import (
    IMPORT_TIME,
    SUITE_PATH,
    unchanged,
    wrapper_name,
    wrapper_text,
)
from harness.catalogue.discovery import CaseInfo, anchor_sizes
from harness.catalogue.scripts import read_script
from harness.cli.options import prove_writable
from harness.cli.ranges import LibraryChoice, Places, RangeOptions
from harness.cli.watch import WatchOptions
from harness.commands.ranges import RangeRun, progress, refuse_unknown_metric, release_plan
from harness.commands.triage import timing_steps
from harness.errors import UsageError
from harness.host.environment import shown_path
from harness.measure.import_times import MAX_BYTES as IMPORT_BYTES
from harness.measure.import_times import costliest
from harness.measure.load import load_threshold
from harness.metric_names import Criterion, Judged, MetricKey
from harness.names import inside
from harness.render.json_out import dumps, thresholds_json
from harness.render.triage_answer import triage_answer
from harness.render.triage_words import answered
from harness.render.watch_summary import WatchSummary, watch_json, watch_markdown
from harness.render.why import why_lines as explained
from harness.steps import reuse
from harness.steps.answers import Setting
from harness.steps.confirm import ConfirmPairs, PairConfirmer
from harness.steps.suite_floor import SuiteCap, cap_line, out_of_reach, reach
from harness.steps.triage import TriageOutcome, triage
from harness.steps.watch import (
    Memory,
    TargetWatch,
    benchmark_medians,
    blind,
    called_changes,
    decided_in_confirmations,
    findings,
    first_regression,
    first_round_open,
    first_round_spreads,
    measured_again,
    memory_key,
    results_read,
    side_loads,
)
from harness.steps.watch import detectable as detectable_changes
from harness.store.files import DocumentProblem, read_bounded, replace_file
from harness.units import format_seconds

SUMMARY = "watch"  # watch.md and watch.json in the output folder
SUITES = "watch-suites"  # the scripts that run a pytest-benchmark suite, in the output folder
# What of the measuring settings a watch remembers it measured by (besides processes and budget).
REMEMBERED_SETTINGS = ("repeats", "max_seconds", "effort", "max_load")


@dataclasses.dataclass(frozen=True)
class Target:
    """One thing watched, and the suite a wrapper script runs."""

    case: CaseInfo
    kind: str
    suite: Path | None = None
    digest: str = ""  # the suite's files' when the watch began


def the_pair(options: WatchOptions) -> tuple[str, str, dict[str, str]]:
    """(baseline, release) and their jaxlibs, as the plan and the command line name them."""
    envs = release_plan(options.releases_plan, "watch", "finds the releases on the index")
    if len(envs) != 2:
        raise UsageError(
            f"the release plan {options.releases_plan} lists {len(envs)} releases; a watch takes "
            "two"
        )
    baseline, release = envs[0].jax, envs[1].jax
    for given, planned in ((options.baseline, baseline), (options.release, release)):
        if given is not None and given != planned:
            raise UsageError(
                f"the release plan {options.releases_plan} runs {baseline} and {release}, not "
                f"{given}"
            )
    return baseline, release, {env.jax: env.jaxlib for env in envs}


def targets(options: WatchOptions) -> list[Target]:
    """The cases and scripts, then the suite (its wrapper script written now)."""
    found = [Target(case, case.subject.kind) for case in options.cases]
    if options.suite is not None:
        folder = inside(options.out, SUITES)
        folder.mkdir(parents=True, exist_ok=True)
        wrapper = inside(folder, wrapper_name(options.suite.path))
        replace_file(wrapper, wrapper_text(options.suite.digest, options.suite.compile_cache))
        case = read_script(
            wrapper,
            options.suite.args,  # the maintainer's selection, pytest's arguments
            with_specs=options.with_specs,
            requirements=options.requirements,
        )
        found.append(Target(case, "pytest-benchmark", options.suite.path, options.suite.digest))
    names = [target.case.name for target in found]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(f"two targets would be stored as {twice[0]}: rename one")
    return found


def range_options(
    target: Target, options: WatchOptions, baseline: str, release: str
) -> RangeOptions:
    """The target's triage over the pair, as ``triage`` would be asked for it."""
    return RangeOptions(
        command="triage",
        case=target.case,
        sizes=anchor_sizes(target.case, {}),
        profile=options.profile,
        first=baseline,
        last=release,
        criterion=Criterion(Judged.EVERY),
        thresholds=options.thresholds,
        measuring=options.measuring,
        places=Places(options.releases_plan, options.results, options.out),
        libraries=LibraryChoice(policy=options.policy),
        explain=options.explain,
        why_budget_s=options.why_budget_s,
        why_kinds=options.why_kinds,
    )


@contextlib.contextmanager
def suite_in_environment(target: Target) -> Iterator[None]:
    """The suite's path where its wrapper script finds it, while its target is measured: in the
    environment every side inherits, never in a result or a page.  The suite is read-only to the
    run: its files' digest is the same after as before, else nothing of the run is judged."""
    if target.suite is None:
        yield
        return
    before = os.environ.get(SUITE_PATH)
    os.environ[SUITE_PATH] = str(target.suite)
    try:
        unchanged(target.suite, target.digest)
        yield
        unchanged(target.suite, target.digest)
    finally:
        if before is None:
            os.environ.pop(SUITE_PATH, None)
        else:
            os.environ[SUITE_PATH] = before


def memory_material(run: RangeRun, target: Target, jaxlib: dict[str, str]) -> dict[str, Any]:
    """Everything that would make a watch of this target measure something else; a script's
    libraries as each release resolves them now (its venvs made ready, which measuring needs
    anyway)."""
    options = run.options
    assert run.prober.environments is not None
    libraries = run.prober.environments.resolved(run.labels)
    measuring = options.measuring
    return {
        "target": target.case.name,
        # what the target is, as its results identify it: a script's content (a suite's wrapper
        # names the suite's digest), a case file's
        "content": target.case.subject.content_digest(target.case.path),
        "args": list(target.case.subject.args),
        "sizes": options.sizes,
        "profile": options.profile,
        "pair": {label: jaxlib.get(label) for label in run.labels},
        "libraries": libraries,
        "policy": options.libraries.policy,
        "processes": measuring.processes,
        "max_processes": measuring.max_processes,
        "time_budget": measuring.time_budget,
        "settings": {name: getattr(measuring.settings, name) for name in REMEMBERED_SETTINGS},
        "thresholds": thresholds_json(options.thresholds),
    }


def why_lines(setting: Setting, found: TriageOutcome) -> list[str]:
    """Per change the watch calls: each metric's trial, then the step's listing once."""
    lines: list[str] = []
    said: set[tuple[str, str]] = set()
    for change in called_changes(found):
        step = change.step
        pair = (step.before, step.after)
        found_why = explained(
            setting,
            *pair,
            change.comparison,
            step.criterion,
            with_step=pair not in said,
            unwanted=change.regression,
        )
        lines += [each.markdown() for each in found_why]
        said.add(pair)
    return lines


def issue_posargs(target: Target, watched: TargetWatch, run: RangeRun) -> tuple[str, ...]:
    """``nox -s issue`` posargs for the target's first regression of a metric; none for a suite (its
    wrapper is no script to quote) or without one."""
    regression = first_regression(watched)
    if regression is None or target.kind == "pytest-benchmark":
        return ()
    options = run.options
    subject = target.case.subject
    what = [*subject.named_by(target.case.name, shown_path(target.case.path)), *subject.given]
    what += [f"--size={name}={value}" for name, value in options.sizes.items()]  # a script has none
    ends = ("--good", options.first, "--bad", options.last)
    return (*what, *ends, "--metric", regression.metric, "--profile", options.profile)


class SuiteFloor(SuiteCap):
    """``SuiteCap`` for one target: where its import goes, and what measuring again can decide."""

    def __init__(self, target: Target, run: RangeRun, deadline: float | None) -> None:
        name = target.case.name
        super().__init__(
            run.options.thresholds,
            deadline,
            lambda line: progress(f"[watch] {name}: {line}"),
            planned=run.options.measuring.processes,
        )
        self.options = run.options
        self.imports: dict[str, list[str]] = {}  # release → its costliest imports, said

    def to_json(self) -> dict[str, Any]:
        if self.said is None:
            return {}
        imports = {"imports": self.imports} if self.imports else {}
        return {**self.said.to_json(), "said": self.said.line(), **imports}

    def where_imports_go(self, run: RangeRun) -> None:
        """Where import is most of a process: one extra process a side under ``-X importtime``,
        off the timing path, and the costliest imports it shows (``import_times.costliest``)."""
        cost = self.said.cost if self.said is not None else None
        if cost is None or cost.parts.get("import", 0.0) <= cost.wall_s / 2:
            return
        if (left := self.left()) is not None and left < 2 * cost.wall_s:
            self.say(
                f"where its import goes not asked: --max-time leaves {format_seconds(left)}, less "
                "than its process a side"
            )
            return
        for label in run.labels:
            side = run.sides.side(label)
            if isinstance(side, str):
                continue
            with tempfile.TemporaryDirectory(prefix="harness-importtime-") as folder:
                report = Path(folder) / "importtime.txt"
                self.say(f"where its import goes on {label} (-X importtime)")
                run.sides.one_more_process(side, env={IMPORT_TIME: str(report)})
                try:
                    text = read_bounded(report, limit=IMPORT_BYTES).decode(errors="replace")
                except (OSError, DocumentProblem):
                    continue
            self.imports[label] = costliest(text)

    def within_reach(
        self, found: TriageOutcome, still_open: list[MetricKey], confirmer: PairConfirmer
    ) -> tuple[list[MetricKey], dict[MetricKey, tuple[str, float]], ConfirmPairs]:
        """The open benchmarks measuring again can decide, those it cannot (each said, with the
        smallest change still detectable), and the confirmer held to what is left."""
        if self.stop():  # nothing is measured again: every benchmark left open says why
            return [], self.unmeasured(found, still_open), confirmer
        measuring = self.options.measuring
        ran = [p for m in found.first_round.ok() if m.result for p in m.result.result.processes]
        most, why = reach(ran, measuring.max_processes, self.left())
        spreads = first_round_spreads(found)
        open_spreads = {key: spreads[key] for key in still_open if key in spreads}
        beyond = out_of_reach(open_spreads, self.options.thresholds, most, why)
        held = self.held(confirmer, max(most, measuring.processes))
        return [key for key in still_open if key not in beyond], beyond, held


def watch_one(
    target: Target,
    run: RangeRun,
    memory: Memory,
    jaxlib: dict[str, str],
    deadline: float | None = None,
) -> TargetWatch:
    """From memory where this pair was watched with the same script and libraries, else triaged,
    its changes asked why, its page written, and remembered once settled."""
    material = memory_material(run, target, jaxlib)
    key = memory_key(material)
    remembered = memory.recall(target.case.name, key)
    if remembered is not None:
        progress(
            f"[watch] {target.case.name}: watched on {remembered.remembered} with the same script "
            "and libraries; not measured again"
        )
        return remembered
    options = run.options
    measuring = options.measuring
    # What an earlier watch of this key read and left open is not read again: measured anew.
    spent = memory.spent(target.case.name, key)
    first_look = reuse.first_round(measuring.processes)
    suite = SuiteFloor(target, run, deadline) if target.kind == "pytest-benchmark" else None
    first_round = dataclasses.replace(
        run.prober,
        accept=lambda stored: first_look(stored) and stored.result.id not in spent,
        measure=functools.partial(run.prober.measure, first_round=suite),
    )
    confirmer = PairConfirmer(
        dataclasses.replace(run.prober, accept=lambda stored: stored.result.id not in spent)
    )
    with suite_in_environment(target):
        found = triage(
            run.releases,
            first_round,
            suite.held(confirmer) if suite else confirmer,
            metrics=None,
            with_claim=target.kind != "pytest-benchmark",  # a suite's wrapper states no claim
            thresholds=options.thresholds,
            progress=progress,
        )
        refuse_unknown_metric(found.first_round, options)  # a declared metric none has: said
        read = results_read(found)
        still_open = first_round_open(found)
        again = decided_in_confirmations(found, still_open, options.thresholds)
        still_open = [key for key in still_open if key not in again]
        beyond: dict[MetricKey, tuple[str, float]] = {}
        again_pairs: ConfirmPairs = confirmer
        if suite is not None:
            still_open, beyond, again_pairs = suite.within_reach(found, still_open, confirmer)
        if still_open:
            progress(
                f"[watch] {len(still_open)} metric(s) the first round left undecided: measured "
                "again, until decided"
            )
            measured, also = measured_again(again_pairs, found, still_open, options.thresholds)
            again |= measured
            read |= also
        if suite is not None:
            suite.where_imports_go(run)
        stem = run.stem()
        # Why each change the watch calls happened, as triage asks it (none with --no-why): every
        # kind of evidence (``harness.explain.kinds``) within the why's time budget.
        called = dataclasses.replace(found, confirmations=called_changes(found))
        if suite is not None:  # measured on optimistix: the why ran minutes past a spent cap
            run.why_budget.ceiling = suite.left()
        steps = timing_steps(run, called)
        evidence = {pair: run.explain(pair, moved, stem) for pair, moved in steps.items()}
        setting = run.setting(evidence=evidence)
    answer = triage_answer(found, setting, measuring.processes, options.places.out, stem)
    run.publish(answer, stem, data_file=False)
    detected = detectable_changes(
        found, options.thresholds, measuring.processes, measuring.max_processes
    )
    detected |= {key: max(detected.get(key, 0.0), seen) for key, (_, seen) in beyond.items()}
    unseeable = (suite.at_cap(beyond) if suite else None) or blind(
        detected, measuring.max_processes, options.thresholds
    )
    why_not = {key: said for key, (said, _) in beyond.items()}
    watched = TargetWatch(
        target.case.name,
        target.kind,
        (*findings(found, answered(found), again, why_not), *([unseeable] if unseeable else [])),
        tuple(side_loads(found)),
        detected,
        f"{stem}.md",
        tuple(why_lines(setting, found)),
        libraries=run.libraries().versions,
        medians=benchmark_medians(found) if suite else {},
        floor=suite.to_json() if suite else {},
    )
    watched = dataclasses.replace(watched, issue=issue_posargs(target, watched, run))
    if watched.settled:
        memory.remember(key, material, watched, datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    else:
        memory.remember_open(target.case.name, key, read)
    return watched


def execute(options: WatchOptions) -> int:
    """Exit status 1 on a confirmed regression (or a target broken on the release), 3 where none was
    but something stayed open, else 0."""
    started = time.monotonic()
    baseline, release, jaxlib = the_pair(options)
    watched_targets = targets(options)
    runs = [
        RangeRun.start(range_options(target, options, baseline, release))
        for target in watched_targets
    ]
    progress(
        f"[watch] jax {release} against {baseline}: {len(runs)} target(s), each in one interleaved "
        "run"
    )
    deadline = None if options.max_time_s is None else started + options.max_time_s
    if options.max_time_s is not None:
        progress(f"[watch] {cap_line(options.max_time_s, options.thresholds)}")
    prove_writable(options.memory, "the watch's memory")
    memory = Memory(options.memory)
    watched = []
    for number, (target, run) in enumerate(zip(watched_targets, runs, strict=True), start=1):
        progress(f"[watch] ({number}/{len(runs)}) {target.case.name} ({target.kind})")
        watched.append(watch_one(target, run, memory, jaxlib, deadline))
    summary = WatchSummary(
        baseline,
        release,
        jaxlib,
        options.profile,
        options.measuring.processes,
        options.measuring.max_processes,
        options.thresholds,
        watched,
        time.monotonic() - started,
        load_threshold(options.measuring.settings),
    )
    markdown = watch_markdown(summary)
    options.out.mkdir(parents=True, exist_ok=True)
    for suffix, text in (("md", markdown), ("json", dumps(watch_json(summary)))):
        path = inside(options.out, f"{SUMMARY}.{suffix}")
        replace_file(path, text)
        progress(f"written: {path}")
    sys.stdout.write(markdown)
    return summary.status
