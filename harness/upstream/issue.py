"""Write an upstream issue draft: export a case's script, run it here, render the draft.

The script runs for real in this environment (the nox session's pinned release and
profile) and its standard output is what the draft quotes.  ``jax.print_environment_info``
comes from ``harness.host.environment.jax_facts`` in a process of its own: the harness
process itself never imports JAX.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.catalogue.discovery import CaseInfo
from harness.host.environment import allowed_variables
from harness.measure.runner import Settings, release_label
from harness.store.results import LoadProblem, load_results
from harness.upstream.draft import Bisect, DraftInputs, ScriptRun, render
from harness.upstream.export import export_script

ISSUES_DIR = "issues"
ENVIRONMENT_TIMEOUT_S = 120.0
_JAX_FACTS = "import json; from harness.host.environment import jax_facts; print(json.dumps(jax_facts()))"


@dataclass(frozen=True)
class Written:
    draft: Path
    script: Path
    run: ScriptRun
    problems: list[LoadProblem]


def run_script(path: Path, timeout_s: float) -> tuple[int | None, str, str]:
    """Run a script by its file name from its own folder, so tracebacks name no local path."""
    try:
        done = subprocess.run(
            [sys.executable, path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return None, _text(exc.stdout), _text(exc.stderr)
    return done.returncode, done.stdout, done.stderr


def _text(output: str | bytes | None) -> str:
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""


def environment_info(timeout_s: float = ENVIRONMENT_TIMEOUT_S) -> str:
    """``jax.print_environment_info()`` of this environment, scrubbed, or why it is unavailable."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _JAX_FACTS], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        return f"unavailable: no answer within {timeout_s:g} s"
    if done.returncode != 0 or not done.stdout.strip():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"unavailable: {last}"
    return str(json.loads(done.stdout.strip().splitlines()[-1]).get("environment_info", "unavailable"))


def load_bisects(
    reports_dir: Path, case: str, sizes: dict[str, int] | None = None, profile: str | None = None
) -> list[Bisect]:
    """The stored bisect answer of ``case`` to quote: the newest, preferring one at ``sizes`` under ``profile``;
    then every file of the case that could not be read.

    An answer says its case (``bisect-<case>-<range>-<key>.json``, ``harness.releases.answers``);
    one that does not (an older ``bisect-CASE.json``) or cannot be read is the case's by its name.
    """
    readable: list[tuple[str, float, Bisect]] = []
    unreadable = []
    for path in sorted(reports_dir.glob("bisect-*.json")):
        by_name = path.name == f"bisect-{case}.json" or path.name.startswith(f"bisect-{case}-")
        try:
            data = json.loads(path.read_text())
            when = path.stat().st_mtime
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            if by_name:
                unreadable.append(Bisect(path.name, None, str(exc)))
            continue
        said = data.get("case") if isinstance(data, dict) else None
        if said == case or (said is None and by_name):
            created = data.get("created_at") if isinstance(data, dict) else None
            readable.append((created if isinstance(created, str) else "", when, Bisect(path.name, data)))

    def matches(bisect: Bisect) -> bool:
        data = bisect.data if isinstance(bisect.data, dict) else {}
        return (sizes is None or data.get("sizes") == sizes) and (profile is None or data.get("profile") == profile)

    preferred = [entry for entry in readable if matches(entry[2])] or readable
    newest = [max(preferred, key=lambda entry: entry[:2])[2]] if preferred else []
    return newest + unreadable


def write_issue(
    case: CaseInfo,
    sizes: dict[str, int],
    settings: Settings,
    *,
    profile: str,
    results_dir: Path,
    out_dir: Path,
) -> Written:
    # A plain script (--script) is its own draft script, quoted and run as it is.
    script = case.path.read_text() if case.script is not None else export_script(case, sizes, settings.for_child())
    folder = out_dir / ISSUES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    script_path = folder / f"{case.name}.py"
    script_path.write_text(script)
    returncode, stdout, stderr = run_script(script_path, settings.timeout_s)
    run = ScriptRun(
        release=release_label(),
        profile=profile,
        variables=allowed_variables(),
        returncode=returncode,
        stdout=stdout,
        stderr=stderr,
        timeout_s=settings.timeout_s,
    )
    results, problems = load_results(results_dir) if results_dir.is_dir() else ([], [])
    draft = render(
        DraftInputs(
            case=case,
            sizes=sizes,
            script_name=script_path.name,
            script=script,
            run=run,
            environment_info=environment_info(),
            results=[r for r in results if r.case == case.name],
            bisects=load_bisects(out_dir, case.name, sizes, profile),
        )
    )
    draft_path = folder / f"{case.name}.md"
    draft_path.write_text(draft)
    return Written(draft_path, script_path, run, problems)
