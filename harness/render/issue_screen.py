"""What ``issue`` prints, on one screen: the draft's title, each script's run with the last lines it
printed (where a script says its answer), the scripts beside the draft, and the draft's path."""

from __future__ import annotations

from collections.abc import Sequence

from harness.render import screen
from harness.render.issue_draft import ScriptRun

SHOWN_OUTPUT_LINES = 3


def run_status(run: ScriptRun) -> str:
    if run.ok:
        return "ok"
    return "timed out" if run.returncode is None else f"exited with code {run.returncode}"


def issue_screen(
    title: str,
    runs: Sequence[tuple[str, ScriptRun]],
    scripts: Sequence[str],
    draft: str,
    measured: Sequence[str] = (),
) -> str:
    """``runs``: (what ran where, its run), full script first; ``measured``: what ``issue`` measured
    itself (the newest release's line)."""
    lines = screen.wrap(f"Issue draft: {title}", lines=2)
    for line in measured:
        lines += screen.wrap(line, indent="  ")
    for label, run in runs:  # ``short script on jax 0.4.33 (first bad): ok, 12 lines printed``
        printed = [line for line in run.stdout.splitlines() if line.strip()]
        lines.append(screen.shorten(f"{label}: {run_status(run)}, {len(printed)} line(s) printed"))
        lines += [screen.shorten(f"  {line}") for line in printed[-SHOWN_OUTPUT_LINES:]]
        errors = [line for line in run.stderr.splitlines() if line.strip()]
        if not run.ok and errors:
            lines.append(screen.shorten(f"  error: {errors[-1]}"))
    lines += [screen.shorten(f"Scripts beside it: {', '.join(scripts)}")] if scripts else []
    lines.append(f"Draft: {draft}")
    return "\n".join(lines) + "\n"
