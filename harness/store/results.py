"""Stored results: one schema-versioned JSON document per cell, written atomically, loaded once.

Written under a temporary name, fsynced, then hard-linked to the final name (which fails rather than
replaces), so a result is never overwritten or half-written; checked by parsing before writing and
on loading; older versions are migrated on load, never on disk.  The loader names every file it
cannot use and carries on, and counts a result found twice (two CI artifacts) once per id and
content.  Which run of a cell counts is decided in ``newest_runs`` alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from harness.errors import HarnessError, UsageError
from harness.names import inside, name_problem
from harness.store.bounds import MAX_DOCUMENT_BYTES, document_problem, fit
from harness.store.files import DocumentProblem, parse_document, read_bounded, temporary_file
from harness.store.migrations import upgrade
from harness.store.schema import SCHEMA_VERSION, Result, RunStatus, SchemaError, parse
from harness.units import UNRECORDED_MACHINE

# Beside the results: each machine's noise floor (``store.calibrations``), which is not a result.
CALIBRATION_FOLDER = "calibration"


@dataclass(frozen=True)
class LoadProblem:
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class StoredResult:
    """A parsed result and the file it came from; ``content_hash`` is of the document as stored."""

    path: Path
    result: Result
    content_hash: str

    @classmethod
    def from_document(cls, path: Path, data: Any) -> StoredResult:
        """A result document of any version this harness reads; raises ``SchemaError``."""
        upgraded = upgrade(data)
        try:
            result = parse(upgraded)
        except SchemaError as exc:
            if data.get("schema_version") == SCHEMA_VERSION:
                raise
            migrated = f"{exc.problem} (as migrated from schema version {data['schema_version']})"
            raise SchemaError(exc.field, migrated) from None
        return cls(path, result, content_hash(data))


class Identity(NamedTuple):
    """A new result's id (sorted by time; its random part parts two of one second) and time."""

    id: str
    created_at: str


def new_identity() -> Identity:
    now = datetime.now(UTC)
    return Identity(
        f"{now:%Y%m%dT%H%M%S}-{secrets.token_hex(4)}", now.isoformat(timespec="seconds")
    )


def result_path(root: Path, result: Result) -> Path:
    """Where ``result`` is stored under ``root``; its names were checked when it was parsed."""
    return inside(root, result.case, f"jax-{result.release}", result.profile, f"{result.id}.json")


class UnreadableResult(ValueError):
    """A result no reader would read back, refused rather than stored for every reader to skip."""


def write_result(root: Path, record: Result | Mapping[str, Any]) -> Path:
    """Store a result checked by parsing and against ``store.bounds``; else UnreadableResult."""
    try:
        document = record.to_json() if isinstance(record, Result) else upgrade(record)
        result = parse(document)
    except SchemaError as exc:
        raise UnreadableResult(f"refusing to store an invalid result: {exc}") from None
    problem = document_problem(document)
    if problem:
        raise UnreadableResult(f"refusing to store a result no reader would read: {problem}")
    text = json.dumps(document, indent=1, sort_keys=True)
    size = len(text.encode())
    if size > MAX_DOCUMENT_BYTES:
        raise UnreadableResult(
            f"refusing to store a result of {size:,} bytes: readers read at most "
            f"{MAX_DOCUMENT_BYTES:,}"
        )
    final = result_path(root, result)
    create_file(final, text)
    return final


def create_file(final: Path, text: str) -> None:
    """Write ``text`` to a new file, atomically; raises FileExistsError instead of replacing one."""
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = temporary_file(final.parent, ".tmp-", ".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp_name, final)
    finally:
        os.unlink(tmp_name)


def content_hash(data: Any) -> str:
    """Hash of a result's content, not its bytes: a re-indented copy counts as the same."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


REFUSED = "refused before allocation"
# What ``measure.storing.stored_status`` says of a run interrupted before its planned processes.
INTERRUPTED = "interrupted"

K = TypeVar("K", bound=Hashable)


class Newest(NamedTuple):
    """The newest run of a cell, and how many older runs of it there are."""

    result: StoredResult
    older: int


class Cell(NamedTuple):
    """What is measured once: a case at sizes on a release under a profile, on one machine."""

    case: str
    release: str
    profile: str
    sizes: tuple[tuple[str, int], ...]
    machine: str


def cell_of(stored: StoredResult) -> Cell:
    r = stored.result
    return Cell(r.case, r.release, r.profile, tuple(sorted(r.sizes.items())), r.machine)


def newest_runs(
    results: Iterable[StoredResult], key: Callable[[StoredResult], K]
) -> dict[K, Newest]:
    """The newest result per ``key``, with the count of older ones: every reader selects so."""
    found: dict[K, Newest] = {}
    for result in results:
        seen = found.get(key(result), Newest(result, -1))
        newer = result if result.result.order > seen.result.result.order else seen.result
        found[key(result)] = Newest(newer, seen.older + 1)
    return found


def refused(result: StoredResult) -> bool:
    """A point the budget refused was never measured."""
    return result.result.status is RunStatus.SKIPPED and result.result.detail.startswith(REFUSED)


def cut_short(stored: StoredResult) -> bool:
    """Stored before its planned processes all ran ok: an interrupted run, to measure again."""
    result = stored.result
    planned = result.settings.recorded("processes")
    return result.status is RunStatus.OK and planned is not None and len(result.processes) < planned


def newest_result(
    root: Path,
    case: str,
    release: str,
    profile: str,
    sizes: dict[str, int],
    machine: str,
    accept: Callable[[StoredResult], bool] | None = None,
) -> StoredResult | None:
    """The newest stored result of one cell on ``machine``.  A point refused by the budget was never
    measured (raising the budget must run it); results merged in from other machines do not count,
    results from before machine ids do.  ``accept`` narrows which results count."""
    if any(name_problem(name) for name in (case, release, profile)):
        return None  # such a cell cannot have been stored
    folder = inside(root, case, f"jax-{release}", profile)
    if not folder.is_dir():
        return None
    mine = [
        r
        for r in load_results(folder)[0]
        if not refused(r)
        and r.result.machine in (machine, UNRECORDED_MACHINE)
        and (accept is None or accept(r))
    ]
    # one cell, whether its machine is this one or unrecorded
    newest = newest_runs(mine, key=lambda r: cell_of(r)._replace(machine=machine))
    found = newest.get(Cell(case, release, profile, tuple(sorted(sizes.items())), machine))
    return found.result if found else None


# The results read in this process, by path and the bytes' digest, the most recent last: a range
# command reads its cells' folders at every step, and a suite's rounds make documents of megabytes
# whose parse and checks take a second or more each.  Keyed on the bytes, never on a file's times:
# the same bytes always parse to the same result.  Bounded by the documents' bytes (a parsed one
# holds about twice its file's).
class _ReadResults(OrderedDict[tuple[Path, bytes], tuple[int, StoredResult]]):
    bytes_kept = 0

    def keep(self, key: tuple[Path, bytes], size: int, stored: StoredResult) -> None:
        self[key] = (size, stored)
        self.bytes_kept += size
        while self.bytes_kept > READ_KEPT_BYTES:
            self.bytes_kept -= self.popitem(last=False)[1][0]


_READ = _ReadResults()
READ_KEPT_BYTES = 128 * 2**20


def read_result(path: Path) -> StoredResult:
    """The result at ``path``, as every reader reads it; OSError, DocumentProblem or SchemaError."""
    data = read_bounded(path)
    key = (path, hashlib.sha256(data).digest())
    if (kept := _READ.get(key)) is not None:
        _READ.move_to_end(key)
        return kept[1]
    stored = StoredResult.from_document(path, parse_document(data))
    _READ.keep(key, len(data), stored)
    return stored


def load_results(root: Path) -> tuple[list[StoredResult], list[LoadProblem]]:
    """Every usable result under ``root`` once, parsed, and a problem for every unused file."""
    results: list[StoredResult] = []
    problems: list[LoadProblem] = []
    seen: dict[str, tuple[str, Path]] = {}  # id → (content hash, first path)
    for path in sorted(root.rglob("*.json")):
        if (
            path.name.startswith(".tmp-")
            or path.is_dir()
            or path.relative_to(root).parts[:-1] == (CALIBRATION_FOLDER,)
        ):
            continue
        try:
            stored = read_result(path)
        except OSError as exc:
            problems.append(LoadProblem(path, f"unreadable ({exc.strerror or exc})"))
            continue
        except (DocumentProblem, SchemaError) as exc:
            problems.append(LoadProblem(path, str(exc)))
            continue
        first = seen.setdefault(stored.result.id, (stored.content_hash, path))
        if first[1] == path:
            results.append(stored)
        elif first[0] != stored.content_hash:
            taken = f"id {stored.result.id} is already used by {first[1]} with other content"
            problems.append(LoadProblem(path, taken))
        # else: the same result again (one file in two artifacts), counted once
    return results, problems


# A few notes say what was left out; hundreds would bury the page that shows them.
MAX_NOTES = 40


def readable(result: Result) -> Result:
    """``result`` as every reader would read it back: what lies outside ``store.bounds`` left out or
    repaired, a note each; UnreadableResult when a required figure is gone."""
    notes: list[str] = []
    document = fit(result.to_json(), "", notes.append)
    if not notes:
        return result
    more = [f"… and {len(notes) - MAX_NOTES} more left out"] if len(notes) > MAX_NOTES else []
    document["notes"] = [*result.notes, *notes[:MAX_NOTES], *more]
    try:
        return parse(document)
    except SchemaError as exc:
        raise UnreadableResult(
            f"refusing to store a result no reader would read: {notes[0]} ({exc})"
        ) from None


# ``merge DIR... --into DIR``: results from many machines into one folder. A result is copied byte
# for byte where it would have been stored; one already there (same id and content) is counted once;
# a file that cannot be used, or whose id is taken by other content, is left out with one line
# saying why.
@dataclass
class Merged:
    copied: list[Path] = field(default_factory=list)
    duplicates: int = 0
    problems: list[str] = field(default_factory=list)


def merge(sources: Sequence[Path], into: Path) -> Merged:
    for folder in sources:
        if not folder.is_dir():
            raise UsageError(f"results folder not found: {folder}")
    if into.exists() and not into.is_dir():
        raise UsageError(f"{into} is a file, not a results folder")
    merged = Merged()
    found = load_results(into)[0] if into.is_dir() else []
    # id → (content hash, path in the merged folder)
    present = {r.result.id: (r.content_hash, r.path) for r in found}
    for folder in sources:
        results, problems = load_results(folder)
        merged.problems += [str(p) for p in problems]
        for result in results:
            _take(result, into, present, merged)
    return merged


def _text(path: Path, digest: str, *, follow_links: bool = True) -> str | None:
    """The result file's text within the loader's bounds; None unless it hashes to ``digest``."""
    try:
        data = read_bounded(path, follow_links=follow_links)
        same = content_hash(parse_document(data)) == digest
    except (OSError, DocumentProblem):
        return None
    return data.decode() if same else None


def _take(
    result: StoredResult, into: Path, present: dict[str, tuple[str, Path]], merged: Merged
) -> None:
    identity, digest = result.result.id, result.content_hash
    if identity in present:
        known, where = present[identity]
        if known == digest:
            merged.duplicates += 1
        else:
            merged.problems.append(
                f"{result.path}: id {identity} is already in {where} with other content"
            )
        return
    target = result_path(into, result.result)
    text = _text(result.path, digest)
    if text is None:
        merged.problems.append(
            f"{result.path}: changed while merging (or is no longer a regular file): left out"
        )
        return
    try:
        create_file(target, text)
    except FileExistsError:
        # Another merge into the same folder may have copied this very result since ``into`` was
        # loaded: identical content is the same result, not a conflict.
        if _text(target, digest, follow_links=False) is not None:
            merged.duplicates += 1
        else:  # a file there that the loader could not use, or of other content
            merged.problems.append(f"{result.path}: {target} exists and is not this result")
        return
    except OSError as exc:
        raise HarnessError(
            f"cannot write {target}: {exc.strerror or exc}; results copied so far are kept"
        ) from None
    present[identity] = (digest, target)
    merged.copied.append(target)
