"""Each machine's noise floor (``python -m harness calibrate``) as stored:
``calibration/<machine-id>.json`` under the results folder, one file per machine, one entry per
calibration, newest last.

``CalibrationRun`` is one entry, and both writes it (``as_json``) and parses it back
(``from_json``), so the two cannot drift apart.  The result loader leaves the folder
alone: a calibration is not a result.  Statistics are ``analysis.noise_floor``'s, the
runs behind them ``harness.commands.calibrate``'s.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from harness.errors import HarnessError
from harness.store.files import output_folder, parse_document, read_bounded, replace_file
from harness.store.results import CALIBRATION_FOLDER

CALIBRATION_SCHEMA = "jax-repro-harness/calibration"
CALIBRATION_VERSION = 1
# A calibration file holds a few entries of a few kB each; a larger one was not written by the
# harness.
MAX_CALIBRATION_BYTES = 16 * 2**20


@dataclass(frozen=True)
class CalibrationRun:
    """One calibration, as stored: what was run, how often A/A pairs got a verdict, what a real
    slowdown got."""

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
        """Parse one stored entry; ValueError naming the first field that is missing or of the wrong
        type."""
        run = _Fields(data, where)
        aa, slowdown = run.mapping("aa"), run.mapping("slowdown")
        return cls(
            created_at=run.text("created_at"),
            machine=machine,
            release=run.text("release"),
            profile=run.text("profile"),
            case=run.text("case"),
            sizes=run.sizes("sizes"),
            pairs=aa.count("pairs"),
            comparisons=aa.count("comparisons"),
            flagged=aa.count("flagged"),
            raised=slowdown.text("size"),
            raised_from=slowdown.count("from"),
            raised_to=slowdown.count("to"),
            slowdown_comparisons=slowdown.count("comparisons"),
            slowdown_flagged=slowdown.count("flagged"),
            smallest_flagged_ratio=slowdown.ratio("smallest_flagged_ratio"),
            largest_unflagged_ratio=slowdown.ratio("largest_unflagged_ratio"),
            processes=aa.count("processes"),
            min_processes=run.mapping("settings").count("min_processes"),
            settings=dict(run.mapping("settings").values),
            details={
                "per_pair": aa.values.get("per_pair", []),
                "metrics": slowdown.values.get("metrics", []),
                "detectable": aa.values.get("detectable_by_metric", {}),
            },
            slowdown_runs=slowdown.count("runs") if "runs" in slowdown.values else 0,
            detectable_ratio=aa.ratio("detectable_ratio"),
            invocation_spread=aa.ratio("invocation_spread"),
            aa_loaded=aa.flag("loaded"),
        )


class _Fields:
    """Typed access to one object of an untrusted calibration file."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
        self.values: dict[str, Any] = data
        self.where = where

    def _get(self, key: str, kinds: tuple[type, ...], expected: str) -> Any:
        value = self.values.get(key)
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise ValueError(f"{self.where}.{key}: expected {expected}, got {type(value).__name__}")
        return value

    def text(self, key: str) -> str:
        return cast(str, self._get(key, (str,), "str"))

    def count(self, key: str) -> int:
        value = cast(int, self._get(key, (int,), "int"))
        if value < 0:
            raise ValueError(f"{self.where}.{key}: expected a count, got {value}")
        return value

    def ratio(self, key: str) -> float | None:
        if self.values.get(key) is None:
            return None
        return float(self._get(key, (int, float), "number or null"))

    def flag(self, key: str) -> bool:
        """A true/false field; absent (older files) is false."""
        value = self.values.get(key, False)
        if not isinstance(value, bool):
            raise ValueError(f"{self.where}.{key}: expected bool, got {type(value).__name__}")
        return value

    def mapping(self, key: str) -> _Fields:
        return _Fields(self.values.get(key), f"{self.where}.{key}")

    def sizes(self, key: str) -> dict[str, int]:
        found = self.mapping(key)
        return {name: found.count(name) for name in found.values}


def calibration_path(results_root: Path, machine: str) -> Path:
    """The machine's file; where its id had to change to be a file name, a digest keeps two ids
    apart (``a+b`` and ``a_b`` would otherwise share one file)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in machine)
    if safe != machine or not safe or safe.startswith(".") or len(safe) > 128:
        safe = f"{safe[:64].lstrip('.')}-{hashlib.sha256(machine.encode()).hexdigest()[:12]}"
    return results_root / CALIBRATION_FOLDER / f"{safe}.json"


def _document(path: Path) -> Any:
    """The file's JSON, read with the results loader's bounds, and no link followed (the folder is
    input too)."""
    try:
        return parse_document(read_bounded(path, limit=MAX_CALIBRATION_BYTES, follow_links=False))
    except OSError as exc:
        raise ValueError(f"unreadable ({exc.strerror or exc})") from None


def read_calibration(path: Path) -> list[CalibrationRun]:
    """Every calibration stored in one machine's file, oldest first; ValueError naming what is
    wrong."""
    return _runs(_document(path))


def _runs(data: Any) -> list[CalibrationRun]:
    document = _Fields(data, "file")
    if document.values.get("schema") != CALIBRATION_SCHEMA:
        raise ValueError(f"not a calibration (schema {document.values.get('schema')!r})")
    if document.values.get("schema_version") != CALIBRATION_VERSION:
        raise ValueError(
            f"calibration version {document.values.get('schema_version')!r} is not "
            f"{CALIBRATION_VERSION}"
        )
    machine = document.text("machine")
    runs = document.values.get("runs")
    if not isinstance(runs, list):
        raise ValueError(f"file.runs: expected list, got {type(runs).__name__}")
    return [CalibrationRun.from_json(machine, run, f"runs[{i}]") for i, run in enumerate(runs)]


def append_calibration(results_root: Path, run: CalibrationRun) -> Path:
    """Add ``run`` to its machine's file, atomically (written beside it, then renamed over it).

    Earlier entries are kept; a file that cannot be read is refused rather than replaced.
    """
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
