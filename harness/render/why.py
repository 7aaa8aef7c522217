"""Why a step moved, in words: each kind's evidence (``steps.evidence.Found``, judged when gathered)
as findings, the step's once (``STEP_LINES``) and a metric's (its trials); ``next_steps``: what
narrows them, by the attribution (a library's releases, jax's commits, a workaround's setting)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.analysis.significance import MOVED, Comparison, Verdict
from harness.explain.dumps import VALUE, CompiledAnswer, ModuleChange, diff_name
from harness.explain.held_library import (
    APART,
    BOTH,
    JAX,
    LIBRARIES,
    HeldAnswer,
    Parts,
    library_answered,
)
from harness.explain.matching_flags import MatchedFlags
from harness.explain.profiles import HostAnswer, OpTimes, ProfileAnswer
from harness.explain.reproducer import COMPILE, MEMORY, RUN, ReproducerAnswer
from harness.explain.tried import (
    MAX_STATUS_TRIED,
    MAX_TRIED,
    NOT_ASKED,
    CrashAnswer,
    DefaultsAnswer,
    Tried,
)
from harness.findings import Finding, FollowUp, findings, leading, nox_command
from harness.metric_names import COMPILE_TIME, MEMORY_SIZE, RUN_TIME, Criterion, Judged, MetricKey
from harness.render.text import listed
from harness.steps.answers import Setting, varied_version
from harness.steps.evidence import Found, Skipped, Spent, of_kind
from harness.steps.judge import Terms
from harness.units import format_bytes, format_ns, format_ratio

SHOWN_OPCODES = 6
SHOWN_MODULES = 3
SHOWN_OPS = 6
SHOWN_DEFAULTS = 12
SHOWN_GROUPS = 4
SHOWN_FUNCTIONS = 4
WORKAROUND = "a workaround, and a strong hint at the cause"


def why_lines(
    setting: Setting,
    before: str,
    after: str,
    step: Comparison | None,
    criterion: Criterion,
    *,
    with_step: bool = True,
    unwanted: bool | None = None,
    libraries: bool = False,
) -> list[Finding]:
    """What the trials found on ``criterion``'s metric, then, ``with_step`` (once per step), what
    every kind found for the step; led, with ``libraries``, by ``libraries_line``."""
    found = setting.evidence.get((before, after), ())
    said = libraries_line(setting, before, after) if libraries else None
    lines: list[Finding] = [said] if said is not None else []
    if criterion.figures is not None:  # an ending's trials are its own kind's (``crash``)
        metric = criterion.figures
        for each in found:
            if isinstance(each, ReproducerAnswer):
                lines += reproduced_lines(each, step, metric)
            if isinstance(each, DefaultsAnswer):
                lines += trial_lines(each, step, metric, unwanted=unwanted)
    if with_step:
        step_wide = [each for each in found if not isinstance(each, HeldAnswer)]
        lines += [line for each in step_wide for line in step_lines(each)]
    return lines


def step_lines(found: Found) -> list[Finding]:
    if isinstance(found, Skipped):
        return findings(skipped_lines(found))
    lines = STEP_LINES.get(found.kind)
    return findings(lines(found)) if lines is not None else []


def defaults_listing(answer: DefaultsAnswer) -> list[str]:
    """The defaults whose value changed (with their commit), options added or removed counted."""
    changed = [c for c in answer.listed if c.before is not None and c.after is not None]
    added = sum(c.before is None for c in answer.listed)
    removed = sum(c.after is None for c in answer.listed)
    counted = [f"{n} {word} option(s)" for n, word in ((added, "added"), (removed, "removed")) if n]
    lines = []
    if changed or counted:
        commits = {name: f" in {commit.words()}" for name, commit in answer.commits.items()}
        shown = ", ".join(c.text() + commits.get(c.name, "") for c in changed[:SHOWN_DEFAULTS])
        more = len(changed) - SHOWN_DEFAULTS
        parts = [part for part in (shown, f"{more} more" if more > 0 else "", *counted) if part]
        said = listed(parts)
        lines.append(f"defaults that changed from {answer.before} to {answer.after}: {said}")
    return [*lines, *screened_lines(answer), *([answer.problem] if answer.problem else [])]


def screened_lines(answer: DefaultsAnswer) -> list[str]:
    if not answer.screened_out:
        return []
    shown = ", ".join(f"{t.words()} on {t.release}" for t in answer.screened_out)
    return [
        f"screened at {answer.screen_processes} processes a side and dropped (they moved no metric "
        f"toward the other release): {shown}"
    ]


def _unwanted(step: Comparison | None, unwanted: bool | None) -> bool:
    return unwanted if unwanted is not None else step is not None and step.worse


def trial_lines(
    answer: DefaultsAnswer,
    step: Comparison | None,
    metric: MetricKey,
    *,
    unwanted: bool | None = None,
) -> list[Finding]:
    """The trials on ``metric``: a setting that brings the old number back is a workaround only
    where the new one is ``unwanted`` (by default: the step made it worse), else a hint at why."""
    tried = answer.tried(metric)
    void = [t for t in tried if t.void]
    tried = [t for t in tried if not t.void]
    found = answer.workarounds(metric, step)
    forward = [] if step is None else [t for t in tried if t.brings_forward(step)]
    unwanted = _unwanted(step, unwanted)
    back = WORKAROUND if unwanted else "the old behaviour back: a hint at why"
    lines: list[Finding | str] = []
    for each in found:
        assert step is not None and each.vs_before is not None
        most = ""
        if each.vs_before.verdict == step.verdict:
            most = f" (it undoes {each.undoes(step):.0%} of the step)"
        commit = answer.commits.get(each.trial.change.name)
        changed = f" (its default changed in {commit.words()})" if commit is not None else ""
        lines.append(Finding(f"{tried_text(each, answer)}{most}: {back}{changed}", leads=unwanted))
    if tried and not found:
        none = f"none of the {len(tried)} {answer.subject} tried brought the old "
        lines.append(leading(f"{none}{metric.metric_name} back"))
    for each in forward:
        lines.append(f"{tried_text(each, answer)}: it brings the new number to {answer.before} too")
    lines += [tried_text(t, answer) for t in tried if t not in found and t not in forward]
    if answer.left_out:
        cap = f"over the cap of {MAX_TRIED} were not measured"
        lines.append(f"{answer.left_out} more trial(s) {cap}")
    return findings([*lines, *void_lines(void)])


# A script that replaces XLA_FLAGS in its own code: what to do instead, said where flags are void.
APPEND = "append to os.environ.get('XLA_FLAGS', '') instead of replacing it"


def void_lines(void: Sequence[Tried]) -> list[str]:
    if not void:
        return []
    shown = ", ".join(f"{t.trial.words()} on {t.trial.release}" for t in void)
    return [
        f"void, not tried: {shown}: the script sets XLA_FLAGS itself before jax starts, so XLA "
        f"never got the flag ({APPEND})"
    ]


def tried_text(tried: Tried, answer: DefaultsAnswer) -> str:
    trial = tried.trial
    if tried.note or tried.vs_before is None or tried.vs_after is None:
        return f"on {trial.release}, {trial.words()}: not judged ({tried.note or 'no result'})"
    against = (
        f"{_against(tried.vs_before, answer.before)}, {_against(tried.vs_after, answer.after)}"
    )
    if Verdict.UNDECIDED in (tried.vs_before.verdict, tried.vs_after.verdict):
        against += ": more processes could tell"
    if not tried.vs_before.ratio_cell:  # no ratio: the same as a release, or not
        return f"on {trial.release}, {trial.words()} gives {against}"
    ratio = tried.vs_before.ratio_cell
    return f"on {trial.release}, {trial.words()} gives {ratio} of {answer.before} ({against})"


def _against(comparison: Comparison, release: str) -> str:
    if comparison.verdict is Verdict.CHANGED:
        return f"not what {release} gives ({comparison.said})"
    if comparison.verdict in MOVED:  # a constant cost says its figures: its direction is the word
        return f"{comparison.direction} than {release}"
    if comparison.verdict == Verdict.UNCHANGED:
        return f"the same as {release}"
    return f"undecided against {release}"


def compiled_lines(answer: CompiledAnswer) -> list[Finding]:
    if answer.void:
        void = " and ".join(answer.void)
        said = (
            "compiled programs not compared, void for this script: it sets XLA_FLAGS itself "
            f"before jax starts on {void}, so XLA never got the harness's dump flags ({APPEND})"
        )
        return [leading(said)]
    if answer.problem:
        return [leading(f"compiled programs not compared: {answer.problem}")]
    if not answer.changes:
        none = f"no module of {answer.before} has a namesake in {answer.after}'s dump"
        return [leading(f"compiled programs: {none}")]
    head = (
        f"compiled programs of {answer.before} and {answer.after} (XLA's dumps in "
        f"`{answer.folder}<release>/`): {len(answer.changes)} module(s) compared"
    )
    differing = [c for c in answer.changes if not (c.same_before and c.same_after)]
    memory = counterpart_lines(answer)
    if not differing:
        texts = [f"`{diff_name(c)}`" for c in answer.changes if not c.same_text]
        aside = f" (only the text of {', '.join(texts)} differs)" if texts else ""
        same = f"the same before and after optimisation{aside}"
        # what runs them changed: a reading of a run time alone, never of another metric's step
        if RUN_TIME in answer.reads or not answer.reads:
            same += ": what runs them changed, not what was compiled"
        return [leading(f"{head}, {same}"), *memory]
    alike: dict[str, list[str]] = {}  # every lambda's module changed alike is said once
    for change in differing:
        alike.setdefault(module_text(change), []).append(change.name)
    shown = [
        f"compiled {', '.join(names)}: {text}"
        for text, names in list(alike.items())[:SHOWN_MODULES]
    ]
    more = sum(len(names) for names in list(alike.values())[SHOWN_MODULES:])
    head += f", {len(differing)} differ" + (f", {more} not shown" if more else "")
    if any(not c.same_text for c in differing):
        head += f" (text diffs in `{answer.folder}<module>.diff`)"
    return [leading(head), *memory, *findings(shown)]


# What the step's metrics measure that XLA's dumps hold no counterpart of: said, never judged.
NO_COUNTERPART = {COMPILE_TIME: "a compile time", VALUE: "a value the programs compute"}


def counterpart_lines(answer: CompiledAnswer) -> list[Finding]:
    """A step of memory judged by the programs' temporary bytes (it leads); a metric without a
    counterpart in the dumps said, not judged."""
    none = [NO_COUNTERPART[each] for each in answer.reads if each in NO_COUNTERPART]
    said = f"XLA's dumps hold no counterpart of {' or '.join(none)}: not judged by them"
    lines = [Finding(said)] if none else []
    found = answer.temp_bytes()
    if MEMORY_SIZE not in answer.reads:
        return lines
    if found is None:
        return [*lines, Finding("the compiled programs' temporary bytes were not read")]
    old, new = found
    ratio = f" ({format_ratio(new / old)})" if old else ""
    moved = f"{format_bytes(old)} → {format_bytes(new)}{ratio}"
    if old == new:
        moved = f"the same on both ({format_bytes(old)}): it moved outside them"
    head = "the compiled programs' temporary bytes, the counterpart of a step of memory"
    return [*lines, leading(f"{head}: {moved}")]


def module_text(change: ModuleChange) -> str:
    old, new = change.old, change.new
    # A custom call is named by its target below; get-tuple-element only unpacks an op's results.
    ops = (set(old.after) | set(new.after)) - {"custom-call", "get-tuple-element"}
    moved = sorted(
        (op for op in ops if old.after[op] != new.after[op]),
        key=lambda op: -abs(new.after[op] - old.after[op]),
    )
    parts = [f"{op} {old.after[op]} → {new.after[op]}" for op in moved[:SHOWN_OPCODES]]
    for label, was, now in (
        ("custom call {}", old.custom_calls, new.custom_calls),
        ("{} fusions", old.fusion_kinds, new.fusion_kinds),
    ):
        differ = sorted(k for k in set(was) | set(now) if was[k] != now[k])
        parts += [f"{label.format(k)} {was[k]} → {now[k]}" for k in differ]
    if old.temp_bytes != new.temp_bytes:
        parts.append(f"temporary bytes {old.temp_bytes} → {new.temp_bytes}")
    counts = f"{sum(old.before.values())} → {sum(new.before.values())} instructions"
    before = "same" if change.same_before else counts
    changes = "; ".join(parts) or "no count moved"
    return f"before optimisation {before}; after: {changes}; {change.hint()}"


def profile_lines(answer: ProfileAnswer) -> list[Finding]:
    if not isinstance(answer.old, OpTimes) and not isinstance(answer.new, OpTimes):
        sides = f"{answer.before}: {answer.old}; {answer.after}: {answer.new}"
        return [leading(f"where the time went not profiled: {sides}")]
    shown = [
        f"{kind} {_op_cell(answer.old, kind)} → {_op_cell(answer.new, kind)}"
        for kind in answer.kinds()[:SHOWN_OPS]
    ]
    missing = [
        f"{release}: {why}"
        for release, why in ((answer.before, answer.old), (answer.after, answer.new))
        if isinstance(why, str)
    ]
    note = f" ({'; '.join(missing)})" if missing else ""
    said = (
        "where the time went, by op (one profiled process each; an op's own time, and how "
        f"many ran; {answer.before} → {answer.after}): {'; '.join(shown)}{note}"
    )
    return [leading(said)]


def _op_cell(times: OpTimes | str, kind: str) -> str:
    if isinstance(times, str):
        return "?"
    if not times.calls[kind]:
        return "none"
    return f"{format_ns(times.total_ns[kind])} ({times.calls[kind]})"


OUTSIDE = (
    "the change is outside the compiled programs — in tracing, dispatch or Python (JAX's or the "
    "library's)"
)
# What the reproducer not moving on each counterpart says, never more: its own metric's reading.
NOT_IN_PROGRAMS = {
    RUN: OUTSIDE,
    COMPILE: "the programs it exported compile alike: the compile time moved outside them (in "
    "tracing or lowering, or in programs the capture did not export)",
    MEMORY: "the programs it exported need the same temporary bytes: the memory moved outside them "
    "(what the script holds, or computes outside jit)",
}


def reproduced_lines(
    answer: ReproducerAnswer, step: Comparison | None, metric: MetricKey
) -> list[Finding]:
    """Whether the reproducer showed the step, judged on ``metric``'s counterpart alone (none: said,
    no conclusion drawn from another metric)."""
    if answer.problem or not answer.script:  # a refusal alone: each release ran its own export
        return []
    if metric in answer.unmatched:
        return [
            Finding(f"the reproducer has no counterpart of {metric.metric_name}: "
                    f"{answer.unmatched[metric]}; it is not judged by it")
        ]  # fmt: skip
    found = answer.measured.get(metric)
    if found is None:
        return [Finding(f"the reproducer was not measured on {metric.metric_name}'s counterpart")]
    name, comparison = found[0].metric_name, found[1]
    if comparison is None or step is None:
        return [Finding(f"the reproducer's {name} was not measured on both releases")]
    on = f"on {name}, its counterpart of {metric.metric_name}"
    theirs = comparison.ratio_cell or "n/a"
    if answer.reproduces(metric, step):
        mine = step.ratio_cell or "n/a"
        return [leading(f"reproduces it with jax alone {on}: {theirs} (your script: {mine})")]
    if comparison.verdict is Verdict.UNDECIDED:  # too few processes (a why cut short): no evidence
        said = f"the reproducer with jax alone is undecided {on} ({theirs}, {comparison.said})"
        return [Finding(said)]
    outside = NOT_IN_PROGRAMS.get(found[0], "")
    said = f"does not reproduce it {on} ({theirs}, {comparison.said})"
    return [leading(f"{said}: {outside}" if outside else said)]


def reproducer_lines(answer: ReproducerAnswer) -> list[Finding | str]:
    refused: list[Finding | str] = list(answer.refused)
    if answer.problem:  # one that fails where it was exported is no reproducer, named or not
        return [f"no reproducer with jax alone: {answer.problem}", *refused]
    exported = [p for p in answer.programs if "problem" not in p]
    generated = sum(not i.get("saved") for p in exported for i in p.get("inputs", []))
    inputs = f", {generated} input(s) generated (too large to keep)" if generated else ""
    if answer.left_out:
        inputs += f"; {answer.left_out} more whose own time did not move left out"
    same, of = answer.matched
    # A status step's reproducer is exported on the release that runs alone: nothing to match.
    both = "" if answer.status is not None else f", {same} of {of} compiled on both releases"
    head = (
        f"reproducer with jax alone: `{answer.folder}{answer.script}` ({answer.lines} lines, "
        f"{len(exported)} program(s) exported on {answer.exported_on}{both}{inputs})"
    )
    status = []
    if answer.status is not None:  # exported on the release that runs: does it die on the other?
        ended = "; ".join(f"{label}: {words}" for label, words in answer.status.ended.items())
        said = "reproduces it" if answer.status.reproduces else "does not reproduce it"
        outside = "" if answer.status.reproduces else f": {OUTSIDE}"
        status = [leading(f"{said} with jax alone ({ended}){outside}")]
    return [*status, head, *([answer.note] if answer.note else []), *refused]


def crash_lines(answer: CrashAnswer) -> list[Finding | str]:
    """A status step's settings tried on the release that dies: the workaround first (it leads and
    offers its setting), else that none made it run; each other trial with how it ended."""
    # said once, by the crash kind's own answer (not again by the flags asked after the programs)
    asked = f"a crash is judged by how its processes end, not by a number: {NOT_ASKED} not asked"
    once = [] if answer.named_only else [asked]
    if answer.problem and not answer.tried:
        return [f"no setting tried on the release that dies: {answer.problem}", *once]
    lines: list[Finding | str] = []
    found = answer.workaround
    if found is not None:
        said = (
            f"runs with {found.trial.words()} on {found.trial.release}: {found.ended} "
            f"({found.source}): {WORKAROUND}"
        )
        purpose = f"the workaround, on {found.trial.release}"
        lines.append(Finding(said, (FollowUp(purpose, found.trial.words(), shell=False),), True))
    elif answer.tried:
        none = f"none of the {len(answer.tried)} setting(s) tried on {answer.crashing} made it run"
        if answer.named_only:
            none = f"none of the {len(answer.tried)} flag(s) named like {', '.join(answer.names)} "
            none += f"made {answer.crashing} run"
        lines.append(leading(none))
    elif not answer.problem:
        what = "flag named like what XLA compiled anew" if answer.named_only else "changed default"
        lines.append(f"no {what} to try on {answer.crashing}")
    lines += [
        f"on {t.trial.release}, {t.trial.words()} ({t.source}): {t.ended}"
        for t in answer.tried
        if t is not found and not t.void
    ]
    lines += void_lines([Tried(t.trial, None, None, void=True) for t in answer.tried if t.void])
    if answer.untried and found is not None:
        lines.append(f"{answer.untried} more setting(s) not tried: a workaround ends the search")
    elif answer.untried:
        cap = f"over the cap of {MAX_STATUS_TRIED} not tried"
        lines.append(f"{answer.untried} more setting(s) {cap}")
    return [*lines, *([answer.problem] if answer.problem else []), *once]


def host_lines(answer: HostAnswer) -> list[Finding]:
    problems = [f"{label}: {side}" for label, side in answer.sides() if isinstance(side, str)]
    if problems:
        return [Finding(f"no Python profile to compare ({'; '.join(problems)})")]
    groups = ", ".join(
        f"{name} {format_ns(old)} → {format_ns(new)}"
        for name, old, new in answer.groups()[:SHOWN_GROUPS]
    )
    functions = "; ".join(
        f"`{name}` {format_ns(old)} → {format_ns(new)} ({old_calls} → {new_calls} calls)"
        for name, _, old, new, old_calls, new_calls in answer.moved(SHOWN_FUNCTIONS)
    )
    head = f"host time by where it lives (one process each under cProfile): {groups}"
    moved = f"Python functions whose own time moved most: {functions}"
    return [Finding(head), *([leading(moved)] if functions else [])]


def matched_lines(answer: MatchedFlags) -> list[str]:
    names = ", ".join(answer.names)
    if answer.problem:
        return [f"flags named like {names} not tried: {answer.problem}"]
    if not answer.trials and not answer.screened_out:
        return [f"no flag of {answer.after}'s jaxlib is named like {names}"]
    flags = ", ".join(f"`{trial.words()}`" for trial in answer.trials)
    tried = f"flags named like {names} (their defaults unchanged), tried on {answer.after}: {flags}"
    return ([tried] if answer.trials else []) + screened_lines(answer)


def skipped_lines(skipped: Skipped) -> list[Finding]:
    """A kind left out (it leads, so that no answer folded to fit a screen drops it)."""
    asks = f"; asked by `{skipped.command}`" if skipped.command else ""
    return [leading(f"{skipped.name} not asked: {skipped.reason}{asks}")]


def spent_lines(spent: Spent) -> list[str]:
    asked = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in spent.seconds.items())
    asks = f" (asked by `{spent.command}`)" if spent.command else ""
    settled = f"; not asked, the step being answered: {', '.join(spent.unasked)}{asks}"
    return [f"kinds asked, in order: {asked}{settled if spent.unasked else ''}"] if asked else []


# Each kind's step-wide findings, by the kind's name (``harness.explain.kinds``: every kind has an
# entry; a plain sentence does not lead).  Library or JAX is said first, by ``libraries_line``.
STEP_LINES: Mapping[str, Callable[[Any], Sequence[Finding | str]]] = {
    "library": lambda answer: [leading(held_line(answer))],
    "reproducer": reproducer_lines,
    "defaults": defaults_listing,
    "compiled": compiled_lines,
    "flags": matched_lines,
    "crash": crash_lines,
    "crash flags": crash_lines,
    "profile": profile_lines,
    "host": host_lines,
    "spent": spent_lines,  # not a kind: how long each kind asked took, in order
}


def why_json(setting: Setting) -> dict[str, list[dict[str, Any]]]:
    by_kind: dict[str, list[dict[str, Any]]] = {"defaults": [], "compiled": [], "profiles": []}
    for found in (each for step in setting.evidence.values() for each in step):
        data = found.data()
        if isinstance(found, DefaultsAnswer):
            by_kind.setdefault(found.kind, []).extend(data["metrics"])
        else:
            name = "profiles" if found.kind == "profile" else found.kind
            by_kind.setdefault(name, []).append({k: v for k, v in data.items() if k != "kind"})
    return by_kind


def libraries_line(setting: Setting, before: str, after: str) -> Finding | None:
    """What a step says of a plain script's own libraries (it leads; None: none): the varied one it
    comes with, the jax release it comes with, or those that changed with jax and how to tell."""
    libraries = setting.libraries
    if libraries.vary is not None:
        version = varied_version(after, libraries.vary)
        return leading(f"comes with {libraries.vary} {version} (jax {libraries.jax} held)")
    if not libraries.versions:
        return None
    split = of_kind(setting.evidence.get((before, after), ()), HeldAnswer)
    if split is not None:
        return leading(held_line(split))
    pinned = [f"{pin.replace('==', ' ')} held" for pin in libraries.held]
    if not (moved := libraries.moved_with_jax(before, after)):
        same = [f"{n} {v}" for n, v in sorted(libraries.versions.get(after, {}).items())]
        kept = ", ".join(
            [*pinned, *(f"{each} on both" for each in same if f"{each} held" not in pinned)]
        )
        return leading(f"comes with jax {after}" + (f" ({kept})" if kept else ""))
    changes = "; ".join(f"{name} {old} → {new}" for name, (old, new) in moved.items())
    name, (old, new) = next(iter(moved.items()))
    held = ["--from", before, "--to", after, "--hold", f"{name}=={old}"]
    varied = ["--vary", name, "--jax", after, "--from", old, "--to", new]
    jax_only, library_only = _command(setting, "triage", held), _command(setting, "triage", varied)
    return Finding(
        f"the script's libraries changed along with jax ({changes}): the library or JAX?",
        (
            FollowUp(f"the two jax releases with {name} held", jax_only),
            FollowUp(f"{name}'s own releases on jax {after}", library_only),
        ),
        leads=True,
    )


def held_line(answer: HeldAnswer) -> str:
    """Library or JAX in one line: which part of the step moved as the step did."""
    moved = ", ".join(f"{name} {old} → {new}" for name, (old, new) in answer.moved.items())
    if not answer.middle or (answer.problem and not answer.parts):
        return f"library or JAX not told apart ({moved}): {answer.problem}"
    held = ", ".join(f"{name} {version}" for name, version in answer.held().items())
    other = answer.before if answer.jax_of_middle == answer.after else answer.after
    if answer.status_comes_with:  # a status step: the middle side's processes ran ok or died
        crash = {
            JAX: f"comes with jax {answer.crashing}",
            LIBRARIES: f"comes with the libraries: {moved}",
            BOTH: "needs both",
            APART: "library or JAX not told apart",
        }[answer.status_comes_with]
        return f"{crash} (jax {answer.jax_of_middle} with {held} held: {answer.middle_ended})"
    said = {
        JAX: f"comes with jax {answer.after} ({held} held)",
        LIBRARIES: f"comes with the libraries: {moved} (jax {answer.jax_of_middle} held)",
        BOTH: f"needs both: jax {other} → {answer.jax_of_middle} and {moved}",
        APART: "library or JAX not told apart",
    }
    by_answer: dict[str, list[MetricKey]] = {}
    for metric, parts in answer.parts.items():
        by_answer.setdefault(parts.comes_with(), []).append(metric)
    clauses = []
    for verdict, metrics in by_answer.items():
        parts = answer.parts[metrics[0]]
        sides = (("jax's part", parts.jax), ("the libraries'", parts.libraries))
        figures = "; ".join(f"{who} {_said(found)}" for who, found in sides)
        figures = _shared_out(parts) if parts.by_share else figures
        more = f" and {len(metrics) - 1} more" if len(metrics) > 1 else ""
        clauses.append(f"{said[verdict]} on {metrics[0].metric_name}{more} ({figures})")
    return "; ".join(clauses)


def _shared_out(parts: Parts) -> str:
    """A step shared out: the part that holds it by its ratio (a first look's few processes cannot
    pass the rank guard), the other by its interval, under half of the step."""
    assert parts.whole is not None and parts.jax is not None and parts.libraries is not None
    sides = [("jax's part", parts.jax), ("the libraries'", parts.libraries)]
    (holds, holding), (other, found) = sides if parts.by_share == JAX else sides[::-1]
    step, held = parts.whole.ratio_cell, holding.ratio_cell
    return f"{holds} {held}; {other} {_said(found)}: under half of the step's {step}"


def _said(found: Comparison | None) -> str:
    if found is None:
        return "not measured"
    if found.verdict in MOVED and found.ratio_cell:
        return f"{found.ratio_cell} {found.said}"
    return found.said


def _command(setting: Setting, session: str, words: Sequence[str]) -> str:
    return nox_command(session, setting.target_words(), words, setting.sizes, setting.profile)


def issue_follow_up(
    setting: Setting, good: str, bad: str, criterion: Criterion, purpose: str
) -> FollowUp:
    """The upstream issue drafted over two sides (the older ``--good``, whatever the terms)."""
    named = [] if criterion.is_claim or criterion.by is Judged.EVERY else criterion.words()
    return FollowUp(purpose, _command(setting, "issue", [*named, "--good", good, "--bad", bad]))


def next_steps(
    setting: Setting,
    before: str,
    after: str,
    criterion: Criterion,
    step: Comparison | None,
    terms: Terms,
    *,
    unwanted: bool | None = None,
) -> list[FollowUp]:
    """What narrows what the why found, each once: a workaround's setting; the library's releases,
    jax held, for a step that comes with it; else jax's commits, unless a workaround's default names
    its commit (a library's own range, ``--vary``, has no jax step below it)."""
    found = setting.evidence.get((before, after), ())
    said: list[FollowUp] = []
    known_commit = False
    defaults = of_kind(found, DefaultsAnswer)
    metric = criterion.figures
    if defaults is not None and metric is not None and _unwanted(step, unwanted):
        for each in defaults.workarounds(metric, step):
            said.append(FollowUp(f"the workaround, on {after}", each.trial.words(), shell=False))
            known_commit |= each.trial.change.name in defaults.commits
    held = of_kind(found, HeldAnswer)
    parts = held.parts.get(metric) if held is not None and metric is not None else None
    comes_with = parts.comes_with() if parts is not None else None
    # jax's own part did not move: no jax commit asked
    answered = metric is not None and library_answered(found, metric)
    if held is not None and (answered or comes_with in (LIBRARIES, BOTH)):
        for name, (old, new) in held.moved.items():
            words = ["--vary", name, "--jax", held.jax_of_middle, "--from", old, "--to", new]
            words += criterion.words()
            purpose = f"which {name} release, jax {held.jax_of_middle} held"
            said.append(FollowUp(purpose, _command(setting, "triage", words)))
    if setting.libraries.vary is None and not (answered or known_commit or comes_with == LIBRARIES):
        ends = [f"--{terms.old}", before, f"--{terms.new}", after, *criterion.words()]
        bisect = _command(setting, "bisect", ["--commits", *ends])
        said.append(FollowUp("jax's Python or jaxlib, and which jax commit", bisect))
    return said
