"""A venv's files against what its install recorded (``*.dist-info/RECORD``'s sha256): a file a
process died on that no longer holds what was installed is a fault of the machine, not of the
script or JAX. Only the files a dying process names under ``site-packages/`` are hashed; a damaged
venv is marked, so that its next preparation installs it again (``--reinstall``).
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import re
from pathlib import Path

# A file under site-packages as a traceback or a loader names it (``File "…/site-packages/x.py"``,
# ``ImportError: …/site-packages/jaxlib/x.so: file too short``).
SITE_FILE = re.compile(r"site-packages/([^\s\"'():,]+)")
MOST_NAMED = 50
MARK = ".harness-damaged"  # in the venv: the files found damaged, one a line


def site_packages(venv: Path) -> Path | None:
    return max(venv.glob("lib/python3*/site-packages"), default=None)


def _recorded(site: Path, named: set[str]) -> dict[str, str]:
    """The sha256 (RECORD's urlsafe base64, unpadded) each of ``named`` was installed with."""
    found: dict[str, str] = {}
    for info in site.glob("*.dist-info"):
        try:
            rows = list(csv.reader((info / "RECORD").read_text("utf-8", "replace").splitlines()))
        except (OSError, csv.Error):
            continue
        for row in rows:
            if len(row) >= 2 and row[0] in named and row[1].startswith("sha256="):
                found[row[0]] = row[1].removeprefix("sha256=")
    return found


def damaged(venv: Path, output: str) -> list[str]:
    """The files ``output`` names in site-packages that are not what their RECORD says, or gone."""
    site = site_packages(venv)
    named = {found.group(1) for found in SITE_FILE.finditer(output)}
    if site is None or not named:
        return []
    recorded = _recorded(site, set(sorted(named)[:MOST_NAMED]))
    bad = []
    for name, expected in sorted(recorded.items()):
        try:
            with open(site / name, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != expected:
                bad.append(name)
        except OSError:
            bad.append(name)
    return bad


def mark(venv: Path, files: list[str]) -> None:
    """Said in the venv: its next preparation installs it again."""
    # A venv that takes no write is still said damaged by this process; the next finds it again.
    with contextlib.suppress(OSError):
        (venv / MARK).write_text("".join(f"{name}\n" for name in files), encoding="utf-8")


def marked(venv: Path) -> list[str]:
    """The files a process found damaged in the venv since it was last installed ([] if none)."""
    try:
        return (venv / MARK).read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return []


def clear(venv: Path) -> None:
    (venv / MARK).unlink(missing_ok=True)
