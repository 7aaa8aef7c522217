"""What the ``bisect`` and ``sweep`` commands run on, checked: the case, the range, how to measure and judge.

The command line is parsed in ``harness.commands.ranges``; the commands below it get this, not the
parser's namespace.  Light on imports: the noxfile builds one, in nox's own environment,
to check a session's arguments before anything is installed.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.metric_names import MetricKey
from harness.analysis.significance import Thresholds
from harness.catalogue.discovery import CaseInfo


def target_words(case: CaseInfo) -> list[str]:
    """How a command line names ``case``: ``--case NAME``, or a plain script's file and arguments."""
    if case.script is None:
        return ["--case", case.name]
    return ["--script", case.script.file, *(f"--script-arg={shlex.quote(value)}" for value in case.script.args)]


@dataclass(frozen=True)
class RangeOptions:
    """A checked ``bisect``, ``sweep`` or ``triage`` command line: the case, the range and how to measure and judge."""

    command: str  # "bisect", "sweep" or "triage"
    case: CaseInfo
    first: str  # the good release of a bisect, the first of a sweep
    last: str
    metric: MetricKey | None
    claim: bool  # judge by the claim's verdict (a bisect without --metric)
    sizes: dict[str, int]
    profile: str
    releases_plan: Path | None  # what each release installs, written by nox
    results: Path
    out: Path
    repeats: int
    processes: int  # case processes per release measured (a second look runs twice as many)
    max_processes: int  # releases measured together: looks of ``processes`` rounds until decided, up to this many
    time_budget: float | None  # and no further look once a measurement's processes took this many seconds
    warmup: int
    max_seconds: float
    timeout: float
    thresholds: Thresholds
    fix: bool = False  # a bisect from --broken to --fixed: the answer names the fix
    commits: bool = False  # a bisect over jax's commits between the two releases (``--commits``)
    jax_repo: str | None = None  # ``--jax-repo``: a local clone or a URL; None: jax's own, cloned under .nox/
    json: Path | None = None  # ``--json FILE``: the answer as data there too
