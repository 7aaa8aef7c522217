"""Each machine's noise floor as stored: ``calibration/<machine-id>.json`` under the results folder,
one entry per calibration, newest last; ``CalibrationRun`` writes and parses it, so the two cannot
drift apart.  The result loader leaves the folder alone.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.store.checks import (
    Check,
    Fields,
    as_is,
    boolean,
    integer,
    list_of,
    map_of,
    narrowed,
    number,
    string,
)
from harness.store.files import output_folder, parse_document, read_bounded, replace_file
from harness.store.results import CALIBRATION_FOLDER

CALIBRATION_SCHEMA = "jax-repro-harness/calibration"
CALIBRATION_VERSION = 1
# A calibration file holds a few entries of a few kB; a larger one is not the harness's.
MAX_CALIBRATION_BYTES = 16 * 2**20


@dataclass(frozen=True)
class CalibrationRun:
    """One calibration: what ran, how often A/A pairs got a verdict, what a real slowdown got."""

    created_at: str
    machine: str
    release: str
    profile: str
    case: str
    sizes: dict[str, int]
    pairs: int
    comparisons: int  # metric comparisons over all A/A pairs
    flagged: int  # of them, with a faster/slower verdict
    raised: str
    raised_from: int
    raised_to: int
    slowdown_comparisons: int
    slowdown_flagged: int  # metrics of the raised side flagged slower, over all slowdown runs
    smallest_flagged_ratio: float | None  # the smallest ratio flagged slower; None when none was
    # the largest ratio not flagged slower; None when all were
    largest_unflagged_ratio: float | None
    # the fewest processes any compared side had: below min_processes no verdict was possible
    processes: int
    min_processes: int
    settings: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # per pair and per metric, for people
    # Runs measuring the unchanged and the raised case interleaved; 0: calibrated before they were,
    # by one separate raised run compared with the first A/A run.
    slowdown_runs: int = 0
    # The smallest ratio the rule over processes flags in DETECTION_POWER of comparisons, from the
    # spread of process medians in the A/A runs (the median over metrics); None where it could not
    # be worked out.
    detectable_ratio: float | None = None
    # How far the level of one whole invocation moves from another's (log standard deviation), from
    # the A/A pairs: what ``compare --invocation-spread`` allows for between separate runs; None
    # before it was.
    invocation_spread: float | None = None
    # some A/A process was measured under load: the spread is a loaded machine's
    aa_loaded: bool = False

    @property
    def false_positive_rate(self) -> float:
        return self.flagged / self.comparisons if self.comparisons else math.nan

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"settings": self.settings, "aa": {}, "slowdown": {}}
        for name, (part, key, _, _) in STORED.items():
            if part != "settings":  # written whole, as given
                (entry[part] if part else entry)[key] = getattr(self, name)
        for name, (part, key, empty) in DETAILS.items():
            entry[part][key] = self.details.get(name, empty())
        rate = self.false_positive_rate
        entry["aa"]["false_positive_rate"] = None if math.isnan(rate) else rate
        return entry

    @classmethod
    def from_json(cls, machine: str, data: Any, where: str = "run") -> CalibrationRun:
        """One stored entry; ValueError naming the first field missing or of the wrong type."""
        run = Fields(data, where)
        parts = {part: Fields(run.data.get(part), f"{where}.{part}") for part in PARTS} | {"": run}
        read = {
            name: parts[part].required(key, check)
            if default is MISSING
            else parts[part].optional(key, check, default)
            for name, (part, key, check, default) in STORED.items()
        }
        details = {
            name: parts[part].data.get(key, empty()) for name, (part, key, empty) in DETAILS.items()
        }
        return cls(machine=machine, settings=dict(parts["settings"].data), details=details, **read)


_count = narrowed(integer, lambda n: n >= 0, "expected a count, got {value}")
PARTS = ("aa", "slowdown", "settings")  # an entry's objects, each read as a part of it
# Each field as an entry stores it: its part ("": the entry itself), its name there, its check,
# and its default where a file written before it lacks it (MISSING: required), in the order read.
STORED: dict[str, tuple[str, str, Check[Any], Any]] = {
    "created_at": ("", "created_at", string, MISSING),
    "release": ("", "release", string, MISSING),
    "profile": ("", "profile", string, MISSING),
    "case": ("", "case", string, MISSING),
    "sizes": ("", "sizes", map_of(_count), MISSING),
    "pairs": ("aa", "pairs", _count, MISSING),
    "comparisons": ("aa", "comparisons", _count, MISSING),
    "flagged": ("aa", "flagged", _count, MISSING),
    "raised": ("slowdown", "size", string, MISSING),
    "raised_from": ("slowdown", "from", _count, MISSING),
    "raised_to": ("slowdown", "to", _count, MISSING),
    "slowdown_comparisons": ("slowdown", "comparisons", _count, MISSING),
    "slowdown_flagged": ("slowdown", "flagged", _count, MISSING),
    "smallest_flagged_ratio": ("slowdown", "smallest_flagged_ratio", number, None),
    "largest_unflagged_ratio": ("slowdown", "largest_unflagged_ratio", number, None),
    "processes": ("aa", "processes", _count, MISSING),
    "min_processes": ("settings", "min_processes", _count, MISSING),
    # absent from files written before calibrations measured the slowdown interleaved
    "slowdown_runs": ("slowdown", "runs", _count, 0),
    "detectable_ratio": ("aa", "detectable_ratio", number, None),
    "invocation_spread": ("aa", "invocation_spread", number, None),
    "aa_loaded": ("aa", "loaded", boolean, False),
}
# ``details`` (for people): where each is stored, and what it is where absent.
DETAILS: dict[str, tuple[str, str, Callable[[], Any]]] = {
    "per_pair": ("aa", "per_pair", list),
    "metrics": ("slowdown", "metrics", list),
    "detectable": ("aa", "detectable_by_metric", dict),
}


def calibration_path(results_root: Path, machine: str) -> Path:
    """The machine's file; where its id had to change to be a file name, a digest keeps two ids
    apart (``a+b`` and ``a_b`` would otherwise share one file)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in machine)
    if safe != machine or not safe or safe.startswith(".") or len(safe) > 128:
        safe = f"{safe[:64].lstrip('.')}-{hashlib.sha256(machine.encode()).hexdigest()[:12]}"
    return results_root / CALIBRATION_FOLDER / f"{safe}.json"


def _document(path: Path) -> Any:
    """The file's JSON within the results loader's bounds, no link followed (input too)."""
    try:
        return parse_document(read_bounded(path, limit=MAX_CALIBRATION_BYTES, follow_links=False))
    except OSError as exc:
        raise ValueError(f"unreadable ({exc.strerror or exc})") from None


def read_calibration(path: Path) -> list[CalibrationRun]:
    """Every calibration in one machine's file, oldest first; ValueError naming what is wrong."""
    return _runs(_document(path))


def _runs(data: Any) -> list[CalibrationRun]:
    document = Fields(data, "file")
    if document.data.get("schema") != CALIBRATION_SCHEMA:
        raise ValueError(f"not a calibration (schema {document.data.get('schema')!r})")
    if document.data.get("schema_version") != CALIBRATION_VERSION:
        raise ValueError(
            f"calibration version {document.data.get('schema_version')!r} is not "
            f"{CALIBRATION_VERSION}"
        )
    machine = document.required("machine", string)
    runs = document.required("runs", list_of(as_is))
    return [CalibrationRun.from_json(machine, run, f"runs[{i}]") for i, run in enumerate(runs)]


def append_calibration(results_root: Path, run: CalibrationRun) -> Path:
    """Add ``run`` to its machine's file atomically; an unreadable file is refused, not replaced."""
    path = calibration_path(results_root, run.machine)
    earlier: list[Any] = []
    if path.exists() or path.is_symlink():
        try:
            data = _document(path)
            _runs(data)
        except ValueError as exc:
            raise HarnessError(
                f"{path} is not a usable calibration file ({exc}): move it away first"
            ) from None
        earlier = data["runs"]
    document = {
        "schema": CALIBRATION_SCHEMA,
        "schema_version": CALIBRATION_VERSION,
        "machine": run.machine,
        "runs": [*earlier, run.as_json()],
    }
    output_folder(results_root, CALIBRATION_FOLDER)
    replace_file(path, json.dumps(document, indent=1, sort_keys=True))
    return path


def latest_calibrations(results_root: Path) -> tuple[dict[str, CalibrationRun], list[str]]:
    """Machine id → its newest calibration, and a line for every file that cannot be used."""
    latest: dict[str, CalibrationRun] = {}
    problems: list[str] = []
    folder = results_root / CALIBRATION_FOLDER
    if folder.is_symlink():
        return latest, [f"{folder}: a link, not a folder: no calibration is read through it"]
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            runs = read_calibration(path)
        except ValueError as exc:
            problems.append(f"{path}: {exc}")
            continue
        if runs:
            latest[runs[-1].machine] = max(runs, key=lambda r: r.created_at)
    return latest, problems
