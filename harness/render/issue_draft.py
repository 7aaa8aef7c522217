"""An upstream issue draft, in the shape of JAX's bug-report form, for a step of any shape: pure,
a model in, markdown out, the step's shape choosing its sections.

A maintainer reads the title first (what changed, by how much, since which release), then a script
to paste and its real output on both releases; the evidence comes after, in short tables, and what
is long is folded.  Every text from outside the harness is redacted again here (a stored result
merged or edited is input too), the script's own text as code (its ``key=k`` kept).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.analysis.claims import DOES_NOT_HOLD, HOLDS, UNSETTLED, outcome
from harness.analysis.groups import release_key
from harness.analysis.metrics import metric_samples
from harness.analysis.significance import MOVED, Verdict
from harness.catalogue.discovery import CaseInfo
from harness.explain.reproducer import REQUIREMENTS
from harness.host.environment import redact, scrub, shareable_variables
from harness.measure.deaths import from_site_packages
from harness.measure.deaths import last_lines as tail
from harness.measure.figures import parse_output
from harness.metric_names import JSON, KINDS, PHASES, PROCESS, MetricKey
from harness.render.tables import markdown_table
from harness.render.text import code_span, fenced, folded, inline, listed
from harness.store.results import StoredResult
from harness.store.schema import EndKind, RunStatus
from harness.units import format_ns, format_p, sizes_text
from harness.upstream.change import Change, Dead, newest_result, shape_words, title
from harness.upstream.installs import script_words

FORM = "https://github.com/jax-ml/jax/issues/new?template=bug-report.yml"
SYSTEM_INFO = "### System info (python version, jaxlib version, accelerator, etc.)"
VERDICTS = {HOLDS: "holds", DOES_NOT_HOLD: "does not hold", UNSETTLED: "unsettled"}
EMPTY = ("", "–")
# "Good" and "bad" only for a slowdown: a speed-up, a fix or an unknown direction, neutrally.
NEUTRAL_ROLES = {
    "last good": "the last release before the change",
    "first bad": "the first release with the change",
}


@dataclass(frozen=True)
class ScriptRun:
    """A script run for the draft: where, with what, and what it printed."""

    release: str
    profile: str
    variables: dict[str, str]
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    timeout_s: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


@dataclass(frozen=True)
class ReleaseRun:
    """The short script on one release of the change, in an environment of its own."""

    role: str  # "last good", "first bad", or "installed here"
    run: ScriptRun
    install: list[str]  # what ``pip install`` takes for this release, exactly
    environment: str  # where it ran, in words
    packages: list[str] = field(default_factory=list)  # ``name==version``: all it held


@dataclass(frozen=True)
class DraftInputs:
    """What a draft says, of a step of any shape (an ending's: no script runs, its processes')."""

    case: CaseInfo
    sizes: dict[str, int]
    platform: str  # the profile's kind: "cpu", "gpu" or "tpu"
    short_name: str  # the script the draft pastes (an ending's: its reproducer)
    short_script: str  # its text, "" where none can be shown
    environment_info: str
    results: list[StoredResult]
    short_runs: list[ReleaseRun] = field(default_factory=list)
    full_name: str = ""
    full_run: ScriptRun | None = None  # the full instrumented script's run; an ending's: none
    change: Change | None = None
    script_words: str = ""  # an ending's reproducer, what it is: "the script itself (plain JAX)"
    missing_script: str = ""  # where no reproducer is shown: why, and the command that adds one
    # an ending's: release → what ``pip install`` takes; absent: jax and jaxlib at it
    installs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    dumps: str = ""  # the folder beside the draft holding XLA's dumps of both releases
    reproducer: str = ""  # the folder beside the draft holding the reproducer with jax alone
    newest: str = ""  # whether the newest release on the index still shows it ("still on …")
    not_measured: tuple[str, ...] = ()  # what the draft could not measure, each with its command


def slowed(change: Change | None) -> bool:
    """A slowdown: the one case where "last good" and "first bad" are the right words."""
    metric, ratio = (change.metric, change.ratio) if change is not None else (None, None)
    known = change is not None and change.significant is not False
    return known and metric is not None and metric.is_duration and ratio is not None and ratio > 1


def role_text(role: str, change: Change | None) -> str:
    return role if slowed(change) else NEUTRAL_ROLES.get(role, role)


def table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """A markdown table without columns empty in every row: a maintainer reads no blank column."""
    keep = [i for i in range(len(headers)) if i == 0 or any(row[i] not in EMPTY for row in rows)]
    return markdown_table([[row[i] for i in keep] for row in rows], [headers[i] for i in keep])


def render(d: DraftInputs) -> str:
    """The draft: an ending's says what happened, any other's the script's outputs and evidence."""
    dead = d.change.dead if d.change is not None else None
    said = [f"**Title:** {scrub(draft_title(d)) if dead is None else inline(draft_title(d))}"]
    described = description(d) if dead is None else ending_description(d, dead)
    # whether the newest release still shows it; what could not be measured, and how
    newest = [f"Newest release on the index: {scrub(d.newest)}." if d.newest else ""]
    newest += [f"{scrub(line).rstrip('.')}." for line in d.not_measured]
    said += ["### Description", described, "\n\n".join(line for line in newest if line)]
    code = reproduction(d) if dead is None else ending_reproducer(d, dead)
    after = [outputs(d), evidence(d), full_script(d)] if dead is None else [what_happened(dead)]
    sections = [
        f"<!-- Issue draft by jax-repro-harness for {inline(d.case.name)}. Paste the sections "
        f"below into the fields of the same name in JAX's bug-report form ({FORM}); the script is "
        f"{inline(d.short_name)}"
        + (f", the full instrumented one {d.full_name}" if d.full_run else "")
        + ", beside this file. -->",
        # stored answers and results, merged or edited, are input too
        *map(redact, [*said, with_jax_alone(d)]),  # none for an ending: it has no metric
        redact(code, code=True),  # the script's text: its ``key=k`` is code, kept
        *map(redact, [*after, system_info(d)]),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def draft_title(d: DraftInputs) -> str:
    name = d.case.subject.script_file or d.case.name
    return title(d.change, headline(d.case.claim), d.platform, name)


def headline(claim: str) -> str:
    """The claim's first clause: the statement without how the case checks it."""
    return re.split(r"[:.;]\s", claim, maxsplit=1)[0].rstrip(".")


def description(d: DraftInputs) -> str:
    """A few short sentences: what changed by how much, how sure, in which phase, from where."""
    change = d.change
    context = d.case.subject.provenance(d.case.claim, d.case.source)  # a user's, or a discussion
    shaped = change is not None and not change.shape.ratio and change.significant
    if change is not None and change.metric is not None and shaped:
        compared = change.compared
        assert compared is not None
        counts = "{} and {}".format(*compared.processes)
        return (
            f"{change.metric.quoted()} {shape_words(change)} between jax {change.last_good} and "
            f"jax {change.first_bad}, over {counts} separate Python processes ({compared.test}). "
            f"{context}"
        )
    if change is None or change.metric is None or change.ratio is None:
        return f"{context} The script below times it; its output on each release it ran on follows."
    assert change.before_ns is not None and change.after_ns is not None
    metric = change.metric
    at = f", at {sizes_text(d.sizes)}" if d.sizes else ""
    sentences = [
        f"{metric.quoted()} got {change.moved} between jax "
        f"{change.last_good} and jax {change.first_bad} ({metric.format(change.before_ns)} → "
        f"{metric.format(change.after_ns)}){at}.",
        how_sure(change),
        phase_reading(change),
        f"Below the releases: {scrub(change.below)}." if change.below else "",
        context,
    ]
    return " ".join(sentence for sentence in sentences if sentence)


def how_sure(change: Change) -> str:
    """How sure a cost's change is, from its comparison's process medians, in a sentence."""
    compared = change.compared
    if compared is None or compared.cost is None:
        return ""
    old, new = compared.baseline, compared.candidate
    count = f"{old.n}" if old.n == new.n else f"{old.n} and {new.n}"
    duration = change.metric is None or change.metric.is_duration
    higher, lower = ("slower", "faster") if duration else ("higher", "lower")
    ahead = higher if new.minimum > old.maximum else lower if new.maximum < old.minimum else ""
    if ahead:
        return (
            f"Measured in {count} separate Python processes per release: every one on "
            f"{change.first_bad} {ahead} than every one on {change.last_good}."
        )
    return (
        f"Measured in {count} separate Python processes per release, whose figures overlap: the "
        f"medians differ ×{compared.cost.ratio:.3g} at p={format_p(compared.p_value)} (Welch's "
        "t-test on their logs)."
    )


def phase_reading(change: Change) -> str:
    """Which phases of the changed program (a script: of the process) moved and which did not."""
    metric = change.metric
    if metric is None or not change.comparisons:
        return ""
    name = PROCESS if metric.name in (JSON, PROCESS) else metric.name
    moved, still = [], []
    table = PHASES if name == PROCESS else KINDS
    # What comes before the run first (tracing, lowering, compiling), then the run's own times.
    for kind, measured in sorted(table.items(), key=lambda row: row[1].run_time):
        compared = change.comparisons.get(MetricKey(name, kind))
        if not measured.words or compared is None or compared.cost is None:
            continue
        if compared.verdict in MOVED:
            ratio = max(compared.cost.ratio, 1 / compared.cost.ratio)
            moved.append((kind, f"{measured.words} (×{ratio:.3g} {compared.said})"))
        elif compared.verdict is Verdict.UNCHANGED:
            still.append(measured.words)
    if not moved or ([kind for kind, _ in moved] == [metric.kind] and not still):
        return ""  # nothing moved, or only the metric the headline already names
    said = f"{listed([text for _, text in moved])} moved"
    said += f"; {listed(still)} did not" if still else ""
    return said[0].upper() + said[1:] + "."


def command_line(run: ScriptRun, script_name: str, args: Sequence[str] = ()) -> str:
    variables = shareable_variables(run.variables)
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
    command = shlex.join(["python", script_name, *args])
    return f"{env} {command}" if env else command


def with_jax_alone(d: DraftInputs) -> str:
    """The reproducer with jax alone, first where it showed the change, and what it measured."""
    change = d.change
    if not d.reproducer or change is None or change.reproducer is None or change.metric is None:
        return ""
    found = change.reproducer
    verdict, ratio = found.measured[change.metric]
    counterpart = found.counterparts[change.metric].metric_name
    theirs = f"×{ratio:.3g}" if ratio else verdict
    mine = f"×{change.ratio:.3g}" if change.ratio else "–"
    steps = [
        "#### Reproduce with jax alone",
        "",
        f"`{d.reproducer}{found.script}` ({found.lines} lines) runs the programs the script "
        f"compiled, exported with `jax.export` on jax {scrub(found.exported_on)} (the files beside "
        "it), and prints one JSON line: compile time, run time and temporary bytes. Measured on "
        f"both releases it reproduces the change on `{counterpart}`, its counterpart of "
        f"{change.metric.quoted()}: {theirs} (the original script: {mine})."
        + (f" Note: {scrub(found.note)}." if found.note else ""),
        "",
    ]
    for release in change.ends:  # jax and jaxlib as its short run installed them, else at it
        named = [p for r in d.short_runs if r.run.release == release for p in r.install]
        pins = [p for p in named if p.split("==")[0] in ("jax", "jaxlib")]
        pins = pins or [f"jax=={release}", f"jaxlib=={release}"]
        steps += [fenced(f"pip install {shlex.join([*pins, *REQUIREMENTS])}", "sh"), ""]
    steps.append(fenced(f"cd {d.reproducer} && python {found.script}", "sh"))
    return "\n".join(steps)


def reproduction(d: DraftInputs) -> str:
    lines = len(d.short_script.splitlines())
    installs = [r for r in d.short_runs if r.install]
    steps = ["#### The original script" if d.reproducer else "#### Reproduce", ""]
    if installs:
        # A block per release: copying one installs that release alone, into the venv made for it.
        steps += ["Make a fresh virtual environment for each release and install it there:", ""]
        for r in installs:
            steps += [f"jax {r.run.release} ({role_text(r.role, d.change)}):", ""]
            steps += [fenced(f"pip install {shlex.join(r.install)}", "sh"), ""]
    run = d.short_runs[0].run if d.short_runs else d.full_run
    assert run is not None, "a metric's draft ran its full script"
    steps += [
        f"then run `{command_line(run, d.short_name, d.case.subject.args)}` ({d.short_name}, "
        f"{lines} lines, {script_words(d.short_script)}):",
        "",
        fenced(d.short_script, "python"),
    ]
    return "\n".join(steps)


def outputs(d: DraftInputs) -> str:
    if not d.short_runs:
        return ""
    parts = ["#### Output"]
    for r in d.short_runs:
        where = f"jax {r.run.release} ({role_text(r.role, d.change)})"
        parts += ["", f"On {where}, {scrub(r.environment)}:", "", fenced(_printed(r.run), "text")]
    printed = [(r.run.release, parse_output(r.run.stdout).medians) for r in d.short_runs]
    # (program, metric) of every figure printed on any release, in the order printed
    keys = list(dict.fromkeys(key for _, medians in printed for key in medians))
    if keys:
        rows = [[r, *(format_ns(m[k]) if k in m else "–" for k in keys)] for r, m in printed]
        parts += ["", table(rows, ["jax", *(f"{program} {metric}" for program, metric in keys)])]
    return "\n".join(parts)


def _printed(run: ScriptRun) -> str:
    text = scrub(run.stdout).strip() or "(nothing)"
    if run.returncode is None:
        text += f"\n(stopped after {run.timeout_s:g} s)"
    elif not run.ok:
        text += f"\n(exit code {run.returncode})"
        text += f"\n{scrub(tail(run.stderr))}" if run.stderr.strip() else ""
    return text


def evidence(d: DraftInputs) -> str:
    parts = []
    change = d.change
    if change is not None and change.probes:
        metric = change.metric.metric_name if change.metric else "the metric"
        bad = slowed(change)
        shown = change.metric.format if change.metric else format_ns
        # Neutrally, a probe is like one end of the range or the other, each end named.
        start, end = change.probes[0].release, change.probes[-1].release
        words = {} if bad else {"good": f"like {start}", "bad": f"like {end}"}
        medians = ["–" if p.median_ns is None else shown(p.median_ns) for p in change.probes]
        rows = [
            [p.release, median, p.vs_good, p.vs_bad, words.get(p.verdict, p.verdict)]
            for p, median in zip(change.probes, medians, strict=True)
        ]
        # The bisect's answer speaks of good and bad releases; a speed-up is a change between two.
        between = f"the change lies between jax {change.last_good} and jax {change.first_bad}"
        answer = (scrub(change.answer) or f"first bad {change.first_bad}") if bad else between
        ends = ["vs good", "vs bad", "verdict"] if bad else [f"vs {start}", f"vs {end}", "verdict"]
        parts += [
            f"Bisect ({scrub(change.source)}): {answer}",
            "",
            table([[scrub(c) for c in row] for row in rows], ["jax", metric, *ends]),
        ]
    parts += why(d)
    assert d.full_run is not None, "a metric's draft ran its full script"
    tables = [releases_table(d, d.full_run.profile), script_figures_table(d, d.full_run.profile)]
    if any(tables):
        parts += ["", "\n\n".join(filter(None, tables))]
    if not parts:
        return ""
    return "\n".join(["#### Evidence", "", *parts]).replace("\n\n\n", "\n\n")


def why(d: DraftInputs) -> list[str]:
    """What was measured of why, the findings that lead first, the rest folded."""
    change = d.change
    if change is None or not change.why:
        return []
    lines = [finding.markdown() for finding in change.why]
    if d.dumps:  # the bisect's folder is not beside the draft; its copy is
        there, here = f"`{change.dumps}<release>/`", f"`{d.dumps}<release>/`, beside this draft"
        lines = [line.replace(there, here) for line in lines]
    # The findings a maintainer reads first (what it comes with, a workaround…) lead; the rest fold.
    first = [line for line, f in zip(lines, change.why, strict=True) if f.leads]
    rest = [line for line, f in zip(lines, change.why, strict=True) if not f.leads]
    said = ["", f"Why, as far as measured (jax {change.last_good} → {change.first_bad}):", ""]
    said += [f"- {scrub(line)}" for line in first or lines]
    if first and rest:
        more = f"{len(rest)} more: every changed default tried, the defaults that changed"
        listed = "\n".join(f"- {scrub(line)}" for line in rest)
        said += ["", folded(f"{more}, each compiled module", listed)]
    return said


def releases_table(d: DraftInputs, profile: str) -> str:
    """A row per release stored: the metric, a cost's ratio to the release above (another shape's:
    the step's own comparison, never judged here), the claim."""
    change, sizes = d.change, d.sizes
    metric = change.metric if change is not None else None
    cost = change is None or change.shape.ratio
    where = (d.case.name, sizes, profile)
    mine = [r for r in d.results if (r.result.case, r.result.sizes, r.result.profile) == where]
    rows, previous = [], None
    for release in sorted({r.result.release for r in mine}, key=release_key):
        newest = newest_result(mine, release, sizes, profile)
        latest = newest or max(
            (r for r in mine if r.result.release == release), key=lambda r: r.result.created_at
        )
        samples = metric_samples(newest).get(metric) if newest and metric else None
        figure, text = (samples.figure, samples.shown(metric)) if samples and metric else (None, "")
        step = f"×{figure / previous:.3g}" if cost and figure and previous else "–"
        if not cost and change is not None and change.compared and release == change.first_bad:
            step = f"{change.compared.said} (jax {change.last_good} → {release})"
        shown = "–" if latest.result.status == RunStatus.OK else str(latest.result.status)
        rows.append([release, text or shown, step, VERDICTS.get(outcome(latest), "–")])
        previous = figure if figure is not None else previous
    if not rows:
        return ""
    label = metric.metric_name if metric else "metric"
    at = f" at {sizes_text(sizes)}" if sizes else ""
    held = any(row[3] != "–" for row in rows)
    claim = ", *claim* whether the claim quoted above held" if held else ""
    versus = "its ratio to the release above" if cost else "the step's comparison"
    caption = (
        f"Earlier measurements{at}, the newest of each release: each timed in several separate "
        "Python processes, the figure is the median of the per-process medians; *vs previous* is "
        f"{versus}{claim}:"
    )
    return caption + "\n\n" + table(rows, ["jax", label, "vs previous", "claim"])


def script_figures_table(d: DraftInputs, profile: str) -> str:
    """A script's phases and own numbers per release: those that moved shown, the rest folded."""
    change, programs = d.change, d.case.subject.figure_programs
    mine = [r for r in d.results if r.result.case == d.case.name and r.result.profile == profile]
    ordered = sorted({r.result.release for r in mine}, key=release_key)
    found = {release: newest_result(mine, release, {}, profile) for release in ordered}
    samples = {release: metric_samples(s) for release, s in found.items() if s is not None}
    keys = [k for k in dict.fromkeys(k for s in samples.values() for k in s) if k.name in programs]
    if not keys:
        return ""
    moved = {k for k, c in change.comparisons.items() if c.verdict in MOVED} if change else set()
    shown = [k for k in keys if change is None or k == change.metric or k in moved]
    rest = [k for k in keys if k not in shown]

    def figures(columns: list[MetricKey]) -> str:
        rows = [
            [r, *(samples[r][k].shown(k) if k in samples[r] else "–" for k in columns)]
            for r in samples
        ]
        return table(rows, ["jax", *(k.metric_name for k in columns)])

    caption = (
        "The script's phases (`process.*`: the whole process, the first `import jax`, JAX's "
        "tracing, lowering and compile events summed, and the rest of its run) and the numbers it "
        "printed (`json.*`), per release: the median over several separate Python processes"
    )
    if not shown or not rest:
        return f"{caption}.\n\n{figures(keys)}"
    others = folded(f"The other {len(rest)}, which did not move", figures(rest))
    return f"{caption}; those that moved, and the one asked about:\n\n{figures(shown)}\n\n{others}"


def full_script(d: DraftInputs) -> str:
    run = d.full_run
    if run is None:
        return ""
    holds = parse_output(run.stdout).holds
    verdict = {True: " (claim holds)", False: " (claim does not hold)", None: ""}[holds]
    return folded(
        f"The full instrumented script, {d.full_name} (every figure, and whether the claim held), "
        f"on jax {run.release}{verdict}",
        f"Run as `{command_line(run, d.full_name)}`:\n\n{fenced(_printed(run), 'text')}",
    )


def system_info(d: DraftInputs) -> str:
    """The variables set, what each fresh venv held, an ending's CPU, the environment's info."""
    dead, lines = d.change.dead if d.change is not None else None, [SYSTEM_INFO, ""]
    if d.full_run is not None:
        variables = shareable_variables(d.full_run.variables)
        shown = ", ".join(f"`{k}={v}`" for k, v in variables.items()) or "none"
        lines += [f"Environment variables set: {shown}.", ""]
    packages = [f"jax {r.run.release}: {', '.join(r.packages)}" for r in d.short_runs if r.packages]
    if packages:
        lines += ["What each fresh venv held:", "", *(f"- {scrub(line)}" for line in packages), ""]
    if dead is not None:
        machine = ", ".join(filter(None, (dead.cpu_model, dead.platform))) or "not recorded"
        lines += [f"CPU: {inline(machine)} (crashes in XLA:CPU often depend on it).", ""]
    release = dead.crashes if dead is not None else d.full_run.release if d.full_run else ""
    summary = f"Output of <code>jax.print_environment_info()</code> (jax {release})"
    info = fenced(scrub(d.environment_info).strip() or "(unavailable)", "text")
    return "\n".join([*lines, folded(summary, info)])


SHOWN_LINES = 40  # of the stack and of the last lines: the end, where the fault is
SCRIPT_LINES = 300  # a longer script is named, not pasted
HARNESS_FRAME = re.compile(r'File "[^"]*harness/measure/script_hook\.py"')


def ending_description(d: DraftInputs, dead: Dead) -> str:
    """How each release's processes ended (with the counts' test), where from, the workaround."""
    said = (
        f"This script runs ok on jax {dead.runs} ({dead.ok_words}) and {dead.verb} on jax "
        f"{dead.crashes} ({dead.dead_words}): the same in every process of each release"
    )
    if dead.shares is not None:
        (k, n), (k_ok, n_ok) = dead.shares
        said = (
            f"This script {dead.verb} in {k} of {n} processes on jax {dead.crashes} "
            f"({dead.dead_words}) and in {k_ok} of {n_ok} on jax {dead.runs} ({dead.ok_words}), "
            f"told apart by Fisher's exact test on the counts (p={format_p(dead.compared.p_value)})"
        )
    change = d.change
    assert change is not None
    lines = [f"{said}, each a fresh Python process."]
    lines += [f"The two releases come from {change.source}."] if change.source else []
    if change.workaround:
        workaround = code_span(change.workaround)
        lines.append(f"Workaround: on jax {dead.crashes} it runs with {workaround}.")
    return "\n\n".join(lines)


def ending_reproducer(d: DraftInputs, dead: Dead) -> str:
    """The standalone reproducer, pasted, with the two install lines and how to run it."""
    if not d.short_script.strip():
        return "#### Reproducer\n\n" + (d.missing_script or "No reproducer with jax alone to show.")
    lines = d.short_script.rstrip().splitlines()
    shown = fenced("\n".join(lines), "python")
    if len(lines) > SCRIPT_LINES:
        shown = f"({len(lines)} lines: attach {code_span(d.short_name)})"
    run = " ".join(["python", d.short_name, *d.case.subject.args])
    installs = [
        shlex.join(["pip", "install", *(d.installs.get(v) or (f"jax=={v}", f"jaxlib=={v}"))])
        for v in (dead.runs, dead.crashes)
    ]
    head = f"#### Reproducer: {code_span(d.short_name)}, {d.script_words}"
    steps = fenced("\n".join([*installs[:1], run, *installs[1:], run]), "sh")
    return f"{head}\n\n{shown}\n\nRun on each release in a fresh environment:\n\n{steps}"


def what_happened(dead: Dead) -> str:
    """How each release's processes ended, and where the first that died did."""
    end = dead.end
    lines = [
        "#### What happened",
        "",
        f"On jax {dead.crashes}: {dead.dead_words}; on jax {dead.runs}: {dead.ok_words}.",
    ]
    if end is not None and end.stack.strip():
        when = "its time-out" if end.how is EndKind.TIMEOUT else "the fault"
        lines += ["", f"Python's stack at {when} (faulthandler), the first process that died:", ""]
        lines.append(fenced(_end_of(script_frames(end.stack)), "text"))
    if end is not None and end.last_lines.strip():
        lines += ["", "The last lines it wrote:", "", fenced(_end_of(end.last_lines), "text")]
    return "\n".join(lines)


def script_frames(stack: str) -> str:
    """faulthandler's stack without the frames that started the script (runpy, the start-up hook): a
    maintainer runs ``python script.py``, whose stack ends at its ``<module>``."""
    return "\n".join(
        from_site_packages(line)  # a result stored before they were shown so
        for line in stack.splitlines()
        if not HARNESS_FRAME.search(line) and '"<frozen runpy>"' not in line
    )


def _end_of(text: str) -> str:
    lines = text.strip().splitlines()
    before = [f"… ({len(lines) - SHOWN_LINES} lines before)"] if len(lines) > SHOWN_LINES else []
    return "\n".join(before + lines[-SHOWN_LINES:])
