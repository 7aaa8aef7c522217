"""``--json FILE``: the models the pages are rendered from, each document naming its ``schema`` and
``schema_version``; a number that is not one is null, never NaN (docs/results.md)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

from harness.analysis.report_model import ReportModel
from harness.analysis.set_comparison import SetComparison
from harness.analysis.significance import Comparison, CostDetail, Thresholds

OUTPUT_VERSION = 1


def document(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"schema": f"jax-repro-harness/{kind}", "schema_version": OUTPUT_VERSION, **body}


def dumps(data: dict[str, Any]) -> str:
    finite = leaves_mapped(data, lambda leaf: number(leaf) if isinstance(leaf, float) else leaf)
    return json.dumps(finite, indent=1, allow_nan=False) + "\n"


def leaves_mapped(data: Any, leaf: Callable[[Any], Any]) -> Any:
    """``leaf`` applied to every value that is neither a list nor an object, keys kept."""
    if isinstance(data, dict):
        return {key: leaves_mapped(value, leaf) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [leaves_mapped(value, leaf) for value in data]
    return leaf(data)


def number(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else value


def comparison_json(comparison: Comparison | None) -> dict[str, Any] | None:
    if comparison is None:
        return None
    # A value's, a presence's, an ending's: no ratio, interval, margin nor rank test (null).
    cost = comparison.cost or CostDetail(math.nan)
    return {
        "ratio": number(cost.ratio),
        "ci_low": number(cost.ci_low),
        "ci_high": number(cost.ci_high),
        "p_value": number(comparison.p_value),
        "level": number(comparison.level),
        "verdict": comparison.verdict,
        # The verdict in words with the change the data still allow ("within ±9%"), that margin as a
        # factor, and the rank test's p where the sides were measured together (docs/statistics.md).
        "said": comparison.said,
        "margin": number(cost.margin),
        "rank_p": number(cost.rank_p),
        # Every process of each side gave one value: judged exactly, no test (``processes``).
        "constant": comparison.constant,
        # What kind of observation it is, each judged by its own rule (docs/scripts.md, "Shapes"):
        # cost, value, presence, ending or claim; a counted one's counts, [[k, n] A, [k, n] B].
        "shape": str(comparison.shape),
        "counts": [list(side) for side in comparison.counts] if comparison.counts else None,
        # a value's sides as printed ("converged", NaN), an ending's in words; else null
        "sides": list(comparison.sides) if comparison.sides is not None else None,
        "median_baseline_ns": number(comparison.baseline.median),
        "median_ns": number(comparison.candidate.median),
        "processes": list(comparison.processes),
        "test": comparison.test,
        "invocation_spread": comparison.invocation_spread,
        "flags": list(comparison.flags),
    }


def thresholds_json(thresholds: Thresholds) -> dict[str, Any]:
    return {
        "factor": thresholds.factor,
        "alpha": thresholds.alpha,
        "confidence": thresholds.confidence,
        "invocation_spread": thresholds.invocation_spread,
        "higher_is_better": list(thresholds.higher_is_better),
        "values": list(thresholds.values),
        "costs": list(thresholds.costs),
    }


def set_comparison_json(model: SetComparison) -> dict[str, Any]:
    pairs = [
        {
            "case": pair.a.result.case,
            "sizes": pair.a.result.sizes,
            **{
                label: {
                    "release": s.result.release,
                    "profile": s.result.profile,
                    "result": s.path.name,
                }
                for label, s in (("a", pair.a), ("b", pair.b))
            },
            "metrics": [
                {"metric": m.key.metric_name, **(comparison_json(m.comparison) or {})}
                for m in pair.metrics
            ],
            "ending": comparison_json(pair.ending) if pair.ending is not None else None,
            "only_a": [key.metric_name for key in pair.only_a],
            "only_b": [key.metric_name for key in pair.only_b],
            "notes": list(pair.notes),
        }
        for pair in model.pairs
    ]
    return document(
        "comparison",
        {
            "a": model.a.describe(),
            "b": model.b.describe(),
            "thresholds": thresholds_json(model.thresholds),
            "verdicts": dict(sorted(model.verdicts().items())),
            "worse": model.worse(),
            "pairs": pairs,
            "not_compared": list(model.not_compared),
            "broken": list(model.broken),
            "left_out": list(model.left_out),
        },
    )


def report_json(model: ReportModel, thresholds: Thresholds) -> dict[str, Any]:
    claims = [
        {
            "case": line.case,
            "profile": line.profile,
            "backend": line.backend,
            "sizes": line.sizes,
            "by_release": dict(zip(model.claims.releases, line.marks, strict=True)),
            "in_words": line.in_words,
        }
        for line in model.claims.lines
    ]
    figures = [
        {"case": case.case, **dataclasses.asdict(figure)}
        for case in model.cases
        for figure in case.claims.figures
    ]
    timings = [
        {
            "case": t.key.case,
            "profile": t.key.profile,
            "sizes": dict(t.key.sizes),
            "backend": t.key.backend,
            "device_count": t.key.device_count,
            "machine": t.key.machine,
            "baseline": t.comparison.baseline,
            "comparisons": [
                {"release": release, "metric": key.metric_name, **(comparison_json(found) or {})}
                for release, by_key in t.comparison.comparisons.items()
                for key, found in by_key.items()
            ],
        }
        for t in model.timings
    ]
    changes = [
        {
            "case": change.key.case,
            "profile": change.key.profile,
            "metric": change.metric.metric_name,
            "baseline": change.baseline,
            "release": change.release,
            **(comparison_json(change.comparison) or {}),
        }
        for change in model.changes
    ]
    return document(
        "report",
        {
            "releases": list(model.order),
            "thresholds": thresholds_json(thresholds),
            "changes": changes,
            "claims": claims,
            "source_figures": figures,
            "timings": timings,
            "unreadable": [problem.path.name for problem in model.problems],
        },
    )
