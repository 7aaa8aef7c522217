"""What ``issue`` measures itself where no stored answer says it: the step confirmed, the reproducer
with jax alone, and whether the newest release on the index still shows it (or still crashes).

The two releases and the newest are measured in one interleaved run with a bisect's sides, looks and
stored results, so a later bisect or triage reuses them; the reproducer is the why's own kind
(``harness.explain.reproducer``), asked for that step alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.analysis.metrics import compare_results
from harness.analysis.significance import MOVED, Comparison, Thresholds, Verdict
from harness.analysis.spending import ALL, CHANGES
from harness.analysis.statuses import like_ends, ran, summarise
from harness.cli.issue import IssueRequest
from harness.explain.reproducer import Reproducer, ReproducerAnswer
from harness.findings import nox_command
from harness.install.venvs import ReleaseEnv, plan_entry
from harness.metric_names import Criterion, Judged, MetricKey
from harness.steps.evidence import CannotKeep, Step, StepSides
from harness.steps.probes import ReleaseProber
from harness.units import version_key
from harness.upstream.change import Dead, Reproduced, reproducer_named


@dataclass(frozen=True)
class StepRequest:
    """The step a draft is about: what the draft was asked (where its releases install, its results
    and files go, how many processes a side), the step's two releases, and where progress goes."""

    asked: IssueRequest
    good: str
    bad: str
    progress: Callable[[str], None]

    @property
    def plan(self) -> Sequence[ReleaseEnv]:
        """Every release on the index: measured only where nox gave every release's venv."""
        assert self.asked.plan is not None, "measured only through nox's plan"
        return self.asked.plan

    @property
    def newest(self) -> str:
        return max((env.jax for env in self.plan), key=version_key)


def confirm(request: StepRequest, criterion: Criterion) -> ReleaseProber:
    """The step's two releases and the newest measured together, each in the environment its case
    or script runs in, at the request's processes a side, more while a comparison is open; ordered
    so that the comparisons decided are the two the draft says: the step (first bad against last
    good) and the newest against the last good; until each is decided by the criterion (a metric,
    or how the processes end), else until each change is shown.  Stored results are reused; a
    release left alone is measured when first read."""
    releases = list(dict.fromkeys((request.good, request.bad, request.newest)))
    processes = request.asked.processes  # not the draft's own script runs' (--effort)
    prober = ReleaseProber(
        {release: plan_entry(request.plan, release) for release in releases},
        request.asked.case,
        request.asked.sizes,
        request.asked.profile,
        request.asked.results_dir,
        dataclasses.replace(request.asked.settings, processes=processes),
        request.progress,
        max_processes=max(request.asked.max_processes, processes),
        decide_on=() if criterion.by is Judged.EVERY else (criterion,),
        environments=request.asked.environments(request.progress),
    )
    request.progress(
        f"[issue {request.asked.case.name}] jax {', '.join(releases)} measured together: the step "
        "confirmed" + (" and the newest release on the index" if len(releases) > 2 else "")
    )
    ordered = [request.bad, request.good, *releases[2:]]
    decide = CHANGES if criterion.by is Judged.EVERY else ALL
    prober.measure_together(ordered, decide=decide)
    return prober


def compared(
    prober: ReleaseProber, before: str, after: str, metric: MetricKey, rule: Thresholds
) -> Comparison | None:
    return compare_results(prober(before).result, prober(after).result, metric, rule)


def newest_line(
    prober: ReleaseProber,
    request: StepRequest,
    metric: MetricKey,
    rule: Thresholds,
    target: Sequence[str],
) -> tuple[str, str]:
    """Whether the newest release on the index still shows the step, measured: "still on V: ×R"
    (against the last release before the step), "gone on V", or what it showed ("" where it is an
    end of the step); and where it is gone, the bisect that finds the release that fixed it
    (``target``: the case's or script's words)."""
    newest, good, bad = request.newest, request.good, request.bad
    if newest in (good, bad):
        return "", ""
    step = compared(prober, good, bad, metric, rule)
    against_good = compared(prober, good, newest, metric, rule)
    against_bad = compared(prober, bad, newest, metric, rule)
    if step is None or against_good is None or against_bad is None:
        named = metric.metric_name
        return f"jax {newest}, the newest release on the index, gave no figure of {named}", ""
    # A value or a presence is said by what each side showed, never a ratio.
    ratio = against_good.ratio_cell or against_good.said
    if against_good.verdict == step.verdict and step.verdict in MOVED:
        return f"still on {newest}: {ratio} against jax {good}", ""
    if against_good.verdict == Verdict.UNCHANGED or (
        against_bad.verdict in MOVED
        and against_bad.verdict != step.verdict
        and against_good.verdict not in MOVED
    ):
        words = ["--broken", bad, "--fixed", newest, *Criterion.of(metric).words()]
        asked = request.asked
        bisect = nox_command("bisect", target, words, asked.sizes, asked.profile)
        return f"gone on {newest} ({ratio} against jax {good}): fixed by then", bisect
    told = f"({against_good.verdict}), neither end told apart"
    return f"on {newest}: {ratio} against jax {good} {told}", ""


def reproduce(
    prober: ReleaseProber, request: StepRequest, metric: MetricKey, rule: Thresholds, platform: str
) -> ReproducerAnswer | str:
    """The reproducer with jax alone of the step's two releases, measured on both; or why it was not
    asked (a case: its short script already needs jax alone)."""
    case = request.asked.case
    if not case.subject.script_file:  # a case's short script needs jax alone already
        return ""
    good, bad, criteria = request.good, request.bad, (Criterion.of(metric),)
    out, script = request.asked.out_dir, case.subject.script_file
    step = Step(good, bad, criteria, platform, rule, out, f"issue-{case.name}", script=script)
    kind, sides = Reproducer(), StepSides(prober)
    step = sides.shaped(step)  # each metric judged by its shape's counterpart
    if not kind.wanted(step):
        return "no reproducer asked for this step"
    request.progress(
        f"[issue {case.name}] the reproducer with jax alone, {step.before} → {step.after}"
    )
    try:
        return kind.gather(step, sides)
    except CannotKeep as exc:
        return f"its files cannot be kept beside the draft: {exc}"


def as_reproduced(answer: ReproducerAnswer) -> Reproduced | None:
    """The reproducer as a bisect answer names it (what the draft reads, from the data the answer
    stores); None where none is."""
    if not answer.script or answer.problem:  # a refusal alone is said beside a measured one
        return None
    return reproducer_named([answer.data()], (answer.before, answer.after))


def newest_status_line(
    prober: ReleaseProber, request: StepRequest, crash: Dead, target: list[str]
) -> tuple[str, str]:
    """Whether the newest release on the index still crashes, measured and judged on its counts of
    processes that died against each side's, as the step was: "still crashes on V", "runs again on
    V", or how its processes ended where its counts tell it from both or neither ("" where it is an
    end of the step); and where it runs again, the bisect that finds since which release
    (``target``: the script's words), for the screen."""
    newest = request.newest
    if newest in (request.good, request.bad):
        return "", ""
    probe = prober(newest)
    if probe.result is None or not ran(probe.result):
        return (
            f"jax {newest}, the newest release on the index, could not be measured: {probe.note}",
            "",
        )
    side = summarise(probe.result)
    ends = [prober(release).result for release in (crash.crashes, crash.runs)]
    if ends[0] is None or ends[1] is None:
        return f"on {newest}: {side.words()}", ""
    dies, runs = like_ends(side, (summarise(ends[0]), summarise(ends[1])), Thresholds())
    if dies and not runs:
        return f"still {crash.verb} on {newest} ({side.words()})", ""
    if dies or not runs:
        return f"on {newest}: {side.words()}", ""
    if crash.regression:
        words = ["--status", "--broken", crash.crashes, "--fixed", newest]
        bisect = nox_command("bisect", target, words, request.asked.sizes, request.asked.profile)
        return (
            f"runs again on {newest} ({side.words()})",
            f"since which release it runs again: `{bisect}`",
        )
    return f"still runs on {newest} ({side.words()})", ""
