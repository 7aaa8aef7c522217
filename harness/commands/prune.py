"""``prune``: the harness's venvs no run has used for some days removed, saying what it freed."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from harness.cli.prune import PruneOptions
from harness.commands.packaged_sessions import cache_root
from harness.host.environment import shown_path
from harness.install import prune
from harness.install.venvs import REPO
from harness.units import format_bytes


def venv_folders(environ: Mapping[str, str]) -> list[Path]:
    """Where the venvs are: this clone's ``.nox/`` and the installed command's cache; each once."""
    clone, cache = REPO / ".nox", cache_root(environ) / "nox"
    if not (REPO / "noxfile.py").is_file():
        return [cache]
    return [clone] if clone.resolve() == cache.resolve() else [clone, cache]


def _ago(seconds: float) -> str:
    days = seconds / prune.DAY_S
    return f"{days:.0f} days ago" if days >= 1 else f"{max(seconds, 0) / 3600:.0f} h ago"


def execute(opts: PruneOptions, environ: Mapping[str, str] = os.environ) -> int:
    folders = venv_folders(environ)
    venvs = [venv for folder in folders for venv in prune.harness_venvs(folder)]
    if not venvs:
        where = " or ".join(shown_path(folder) for folder in folders)
        print(f"no venvs of the harness in {where}: nothing to remove")
        return 0
    now = time.time()
    done = prune.prune(venvs, opts.days, now, opts.dry_run)
    verb = "would remove" if opts.dry_run else "removed"
    for venv in done.removed:
        print(f"{verb} {shown_path(venv.path)}: last used {_ago(now - venv.last_used)}")
    for venv, why in done.kept:
        said = f"used {_ago(now - venv.last_used)}" if why == prune.RECENT else why
        print(f"kept {shown_path(venv.path)}: {said}")
    freed = "would free" if opts.dry_run else "freed"
    shared = done.taken - done.freed
    linked = f" ({format_bytes(shared)} of their files stay, linked from uv's cache too)"
    recent = sum(why == prune.RECENT for _, why in done.kept)
    others = f", {len(done.kept) - recent} for another reason" if len(done.kept) > recent else ""
    days = "day" if opts.days == 1 else f"{opts.days} days"
    print(
        f"{freed} {format_bytes(done.freed)} in {len(done.removed)} venvs"
        f"{linked if shared > 0 else ''}; kept {recent} used in the last {days}{others}"
    )
    return 1 if any(why.startswith(prune.NOT_REMOVED) for _, why in done.kept) else 0
