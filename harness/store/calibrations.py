"""Each machine's noise floor as stored: ``calibration/<machine-id>.json`` under the results folder,
one entry per calibration, newest last; ``CalibrationRun`` writes and parses it, so the two cannot
drift apart.  The result loader leaves the folder alone.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.store.checks import (
    Fields,
    SchemaError,
    as_is,
    boolean,
    integer,
    list_of,
    map_of,
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
        cell = ("created_at", "release", "profile", "case", "sizes", "settings")
        return {
            **{name: getattr(self, name) for name in cell},
            "aa": {
                "pairs": self.pairs,
                "processes": self.processes,
                "comparisons": self.comparisons,
                "flagged": self.flagged,
                "false_positive_rate": None
                if math.isnan(self.false_positive_rate)
                else self.false_positive_rate,
                "detectable_ratio": self.detectable_ratio,
                "detectable_by_metric": self.details.get("detectable", {}),
                "invocation_spread": self.invocation_spread,
                "loaded": self.aa_loaded,
                "per_pair": self.details.get("per_pair", []),
            },
            "slowdown": {
                "runs": self.slowdown_runs,
                "size": self.raised,
                "from": self.raised_from,
                "to": self.raised_to,
                "comparisons": self.slowdown_comparisons,
                "flagged": self.slowdown_flagged,
                "smallest_flagged_ratio": self.smallest_flagged_ratio,
                "largest_unflagged_ratio": self.largest_unflagged_ratio,
                "metrics": self.details.get("metrics", []),
            },
        }

    @classmethod
    def from_json(cls, machine: str, data: Any, where: str = "run") -> CalibrationRun:
        """One stored entry; ValueError naming the first field missing or of the wrong type."""
        run = Fields(data, where)
        aa, slowdown, settings = (
            Fields(run.data.get(part), f"{where}.{part}") for part in ("aa", "slowdown", "settings")
        )
        return cls(
            created_at=run.required("created_at", string),
            machine=machine,
            release=run.required("release", string),
            profile=run.required("profile", string),
            case=run.required("case", string),
            sizes=run.required("sizes", map_of(_count)),
            pairs=aa.required("pairs", _count),
            comparisons=aa.required("comparisons", _count),
            flagged=aa.required("flagged", _count),
            raised=slowdown.required("size", string),
            raised_from=slowdown.required("from", _count),
            raised_to=slowdown.required("to", _count),
            slowdown_comparisons=slowdown.required("comparisons", _count),
            slowdown_flagged=slowdown.required("flagged", _count),
            smallest_flagged_ratio=slowdown.optional("smallest_flagged_ratio", number, None),
            largest_unflagged_ratio=slowdown.optional("largest_unflagged_ratio", number, None),
            processes=aa.required("processes", _count),
            min_processes=settings.required("min_processes", _count),
            settings=dict(settings.data),
            details={
                "per_pair": aa.data.get("per_pair", []),
                "metrics": slowdown.data.get("metrics", []),
                "detectable": aa.data.get("detectable_by_metric", {}),
            },
            # absent from files written before calibrations measured the slowdown interleaved
            slowdown_runs=slowdown.optional("runs", _count, 0),
            detectable_ratio=aa.optional("detectable_ratio", number, None),
            invocation_spread=aa.optional("invocation_spread", number, None),
            aa_loaded=aa.optional("loaded", boolean, False),  # absent from older files
        )


def _count(value: Any, where: str) -> int:
    if integer(value, where) < 0:
        raise SchemaError(where, f"expected a count, got {value}")
    return value


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
