"""Changed defaults, tried: does setting one back on the new release bring the old number back?

Each default that differs over a step U → V (``harness.explain.defaults``) is tried with no edit to
the script: on V set back to U's value (and on U set to V's), as sides interleaved with U and V.  An
XLA flag goes into the side's ``XLA_FLAGS``, a jax option into ``HARNESS_JAX_CONFIG``; a script that
replaces ``XLA_FLAGS`` itself makes a flag's trial void, said so, never counted as tried.  The
trials are screened first at a few processes a side (``screen``), and only those that move a metric
toward the other release are measured until decided.  An ending has no number to bring back: each
default is set on the release that dies and run until a process dies or it is told apart from the
release's counts, the first that runs ends the search (``CrashWorkaround``).  docs/releases.md says
the whole method and its words.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from harness.analysis.metrics import MetricKey, ProcessSamples, compare_metric, metric_samples
from harness.analysis.shapes import MIN_ALIKE, Counts, compare_counts
from harness.analysis.significance import OPPOSITE, Comparison, Shape, Thresholds, Verdict
from harness.analysis.statuses import Ending, change_between, error_line, summarise
from harness.errors import UsageError
from harness.explain.defaults import (
    JAX,
    XLA,
    Change,
    Option,
    OptionCommit,
    changes,
    jax_options,
    option_commits,
    relevant,
    site_packages,
    xla_listing,
)
from harness.measure.script_hook import JAX_CONFIG
from harness.measure.script_process import lost_in
from harness.measure.sides import Side
from harness.steps.evidence import Found, OverBudget, Step, StepSides
from harness.store.results import StoredResult

MAX_TRIED = 6
# a side, in a cost's screen: enough to see a setting move a step's number, not to decide it
SCREEN_PROCESSES = 3
# A trial kept after the screen moves a metric this share of the way (log scale) from its release's
# number toward the other release's, or its screen cannot rule that out; a step that moved less than
# NO_SCREEN in the screen keeps every trial.
SCREEN_SHARE = 0.25
NO_SCREEN = math.log(1.02)
T = TypeVar("T", bound="DefaultsAnswer")


@dataclass(frozen=True)
class Trial:
    """A changed default set on one release: on the new one back to the old value, or forward."""

    change: Change
    release: str  # the release it is set on
    value: str  # the value set, as the release writes its default

    @property
    def back(self) -> bool:
        """Whether it sets the newer release back to the older's default (else the older one on)."""
        return self.value == self.change.before

    def words(self) -> str:
        """As a user sets it: ``XLA_FLAGS=--name=value`` or ``jax.config.update(...)``."""
        if self.change.kind == XLA:
            return f"XLA_FLAGS=--{self.change.name}={self.value}"
        return f'jax.config.update("{self.change.name}", {self.value})'

    def profile(self, profile: str) -> str:
        """The profile label its results are stored under: the profile and the setting, a name."""
        value = re.sub(r"[^A-Za-z0-9._-]", "_", self.value)[:24]
        return f"{profile}+{self.change.name}.{value}"[:128]

    def data(self) -> dict[str, str]:
        words, name = self.words(), self.change.name
        return {"release": self.release, "setting": words, "option": name, "value": self.value}

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The side's environment variables: the profile's, with this setting added."""
        if self.change.kind == XLA:
            flags = f"{base.get('XLA_FLAGS', '')} --{self.change.name}={self.value}".lstrip()
            return {**base, "XLA_FLAGS": flags}
        return {**base, JAX_CONFIG: json.dumps({self.change.name: ast.literal_eval(self.value)})}


def set_on(change: Change, release: str, older: str) -> Trial | None:
    """``change`` set on ``release`` to the other release's default, where ``release`` has the
    option and the value can be set: present, and for a jax option a literal (not an expression)."""
    value, own = (
        (change.after, change.before) if release == older else (change.before, change.after)
    )
    if own is None or value is None:
        return None
    if change.kind == JAX:
        try:
            ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    return Trial(change, release, value)


def most_telling(found: Sequence[Change], platform: str, *, by_kind: bool = True) -> list[Change]:
    """Those that can matter on ``platform``: changed defaults first, then those named for it."""
    return sorted(
        relevant(list(found), platform),
        key=lambda c: (
            c.before is None or c.after is None,
            platform not in c.name.split("_"),
            c.kind if by_kind else "",
            c.name,
        ),
    )


def trials(found: list[Change], before: str, after: str, platform: str) -> tuple[list[Trial], int]:
    """A step's trials, most telling first, at most ``MAX_TRIED``; and how many more there were."""
    changed = most_telling(found, platform)
    planned = [t for c in changed for side in (after, before) if (t := set_on(c, side, before))]
    return planned[:MAX_TRIED], max(len(planned) - MAX_TRIED, 0)


def options_of(interpreter: Path, listed: dict[str, Option] | str) -> tuple[dict[str, Option], str]:
    """A release's jax options, from the venv of ``interpreter``, with its XLA flags as its jaxlib
    ``listed`` them (``defaults.xla_listing``); and why XLA's are missing."""
    packages = site_packages(interpreter.parent.parent)
    found = dict(jax_options(packages)) if packages is not None else {}
    return (found, listed) if isinstance(listed, str) else (found | listed, "")


# A setting that undoes this share of a step's change (log scale) brings it back, even where the
# older release is still told apart: dispatch ×0.058 on 0.4.33, ×0.75 of 0.4.31 with async dispatch
# off (undoes 90 %).
MOST = 0.75


@dataclass(frozen=True)
class Tried:
    """What a trial measured against both releases, on the step's metric."""

    trial: Trial
    vs_before: Comparison | None  # the release with the setting against the older release
    vs_after: Comparison | None  # … against the newer one
    note: str = ""  # why it could not be judged
    # The script set XLA_FLAGS itself, so this trial's flag never reached XLA: nothing was tried.
    void: bool = False

    def brings_back(self, step: Comparison) -> bool:
        """Set on the newer release back: it moves the newer one back, and either does not differ
        from the older one or undoes ``MOST``, other changes of the step moving it a little."""
        if self.vs_before is None or self.vs_after is None or not self.trial.back:
            return False
        back = OPPOSITE.get(step.verdict)
        return self.vs_after.verdict == back and (
            self.vs_before.verdict != step.verdict or self.undoes(step) >= MOST
        )

    def undoes(self, step: Comparison) -> float:
        """The share of the step's change (log scale) the setting undoes: 1 lands on the older's."""
        moved = self.vs_before.cost if self.vs_before is not None else None
        whole = step.cost
        if moved is None or whole is None or not whole.ratio > 0 or whole.ratio == 1:
            return 0.0
        return 1 - math.log(moved.ratio) / math.log(whole.ratio) if moved.ratio > 0 else 0.0

    def brings_forward(self, step: Comparison) -> bool:
        """Set on the older release forward: it differs from the older one as the newer does."""
        return (
            not self.trial.back
            and self.vs_before is not None
            and self.vs_before.verdict == step.verdict
        )


@dataclass(frozen=True)
class DefaultsAnswer:
    """A step's changed defaults: listed, tried in one run with both releases, judged per metric."""

    before: str
    after: str
    listed: list[Change]
    trials: list[Trial] = dataclasses.field(default_factory=list)
    # Per trial, its measurement's results: "before", "after" (the releases as they are), "trial".
    measured: Mapping[Trial, Mapping[str, StoredResult | None]] = dataclasses.field(
        default_factory=dict
    )
    left_out: int = 0  # trials over the cap
    problem: str = ""  # why the options could not all be read
    metrics: tuple[MetricKey, ...] = ()  # the step's metrics the trials are judged on
    commits: Mapping[str, OptionCommit] = dataclasses.field(default_factory=dict)  # by jax option
    thresholds: Thresholds = dataclasses.field(default_factory=Thresholds)
    kind: str = "defaults"
    settles: bool = False
    subject: str = "changed defaults"  # what its trials are, in the answer's words
    # dropped after the screen: they moved no metric toward the other
    screened_out: tuple[Trial, ...] = ()
    screen_processes: int = 0  # a side, in the screen (0: none ran)
    # Each metric's trials judged with ``thresholds`` once, when the answer is made (not on a page).
    judgements: Mapping[MetricKey, tuple[Tried, ...]] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        judgements = {
            key: tuple(
                judged(trial, self.measured.get(trial, {}), key, self.thresholds)
                for trial in self.trials
            )
            for key in self.metrics
        }
        object.__setattr__(self, "judgements", judgements)

    def tried(self, key: MetricKey | None) -> list[Tried]:
        """The trials as judged on ``key`` (one of the step's metrics) when the answer was made."""
        return list(self.judgements.get(key, ())) if key is not None else []

    def workarounds(self, key: MetricKey | None, step: Comparison | None) -> list[Tried]:
        """The trials on ``key`` that bring ``step``'s old number back (a void one never does)."""
        return [t for t in self.tried(key) if step is not None and t.brings_back(step)]

    def brings_back(self, key: MetricKey) -> bool:
        """Whether a trial brings ``key``'s old number back, judged against the step as its own
        measurement showed it: a workaround found, which ends the search for one on that metric."""
        for tried in self.tried(key):  # as judged when the answer was made: never judged again
            results = self.measured.get(tried.trial, {})
            series = [_samples(results.get(name), key) for name in ("before", "after")]
            if series[0] is None or series[1] is None:
                continue
            if tried.brings_back(compare_metric(series[0], series[1], self.thresholds, key)):
                return True
        return False

    def answered(self) -> tuple[MetricKey, ...]:
        """The metrics a workaround brings back: the default that turned is their answer, the kinds
        after this one are not asked of them."""
        return tuple(key for key in self.metrics if self.brings_back(key))

    def data(self) -> dict[str, Any]:
        """The step's changed defaults, and each metric's trials judged."""
        return {
            "kind": self.kind,
            "metrics": [
                {"metric": key.metric_name, **self.metric_data(key)} for key in self.metrics
            ],
        }

    def metric_data(self, metric: MetricKey) -> dict[str, object]:
        return {
            "before": self.before,
            "after": self.after,
            "changed": [dataclasses.asdict(change) for change in self.listed],
            "tried": [
                {
                    **t.trial.data(),
                    "back": t.trial.back,
                    "vs_before": None if t.vs_before is None else t.vs_before.verdict,
                    "ratio_to_before": t.vs_before.cost.ratio
                    if t.vs_before and t.vs_before.cost
                    else None,
                    "vs_after": None if t.vs_after is None else t.vs_after.verdict,
                    "note": t.note,
                    "void": t.void,
                }
                for t in self.tried(metric)
            ],
            "commits": {
                name: {"sha": commit.sha, "title": commit.title, "url": commit.url}
                for name, commit in self.commits.items()
            },
            "left_out": self.left_out,
            "screened_out": [
                {"release": trial.release, "setting": trial.words()} for trial in self.screened_out
            ],
            "screen_processes": self.screen_processes,
            "problem": self.problem,
        }


def error_of(stored: StoredResult) -> str:
    """``: <the error's line>`` of a failed result's first failed process (XLA's
    ``UNIMPLEMENTED: Custom call target __onednn$matmul ...`` says why a flag cannot be set on a
    release; never JAX's "For simplicity…" trailer), or ""."""
    details = [p.detail for p in stored.result.processes if p.status != "ok" and p.detail.strip()]
    return f": {error_line(details[0])}" if details else ""


def judged(
    trial: Trial, results: Mapping[str, StoredResult | None], key: MetricKey, thresholds: Thresholds
) -> Tried:
    """A trial's result against both releases' (``results``: by "before", "after" and "trial")."""
    found = {name: results.get(name) for name in ("before", "after", "trial")}
    for name, result in found.items():
        if result is None or result.result.status != "ok":
            whose = "its" if name == "trial" else f"the {name} release's"
            how = (
                "stored nothing" if result is None else f"{result.result.status}{error_of(result)}"
            )
            return Tried(trial, None, None, f"{whose} processes {how}")
    tried = found["trial"]
    assert tried is not None
    if trial.change.kind == XLA and f"--{trial.change.name}" in lost_in(tried.result.processes):
        return Tried(trial, None, None, void=True)
    before, after, trial_samples = (_samples(result, key) for result in found.values())
    if before is None or after is None or trial_samples is None:
        return Tried(trial, None, None, f"{key.metric_name} not measured on every side")
    vs_before = compare_metric(before, trial_samples, thresholds, key)
    return Tried(trial, vs_before, compare_metric(after, trial_samples, thresholds, key))


def side_of(trial: Trial, base: Side) -> Side:
    """The release's side with the setting: another profile label (stored apart), measured until its
    comparison with its release is decided too.  The profile's ``XLA_FLAGS`` stay."""
    label = f"jax {trial.release} · {base.profile} · {trial.words()}"
    inherited = {name: value for name, value in base.env.items() if value is not None}
    inherited["XLA_FLAGS"] = base.environment().get("XLA_FLAGS", "")
    return dataclasses.replace(
        base,
        profile=trial.profile(base.profile),
        env=dict(trial.environment(inherited)),
        label=label,
        compare_next=False,
        compare_metrics=(),
        compare_with=base.label,
    )


def xla_flags(sides: StepSides, side: Side) -> dict[str, Option] | str:
    """The XLA flags ``side``'s jaxlib lists, or why it lists none: read once per interpreter and
    run (a process each), for the trials and the profiles of every step the side is in."""
    memo = sides.memo.setdefault("xla_flags", {})
    if side.interpreter not in memo:
        memo[side.interpreter] = xla_listing(Path(side.interpreter), side.environment())
    return memo[side.interpreter]


def ready_options(
    step: Step, sides: StepSides
) -> tuple[dict[str, Side], dict[str, Option], dict[str, Option], str] | str:
    """The step's sides made ready (and those its defaults are read between), the older's options
    and the newer's, and why XLA's are missing; or why a side could not be made."""
    listing = step.defaults_between or step.pair
    ready = {label: sides.side(label) for label in dict.fromkeys((*step.pair, *listing))}
    made = {label: side for label, side in ready.items() if isinstance(side, Side)}
    if len(made) < len(ready):
        return "the two sides could not both be made ready"
    (old, problem), (new, later) = (
        options_of(Path(side.interpreter), xla_flags(sides, side))
        for side in (made[label] for label in listing)
    )
    return made, old, new, problem or later


class ChangedDefaults:
    """The defaults that changed from a step's older side to its newer, each tried on the other in
    one measurement with both (until decided), with the jax commit that turned each."""

    name = "defaults"

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        return bool(step.metrics)  # an ending's are ``CrashWorkaround``'s, judged on its counts

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> DefaultsAnswer:
        before, after = step.pair
        sides.progress(f"  defaults that changed from {before} to {after}: listing and trying them")
        ready = ready_options(step, sides)
        if isinstance(ready, str):
            return DefaultsAnswer(before, after, [], problem=ready, thresholds=step.thresholds)
        made, old, new, problem = ready
        listed = relevant(changes(old, new), step.platform)
        planned, left = trials(listed, before, after, step.platform)
        commits, unread = _commits(step, listed, sides)
        problems = "; ".join(part for part in (problem, unread) if part)
        answer = DefaultsAnswer(
            before, after, listed, [], {}, left, problems, step.metrics, commits, step.thresholds
        )
        if not planned:
            return answer
        sides.progress(
            f"  trying {len(planned)} changed default(s) of {before} → {after}: "
            + ", ".join(f"{trial.words()} on {trial.release}" for trial in planned)
        )
        return screen_and_measure(step, sides, (made[before], made[after]), planned, answer)


def screen_and_measure(
    step: Step, sides: StepSides, ends: tuple[Side, Side], planned: list[Trial], answer: T
) -> T:
    """``answer`` with ``planned`` screened (``screen``), those kept measured until decided."""
    kept, dropped, failed = screen(step, sides, ends, planned)
    processes = screen_processes(step)
    if dropped:
        sides.progress(
            f"  screened at {processes} processes a side, not measured further (moved no "
            f"metric toward the other release): {', '.join(trial.words() for trial in dropped)}"
        )
    # Only the screen is the settling kind's own: measuring the kept trials until decided fits in
    # what is left of the budget, or is said left out.
    after_screen = (
        dataclasses.replace(sides, settling=False) if isinstance(sides, StepSides) else sides
    )
    try:
        results = measure_trials(step, after_screen, ends, list(kept)) if kept else {}
    except OverBudget as exc:  # the kept trials are judged on their screen, and said so
        shown = ", ".join(f"{trial.words()} on {trial.release}" for trial in kept)
        note = f"screened and kept, not measured further ({exc}): {shown}"
        answer = dataclasses.replace(
            answer, problem="; ".join(part for part in (answer.problem, note) if part)
        )
        results = {}
    return dataclasses.replace(
        answer,
        trials=[trial for trial in planned if trial not in dropped and trial in (*kept, *failed)],
        # A kept trial measured no further keeps its screen's results: what they decide (a value
        # brought back exactly beside a time still open) stands.
        measured={**failed, **kept, **results},
        screened_out=tuple(dropped),
        screen_processes=processes,
    )


def measure_trials(
    step: Step,
    sides: StepSides,
    ends: tuple[Side, Side],
    planned: list[Trial],
    processes: int | None = None,
) -> dict[Trial, dict[str, StoredResult | None]]:
    """Each trial a side of one measurement with the step's two sides, until the step's metrics are
    decided (with ``processes``: that many a side, the screen); per trial, the results it is judged
    by ("before", "after", "trial")."""
    by_label = {side.release: side for side in ends}
    trial_sides = [side_of(trial, by_label[trial.release]) for trial in planned]
    # An exact step's screen (no varying cost) compares its trials with the releases' own stored
    # results: equality needs no interleaving, so only the trials run.
    stored = processes is not None and not step.varying
    every = trial_sides if stored else [*ends, *trial_sides]
    first = "its screen" if processes is not None else "its trials' first round"
    sides.afford(step, len(every) * (processes or sides.processes), first)
    if processes is None:
        measured = sides.together(every, step.metrics)
    else:
        measured = sides.screened(every, processes)
    if stored:
        measured.update({end.label: sides.stored(end.release) for end in ends})
    return {
        trial: {
            "before": measured.get(ends[0].label),
            "after": measured.get(ends[1].label),
            "trial": measured.get(side.label),
        }
        for trial, side in zip(planned, trial_sides, strict=True)
    }


Measured = dict[Trial, dict[str, StoredResult | None]]


def screen_processes(step: Step) -> int:
    """A side's processes in a screen: a value or presence is settled by equality in ``MIN_ALIKE``;
    a cost needs enough to see a setting move its number."""
    return SCREEN_PROCESSES if step.costs else MIN_ALIKE


def screen(
    step: Step, sides: StepSides, ends: tuple[Side, Side], planned: list[Trial]
) -> tuple[Measured, list[Trial], Measured]:
    """Every trial measured once at ``screen_processes`` a side: those to measure until decided
    (kept, with their screen's results), those that move no metric (dropped), and those the screen
    answers (a process failed, a void flag, every value decided)."""
    screened = measure_trials(step, sides, ends, planned, screen_processes(step))
    kept: Measured = {}
    dropped: list[Trial] = []
    answered: Measured = {}
    exact = step.exact
    for trial in planned:
        results = screened[trial]
        judgements = {key: judged(trial, results, key, step.thresholds) for key in step.metrics}
        open_values = any(undecided(judgements[key]) for key in exact)
        if any(each.note or each.void for each in judgements.values()):
            answered[trial] = results
        elif open_values or any(toward(trial, results, k, step.thresholds) for k in step.varying):
            kept[trial] = results
        elif exact:
            answered[trial] = results
        else:
            dropped.append(trial)
    return kept, dropped, answered


def undecided(tried: Tried) -> bool:
    """Whether a trial's comparisons leave it open: more processes could tell."""
    return any(
        c is None or c.verdict is Verdict.UNDECIDED for c in (tried.vs_before, tried.vs_after)
    )


def toward(
    trial: Trial, results: Mapping[str, StoredResult | None], key: MetricKey, thresholds: Thresholds
) -> bool:
    """Whether the trial moves ``key`` at least ``SCREEN_SHARE`` of the way (log scale) from its
    release's number to the other's; a step the screen saw barely move keeps it."""
    own, other = ("after", "before") if trial.back else ("before", "after")
    own_samples, other_samples, trial_samples = (
        _samples(results.get(name), key) for name in (own, other, "trial")
    )
    if own_samples is None or other_samples is None or trial_samples is None:
        return True
    step = compare_metric(own_samples, other_samples, thresholds, key).cost
    moved = compare_metric(own_samples, trial_samples, thresholds, key).cost
    if step is None or moved is None or not (step.ratio > 0 and moved.ratio > 0):
        return True
    if abs(math.log(step.ratio)) < NO_SCREEN or (
        math.log(moved.ratio) / math.log(step.ratio) >= SCREEN_SHARE
    ):
        return True
    # Dropped only where the screen's interval rules the share out, never on its point alone: a
    # real bisect under load screened out the one setting that brought dispatch back.
    reach = math.log(moved.margin) if math.isfinite(moved.margin) else math.inf
    return reach >= SCREEN_SHARE * abs(math.log(step.ratio))


def _samples(result: StoredResult | None, key: MetricKey) -> ProcessSamples | None:
    return metric_samples(result).get(key) if result is not None else None


def _commits(
    step: Step, listed: list[Change], sides: StepSides
) -> tuple[Mapping[str, OptionCommit], str]:
    """The jax commit that turned each listed default, from a clone at hand ({} without one); and
    why the clone could not answer (a tag missing, git failing): said, not fatal."""
    if step.jax_repo is None or not any(change.kind == JAX for change in listed):
        return {}, ""
    try:
        return option_commits(step.jax_repo, *(step.defaults_between or step.pair), listed), ""
    except (UsageError, OSError, subprocess.SubprocessError) as exc:
        unread = f"the jax commits of the changed defaults not read from {step.jax_repo}: {exc}"
        sides.progress(f"  {unread}")
        return {}, unread


# Processes a trial runs ok at most where the release died in every one: exact at two a side
# (``shapes.MIN_ALIKE``), one more for the draw of the machine; a flaky crash runs as many as it.
EVERY_DEAD_SCREEN = 3
MAX_STATUS_TRIED = 8  # trials in all, changed defaults first: each costs a screen
CHANGED, NAMED = "changed default", "named like what XLA compiled anew"
NOT_ASKED = "where the time goes (the op profiles and the host profile)"


@dataclass(frozen=True)
class StatusTried:
    """One setting tried on the crashing release, and how its processes ended."""

    trial: Trial
    source: str  # CHANGED or NAMED
    ended: str = ""  # ``ok in 3 of 3 processes``, ``SIGSEGV (exit 139) in 3 of 3 processes``
    runs: bool = False  # ok in every process: a workaround
    void: bool = False  # the script replaced XLA_FLAGS: the flag never reached XLA

    def data(self) -> dict[str, Any]:
        return {
            **self.trial.data(),
            "source": self.source,
            "status": self.ended,
            "runs": self.runs,
            "void": self.void,
        }


@dataclass(frozen=True)
class CrashAnswer:
    """The settings tried on an ending's crashing release, in turn, to the first that runs."""

    before: str
    after: str
    crashing: str = ""  # the release whose processes die
    dead: str = ""  # how they die: ``SIGSEGV (exit 139)``
    tried: tuple[StatusTried, ...] = ()
    untried: int = 0  # planned, not tried: a workaround was found first, or over the cap
    names: tuple[str, ...] = ()  # what XLA compiled on one release only, the flags were named by
    problem: str = ""
    kind: str = "crash"
    settles: bool = False
    # Only the flags named like what XLA compiled anew, asked after the compiled programs (the
    # changed defaults were the crash kind's own answer, before them).
    named_only: bool = False

    @property
    def workaround(self) -> StatusTried | None:
        return next((each for each in self.tried if each.runs), None)

    def data(self) -> dict[str, Any]:
        found = self.workaround
        plain = ("kind", "before", "after", "crashing", "dead")
        return {
            **{name: getattr(self, name) for name in plain},
            "workaround": None if found is None else found.data(),
            "tried": [each.data() for each in self.tried],
            "untried": self.untried,
            "named_only": self.named_only,
            "names": list(self.names),
            "not_asked": NOT_ASKED,
            "problem": self.problem,
        }


def crashing_side(
    step: Step, stored: Callable[[str], StoredResult | None]
) -> tuple[str, Ending, Counts] | str:
    """The step's release that dies, how (``ok → SIGSEGV (exit 139)``) and its counts of processes
    that died, as the step's own comparison tells it (the counts, at its thresholds: in every
    process or in some), from the two releases' ``stored`` results; or why it cannot be told."""
    results = [stored(label) for label in step.pair]
    if results[0] is None or results[1] is None:
        return "the two releases' results could not both be read"
    was, now = summarise(results[0]), summarise(results[1])
    change = change_between(was, now, step.thresholds)
    if change is None:
        return "the two releases' stored results show no change in how their processes end"
    crashing = step.after if change.stops_running else step.before
    return crashing, change, (now if crashing == step.after else was).dead_counts


def judge_counts(
    trial: Trial, source: str, ran: int, against: Counts, thresholds: Thresholds
) -> StatusTried:
    """A trial on a release that dies in some processes (``against``: its counts), ok in all of its
    ``ran``: a workaround where Fisher's exact test tells the two apart."""
    compared = compare_counts(Shape.ENDING, against, (0, ran), thresholds)
    told = compared.verdict is Verdict.CHANGED
    dead, of = against
    how = "told apart" if told else "not told apart"
    ended = f"ok in {ran} of {ran} processes ({how} from {dead} of {of} dead on the release)"
    return StatusTried(trial, source, ended, runs=told)


def planned_trials(
    listed: Sequence[Change], crashing: str, before: str, platform: str
) -> list[tuple[Trial, str]]:
    """Each changed default set on the crashing release to the other's value, most telling first."""
    changed = most_telling(listed, platform, by_kind=False)
    return [(trial, CHANGED) for c in changed if (trial := set_on(c, crashing, before))]


def stopped(trial: Trial, source: str, stored: StoredResult | None) -> StatusTried | None:
    """A trial's round that ends it, never a workaround: none stored, the flag lost (the script
    replaced XLA_FLAGS: void), or a process that died (said with how they ended); None where every
    process ran ok with the setting."""
    if stored is None:
        return StatusTried(trial, source, "no result stored")
    if trial.change.kind == XLA and f"--{trial.change.name}" in lost_in(stored.result.processes):
        return StatusTried(trial, source, void=True)
    summary = summarise(stored)
    return StatusTried(trial, source, summary.words()) if summary.ok < summary.processes else None


def try_in_turn(
    planned: Sequence[tuple[Trial, str]],
    run: Callable[[Trial, int], StoredResult | None],
    against: tuple[Counts, Thresholds],
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[tuple[StatusTried, ...], int]:
    """Each trial run in turn (``run``: its side with that many processes), in doubling rounds until
    a round stops it (``stopped``: a process died) or as many ran ok, judged against the crashing
    release's counts at the step's thresholds (``against``, ``judge_counts``), up to the first that
    runs (a workaround ends the search), at most ``MAX_STATUS_TRIED``; what each did, and how many
    were left untried."""
    done: list[StatusTried] = []
    counts, thresholds = against
    most = min(counts[1], EVERY_DEAD_SCREEN) if counts[0] == counts[1] else counts[1]
    for trial, source in planned[:MAX_STATUS_TRIED]:
        died, ran, size = None, 0, 1
        while died is None and ran < most:
            stored = run(trial, size)
            if (died := stopped(trial, source, stored)) is None:
                assert stored is not None
                ran += len(stored.result.processes)
                size = min(2 * size, most - ran)
        judged = died or judge_counts(trial, source, ran, counts, thresholds)
        progress(f"  {trial.words()} on {trial.release}: {judged.ended or 'void'}")
        done.append(judged)
        if judged.runs:
            break
    return tuple(done), len(planned) - len(done)


class CrashWorkaround:
    """An ending's why: its changed defaults (``planned``), each set on the crashing release and
    tried alone, until one makes it run."""

    name = "crash"
    named_only = False  # only the flags named like what XLA compiled anew: ``CrashFlags``

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        return step.ending

    def planned(
        self,
        step: Step,
        found: tuple[Found, ...],
        crashing: str,
        options: tuple[dict[str, Option], dict[str, Option]],
    ) -> tuple[list[tuple[Trial, str]], tuple[str, ...]]:
        """The trials, and the compiled names they were matched by (none here)."""
        return planned_trials(changes(*options), crashing, step.before, step.platform), ()

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> CrashAnswer:
        answer = CrashAnswer(step.before, step.after, named_only=self.named_only)
        told = crashing_side(step, sides.prober.reuse.stored)
        if isinstance(told, str):
            return dataclasses.replace(answer, problem=told)
        crashing, arrow, counts = told
        answer = dataclasses.replace(answer, crashing=crashing, dead=arrow.dead)
        ready = ready_options(step, sides)
        if isinstance(ready, str):
            return dataclasses.replace(answer, problem=ready)
        made, old, new, problem = ready
        planned, names = self.planned(step, found, crashing, (old, new))
        answer = dataclasses.replace(answer, names=names, problem=problem)
        if not planned:
            return answer
        sides.progress(
            f"  trying {min(len(planned), MAX_STATUS_TRIED)} setting(s) on {crashing}, each until "
            "a process dies or its counts are told from the release's; the first that runs ends "
            "the search"
        )
        base = made[crashing]

        def run(trial: Trial, processes: int) -> StoredResult | None:
            side = side_of(trial, base)
            return sides.screened([side], processes).get(side.label)

        tried, untried = try_in_turn(planned, run, (counts, step.thresholds), sides.progress)
        return dataclasses.replace(answer, tried=tried, untried=untried)
