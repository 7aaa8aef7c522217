"""Robust summaries of raw timing samples (nanoseconds)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    q1: float
    q3: float
    minimum: float
    maximum: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def relative_iqr(self) -> float:
        """Spread as a fraction of the median; the report flags noisy metrics by it."""
        return self.iqr / self.median if self.median else 0.0

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "iqr": self.iqr}


def summarize(samples: Sequence[float]) -> Summary:
    if not samples:
        raise ValueError("cannot summarize an empty sample")
    ordered = sorted(samples)
    if len(ordered) == 1:
        q1 = q3 = ordered[0]
    else:
        # "inclusive" keeps quartiles inside the observed range for small n.
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    median = statistics.median(ordered)
    return Summary(len(ordered), median, q1, q3, minimum=ordered[0], maximum=ordered[-1])
