"""Names of metrics: a program's or jitted function's timing series, as keys and as typed on a command line.

Kept apart from ``metrics`` (which needs the report's dependencies) because the
noxfile checks a ``--metric`` name in nox's own environment, before installing anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import UsageError

KIND_LABELS = {
    "wall": "wall (until ready)",
    "dispatch": "dispatch (Python regains control)",
    "lower": "trace + lower (cold)",
    "compile": "compile (cold)",
}


@dataclass(frozen=True)
class MetricKey:
    name: str  # program or jitted function
    kind: str  # a key of KIND_LABELS

    def label(self) -> str:
        return f"{self.name} · {KIND_LABELS[self.kind]}"

    @property
    def metric_name(self) -> str:
        """The name on the command line and in the exported script's output, e.g. ``two_scans.wall_ns``."""
        return f"{self.name}.{self.kind}_ns"


def parse_metric_name(text: str) -> MetricKey:
    """``PROGRAM.KIND_ns`` (or ``PROGRAM.KIND``) → its key; anything else is refused."""
    name, dot, kind = text.rpartition(".")
    kind = kind.removesuffix("_ns")
    if not dot or not name or kind not in KIND_LABELS:
        kinds = ", ".join(f"{k}_ns" for k in KIND_LABELS)
        raise UsageError(f"malformed metric {text!r}: expected PROGRAM.KIND, KIND one of {kinds}; e.g. scan.wall_ns")
    return MetricKey(name, kind)
