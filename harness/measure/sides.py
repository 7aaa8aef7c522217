"""Sides of a measurement: what is compared, each measured by a worker of its own.

A *side* is an interpreter, the variables it runs with, and the release and profile labels its
results are stored under; without a plan, this interpreter and ``--profile``. A plan file (``run
--sides PLAN.json``, docs/measuring.md) lists several; no two may share a label, or a release,
profile and sizes. The file is input: every problem is one ``UsageError`` naming it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.catalogue.discovery import parse_size
from harness.errors import UsageError
from harness.host import installed_jax
from harness.metric_names import parse_metric_name
from harness.names import name_problem
from harness.store.files import read_plan_document
from harness.store.schema import Libraries, SchemaError, read_record

# In the reason of a skip by ``claims_only``: a side that measures every case does not take such a
# stored skip for a cell measured before.
CLAIM_MARK = "(CLAIM_DEVICES)"
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LABEL_TEXT = re.compile(r"^[^\x00-\x1f\x7f]{1,120}$")
# An interpreter's path may be as long as the system allows: a user's cache can be deep.
_PATH_TEXT = re.compile(r"^[^\x00-\x1f\x7f]{1,4096}$")


@dataclass(frozen=True)
class Side:
    release: str
    profile: str
    interpreter: str = field(default_factory=lambda: sys.executable)
    env: dict[str, str | None] = field(default_factory=dict)
    label: str = ""
    sizes: dict[str, int] = field(default_factory=dict)  # replace the cell's sizes on this side
    compare_next: bool = True  # until decided: compared with the next side of its profile
    # on these metrics (empty: the run's --decide-metric, or every one)
    compare_metrics: tuple[str, ...] = ()
    libraries: Libraries | None = None  # a script's venv here: what it was resolved to hold
    compare_with: str = ""  # until decided: also compared with the side of this label
    claims_only: bool = False  # a case with CLAIM_DEVICES only where it makes that many devices

    def __post_init__(self) -> None:
        if not self.label:
            resized = "".join(f" · {name}={value}" for name, value in sorted(self.sizes.items()))
            object.__setattr__(self, "label", f"jax {self.release} · {self.profile}{resized}")

    def cpu_devices(self) -> int | None:
        """The CPU devices a process of this side finds, where its environment says; else None."""
        environ = self.environment()  # the side's variables over the harness's
        if environ.get("JAX_PLATFORMS") != "cpu":
            return None
        flags = environ.get("XLA_FLAGS", "")
        found = re.findall(r"--xla_force_host_platform_device_count=(\d+)", flags)
        return int(found[-1]) if found else 1

    def claim_skip(self, case: str, claim_devices: int | None, found: int) -> str:
        """Why a side of the main command (``claims_only``) leaves ``case`` out where it makes
        ``found`` CPU devices: its claim (CLAIM_DEVICES) is about another number; else empty."""
        if not self.claims_only or claim_devices is None or claim_devices == found:
            return ""
        devices = f"{claim_devices} device{'' if claim_devices == 1 else 's'}"
        return (
            f"its claim is about {devices} {CLAIM_MARK} and this profile made {found} CPU devices: "
            "the main command measures it only where its claim is; `nox -s matrix -- --profile "
            f"{self.profile} --case {case}` measures it here"
        )

    def cell_sizes(self, planned: dict[str, int]) -> dict[str, int]:
        """The sizes a cell planned at ``planned`` is measured at on this side."""
        return {**planned, **{name: value for name, value in self.sizes.items() if name in planned}}

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The harness's environment with this side's variables applied."""
        environ = dict(os.environ if base is None else base) | self.env  # None: unset
        return {name: value for name, value in environ.items() if value is not None}


# A plan's keys: a side's fields, the label first (``compare_with`` is the harness's own).
KEYS = (
    "label",
    *(spec.name for spec in fields(Side) if spec.name not in ("label", "compare_with")),
)


def _text(
    entry: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] = _LABEL_TEXT
) -> str:
    value = entry[key]
    if not isinstance(value, str) or not pattern.match(value) or value != value.strip():
        shown = json.dumps(value)[:80]
        raise UsageError(f"{where}: {key!r} must be a non-empty line of text, not {shown}")
    return value


def _side(entry: Any, where: str) -> Side:
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: a side is an object with {', '.join(KEYS)}")
    unknown = sorted(set(entry) - set(KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (a side has {', '.join(KEYS)})")
    missing = [key for key in ("release", "profile") if key not in entry]
    if missing:
        raise UsageError(f"{where}: missing {' and '.join(repr(key) for key in missing)}")
    release, profile = _text(entry, "release", where), _text(entry, "profile", where)
    for key, value in (("release", release), ("profile", profile)):
        if problem := name_problem(value):  # each becomes part of the results' paths
            raise UsageError(f"{where}: {key} {problem}")
    label = _text(entry, "label", where) if "label" in entry else ""
    interpreter = sys.executable
    if "interpreter" in entry:
        interpreter = _text(entry, "interpreter", where, _PATH_TEXT)
        if not (os.path.isfile(interpreter) and os.access(interpreter, os.X_OK)):
            raise UsageError(f"{where}: interpreter {interpreter} is not an executable file")
    env = entry.get("env", {})
    if not isinstance(env, dict):
        raise UsageError(f"{where}: 'env' must be an object of variable names to strings (or null)")
    for name, value in env.items():
        if not _VARIABLE.match(name):
            raise UsageError(f"{where}: {name!r} is not an environment variable name")
        if value is not None and (not isinstance(value, str) or "\x00" in value):
            raise UsageError(f"{where}: the value of {name} must be a string or null")
    compare_next = _flag(entry, "compare_next", True, where)
    claims_only = _flag(entry, "claims_only", False, where)
    metrics = entry.get("compare_metrics", [])
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        names = 'a list of metric names such as "scan.wall_ns"'
        raise UsageError(f"{where}: 'compare_metrics' must be {names}")
    try:
        metrics = [parse_metric_name(m).metric_name for m in metrics]
    except UsageError as exc:
        raise UsageError(f"{where}: 'compare_metrics': {exc}") from None
    planned = entry.get("sizes", {})
    if not isinstance(planned, dict):
        raise UsageError(f"{where}: 'sizes' must be an object of size names to whole numbers")
    sizes = {}
    for name, number in planned.items():
        if not isinstance(number, int) or isinstance(number, bool):
            size, shown = str(name)[:40], json.dumps(number)[:40]
            raise UsageError(f"{where}: the size {size!r} must be a whole number, not {shown}")
        try:
            key, parsed = parse_size(f"{name}={number}")
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from None
        sizes[key] = parsed
    libraries = None
    if entry.get("libraries") is not None:
        try:
            libraries = read_record(Libraries, entry["libraries"], "libraries")
        except SchemaError as exc:
            raise UsageError(f"{where}: {exc}") from None
    compared = tuple(dict.fromkeys(metrics))
    named = (release, profile, interpreter, dict(env), label, sizes, compare_next, compared)
    return Side(*named, libraries, claims_only=claims_only)


def _flag(entry: dict[str, Any], key: str, default: bool, where: str) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise UsageError(f"{where}: {key!r} must be true or false, not {json.dumps(value)[:40]}")
    return value


def load_plan(path: Path) -> list[Side]:
    """The sides a plan file lists, after every check; UsageError naming the file otherwise."""
    entries = read_plan_document(path, "the sides plan", limit=2**20)
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"the sides plan {path} must be a non-empty list of sides")
    sides = [_side(entry, f"sides plan {path}, side {i + 1}") for i, entry in enumerate(entries)]
    for i, side in enumerate(sides):
        for j, other in enumerate(sides[:i]):
            both = f"sides plan {path}: sides {j + 1} and {i + 1}"
            if side.label == other.label:
                raise UsageError(f"{both} share the label {side.label!r}")
            same_cell = (side.release, side.profile) == (other.release, other.profile)
            if same_cell and side.sizes == other.sizes:
                raise UsageError(
                    f"{both} are both release {side.release} under profile {side.profile} at the "
                    "same sizes, so their results would be one cell; give one another profile label"
                )
    return sides


def release_label() -> str:
    """The jax release installed here, as results name it."""
    return installed_jax.version() or "unknown"


def this_side(profile: str) -> Side:
    """The side of a run without a plan: this interpreter and environment, this JAX."""
    return Side(release=release_label(), profile=profile, interpreter=sys.executable, env={})
