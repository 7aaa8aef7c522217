"""What the range commands' tests share: every release's environment this interpreter (no nox, no
index), a release plan file, and a small disk of its own that is read-only or full."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.commands import ranges
from harness.install.environments import Environments, Prepared

# The varied library's releases on the stood-in index.
VERSIONS = ["1.0.0", "1.1.0", "1.2.0"]


@pytest.fixture
def this_interpreter_for_every_label(monkeypatch):
    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    monkeypatch.setattr(
        ranges.UploadTimes, "versions_with_times", lambda self, name: [(v, when) for v in VERSIONS]
    )
    monkeypatch.setattr(
        Environments, "prepare", lambda self, release, env: Prepared(Path(sys.executable))
    )


def release_plan(folder: Path, *releases: str) -> Path:
    """A release plan as nox writes it, for ``releases``."""
    plan = folder / "plan.json"
    rows = [
        {"jax": r, "jaxlib": r, "python": "3", "install": [], "venv": str(folder / f"venv-{r}")}
        for r in releases
    ]
    plan.write_text(json.dumps(rows))
    return plan


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Callable[..., Path]]:
    """``small_disk(name, *options)``: a tmpfs of 1 MiB mounted at ``tmp_path/name`` (``ro``:
    read-only; ``full``: filled but ``pages`` pages); skipped where mounting is not allowed (not
    root)."""
    mounted: list[Path] = []

    def mount(name: str, state: str = "ro", pages: int = 0) -> Path:
        where = tmp_path / name
        where.mkdir()
        options = "ro,size=1m" if state == "ro" else "size=1m"
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=False
        )
        if done.returncode != 0:
            pytest.skip("a disk of its own needs mount (root)")
        mounted.append(where)
        if state == "full":
            filler = os.open(where / "filler", os.O_WRONLY | os.O_CREAT)
            try:
                with contextlib.suppress(OSError):  # until the disk is full
                    while True:
                        os.write(filler, b"\0" * 4096)
                os.ftruncate(filler, max(os.fstat(filler).st_size - pages * 4096, 0))
            finally:
                os.close(filler)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)
