"""Where a script's host time went: one process per release under ``cProfile``, the functions whose
own time moved most, grouped by where they live (jax, jaxlib, a library, the script, Python).

Asked where the compiled programs do not show the step (tracing, dispatch, a library's Python). The
start-up hook writes the profile to ``HARNESS_PYTHON_PROFILE``; it is read and removed. A function
is named below ``site-packages`` (``jax/_src/tree_util.py:tree_flatten``), never by a path here.
cProfile slows both releases alike: functions are compared with each other, not the timed ones.
"""

from __future__ import annotations

import pstats
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from harness.analysis.significance import MOVED
from harness.explain.reproducer import ReproducerAnswer
from harness.install.commit_venvs import is_commit_label
from harness.measure.sides import Side
from harness.steps.evidence import Found, Step, StepSides, of_kind

PYTHON_PROFILE = "HARNESS_PYTHON_PROFILE"  # as harness.measure.script_hook reads it
SHOWN_FUNCTIONS = 8
FUNCTION_FIELDS = ("name", "group", "old_ns", "new_ns", "old_calls", "new_calls")  # of ``moved``
SCRIPT, PYTHON, OTHER = "script", "python", "other"
STDLIB_FOLDER = re.compile(r"^python3\.\d+$")  # lib/python3.12/…, below it site-packages excepted
# A builtin as cProfile names it:
# ``<method 'flatten' of 'jaxlib.xla_extension.pytree.PyTreeDef' objects>``.
BUILTIN_OWNER = re.compile(r"of '([A-Za-z_][\w.]*)' objects|<built-in method ([\w.]+)")

CPROFILED_COST = 3  # plain processes one under cProfile costs, for the why's budget


@dataclass
class HostTimes:
    """One profiled process: each function's own ns and calls, by its name as shown."""

    own_ns: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    where: dict[str, str] = field(default_factory=dict)  # a function's name → its group

    def by_group(self) -> Counter[str]:
        totals: Counter[str] = Counter()
        for name, own in self.own_ns.items():
            totals[self.where[name]] += own
        return totals


def place(filename: str, function: str, script: str) -> tuple[str, str]:
    """A profiled function's group and the name a page shows: ``("jax", "jax/_src/api.py:jit")``."""
    if filename == "~":  # a builtin: its owner's module says where it lives
        found = BUILTIN_OWNER.search(function)
        owner = next((part for part in found.groups() if part), "") if found else ""
        top = owner.split(".")[0] if "." in owner else ""
        return (PYTHON if not top or top in sys.stdlib_module_names else top), function
    path = PurePath(filename)
    if "site-packages" in path.parts:
        below = path.parts[path.parts.index("site-packages") + 1 :]
        top = below[0].removesuffix(".py") if below else OTHER
        return top, f"{'/'.join(below)}:{function}"
    stdlib = any(STDLIB_FOLDER.match(part) for part in path.parts[:-1]) or "<frozen" in filename
    group = SCRIPT if path.name == PurePath(script).name else PYTHON if stdlib else OTHER
    return group, f"{path.name}:{function}"


def read_profile(path: Path, script: str) -> HostTimes | str:
    try:
        stats = pstats.Stats(str(path))
    except (OSError, EOFError, ValueError, TypeError) as exc:
        return f"its profile could not be read ({type(exc).__name__})"
    found = HostTimes()
    for (filename, _line, function), row in stats.stats.items():  # type: ignore[attr-defined]
        calls, own_seconds = row[1], row[2]
        group, name = place(filename, function, script)
        found.own_ns[name] += round(own_seconds * 1e9)
        found.calls[name] += calls
        found.where[name] = group
    return found if found.own_ns else "the profile recorded no function"


@dataclass(frozen=True)
class HostAnswer:
    before: str
    after: str
    old: HostTimes | str  # a release's functions, or why there are none
    new: HostTimes | str
    kind: str = "host"
    settles: bool = False

    def sides(self) -> tuple[tuple[str, HostTimes | str], tuple[str, HostTimes | str]]:
        return (self.before, self.old), (self.after, self.new)

    def groups(self) -> list[tuple[str, int, int]]:
        if isinstance(self.old, str) or isinstance(self.new, str):
            return []
        old, new = self.old.by_group(), self.new.by_group()
        names = sorted(set(old) | set(new), key=lambda g: -abs(new[g] - old[g]))
        return [(name, old[name], new[name]) for name in names]

    def moved(self, count: int = SHOWN_FUNCTIONS) -> list[tuple[str, str, int, int, int, int]]:
        """The functions whose own time moved most: (name, group, ns and calls before, after)."""
        if isinstance(self.old, str) or isinstance(self.new, str):
            return []
        old, new = self.old, self.new
        names = sorted(
            set(old.own_ns) | set(new.own_ns), key=lambda n: -abs(new.own_ns[n] - old.own_ns[n])
        )
        return [
            (
                name,
                new.where.get(name) or old.where[name],
                old.own_ns[name],
                new.own_ns[name],
                old.calls[name],
                new.calls[name],
            )
            for name in names[:count]
        ]

    def data(self) -> dict[str, Any]:
        def side(times: HostTimes | str) -> object:
            return {"problem": times} if isinstance(times, str) else dict(times.by_group())

        return {
            **{name: getattr(self, name) for name in ("kind", "before", "after")},
            "groups": [side(self.old), side(self.new)],
            "functions": [dict(zip(FUNCTION_FIELDS, row, strict=True)) for row in self.moved()],
        }


class HostProfile:
    name = "host"

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        times = [m for m in step.costs if m.is_duration or m.about_run_time]  # a time, not memory
        if not step.script or not times or any(map(is_commit_label, step.pair)):
            return False
        reproducer = of_kind(found, ReproducerAnswer)
        return reproducer is None or not shown_in_programs(reproducer)

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> HostAnswer:
        sides.afford(step, 2 * CPROFILED_COST, "its two processes under cProfile")
        sides.progress(f"  where {step.script}'s host time goes: one process each under cProfile")
        old, new = (host_times(sides, label, step.script) for label in step.pair)
        return HostAnswer(step.before, step.after, old, new)


def shown_in_programs(answer: ReproducerAnswer) -> bool:
    compared = [found for _, found in answer.measured.values()]
    return bool(compared) and all(c is not None and c.verdict in MOVED for c in compared)


def host_times(sides: StepSides, label: str, script: str) -> HostTimes | str:
    side = sides.side(label)
    if not isinstance(side, Side):
        return side
    with tempfile.TemporaryDirectory(prefix="harness-host-") as folder:
        path = Path(folder) / "profile.pstats"
        ended = sides.one_more_process(side, env={PYTHON_PROFILE: str(path)})
        if not path.is_file():
            return f"the process wrote no profile (its process: {ended})"
        return read_profile(path, script)
