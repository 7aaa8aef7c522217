"""The watch's summary: what to act on first, every target with the smallest change it could have
seen, the loads; what a result said shown as text, never markup; the data valid against
docs/watch.schema.json."""

import dataclasses
import json

import jsonschema
import pytest

from harness.analysis.significance import Thresholds
from harness.metric_names import Criterion, parse_metric_name
from harness.render.watch_summary import WatchSummary, watch_json, watch_markdown
from harness.steps.watch import Finding, SideLoad, TargetWatch
from tests.conftest import REPO

SCHEMA = json.loads((REPO / "docs" / "watch.schema.json").read_text())


def summary(*targets):
    return WatchSummary(
        "0.4.31",
        "0.4.33",
        {"0.4.31": "0.4.31", "0.4.33": "0.4.33"},
        "cpu",
        5,
        20,
        Thresholds(),
        list(targets),
        12.3,
        1.5,
    )


REGRESSED = TargetWatch(
    "script-a",
    "script",
    (
        Finding(
            "regression",
            Criterion.named("json.loop_ms"),
            "json.loop_ms: higher ×2 (worse) since 0.4.33",
            2.0,
        ),
    ),
    (SideLoad("0.4.31", 0, 10), SideLoad("0.4.33", 0, 10)),
    {parse_metric_name("json.loop_ms"): 1.2, parse_metric_name("process.wall_ns"): 1.1},
    "triage-script-a.md",
    (
        "on 0.4.33, --xla_flag=false gives ×1.01 of 0.4.31",
        "reproducer: `repro_<1>.py` (34 lines)\n# not a heading",
    ),
)
LOADED = TargetWatch(
    "scan_sync",
    "case",
    (
        Finding(
            "under load",
            Criterion.named("scan.wall_ns"),
            "fails on <b>new</b> `x` # heading\n- item",
            3.0,
        ),
    ),
    (SideLoad("0.4.31", 2, 10), SideLoad("0.4.33", 0, 10)),
    {parse_metric_name("scan.wall_ns"): float("inf")},
)


def test_a_regression_leads_with_its_line_then_why_then_every_target():
    text = watch_markdown(summary(REGRESSED, TargetWatch("quiet", "case", ())))
    assert text.startswith("# JAX watch: 0.4.33 against 0.4.31\n\n**A regression was confirmed.**")
    regressions, why, table = (
        text.index(h) for h in ("## Regressions", "## Why", "## Every target")
    )
    assert regressions < why < table
    assert "| `script-a` | script | regression | ×1.15 (best ×1.1) |" in text
    assert "| `quiet` | case | no change found | — (the two releases did not both run) |" in text
    assert (
        "No process of either release was measured under load (more than 1.5 other cores busy)."
        in text
    )
    assert "- `script-a`: reproducer: `repro_<1>.py` (34 lines) # not a heading\n" in text, (
        "the why's own markdown (its code spans) kept as the why wrote it, on one line"
    )
    remembered = watch_markdown(summary(dataclasses.replace(REGRESSED, remembered="2026-12-01")))
    assert "## Why" not in remembered, "a remembered target's why is not this run's"


def test_a_side_under_load_is_said_and_what_a_result_said_stays_text():
    text = watch_markdown(summary(LOADED))
    assert text.splitlines()[2] == "**No regression confirmed, but not everything was decided.**"
    assert "## Measured under load: not called a change" in text
    assert "<b>" not in text and "&lt;b&gt;" in text and "\n- item" not in text
    assert "- `scan_sync`: 0.4.31 2 of 10; 0.4.33 0 of 10" in text
    assert "other work kept more than 1.5 cores of the machine busy" in text, (
        "the threshold it was judged by"
    )
    assert "none: too few processes for a verdict" in text


def test_the_data_is_valid_against_the_published_schema():
    data = watch_json(summary(REGRESSED, LOADED))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert data["exit_status"] == 1 and data["targets"][1]["detectable"] == {"scan.wall_ns": None}
    assert data["load_threshold"] == 1.5
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_the_schema_names_every_field_the_summary_writes():
    data = watch_json(summary(REGRESSED))
    assert set(data) == set(SCHEMA["properties"])
    assert set(data["targets"][0]) == set(SCHEMA["$defs"]["target"]["properties"])
    assert set(data["targets"][0]["findings"][0]) == set(SCHEMA["$defs"]["finding"]["properties"])


def test_the_schema_s_kinds_and_outcomes_are_the_code_s():
    from harness.steps import watch

    kinds = {watch.REGRESSION, watch.IMPROVEMENT, watch.UNDER_LOAD, watch.UNDECIDED, watch.BROKEN}
    assert set(SCHEMA["$defs"]["finding"]["properties"]["kind"]["enum"]) == {
        *kinds,
        watch.NOT_MEASURED,
        watch.NOT_APPLICABLE,
        watch.MEASURED_NOTHING,
    }
    assert set(SCHEMA["$defs"]["finding"]["properties"]["kind"]["enum"]) == set(watch.FINDING_KINDS)
    assert SCHEMA["$defs"]["target"]["properties"]["outcome"]["enum"] == list(watch.OUTCOMES)


def test_a_target_that_measured_nothing_fails_the_watch_under_a_headline_of_its_own():
    nothing = TargetWatch(
        "script-pytest-benchmarks",
        "pytest-benchmark",
        (
            Finding(
                "measured nothing",
                None,
                "measured nothing: jax 0.4.31: timed out at 300 s in 5 of 5 processes; jax 0.4.33: "
                "timed out at 300 s in 5 of 5 processes; give each process more time with "
                "--timeout 600",
            ),
        ),
    )
    found = summary(nothing, TargetWatch("quiet", "case", ()))
    text = watch_markdown(found)
    assert found.status == 1 and "**A target measured nothing: the watch failed.**" in text
    assert "## Measured nothing" in text and "--timeout 600" in text
    assert "| measured nothing |" in text
    data = watch_json(found)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert data["targets"][0]["outcome"] == "measured nothing"


def test_a_suite_s_benchmarks_are_each_judged_named_and_the_slowest_leads():
    """Issue 66 #2: the page named no benchmark, and "the smallest change it could have seen:
    ×1.65 (best ×1.05)" mixed the pytest process (its import) with the benchmarks, its best peak
    memory."""
    fast, slow = "bench.test_b_py_test_fast.wall_ns", "bench.test_b_py_test_slow_Newton.wall_ns"
    fast_key, slow_key = parse_metric_name(fast), parse_metric_name(slow)
    suite = TargetWatch(
        "script-pytest-benchmarks",
        "pytest-benchmark",
        (Finding("undecided", Criterion.named(fast), f"{fast}: undecided", 0.8),),
        detectable={
            fast_key: 1.3,
            slow_key: 1.1,
            parse_metric_name("process.wall_ns"): 1.65,
            parse_metric_name("process.peak_rss_bytes"): 1.05,
        },
        medians={fast_key: (2e3, 1.6e3), slow_key: (3e9, 3e9)},
        floor={"process_s": 68.0, "processes_needed": 7, "said": FLOOR, "imports": IMPORTS},
    )
    text = watch_markdown(summary(suite))
    print(text[text.index("## Benchmarks of") :])
    assert f"Its floor, said after its first process of each side: {FLOOR}." in text
    assert (
        "Where its import goes (`python -X importtime`, one extra process a side, not timed): "
        f"jax 0.4.31: {IMPORTS['0.4.31'][0]}; jax 0.4.33: {IMPORTS['0.4.33'][0]}." in text
    )
    assert (
        "| `script-pytest-benchmarks` | pytest-benchmark | undecided | ×1.2 (best ×1.1) |" in text
    )
    assert "the slowest, `bench.test_b_py_test_slow_Newton.wall_ns`, takes 3 s a round" in text
    table = text[text.index("## Benchmarks of") :]
    assert table.index("test_slow_Newton") < table.index("test_fast"), "the slowest first"
    assert f"| `{fast}` | undecided |" in table and f"| `{slow}` | no change found |" in table
    data = watch_json(summary(suite))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert data["targets"][0]["medians"][slow] == [3e9, 3e9]
    assert data["targets"][0]["smallest_change"] == pytest.approx(1.2)
    assert data["targets"][0]["floor"]["processes_needed"] == 7, "the floor kept in the JSON"


FLOOR = (
    "a process costs 68 s: import 61 s, collection 5 s, benchmarks 1.7 s; a verdict at ×1.05 needs "
    "at least 7 a side: about 15 min 52 s"
)
IMPORTS = {
    "0.4.31": [
        "`import sif2jax` 56 s, of it `sif2jax.cutest._constrained_minimisation.cleuven7` 45 s"
    ],
    "0.4.33": [
        "`import sif2jax` 55 s, of it `sif2jax.cutest._constrained_minimisation.cleuven7` 44 s"
    ],
}
