"""Stored results: one schema-versioned JSON document per case run.

Files are created atomically (written under a temporary name, fsynced, then
hard-linked to their final name, which fails rather than replaces) so a finished
result is never overwritten or left half-written.  The loader names every file it
cannot use and why, and carries on with the rest.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA = "jax-repro-harness/result"
SCHEMA_VERSION = 1
STATUSES = ("ok", "failed", "timeout", "crashed", "skipped")
REQUIRED = ("schema", "schema_version", "id", "case", "status", "release", "profile", "sizes", "created_at")


@dataclass(frozen=True)
class LoadProblem:
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class StoredResult:
    path: Path
    data: dict[str, Any]

    @property
    def case(self) -> str:
        return str(self.data["case"])

    @property
    def release(self) -> str:
        return str(self.data["release"])

    @property
    def profile(self) -> str:
        return str(self.data["profile"])

    @property
    def status(self) -> str:
        return str(self.data["status"])

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.data["sizes"])

    @property
    def created_at(self) -> str:
        return str(self.data["created_at"])

    @property
    def order(self) -> tuple[str, str]:
        """Creation order; the id breaks ties within a second."""
        return self.created_at, str(self.data["id"])


def new_record(**fields: Any) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "id": f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(4)}",
        "created_at": now.isoformat(timespec="seconds"),
        **fields,
    }


def _safe(part: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in part) or "_"


def result_path(root: Path, record: dict[str, Any]) -> Path:
    return (
        root
        / _safe(record["case"])
        / f"jax-{_safe(record['release'])}"
        / _safe(record["profile"])
        / f"{_safe(record['id'])}.json"
    )


def write_result(root: Path, record: dict[str, Any]) -> Path:
    problem = validate(record)
    if problem:
        raise ValueError(f"refusing to store an invalid result: {problem}")
    final = result_path(root, record)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=final.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(record, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp_name, final)  # raises FileExistsError instead of replacing
    finally:
        os.unlink(tmp_name)
    return final


def validate(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("schema") != SCHEMA:
        return f"not a harness result (schema {data.get('schema')!r})"
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        return f"schema version {version!r} is not one this harness reads (it reads {SCHEMA_VERSION})"
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        return f"missing fields: {', '.join(missing)}"
    if data["status"] not in STATUSES:
        return f"unknown status {data['status']!r}"
    return None


REFUSED = "refused before allocation"


def cell_key(case: str, release: str, profile: str, sizes: dict[str, int]) -> str:
    """What a sweep measures once: a case at sizes on a release under a profile."""
    return json.dumps([case, release, profile, sorted(sizes.items())])


def newest_results(root: Path, case: str, release: str, profile: str) -> dict[str, StoredResult]:
    """Cell key → the newest stored result of that cell, for one case on one release and profile.

    A point refused by the budget was never measured: raising the budget must run it.
    """
    folder = root / _safe(case) / f"jax-{_safe(release)}" / _safe(profile)
    if not folder.is_dir():
        return {}
    newest: dict[str, StoredResult] = {}
    for result in load_results(folder)[0]:
        if result.status == "skipped" and str(result.data.get("detail", "")).startswith(REFUSED):
            continue
        key = cell_key(result.case, result.release, result.profile, result.sizes)
        if key not in newest or result.order > newest[key].order:
            newest[key] = result
    return newest


def measured_cells(root: Path, case: str, release: str, profile: str) -> dict[str, str]:
    """Cell key → status of the newest stored result, for one case on one release and profile."""
    return {key: result.status for key, result in newest_results(root, case, release, profile).items()}


def newest_result(root: Path, case: str, release: str, profile: str, sizes: dict[str, int]) -> StoredResult | None:
    """The newest stored result of one cell (a case at sizes on a release under a profile), if any."""
    return newest_results(root, case, release, profile).get(cell_key(case, release, profile, sizes))


def load_results(root: Path) -> tuple[list[StoredResult], list[LoadProblem]]:
    results: list[StoredResult] = []
    problems: list[LoadProblem] = []
    for path in sorted(root.rglob("*.json")):
        if path.name.startswith(".tmp-"):
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.append(LoadProblem(path, f"unreadable JSON ({exc})"))
            continue
        problem = validate(data)
        if problem:
            problems.append(LoadProblem(path, problem))
        else:
            results.append(StoredResult(path, data))
    return results, problems
