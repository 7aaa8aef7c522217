"""Why a step moved, in words: the sentences of every kind of evidence (``harness.explain.kinds``).

Each kind's data comes in (``harness.steps.evidence.Found``); its lines go out, some the step's (said once,
however many metrics moved in it), some a metric's (what trying the changed defaults found on it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.analysis.significance import MOVED, Comparison, Thresholds, Verdict
from harness.explain.dumps import CompiledAnswer, ModuleChange, diff_name
from harness.explain.held_library import APART, BOTH, JAX, LIBRARIES, HeldAnswer
from harness.explain.host_profile import HostAnswer
from harness.explain.matching_flags import MatchedFlags
from harness.explain.profiles import OpTimes, ProfileAnswer
from harness.explain.reproducer import ReproducerAnswer
from harness.explain.tried import MAX_TRIED, DefaultsAnswer, Tried
from harness.metric_names import MetricKey, parse_metric_name
from harness.pins import nox_profile_words
from harness.steps.answers import Setting
from harness.steps.bisection import CLAIM
from harness.steps.evidence import Found, Skipped, of_kind
from harness.units import format_ns, format_ratio

SHOWN_OPCODES = 6
SHOWN_MODULES = 3
SHOWN_OPS = 6
SHOWN_DEFAULTS = 12
SHOWN_GROUPS = 4
SHOWN_FUNCTIONS = 4


def why_lines(
    setting: Setting,
    before: str,
    after: str,
    step: Comparison | None,
    metric: str,
    *,
    with_step: bool = True,
    unwanted: bool | None = None,
) -> list[str]:
    """Why a step moved on ``metric``, as far as was looked: what trying its changed defaults found on that
    metric (none on the claim; ``unwanted``: whether the new number is unwanted, as ``trial_lines`` takes it),
    then, ``with_step`` (said once per step), what every kind found for the step."""
    found = setting.evidence.get((before, after), ())
    lines = []
    if metric != CLAIM:
        for each in found:
            if isinstance(each, ReproducerAnswer):
                lines += reproduced_lines(each, step, metric)
            if isinstance(each, DefaultsAnswer):
                key = parse_metric_name(metric)
                lines += trial_lines(each, step, key, setting.thresholds, unwanted=unwanted)
    if with_step:
        lines += [line for each in found for line in step_lines(each)]
    return lines


def step_lines(found: Found) -> list[str]:
    """What one kind found for the step as a whole."""
    for kind, lines in STEP_LINES:
        if isinstance(found, kind):
            return lines(found)
    return []


def defaults_listing(answer: DefaultsAnswer) -> list[str]:
    """The defaults whose value changed (with the jax commit where known), options only added or removed
    counted, and what could not be read."""
    changed = [c for c in answer.listed if c.before is not None and c.after is not None]
    added = sum(c.before is None for c in answer.listed)
    removed = sum(c.after is None for c in answer.listed)
    counted = [f"{n} {word} option(s)" for n, word in ((added, "added"), (removed, "removed")) if n]
    lines = []
    if changed or counted:
        shown = ", ".join(
            change.text()
            + (
                f" in {answer.commits[change.name].words()}"
                if change.name in answer.commits
                else ""
            )
            for change in changed[:SHOWN_DEFAULTS]
        )
        more = len(changed) - SHOWN_DEFAULTS
        parts = [part for part in (shown, f"{more} more" if more > 0 else "", *counted) if part]
        said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
        lines.append(f"defaults that changed from {answer.before} to {answer.after}: {said}")
    return [*lines, *screened_lines(answer), *([answer.problem] if answer.problem else [])]


def screened_lines(answer: DefaultsAnswer) -> list[str]:
    """The trials the screen dropped: they moved no metric toward the other release."""
    if not answer.screened_out:
        return []
    shown = ", ".join(f"{t.words()} on {t.release}" for t in answer.screened_out)
    return [
        f"screened at {answer.screen_processes} processes a side and dropped (they moved no metric "
        f"toward the other release): {shown}"
    ]


def trial_lines(
    answer: DefaultsAnswer,
    step: Comparison | None,
    key: MetricKey,
    thresholds: Thresholds,
    *,
    unwanted: bool | None = None,
) -> list[str]:
    """What the trials say on ``key``: the verdict first, then each trial, and the cap.  A setting that brings
    the old number back is a workaround only where the new one is ``unwanted`` (by default: where the step
    made it worse); else it is the old behaviour back, still a strong hint at the cause."""
    tried = answer.tried(key, thresholds)
    void = [t for t in tried if t.void]
    tried = [t for t in tried if not t.void]
    found = [] if step is None else [t for t in tried if t.brings_back(step)]
    forward = [] if step is None else [t for t in tried if t.brings_forward(step)]
    if unwanted is None:
        unwanted = step is not None and step.verdict is Verdict.SLOWER
    back = (
        "a workaround, and a strong hint at the cause"
        if unwanted
        else "the old behaviour back: a hint at why"
    )
    lines = []
    for each in found:
        assert step is not None and each.vs_before is not None
        most = (
            f" (it undoes {each.undoes(step):.0%} of the step)"
            if each.vs_before.verdict == step.verdict
            else ""
        )
        lines.append(f"{tried_text(each, answer)}{most}: {back}{_changed_in(answer, each)}")
    if tried and not found:
        lines.append(
            f"none of the {len(tried)} {answer.subject} tried brought the old {key.metric_name} back"
        )
    for each in forward:
        lines.append(f"{tried_text(each, answer)}: it brings the new number to {answer.before} too")
    lines += [
        tried_text(each, answer) for each in tried if each not in found and each not in forward
    ]
    if answer.left_out:
        lines.append(
            f"{answer.left_out} more trial(s) over the cap of {MAX_TRIED} were not measured"
        )
    return lines + void_lines(void)


# A script that replaces XLA_FLAGS in its own code: what it can do instead, said wherever its flags are void.
APPEND = "append to os.environ.get('XLA_FLAGS', '') instead of replacing it"


def void_lines(void: Sequence[Tried]) -> list[str]:
    """Trials whose XLA flag the script replaced (it sets XLA_FLAGS itself): void, not counted as tried."""
    if not void:
        return []
    shown = ", ".join(f"{t.trial.words()} on {t.trial.release}" for t in void)
    return [
        f"void, not tried: {shown}: the script sets XLA_FLAGS itself before jax starts, so XLA never "
        f"got the flag ({APPEND})"
    ]


def _changed_in(answer: DefaultsAnswer, tried: Tried) -> str:
    commit = answer.commits.get(tried.trial.change.name)
    return f" (its default changed in {commit.words()})" if commit is not None else ""


def tried_text(tried: Tried, answer: DefaultsAnswer) -> str:
    trial = tried.trial
    if tried.note or tried.vs_before is None or tried.vs_after is None:
        return f"on {trial.release}, {trial.words()}: not judged ({tried.note or 'no result'})"
    ratio = format_ratio(tried.vs_before.ratio)
    against = (
        f"{_against(tried.vs_before, answer.before)}, {_against(tried.vs_after, answer.after)}"
    )
    if Verdict.UNDECIDED in (tried.vs_before.verdict, tried.vs_after.verdict):
        against += ": more processes could tell"
    return f"on {trial.release}, {trial.words()} gives {ratio} of {answer.before} ({against})"


def _against(comparison: Comparison, release: str) -> str:
    """A trial against one release in words: faster or slower than it, the same as it, or undecided (a ratio
    of ×2 the statistics could not settle is neither the same nor told apart: more processes could tell)."""
    if comparison.verdict in MOVED:
        return f"{comparison.said} than {release}"
    if comparison.verdict == Verdict.UNCHANGED:
        return f"the same as {release}"
    return f"undecided against {release}"


def compiled_lines(answer: CompiledAnswer) -> list[str]:
    """A line on what was compared and where the dumps are, then one per module (the first few)."""
    if answer.void:
        return [
            f"compiled programs not compared, void for this script: it sets XLA_FLAGS itself before jax "
            f"starts on {' and '.join(answer.void)}, so XLA never got the harness's dump flags ({APPEND})"
        ]
    if answer.problem:
        return [f"compiled programs not compared: {answer.problem}"]
    if not answer.changes:
        return [
            f"compiled programs: no module of {answer.before} has a namesake in {answer.after}'s dump"
        ]
    head = (
        f"compiled programs of {answer.before} and {answer.after} (XLA's dumps in "
        f"`{answer.folder}<release>/`): {len(answer.changes)} module(s) compared"
    )
    differing = [c for c in answer.changes if not (c.same_before and c.same_after)]
    if not differing:
        texts = [f"`{diff_name(c)}`" for c in answer.changes if not c.same_text]
        aside = f" (only the text of {', '.join(texts)} differs)" if texts else ""
        return [
            f"{head}, the same before and after optimisation{aside}: what runs them changed, "
            "not what was compiled"
        ]
    alike: dict[str, list[str]] = {}  # every lambda's module changed alike is said once
    for change in differing:
        alike.setdefault(module_text(change), []).append(change.name)
    shown = [
        f"compiled {', '.join(names)}: {text}"
        for text, names in list(alike.items())[:SHOWN_MODULES]
    ]
    more = sum(len(names) for names in list(alike.values())[SHOWN_MODULES:])
    diffs = any(not c.same_text for c in differing)
    return [
        f"{head}, {len(differing)} differ"
        + (f", {more} not shown" if more else "")
        + (f" (text diffs in `{answer.folder}<module>.diff`)" if diffs else ""),
        *shown,
    ]


def module_text(change: ModuleChange) -> str:
    """A module's changes in a line (opcodes that moved, custom calls, temporary bytes), and the hint."""
    old, new = change.old, change.new
    parts = []
    # A custom call is named by its target below; get-tuple-element only unpacks what an op returned.
    ops = (set(old.after) | set(new.after)) - {"custom-call", "get-tuple-element"}
    moved = sorted(
        (op for op in ops if old.after[op] != new.after[op]),
        key=lambda op: -abs(new.after[op] - old.after[op]),
    )
    parts += [f"{op} {old.after[op]} → {new.after[op]}" for op in moved[:SHOWN_OPCODES]]
    targets = set(old.custom_calls) | set(new.custom_calls)
    for target in sorted(t for t in targets if old.custom_calls[t] != new.custom_calls[t]):
        parts.append(
            f"custom call {target} {old.custom_calls[target]} → {new.custom_calls[target]}"
        )
    kinds = set(old.fusion_kinds) | set(new.fusion_kinds)
    for kind in sorted(k for k in kinds if old.fusion_kinds[k] != new.fusion_kinds[k]):
        parts.append(f"{kind} fusions {old.fusion_kinds[kind]} → {new.fusion_kinds[kind]}")
    if old.temp_bytes != new.temp_bytes:
        parts.append(f"temporary bytes {old.temp_bytes} → {new.temp_bytes}")
    counts = f"{sum(old.before.values())} → {sum(new.before.values())} instructions"
    before = "same" if change.same_before else counts
    changes = "; ".join(parts) or "no count moved"
    return f"before optimisation {before}; after: {changes}; {change.hint()}"


def profile_lines(answer: ProfileAnswer) -> list[str]:
    if not isinstance(answer.old, OpTimes) and not isinstance(answer.new, OpTimes):
        return [
            f"where the time went not profiled: {answer.before}: {answer.old}; "
            f"{answer.after}: {answer.new}"
        ]
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
    return [
        f"where the time went, by op (one profiled process each; an op's own time, and how many ran; "
        f"{answer.before} → {answer.after}): {'; '.join(shown)}{note}"
    ]


def _op_cell(times: OpTimes | str, kind: str) -> str:
    if isinstance(times, str):
        return "?"
    if not times.calls[kind]:
        return "none"
    return f"{format_ns(times.total_ns[kind])} ({times.calls[kind]})"


OUTSIDE = "the change is outside the compiled programs — in tracing, dispatch or Python (JAX's or the library's)"


def reproduced_lines(answer: ReproducerAnswer, step: Comparison | None, metric: str) -> list[str]:
    """Whether the reproducer showed the step on ``metric``, its ratio beside the script's."""
    if answer.problem or answer.refused or not answer.script:
        return []
    found = answer.measured.get(metric)
    if found is None:
        return [f"no reproducer can show {metric}: it happens before any compiled program runs"]
    name, comparison = found
    if comparison is None or step is None:
        return [f"the reproducer's {name} was not measured on both releases"]
    theirs = f"{format_ratio(comparison.ratio)} on {name}"
    if answer.reproduces(metric, step):
        return [f"reproduces it with jax alone: {theirs} (your script: {format_ratio(step.ratio)})"]
    return [f"does not reproduce it ({theirs}, {comparison.said}): {OUTSIDE}"]


def reproducer_lines(answer: ReproducerAnswer) -> list[str]:
    """Where the reproducer is and what it holds, or why there is none."""
    refused = list(answer.refused)
    if answer.problem and not answer.script:
        return [f"no reproducer with jax alone: {answer.problem}", *refused]
    exported = [p for p in answer.programs if "problem" not in p]
    generated = sum(not i.get("saved") for p in exported for i in p.get("inputs", []))
    inputs = f", {generated} input(s) generated (too large to keep)" if generated else ""
    if answer.left_out:
        inputs += f"; {answer.left_out} more whose own time did not move left out"
    same, of = answer.matched
    head = (
        f"reproducer with jax alone: `{answer.folder}{answer.script}` ({answer.lines} lines, "
        f"{len(exported)} program(s) exported on {answer.exported_on}, {same} of {of} compiled on both "
        f"releases{inputs})"
    )
    return [head, *([answer.note] if answer.note else []), *refused]


def host_lines(answer: HostAnswer) -> list[str]:
    """Where the script's host time went on each release: by group, then the functions that moved most."""
    problems = [f"{label}: {side}" for label, side in answer.sides() if isinstance(side, str)]
    if problems:
        return [f"no Python profile to compare ({'; '.join(problems)})"]
    groups = ", ".join(
        f"{name} {format_ns(old)} → {format_ns(new)}"
        for name, old, new in answer.groups()[:SHOWN_GROUPS]
    )
    functions = "; ".join(
        f"`{name}` {format_ns(old)} → {format_ns(new)} ({old_calls} → {new_calls} calls)"
        for name, _, old, new, old_calls, new_calls in answer.moved(SHOWN_FUNCTIONS)
    )
    head = f"host time by where it lives (one process each under cProfile): {groups}"
    return [
        head,
        *([f"Python functions whose own time moved most: {functions}"] if functions else []),
    ]


def matched_lines(answer: MatchedFlags) -> list[str]:
    """Which flags were tried for the names XLA compiled on one release only, or why none was."""
    names = ", ".join(answer.names)
    if answer.problem:
        return [f"flags named like {names} not tried: {answer.problem}"]
    if not answer.trials and not answer.screened_out:
        return [f"no flag of {answer.after}'s jaxlib is named like {names}"]
    flags = ", ".join(f"`{trial.words()}`" for trial in answer.trials)
    tried = (
        [f"flags named like {names} (their defaults unchanged), tried on {answer.after}: {flags}"]
        if answer.trials
        else []
    )
    return tried + screened_lines(answer)


def skipped_lines(skipped: Skipped) -> list[str]:
    asks = f"; asked by `{skipped.command}`" if skipped.command else ""
    return [f"{skipped.name} not asked: {skipped.reason}{asks}"]


# Each kind's step-wide sentences; a kind without an entry says nothing on the page (its JSON is kept).
STEP_LINES: Sequence[tuple[type[Any], Callable[[Any], list[str]]]] = (
    (ReproducerAnswer, reproducer_lines),
    (MatchedFlags, matched_lines),  # before its base class, whose lines it does not share
    (DefaultsAnswer, defaults_listing),
    (CompiledAnswer, compiled_lines),
    (ProfileAnswer, profile_lines),
    (HostAnswer, host_lines),
    (Skipped, skipped_lines),
)


def why_json(setting: Setting) -> dict[str, list[dict[str, Any]]]:
    """Every step's evidence as data, by kind: ``defaults`` one entry per step and metric; the others one
    per step."""
    by_kind: dict[str, list[dict[str, Any]]] = {"defaults": [], "compiled": [], "profiles": []}
    for found in (each for step in setting.evidence.values() for each in step):
        data = found.data()
        if isinstance(found, DefaultsAnswer):
            by_kind.setdefault(found.kind, []).extend(data["metrics"])
        else:
            name = "profiles" if found.kind == "profile" else found.kind
            by_kind.setdefault(name, []).append({k: v for k, v in data.items() if k != "kind"})
    return by_kind


def libraries_line(setting: Setting, before: str, after: str) -> str:
    """What a step between two releases says of a plain script's own libraries: which one a varied library
    step comes with (jax held), or which jax release it comes with (the libraries held or unchanged), or
    which libraries changed version along with jax, and the two commands that tell them apart."""
    libraries = setting.libraries
    if libraries.vary is not None:
        return (
            f"comes with {libraries.vary} {libraries.version_at(after)} (jax {libraries.jax} held)"
        )
    if not libraries.versions:
        return ""
    split = of_kind(setting.evidence.get((before, after), ()), HeldAnswer)
    if split is not None:
        return held_line(split)
    held = [f"{pin.replace('==', ' ')} held" for pin in libraries.held]
    moved = libraries.moved_with_jax(before, after)
    if not moved:
        same = [f"{n} {v}" for n, v in sorted(libraries.versions.get(after, {}).items())]
        kept = ", ".join(
            [*held, *(f"{each} on both" for each in same if f"{each} held" not in held)]
        )
        return f"comes with jax {after}" + (f" ({kept})" if kept else "")
    changes = "; ".join(f"{name} {old} → {new}" for name, (old, new) in moved.items())
    name, (old, new) = next(iter(moved.items()))
    jax_only = _command(setting, ["--from", before, "--to", after, "--hold", f"{name}=={old}"])
    library_only = _command(setting, ["--vary", name, "--jax", after, "--from", old, "--to", new])
    return (
        f"the script's libraries changed along with jax ({changes}): the library or JAX? "
        f"`{jax_only}` measures the two jax releases with {name} held; `{library_only}` measures "
        f"{name}'s own releases on jax {after}"
    )


def held_line(answer: HeldAnswer) -> str:
    """Library or JAX in one line: which part of the step moved as the step did, with the middle side
    measured between its two releases (the libraries that moved held)."""
    moved = ", ".join(f"{name} {old} → {new}" for name, (old, new) in answer.moved.items())
    if not answer.middle:
        return f"library or JAX not told apart ({moved}): {answer.problem}"
    held = ", ".join(f"{name} {version}" for name, version in answer.held().items())
    other = answer.before if answer.jax_of_middle == answer.after else answer.after
    said = {
        JAX: f"comes with jax {answer.after} ({held} held)",
        LIBRARIES: f"comes with the libraries: {moved} (jax {answer.jax_of_middle} held)",
        BOTH: f"needs both: jax {other} → {answer.jax_of_middle} and {moved}",
        APART: "library or JAX not told apart",
    }
    by_answer: dict[str, list[str]] = {}
    for metric, parts in answer.parts.items():
        by_answer.setdefault(parts.comes_with(), []).append(metric)
    clauses = []
    for verdict, metrics in by_answer.items():
        parts = answer.parts[metrics[0]]
        figures = "; ".join(
            f"{who} {_said(found)}"
            for who, found in (("jax's part", parts.jax), ("the libraries'", parts.libraries))
        )
        more = f" and {len(metrics) - 1} more" if len(metrics) > 1 else ""
        clauses.append(f"{said[verdict]} on {metrics[0]}{more} ({figures})")
    return "; ".join(clauses)


def _said(found: Comparison | None) -> str:
    if found is None:
        return "not measured"
    if found.verdict in MOVED:
        return f"{format_ratio(found.ratio)} {found.said}"
    return found.said


def _command(setting: Setting, words: list[str]) -> str:
    sizes = [f"--size {name}={value}" for name, value in setting.sizes.items()]
    target = setting.target_words()
    return " ".join(
        ["nox", "-s", "triage", "--", *target, *words, *sizes, *nox_profile_words(setting.profile)]
    )
