"""``issue --status``: a crash report draft for a status step (a script that runs ok on one release
and crashes, hangs or fails alike on the other), in JAX's bug form.

The step comes from ``--good``/``--bad`` or the newest stored ``bisect --status`` or triage answer
with one. Through nox (a release plan) its two releases and the newest on the index are measured
together first (``upstream.crash_measured``), so the draft quotes a step confirmed here and whether
the newest release still crashes; without a plan the stored results are quoted and the draft names
the command that measures them. ``jax.print_environment_info()`` is the crashing release's own where
its process recorded it, else asked once of that release's venv in one short process
(``issue.environment_info``), scrubbed.  ``commands.issue`` hands the request over (it imports this
module, never the other way).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harness.catalogue.scripts import source_text
from harness.cli.ranges import target_words
from harness.errors import HarnessError, UsageError
from harness.findings import nox_command
from harness.host.environment import cpu_model, scrub, shown_path
from harness.install.venvs import plain_env
from harness.render.crash_draft import CrashDraft, render_crash, title
from harness.render.issue_screen import issue_screen
from harness.store.files import output_folder, replace_file
from harness.store.results import StoredResult, load_results
from harness.units import sizes_text
from harness.upstream.change import read_bisect_answers, read_triage_answers
from harness.upstream.crash import (
    Crash,
    StatusAnswer,
    crash_between,
    newest_stored,
    sides_words,
    status_answer,
)
from harness.upstream.crash_measured import measure_status, newest_status_line
from harness.upstream.export import export_script
from harness.upstream.installs import imported_besides_jax
from harness.upstream.step_measured import Asked, StepRequest


class CrashAsked(Asked, Protocol):
    """What ``issue --status`` reads of ``issue``'s request (``commands.issue.IssueRequest``)
    besides what its measured step keeps."""

    @property
    def good(self) -> str | None: ...
    @property
    def bad(self) -> str | None: ...
    @property
    def platform(self) -> str: ...  # "cpu" or "gpu": the profile's kind, for the title


@dataclass(frozen=True)
class CrashRequest:
    """What ``issue --status`` is asked (``issue``'s own request), and two parts of the timing
    draft's workflow it shares: a release's ``jax.print_environment_info()`` from its venv, and a
    reproducer's folder copied beside the draft."""

    asked: CrashAsked
    issues: str  # the drafts' folder under ``out_dir``
    environment_of: Callable[[str], str]
    # (the reproducer's folder, the draft's folder, its name there) → the names of the files copied
    copy_folder: Callable[[Path, Path, str], set[str]]


@dataclass(frozen=True)
class Measured:
    """What the draft says was measured here, and what only the screen offers (the command that goes
    on)."""

    newest: str = ""
    not_measured: tuple[str, ...] = ()
    follow_up: str = ""


def the_step(request: CrashAsked) -> StatusAnswer:
    """The two releases: ``--good``/``--bad``, else the newest stored answer's status step."""
    case = request.case
    if request.good is not None and request.bad is not None:
        stored = stored_answer(request)
        if stored is not None and (stored.before, stored.after) == (request.good, request.bad):
            return stored
        return StatusAnswer(request.good, request.bad, "")
    stored = stored_answer(request)
    if stored is None:
        target = " ".join(target_words(case))
        raise UsageError(
            "nothing to draft about: no bisect --status or triage answer with a status step for "
            f"{case.name} at {sizes_text(request.sizes)} under {request.out_dir} and no "
            f"--good/--bad; find the step first (`nox -s triage -- {target}` or `nox -s bisect -- "
            f"{target} --status --good V --bad W`)"
        )
    return stored


def stored_answer(request: CrashAsked) -> StatusAnswer | None:
    """The newest stored bisect --status or triage answer's status step, at these sizes and
    profile."""
    out, name = request.out_dir, request.case.name
    return status_answer(
        read_bisect_answers(out, name),
        read_triage_answers(out, name),
        case=name,
        sizes=request.sizes,
        profile=request.profile,
    )


def measure(request: CrashAsked, step: StatusAnswer) -> tuple[list[StoredResult], Measured]:
    """Through nox the step's two releases and the newest measured together; the stored results
    then."""
    if request.plan is None:
        words = ["--status", "--good", step.before, "--bad", step.after]
        command = nox_command("issue", target_words(request.case), words, request.sizes, "")
        line = (
            "Not measured here (one JAX installed): the crash confirmed on both releases, whether "
            f"the newest release on the index still crashes; `{command}`"
        )
        return _mine(request), Measured(not_measured=(line,))
    asked = StepRequest.between(request, step.before, step.after, _progress)
    prober = measure_status(asked)
    mine = _mine(request)
    newest, command = newest_status_line(
        prober, asked, _crash(request, step, mine), target_words(request.case)
    )
    return mine, Measured(newest, follow_up=command)


def _mine(request: CrashAsked) -> list[StoredResult]:
    if not request.results_dir.is_dir():
        return []
    results, _ = load_results(request.results_dir)
    return [r for r in results if r.case == request.case.name]


def _crash(request: CrashAsked, step: StatusAnswer, mine: list[StoredResult]) -> Crash:
    """The status step between the two releases' newest stored results, or why there is none."""
    before, after = (
        newest_stored(mine, release, request.sizes, request.profile)
        for release in (step.before, step.after)
    )
    crash = crash_between(before, after)
    if crash is None and step.source:  # a stored answer's step that the stored results deny
        target = target_words(request.case)
        runs = [
            f"`{nox_command('run', target, ['--jax', v], request.sizes, request.profile)}`"
            for v in (step.before, step.after)
        ]
        raise HarnessError(
            f"the stored answer and the stored results disagree: {step.source} found a status step "
            f"jax {step.before} → {step.after}, but the newest results under "
            f"{shown_path(request.results_dir)} say {sides_words(before, after)} (merged from "
            f"another machine, or measured again since); measure both again, {' and '.join(runs)}, "
            "then ask again"
        )
    if crash is None:
        raise HarnessError(
            f"no crash to draft between jax {step.before} and jax {step.after}: "
            f"{sides_words(before, after)}; a crash report needs every process of one release ok "
            "and every one of the other dead alike"
        )
    return crash


def _script(request: CrashRequest, step: StatusAnswer, folder: Path) -> tuple[str, str, str, str]:
    """The reproducer the draft pastes: (its text, its file name, what it is, why none where
    none)."""
    case = request.asked.case
    content = case.subject.own_text(case.path)
    if content is None:  # a case: its standalone script imports jax and numpy only
        text = export_script(case, request.asked.sizes, request.asked.settings.for_child())
        name = f"{case.name}.py"
        replace_file(folder / name, text)
        return text, name, "the case as a standalone script", ""
    text = source_text(case.path, content)
    others = imported_besides_jax(text)
    if not others:
        return text, case.path.name, "the script itself (plain JAX)", ""
    found = step.reproducer
    source = request.asked.out_dir / found.folder if found is not None else None
    if found is not None and source is not None and source.is_dir() and not source.is_symlink():
        named = f"{case.name}-reproducer"
        if found.script in request.copy_folder(source, folder, named):
            copied = (folder / named / found.script).read_text(errors="replace")
            return (
                copied,
                found.script,
                f"the reproducer with jax alone (`{case.name}-reproducer/`)",
                "",
            )
    words = ["--status", "--good", step.before, "--bad", step.after]
    command = nox_command("bisect", target_words(case), words, request.asked.sizes, "")
    missing = (
        f"The script imports {', '.join(others)} besides jax, numpy and the standard library, and "
        f"no reproducer with jax alone was cut for this step: `{command}` asks why, with one where "
        f"it can be cut; meanwhile attach `{case.path.name}`."
    )
    return "", case.path.name, "", missing


def write_crash_issue(request: CrashRequest) -> tuple[Path, str, str, tuple[str, ...]]:
    """The crash report draft written under ``issues/``: its path, its title, the reproducer's file
    ("" where none), what was measured here."""
    asked = request.asked
    step = the_step(asked)
    print(
        f"[{asked.profile}] {asked.case.name} at {sizes_text(asked.sizes)}: drafting a crash "
        "report …",
        file=sys.stderr,
        flush=True,
    )
    mine, measured = measure(asked, step)
    crash = _crash(asked, step, mine)
    if not crash.environment_info.strip() and asked.plan is not None:
        crash = dataclasses.replace(crash, environment_info=request.environment_of(crash.crashes))
    if not crash.cpu_model:
        crash = dataclasses.replace(crash, cpu_model=cpu_model())
    crash = dataclasses.replace(
        crash, environment_info=scrub(crash.environment_info), cpu_model=scrub(crash.cpu_model)
    )
    folder = output_folder(asked.out_dir, request.issues)
    text, name, what, missing = _script(request, step, folder)
    draft = CrashDraft(
        name=asked.case.path.name if asked.case.subject.own_venv else asked.case.name,
        platform=asked.platform,
        crash=crash,
        script=text,
        script_name=name,
        script_words=what,
        args=tuple(asked.case.subject.args),
        missing_script=missing,
        source=step.source,
        workaround=step.workaround,
        newest=measured.newest,
        not_measured=measured.not_measured,
        installs=_installs(asked, (crash.runs, crash.crashes)),
    )
    path = folder / f"{asked.case.name}-crash.md"
    replace_file(path, render_crash(draft))
    said = tuple(filter(None, (measured.newest, measured.follow_up, *measured.not_measured)))
    return path, title(draft), name if text else "", said


def _installs(request: CrashAsked, releases: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """What installs each release, as nox's plan pins it (a jaxlib of another number, numpy<2 where
    needed); none without a plan."""
    if request.plan is None:
        return {}
    return {env.jax: plain_env(env).install for env in request.plan if env.jax in releases}


def execute(request: CrashRequest) -> int:
    path, shown, _, said = write_crash_issue(request)
    print(issue_screen(shown, [], [], shown_path(path), said), end="")
    return 0


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
