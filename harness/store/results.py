"""Stored results: one schema-versioned JSON document per case run.

Files are created atomically (written under a temporary name, fsynced, then
hard-linked to their final name, which fails rather than replaces) so a finished
result is never overwritten or left half-written.  The loader names every file it
cannot use and why, and carries on with the rest.

Results gathered from many machines may hold one result twice (the same file in two
CI artifacts): the loader counts a result once per id and content, and names a file
whose id is taken by different content.  ``host.machine`` (the machine id) was added
without a schema bump: it is optional, and results stored before it load as from an
unrecorded machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.units import UNRECORDED_MACHINE

SCHEMA = "jax-repro-harness/result"
SCHEMA_VERSION = 2
# Version 1 (one case process per result) is still read as it is, until readers migrate it.
READABLE_VERSIONS = (1, SCHEMA_VERSION)
# JAX_PLATFORMS names platforms; default_backend() names the backend they run on.
PLATFORM_BACKENDS = {"cuda": "gpu", "rocm": "gpu"}
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
    def machine(self) -> str:
        """The id of the machine that measured it (``harness.host.machine``); older results have none."""
        recorded = (self.data.get("host") or {}).get("machine") or {}
        return str(recorded.get("id") or UNRECORDED_MACHINE)

    @property
    def backend(self) -> str:
        """The JAX backend it ran on; for a run that died before saying, the platform its profile pinned."""
        reported = (self.data.get("jax") or {}).get("backend")
        if reported:
            return str(reported)
        pinned = str((self.data.get("host") or {}).get("variables", {}).get("JAX_PLATFORMS", "")).split(",")[0]
        return PLATFORM_BACKENDS.get(pinned, pinned) or "unknown"

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
    create_file(final, json.dumps(record, indent=1, sort_keys=True))
    return final


def create_file(final: Path, text: str) -> None:
    """Write ``text`` to a new file, atomically; raises FileExistsError instead of replacing one."""
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=final.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp_name, final)
    finally:
        os.unlink(tmp_name)


def content_hash(data: dict[str, Any]) -> str:
    """Hash of a result's content, not its bytes: a copy re-indented on the way still counts as the same."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def validate(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("schema") != SCHEMA:
        return f"not a harness result (schema {data.get('schema')!r})"
    version = data.get("schema_version")
    if version not in READABLE_VERSIONS:
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


def newest_results(root: Path, case: str, release: str, profile: str, machine: str) -> dict[str, StoredResult]:
    """Cell key → the newest stored result of that cell, for one case on one release and profile, on ``machine``.

    A point refused by the budget was never measured: raising the budget must run it.
    Results merged in from other machines do not count; results from before machine
    ids do, since they were most likely stored here.
    """
    folder = root / _safe(case) / f"jax-{_safe(release)}" / _safe(profile)
    if not folder.is_dir():
        return {}
    newest: dict[str, StoredResult] = {}
    for result in load_results(folder)[0]:
        if result.status == "skipped" and str(result.data.get("detail", "")).startswith(REFUSED):
            continue
        if result.machine not in (machine, UNRECORDED_MACHINE):
            continue
        key = cell_key(result.case, result.release, result.profile, result.sizes)
        if key not in newest or result.order > newest[key].order:
            newest[key] = result
    return newest


def measured_cells(root: Path, case: str, release: str, profile: str, machine: str) -> dict[str, str]:
    """Cell key → status of the newest stored result, for one case on one release and profile, on ``machine``."""
    return {key: result.status for key, result in newest_results(root, case, release, profile, machine).items()}


def newest_result(
    root: Path, case: str, release: str, profile: str, sizes: dict[str, int], machine: str
) -> StoredResult | None:
    """The newest stored result of one cell (a case at sizes on a release under a profile) on ``machine``."""
    return newest_results(root, case, release, profile, machine).get(cell_key(case, release, profile, sizes))


def load_results(root: Path) -> tuple[list[StoredResult], list[LoadProblem]]:
    """Every usable result under ``root`` once, and a problem for every file that is not used."""
    results: list[StoredResult] = []
    problems: list[LoadProblem] = []
    seen: dict[str, tuple[str, Path]] = {}  # id → (content hash, first path)
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
            continue
        digest = content_hash(data)
        first = seen.setdefault(str(data["id"]), (digest, path))
        if first[1] == path:
            results.append(StoredResult(path, data))
        elif first[0] != digest:
            problems.append(LoadProblem(path, f"id {data['id']} is already used by {first[1]} with other content"))
        # else: the same result again (one file in two artifacts), counted once
    return results, problems
