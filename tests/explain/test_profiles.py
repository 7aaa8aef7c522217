"""Where a step's run time went: real profiles of two releases read by op kind, each op's own
time."""

import gzip
import json
import shutil
from pathlib import Path

from harness.explain.profiles import (
    ProfileAnswer,
    is_op,
    op_kind,
    read_trace,
    self_times,
)
from harness.metric_names import parse_metric_name
from harness.render.why import profile_lines as profile_lines_found


def profile_lines(answer):
    """The findings' sentences (whether each leads is the why's tests')."""
    return [finding.text for finding in profile_lines_found(answer)]


PROFILES = Path(__file__).parent.parent / "fixtures" / "profiles"


def copied(tmp_path: Path, release: str) -> Path:
    return Path(shutil.copytree(PROFILES / release, tmp_path / release))


def test_a_real_profile_is_read_as_each_op_kind_s_own_time():
    new = read_trace(PROFILES / "0.4.33")
    assert not isinstance(new, str)
    assert dict(new.calls) == {"dot": 20, "tanh": 20, "reduce-window": 20, "reduce": 20, "call": 20}
    assert new.total_ns.most_common(1)[0][0] == "dot"
    assert new.total_ns["call"] < new.total_ns["tanh"], (
        "a call's own time, without the tanh inside it"
    )
    old = read_trace(PROFILES / "0.4.31")
    assert not isinstance(old, str) and set(old.calls) == {"custom-call", "reduce-window", "reduce"}


def test_ops_are_told_from_jax_s_python_annotations_and_named_by_kind():
    assert all(map(is_op, ["dot.3", "reduce-window", "call", "loop_add_fusion.1", "tanh.4.clone"]))
    assert not any(
        map(
            is_op,
            [
                "backend_compile",
                "TfrtCpuExecutable::Execute",
                "$profiler.py:91 start_trace",
                "copy-insertion",
                "layout-assignment",
                "simplification",
            ],
        )
    )
    assert [op_kind(n) for n in ("dot.3", "tanh.4.clone", "custom-call.clone2", "fusion")] == [
        "dot",
        "tanh",
        "custom-call",
        "fusion",
    ]


def test_nested_ops_leave_their_parent_its_own_time():
    threads = {
        1: [(0.0, 100.0, "while"), (10.0, 30.0, "dot"), (50.0, 20.0, "dot"), (200.0, 5.0, "while")]
    }
    found = self_times(threads)
    assert found.total_ns == {"while": 55_000, "dot": 50_000} and found.calls == {
        "while": 2,
        "dot": 2,
    }


def test_the_answer_sets_the_two_releases_side_by_side_most_time_first():
    answer = ProfileAnswer(
        "0.4.31", "0.4.33", read_trace(PROFILES / "0.4.31"), read_trace(PROFILES / "0.4.33")
    )
    [line] = profile_lines(answer)
    assert line.startswith(
        "where the time went, by op (one profiled process each; an op's own time, and how many "
        "ran; 0.4.31 → 0.4.33): custom-call 5.32 ms (20) → none; dot none → 2.12 ms (20);"
    )
    data = answer.data()
    assert data["ops"][1]["dot"] == {"total_ns": 2115124, "calls": 20}  # type: ignore[index]


def test_a_release_without_per_op_events_or_without_a_profile_is_said(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert read_trace(empty) == "the process wrote no profile"
    python_only = tmp_path / "python"
    python_only.mkdir()
    events = [{"ph": "X", "name": "backend_compile", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]
    with gzip.open(python_only / "perfetto_trace.json.gz", "wt") as handle:
        json.dump({"traceEvents": events}, handle)
    assert read_trace(python_only) == "this release records no per-op events on this platform"
    broken = copied(tmp_path, "0.4.33")
    (next(broken.rglob("*.gz"))).write_bytes(b"not gzip")
    assert read_trace(broken) == "its profile could not be read (BadGzipFile)"
    answer = ProfileAnswer(
        "a", "b", "the process wrote no profile", read_trace(PROFILES / "0.4.33")
    )
    assert profile_lines(answer)[0].endswith("(a: the process wrote no profile)")
    assert (
        "custom-call" not in profile_lines(answer)[0]
        and "dot ? → 2.12 ms (20)" in profile_lines(answer)[0]
    )


def test_only_run_time_metrics_are_profiled():
    assert (
        parse_metric_name("two_scans.wall_ns").about_run_time
        and parse_metric_name("process.run_ns").about_run_time
        and parse_metric_name("json.solve_ms").about_run_time
    )
    assert not any(
        parse_metric_name(name).about_run_time
        for name in ("scan.compile_ns", "process.import_ns", "process.peak_rss_bytes")
    )


def test_a_profile_is_not_started_where_the_why_s_budget_would_not_cover_its_profiled_processes():
    """Two profiled processes cost about ten plain ones each (equinox's took 32 s of a why budgeted
    at 31): the kind is left out, said with the command that asks it, never started to overrun."""
    import pytest

    from harness.explain.profiles import PROFILED_COST, OpProfile
    from harness.steps.evidence import OverBudget

    asked = []

    class Sides:
        def afford(self, step, processes, what):
            asked.append(processes)
            raise OverBudget(f"would not cover {what}")

    with pytest.raises(OverBudget, match="its two profiled processes"):
        OpProfile().gather(None, Sides())  # type: ignore[arg-type]
    assert asked == [2 * PROFILED_COST]
