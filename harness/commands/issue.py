"""``issue``: draft an upstream issue: find the change, write both scripts, run them, render.

Through ``nox -s issue`` (a release plan: every release on the index, its cached venv) the full
instrumented script and ``jax.print_environment_info`` run in the venv of ``--jax`` (default: the
change's first bad release), the short script on the change's two releases, each in a venv holding
only jax and jaxlib (``plain_env``, kept); without a plan, both on the JAX installed here.  Every
script run holds the measurement lock; the harness process never imports JAX.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.analysis.metrics import program_names
from harness.analysis.significance import MOVED, Thresholds
from harness.analysis.statuses import error_line, ran, summarise
from harness.catalogue.scripts import source_text
from harness.cli.issue import IssueRequest
from harness.cli.ranges import target_words
from harness.commands.search import check_installed_release
from harness.errors import HarnessError, UsageError
from harness.explain.dumps import DUMP_FILE
from harness.findings import Finding, findings, nox_command
from harness.host.environment import REPO_ROOT, allowed_variables, cpu_model, scrub, shown_path
from harness.install.environments import Prepared
from harness.install.venvs import plain_env, plan_entry, run_whole
from harness.measure.figures import parse_output
from harness.measure.locks import stderr_line, timing_lock
from harness.measure.sides import release_label
from harness.measure.storing import check_results_folder
from harness.metric_names import ENDING, Criterion, MetricKey
from harness.names import name_problem
from harness.pins import DEFAULT_RELEASE
from harness.render.issue_draft import DraftInputs, ReleaseRun, ScriptRun, draft_title, render
from harness.render.issue_screen import issue_screen, run_status
from harness.render.why import reproduced_lines, reproducer_lines
from harness.store.files import DocumentProblem, output_folder, read_bounded, replace_file
from harness.store.results import LoadProblem, StoredResult, load_results
from harness.store.schema import RunStatus
from harness.units import sizes_text
from harness.upstream.change import (
    Change,
    Reproduced,
    change_from,
    newest_result,
    read_steps,
    with_script_figures,
)
from harness.upstream.export import export_script
from harness.upstream.installs import exact_install, imported_besides_jax
from harness.upstream.minimal import minimal_script
from harness.upstream.step_measured import (
    StepRequest,
    as_reproduced,
    compared,
    confirm,
    newest_line,
    newest_status_line,
    reproduce,
)

ISSUES_DIR = "issues"
ENVIRONMENT_TIMEOUT_S = 120.0
MAX_DUMP_BYTES = 64 * 1024 * 1024  # one HLO text file; a larger one is no dump a maintainer opens
_JAX_FACTS = (
    "import json; from harness.host.environment import jax_facts; print(json.dumps(jax_facts()))"
)
_PACKAGES = (
    "import importlib.metadata as m; print(*sorted(f'{d.name}=={d.version}' for d in "
    "m.distributions()))"
)


@dataclass(frozen=True)
class Written:
    draft: Path
    short: Path | None  # the script beside the draft (an ending's: where the harness wrote one)
    full: Path | None
    run: ScriptRun | None  # the full script's (an ending's draft runs none)
    short_runs: list[ReleaseRun]
    problems: list[LoadProblem]
    title: str = ""  # the draft's
    measured: tuple[str, ...] = ()  # what ``issue`` measured itself, in lines for the screen


def run_script(
    path: Path, timeout_s: float, python: str | None = None, args: Sequence[str] = ()
) -> tuple[int | None, str, str]:
    """Run a script by file name in its folder (tracebacks name no local path), under the lock."""
    with timing_lock(stderr_line):
        try:
            done = subprocess.run(
                [python or sys.executable, path.name, *args],
                cwd=path.parent,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:  # its output so far: bytes, even with text
            out, err = (b.decode(errors="replace") if b else "" for b in (exc.stdout, exc.stderr))
            return None, out, err
    return done.returncode, done.stdout, done.stderr


def environment_info(python: str | None = None, timeout_s: float = ENVIRONMENT_TIMEOUT_S) -> str:
    """``jax.print_environment_info()`` of an interpreter's environment, or why it is missing."""
    # The harness on the path: a script's venv holds jax and what the script declares, not it.
    environ = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = run_whole([python or sys.executable, "-c", _JAX_FACTS], REPO_ROOT, timeout_s, environ)
    if done.returncode != 0 or not done.stdout.strip():
        return f"unavailable: {error_line(done.stderr) or 'no output'}"
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    return str(facts.get("environment_info", "unavailable"))


def installed_packages(python: str) -> list[str]:
    """``name==version`` of every distribution an interpreter's environment holds."""
    # -I: isolated, so its folder (the checkout, with the harness's egg-info) is not on its path.
    done = run_whole([python, "-I", "-c", _PACKAGES], REPO_ROOT, 60)
    return done.stdout.split() if done.returncode == 0 else []


def programs_to_time(
    change: Change | None, full_output: str, results: Sequence[StoredResult] = ()
) -> list[str]:
    """The change's program, else every one the full script timed (or, failed, stored)."""
    metric = change.metric if change is not None else None
    if metric is not None and metric.kind in ("wall", "dispatch"):
        return [metric.name]
    timed = {
        program for program, metric in parse_output(full_output).medians if metric == "wall_ns"
    }
    return sorted(
        timed
        or {name for r in results if r.result.status is RunStatus.OK for name in program_names(r)}
    )


def write_issue(request: IssueRequest) -> Written:
    """The draft of the step found, of any shape, measured through nox, under ``issues/``."""
    request = dataclasses.replace(request, status=drafts_an_ending(request))
    mine, problems = _loaded(request)
    change = stored_change(request, mine, request.good, request.bad, request.metric)
    if change is None and (request.plan is not None or request.status):  # nothing to show
        raise nothing_to_draft(request)
    where = f"[{request.profile}] {request.case.name} at {sizes_text(request.sizes)}"
    stderr_line(f"{where}: drafting an issue …")
    measured = MeasuredHere()
    if change is not None:
        measured = measure_here(request, change)
        if measured.measured:  # the step's figures now stored: read again
            mine, problems = _loaded(request)
            change = change_again(request, mine, change)
        if change.reproducer is None and (measured.reproducer or measured.why):  # measured here
            why = (*measured.why, *change.why)
            change = dataclasses.replace(change, reproducer=measured.reproducer, why=why)
    folder = output_folder(request.out_dir, ISSUES_DIR)  # a link planted as issues/ is refused
    base = DraftInputs(request.case, request.sizes, request.platform, "", "", "", mine)
    base = dataclasses.replace(base, newest=measured.newest, not_measured=measured.not_measured)
    if request.status:
        assert change is not None
        inputs = ending_inputs(request, change, base, folder)
    else:
        inputs = metric_inputs(request, change, base, folder)
    path = folder / f"{request.case.name}{'-crash' if request.status else ''}.md"
    replace_file(path, render(inputs))
    said = tuple(filter(None, (measured.newest, measured.follow_up, *measured.not_measured)))
    short, full = (
        folder / name if name and (folder / name).is_file() else None
        for name in (inputs.short_name, inputs.full_name)
    )
    shown = scrub(draft_title(inputs))
    return Written(path, short, full, inputs.full_run, inputs.short_runs, problems, shown, said)


def metric_inputs(
    request: IssueRequest, change: Change | None, base: DraftInputs, folder: Path
) -> DraftInputs:
    """A metric's draft: the full script run on ``--jax``, the short one on both releases."""
    case, sizes, settings = request.case, request.sizes, request.settings
    full_path = folder / f"{case.name}-full.py"
    # A plain script (--script) has no programs() to cut down: it is the full and the short script.
    # Its bytes are copied as they are (a coding cookie's Latin-1 stays); the draft quotes its text.
    content = case.subject.own_text(case.path)
    short = None if content is None else source_text(case.path, content)
    exported = export_script(case, sizes, settings.for_child()) if content is None else content
    replace_file(full_path, exported)
    python, release = None, release_label()
    if request.plan is not None:
        release = request.jax or (change.first_bad if change else DEFAULT_RELEASE.jax)
        python = where_to_run(request, release, alone=False).python
    full_run = _run(request, full_path, release, python)
    short_path = folder / f"{case.name}.py"
    if short is None:
        programs = programs_to_time(change, full_run.stdout, base.results)
        short = minimal_script(
            case, sizes, programs, repeats=settings.repeats, warmup=settings.warmup
        )
    replace_file(short_path, content if content is not None else short)
    short_runs = _short_runs(request, change, short_path, base.results)
    if change is not None:
        change = with_script_figures(
            change, {r.run.release: parse_output(r.run.stdout).medians for r in short_runs}
        )
    return dataclasses.replace(
        base,
        short_name=short_path.name,
        short_script=short,
        short_runs=short_runs,
        full_name=full_path.name,
        full_run=full_run,
        environment_info=environment_info(python),
        change=change,
        dumps=copy_dumps(change, request.out_dir, folder, case.name),
        reproducer=copy_reproducer(change, request.out_dir, folder, case.name),
    )


def ending_inputs(
    request: IssueRequest, change: Change, base: DraftInputs, folder: Path
) -> DraftInputs:
    """An ending's draft: its reproducer, the dead side's machine, each release as nox pins it."""
    dead = change.dead
    if dead is None:
        raise no_ending(request, change, base.results)
    info, cpu = dead.environment_info, dead.cpu_model or cpu_model()
    if not info.strip() and request.plan is not None:
        info = environment_info(where_to_run(request, dead.crashes, alone=False).python)
    text, name, what, missing = _crash_script(request, change, folder)
    return dataclasses.replace(
        base,
        short_name=name,
        short_script=text,
        environment_info=scrub(info),
        change=dataclasses.replace(change, dead=dataclasses.replace(dead, cpu_model=scrub(cpu))),
        script_words=what,
        missing_script=missing,
        # each release as nox's plan pins it (a jaxlib of another number, numpy<2 where needed)
        installs={
            env.jax: plain_env(env).install
            for env in request.plan or []
            if env.jax in (dead.runs, dead.crashes)
        },
    )


def stored_change(
    request: IssueRequest,
    mine: Sequence[StoredResult],
    good: str | None = None,
    bad: str | None = None,
    metric: MetricKey | None = None,
) -> Change | None:
    """The step the stored answers and ``mine`` give at the request's case, sizes and profile."""
    return change_from(
        read_steps(request.out_dir, request.case.name),
        mine,
        case=request.case.name,
        sizes=request.sizes,
        profile=request.profile,
        good=good,
        bad=bad,
        metric=metric,
        ending=request.status,
    )


def change_again(request: IssueRequest, mine: Sequence[StoredResult], before: Change) -> Change:
    """The change read again once its releases were measured here."""
    metric = request.metric or before.metric
    return stored_change(request, mine, before.last_good, before.first_bad, metric) or before


@dataclass(frozen=True)
class MeasuredHere:
    """What ``issue`` measured itself, and what it could not, each with the command that adds it."""

    measured: bool = False
    newest: str = ""
    reproducer: Reproduced | None = None
    why: tuple[Finding, ...] = ()
    not_measured: tuple[str, ...] = ()
    follow_up: str = ""  # the one command that goes on from the newest release's line (the screen)


def measure_here(request: IssueRequest, change: Change) -> MeasuredHere:
    """With nox's plan, the step's two releases and the newest on the index measured together, and
    a metric's reproducer with jax alone where no bisect gave one; without, what is lacking said."""
    good, bad = change.ends
    if request.plan is None:
        # A script's programs are what a reproducer exports; a case's short script is one already.
        own = request.case.subject.script_file and change.reproducer is None and not request.status
        missing = [
            "the step confirmed" if not change.probes else "",
            "the reproducer with jax alone" if own else "",
            "whether the newest release on the index still shows it",
        ]
        criterion = Criterion.of(request.metric or change.metric).words()  # none without a metric
        words = ["--status"] * request.status + ["--good", good, "--bad", bad, *criterion]
        command = nox_command("issue", target_words(request.case), words, request.sizes, "")
        said = f"Not measured here (one JAX installed): {', '.join(filter(None, missing))}"
        return MeasuredHere(not_measured=(f"{said}; `{command}`",))
    asked = StepRequest(request, good, bad, stderr_line)
    if request.status:  # until the counts of processes that died are decided
        prober = confirm(asked, Criterion.of(ENDING))
        mine = _loaded(request)[0]
        dead = change_again(request, mine, change).dead
        if dead is None:
            raise no_ending(request, change, mine)
        newest, command = newest_status_line(prober, asked, dead, target_words(request.case))
        return MeasuredHere(True, newest, follow_up=command)
    metric = request.metric or change.metric
    prober = confirm(asked, Criterion.of(metric))
    if metric is None:  # the one that moved most, from what was just stored
        metric = change_again(request, _loaded(request)[0], change).metric
    if metric is None:
        return MeasuredHere(True, not_measured=("No metric moved between the two releases",))
    rule = Thresholds()
    newest, fixed_by = newest_line(prober, asked, metric, rule, target_words(request.case))
    if fixed_by:  # the one command that narrows it
        newest += f"; the release that fixed it: `{fixed_by}`"
    if change.reproducer is not None:
        return MeasuredHere(True, newest)
    step = compared(prober, good, bad, metric, rule)
    if step is None or step.verdict not in MOVED:
        said = "no step to reproduce: " + (step.said if step is not None else "no figure on both")
        return MeasuredHere(True, newest, not_measured=(said,))
    found = reproduce(prober, asked, metric, rule, request.platform)
    if isinstance(found, str):
        return MeasuredHere(True, newest, not_measured=(found,) if found else ())
    lines = findings([*reproduced_lines(found, step, metric), *reproducer_lines(found)])
    return MeasuredHere(True, newest, as_reproduced(found), tuple(lines))


def copy_dumps(change: Change | None, reports: Path, folder: Path, case: str) -> str:
    """The bisect's XLA dumps (HLO text) copied beside the draft: the folder's name, or ""."""
    if change is None or not change.dumps:
        return ""
    dumps = reports / change.dumps
    copied = [
        copy_beside(dumps / release, DUMP_FILE, folder, f"{case}-compiled", release)
        for release in change.ends
        if name_problem(release) is None
    ]
    return f"{case}-compiled/" if any(copied) else ""


def copy_beside(source: Path, wanted: re.Pattern[str], folder: Path, *parts: str) -> set[str]:
    """The files of ``source`` that ``wanted`` names, copied into ``folder/parts``; their names.  A
    link planted on either side or an oversized file is skipped, said in one line, and the draft is
    still written (docs/results.md)."""
    if source.is_symlink() or not source.is_dir():
        return set()
    try:
        target = output_folder(folder, *parts)
    except UsageError as exc:
        print(f"harness: {'/'.join(parts)} not written beside the draft: {exc}", file=sys.stderr)
        return set()
    copied = set()
    for path in sorted(path for path in source.iterdir() if wanted.match(path.name)):
        try:
            data = read_bounded(path, limit=MAX_DUMP_BYTES, follow_links=False)
            replace_file(target / path.name, data)
            copied.add(path.name)
        except (DocumentProblem, OSError) as exc:
            print(f"harness: {path.name} not copied beside the draft: {exc}", file=sys.stderr)
    return copied


# What of a reproducer's folder the draft needs: the script, the listing, each program, its inputs.
REPRODUCER_FILE = re.compile(
    r"^(repro_[0-9a-f]{10}\.py|programs\.json|program_\d{2}\.(jaxexport|npz))$"
)


def copy_reproducer(change: Change | None, reports: Path, folder: Path, case: str) -> str:
    """The reproducer that showed the change copied beside the draft: the folder's name, or ""."""
    if change is None or change.reproducer is None or not change.reproduced():
        return ""
    source = reports / change.reproducer.folder
    copied = copy_beside(source, REPRODUCER_FILE, folder, f"{case}-reproducer")
    wanted = {change.reproducer.script, "programs.json"}
    return f"{case}-reproducer/" if wanted <= copied else ""


def _short_runs(
    request: IssueRequest, change: Change | None, script: Path, stored: Sequence[StoredResult]
) -> list[ReleaseRun]:
    """The short script on the change's two releases in plain venvs, or here without plan or change;
    a plain script's install lines pin each package whose version differs between the two sides."""
    if request.plan is None or change is None:
        run = _run(request, script, release_label(), None)
        here = "in the environment that ran the harness (not a fresh venv)"
        return [ReleaseRun("installed here", run, [], here)]
    runs = []
    places = [where_to_run(request, version, alone=True) for version in change.ends]
    # Every package a side installed: as its newest stored result of the script records it, else as
    # the environment the draft ran it in; a case's record none, and its line stays as made.
    had = [newest_result(stored, v, request.sizes, request.profile) for v in change.ends]
    recorded = [found.result.libraries if found is not None else None for found in had]
    installed = [r.installed if r else p.installed for r, p in zip(recorded, places, strict=True)]
    roles = ("last good", "first bad")
    for number, (role, version, place) in enumerate(zip(roles, change.ends, places, strict=True)):
        install = exact_install(place.install, installed[number], installed[1 - number])
        run = _run(request, script, version, place.python)
        runs.append(ReleaseRun(role, run, install, place.where, installed_packages(place.python)))
    return runs


def _run(request: IssueRequest, path: Path, release: str, python: str | None) -> ScriptRun:
    timeout = request.settings.timeout_s
    code, out, err = run_script(path, timeout, python, request.case.subject.args)
    return ScriptRun(release, request.profile, allowed_variables(), code, out, err, timeout)


@dataclass(frozen=True)
class Place:
    """Where a release's script runs: its interpreter, the ``pip install`` of the same, in words."""

    python: str
    install: list[str]
    where: str
    installed: tuple[str, ...] = ()  # every package its environment holds (a script's own venv)


def where_to_run(request: IssueRequest, version: str, *, alone: bool) -> Place:
    """A release's environment, made as every side's is (``Environments``): a plain script's own
    venv; a case's short script (``alone``) jax and jaxlib only; its full script the release's."""
    assert request.plan is not None
    env = plan_entry(request.plan, version)
    env = plain_env(env) if alone else env  # a script's own venv is made beside it either way
    prepared = request.environments(stderr_line).prepare(version, env)
    if not isinstance(prepared, Prepared):
        raise HarnessError(f"jax {version}: {prepared.line}")
    libraries, python = prepared.libraries, str(prepared.interpreter.absolute())
    own = "in a venv of its own (`.nox/{}`, made with uv) holding"
    if libraries is None:  # a case's: jax and jaxlib alone
        where = f"{own.format(env.venv.name)} only jax, jaxlib and what they need"
        return Place(python, list(env.install), where)
    declared = {canonicalize_name(Requirement(r).name) for r in libraries.declared}
    pins = [
        pin for pin in libraries.installed if canonicalize_name(pin.partition("==")[0]) in declared
    ]
    jaxlib = [pin for pin in libraries.installed if pin.startswith("jaxlib==")]
    install = [f"jax=={env.jax}", *jaxlib, *pins]
    cutoff = f" as of {libraries.cutoff[:10]}" if libraries.cutoff else ", the newest versions"
    venv = prepared.interpreter.parent.parent.name
    where = f"{own.format(venv)} jax, jaxlib and what the script declares, resolved{cutoff}"
    return Place(python, install, where, libraries.installed)


def drafts_an_ending(request: IssueRequest) -> bool:
    """Whether the step to draft is how the processes end: asked (``--status``), or, no metric
    asked, the step ``--good``/``--bad`` make in the stored results, else the only step stored."""
    if request.status or request.metric is not None:
        return request.status
    ending = dataclasses.replace(request, status=True)
    if request.good is not None and request.bad is not None:
        found = stored_change(ending, _loaded(request)[0], request.good, request.bad)
        return found is not None and found.dead is not None
    return stored_change(request, []) is None and stored_change(ending, []) is not None


def execute(request: IssueRequest) -> int:
    check_results_folder(request.results_dir, request.case)
    if request.plan is None:
        check_installed_release(request.jax, "issue")
    written = write_issue(request)
    for problem in written.problems:
        print(f"skipped unusable result {problem}", file=sys.stderr)
    # One screen: each run in a line with its last lines; all they printed is in the draft.
    runs = [(f"full script on jax {written.run.release}", written.run)] if written.run else []
    runs += [(f"short script on jax {r.run.release} ({r.role})", r.run) for r in written.short_runs]
    scripts = [shown_path(p) for p in (written.short, written.full) if p is not None]
    drafted = shown_path(written.draft)
    print(issue_screen(written.title, runs, scripts, drafted, written.measured), end="")
    failed = [run for _, run in runs if not run.ok]
    if failed:
        what = ", ".join(f"jax {r.release} {run_status(r)}" for r in failed)
        print(f"harness: a script run failed ({what}); the draft shows its output", file=sys.stderr)
        return 1
    return 0


def nothing_to_draft(request: IssueRequest) -> UsageError:
    """The refusal of a draft with no step stored nor given; the commands that find one."""
    target, sizes, words = target_words(request.case), request.sizes, ["--status"] * request.status
    stored = "bisect or triage answer"
    stored = "bisect --status or triage answer with a status step" if request.status else stored
    triage = nox_command("triage", target, [], sizes, "")
    bisect = nox_command("bisect", target, [*words, "--good", "V", "--bad", "W"], sizes, "")
    return UsageError(
        f"nothing to draft about: no {stored} for {request.case.name} at {sizes_text(sizes)} "
        f"under {request.out_dir} and no --good/--bad; find the step first (`{triage}` or "
        f"`{bisect}`), then draft it with `{nox_command('issue', target, [], sizes, '')}`"
    )


def _loaded(request: IssueRequest) -> tuple[list[StoredResult], list[LoadProblem]]:
    if not request.results_dir.is_dir():
        return [], []
    results, problems = load_results(request.results_dir)
    return [r for r in results if r.result.case == request.case.name], problems


def no_ending(request: IssueRequest, change: Change, mine: list[StoredResult]) -> HarnessError:
    """Why two releases make no ending's step; where a stored answer found one, what to do."""
    sizes, profile, (good, bad) = request.sizes, request.profile, change.ends
    stored = [newest_result(mine, v, sizes, profile, any_end=True) for v in change.ends]
    sides = "; ".join(
        f"jax {r.result.release} {summarise(r).words()}" if r and ran(r) else "one not measured"
        for r in stored
    )
    if change.source:  # a stored answer's step that the stored results deny
        target = target_words(request.case)
        runs = [nox_command("run", target, ["--jax", v], sizes, profile) for v in (good, bad)]
        return HarnessError(
            f"the stored answer and the stored results disagree: {change.source} found a status "
            f"step jax {good} → {bad}, but the newest results under "
            f"{shown_path(request.results_dir)} say {sides} (merged from another machine, or "
            f"measured again since); measure both again, `{'` and `'.join(runs)}`, then ask again"
        )
    return HarnessError(
        f"no crash to draft between jax {good} and jax {bad}: {sides}; a crash report needs "
        "processes dying on one release more often than on the other, told apart by their counts"
    )


def _crash_script(request: IssueRequest, change: Change, folder: Path) -> tuple[str, str, str, str]:
    """The reproducer the draft pastes: (its text, its file name, what it is, why none if none)."""
    case = request.case
    content = case.subject.own_text(case.path)
    if content is None:  # a case: its standalone script imports jax and numpy only
        text = export_script(case, request.sizes, request.settings.for_child())
        name = f"{case.name}.py"
        replace_file(folder / name, text)
        return text, name, "the case as a standalone script", ""
    text = source_text(case.path, content)
    others = imported_besides_jax(text)
    if not others:
        return text, case.path.name, "the script itself (plain JAX)", ""
    found, named = change.reproducer, f"{case.name}-reproducer"
    if found is not None and found.script in copy_beside(
        request.out_dir / found.folder, REPRODUCER_FILE, folder, named
    ):
        text = (folder / named / found.script).read_text(errors="replace")
        return text, found.script, f"the reproducer with jax alone (`{named}/`)", ""
    words = ["--status", "--good", change.last_good, "--bad", change.first_bad]
    command = nox_command("bisect", target_words(case), words, request.sizes, "")
    missing = (
        f"The script imports {', '.join(others)} besides jax, numpy and the standard library, and "
        f"no reproducer with jax alone was cut for this step: `{command}` asks why, with one where "
        f"it can be cut; meanwhile attach `{case.path.name}`."
    )
    return "", case.path.name, "", missing
