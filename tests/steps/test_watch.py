"""What a watch reads from a triage over two releases, with fake measurements: findings, outcomes,
the exit status, the smallest change it could have seen, and its memory."""

import dataclasses
import json
import math

import pytest

from harness.analysis.significance import Thresholds
from harness.measure.benchmark_json import CUT_SHORT_NOTE
from harness.metric_names import Criterion, parse_metric_name
from harness.render.triage_words import answered
from harness.steps.probes import Probe
from harness.steps.triage import triage
from harness.steps.watch import (
    OPEN,
    Finding,
    Memory,
    SideLoad,
    TargetWatch,
    blind,
    decided_in_confirmations,
    detectable,
    exit_status,
    findings,
    first_round_open,
    loaded_processes,
    memory_key,
    side_loads,
)
from tests.conftest import SEGFAULT, FakeReleases, FakeScriptReleases
from tests.steps.test_triage import FakeConfirmer


def watched(scales, again=None):
    found = triage(
        list(scales),
        FakeReleases(scales),
        FakeConfirmer(FakeReleases(again or scales)),
        metrics=None,
        with_claim=True,
        thresholds=Thresholds(),
    )
    return found


def test_a_confirmed_slowdown_is_a_regression_in_the_triage_s_words():
    found = watched({"old": 1, "new": 3})
    said = findings(found, answered(found))
    # The fakes' peak memory varies by ±6 %: undecided at ×1.05 (below).
    said = [f for f in said if f.metric != "process.peak_rss_bytes"]
    assert {f.kind for f in said} == {"regression"}
    assert any(f.text.startswith("eager.wall_ns: slower ×3 since new (last good old") for f in said)
    assert all(f.ratio and f.ratio > 2 for f in said)


def test_a_candidate_never_measured_again_is_undecided_never_unchanged():
    """Issue 78: where a time cap leaves no verdict in reach the confirmer measures nothing; each
    candidate then stays open, saying why, instead of vanishing from the findings."""
    why = "measuring stopped at --max-time: a verdict at ×1.05 needs at least 7 a side"

    def at_the_cap(pairs):
        return {(a, b): (Probe(a, None, why), Probe(b, None, why)) for a, b in pairs}

    found = triage(
        ["old", "new"],
        FakeReleases({"old": 1, "new": 3}),
        at_the_cap,
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    said = [f for f in findings(found) if f.metric == "eager.wall_ns"]
    assert [f.kind for f in said] == ["undecided"], said
    assert said[0].text.startswith("eager.wall_ns old → new: undecided (not measured again: ")
    assert why in said[0].text
    assert TargetWatch("t", "script", tuple(said)).outcome == "undecided"


class Scattered(FakeScriptReleases):
    """A script whose ``process.trace_ns`` is ×1.5 on "new" and scatters by ±``scatter``."""

    def __init__(self, scales, scatter):
        super().__init__(scales)
        self.scatter = scatter

    def adjust(self, data, scale):
        super().adjust(data, scale)
        level = 8e6 * (1.5 if self.current == "new" else 1)
        for index, record in enumerate(data["processes"]):
            jitter = 1 + self.scatter * ((index % 3) - 1)
            record["figures"]["process.trace_ns"] = level * jitter


def test_a_metric_the_first_round_left_open_is_read_from_a_confirmation_s_processes():
    """Issue 78: a suite's process times every benchmark, so a candidate's confirmation (9 a side
    on optimistix) measured the open benchmarks too: what it decides is not measured again."""
    scales = {"old": 1, "new": 3}
    found = triage(
        ["old", "new"],
        Scattered(scales, 0.9),
        FakeConfirmer(Scattered(scales, 0.01)),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    trace = parse_metric_name("process.trace_ns")
    still_open = first_round_open(found)
    assert trace in still_open, "±90 %: no verdict on the first round"
    decided = decided_in_confirmations(found, still_open, Thresholds())
    assert decided[trace].verdict == "slower", "±1 % on the candidate's confirmation"
    assert all(c.verdict != "undecided" for c in decided.values())
    assert decided_in_confirmations(watched({"old": 1, "new": 1}), still_open, Thresholds()) == {}


def test_a_script_that_ran_on_the_baseline_and_fails_on_the_release_is_broken():
    [finding] = findings(watched({"old": 1, "new": "failed"}))
    assert finding.kind == "broken" and finding.text.startswith(
        "fails on jax new (ran on old): failed"
    )
    assert "RuntimeError: fake" in finding.text


def test_a_release_that_cannot_be_installed_is_not_measured_not_broken():
    [finding] = findings(watched({"old": 1, "new": None}))
    assert finding.kind == "not measured" and "could not be installed: fake" in finding.text
    [finding] = findings(watched({"old": None, "new": 1}))
    assert finding.kind == "not measured" and "on jax old" in finding.text


def target(*kinds, detected=None):
    return TargetWatch(
        "t",
        "script",
        tuple(Finding(kind, Criterion.named("json.m"), kind) for kind in kinds),
        detectable=detected or {},
    )


@pytest.mark.parametrize(
    ("kinds", "outcome", "status"),
    [
        ((), "unchanged", 0),
        (("improvement",), "improved", 0),
        (("improvement", "undecided"), "undecided", 3),
        (("under load",), "undecided", 3),
        (("not measured",), "undecided", 3),
        (("undecided", "broken"), "regression", 1),
        (("regression", "improvement"), "regression", 1),
    ],
)
def test_the_outcome_and_the_exit_status(kinds, outcome, status):
    assert target(*kinds).outcome == outcome
    assert exit_status([target(), target(*kinds)]) == status


def test_the_smallest_change_seen_passes_the_screen_and_the_confirmation():
    found = watched({"old": 1, "new": 1})
    seen = detectable(found, Thresholds(), processes=5, most=20)
    assert seen and all(ratio >= Thresholds().factor for ratio in seen.values())
    fewer = detectable(found, Thresholds(), processes=5, most=10)
    assert all(fewer[name] >= seen[name] for name in seen), "fewer processes see no smaller change"
    assert blind(seen, 20, Thresholds()) is None
    unseeable = blind(detectable(found, Thresholds(), processes=3, most=6), 6, Thresholds())
    assert unseeable is not None and "give --max-processes 7 or more" in unseeable.text


def test_every_process_of_each_side_is_counted_once():
    loads = side_loads(watched({"old": 1, "new": 3}))
    assert [(load.release, load.loaded) for load in loads] == [("old", 0), ("new", 0)]
    assert all(load.processes == 20 for load in loads), "first round and confirmation, 10 each"


def test_a_watch_is_remembered_under_its_key_and_read_back_whole(tmp_path):
    memory = Memory(tmp_path / "memory")
    watch = TargetWatch(
        "script-x",
        "script",
        (
            Finding(
                "regression",
                Criterion.named("json.loop_ms"),
                "json.loop_ms: higher ×2 (worse)",
                2.0,
            ),
        ),
        (SideLoad("0.4.31", 0, 5),),
        {parse_metric_name("json.loop_ms"): 1.2, parse_metric_name("process.wall_ns"): math.inf},
        "triage-x.md",
        ("why",),
        ("--script", "x.py"),
        {"0.4.31": {"equinox": "0.11.4"}},
    )
    key = memory_key({"pair": ["0.4.31", "0.4.33"]})
    assert memory.recall("script-x", key) is None
    memory.remember(key, {"pair": ["0.4.31", "0.4.33"]}, watch, "2026-12-02 10:00 UTC")
    back = memory.recall("script-x", key)
    assert back == dataclasses.replace(watch, remembered="2026-12-02 10:00 UTC")
    assert memory.recall("script-x", memory_key({"pair": ["0.4.33", "0.4.34"]})) is None


def test_a_memory_file_that_is_not_one_is_measured_again(tmp_path):
    memory = Memory(tmp_path)
    key = memory_key({})
    (tmp_path / f"t-{key[:32]}.json").write_text(json.dumps({"key": key, "watch": {"target": 1}}))
    assert memory.recall("t", key) is None
    (tmp_path / f"t-{key[:32]}.json").write_text("[")
    assert memory.recall("t", key) is None


class SkippingReleases(FakeReleases):
    """Every release's result skipped, as a case needing two devices is on the cpu profile."""

    def __call__(self, release, again=False):
        from pathlib import Path

        from harness.steps.probes import Probe
        from harness.store.results import StoredResult
        from tests.conftest import derive, real_result

        data = derive(
            real_result("async_dispatch-0.12.0.1"),
            release=release,
            status="skipped",
            detail="needs 2 devices, has 1",
        )
        return Probe(release, StoredResult.from_document(Path(f"{release}.json"), data), "fake")


def test_a_target_skipped_on_both_releases_is_not_applicable_not_left_open():
    found = triage(
        ["old", "new"],
        SkippingReleases({"old": 1, "new": 1}),
        FakeConfirmer(SkippingReleases({"old": 1, "new": 1})),
        metrics=None,
        with_claim=True,
        thresholds=Thresholds(),
    )
    [finding] = findings(found)
    assert finding.kind == "not applicable" and "needs 2 devices" in finding.text
    assert finding.kind not in OPEN


def test_a_link_planted_at_a_memory_file_is_neither_read_nor_written_through(tmp_path):
    # The rule of docs/results.md: a link where a file goes is replaced by the file, never followed.
    memory, outside = Memory(tmp_path / "memory"), tmp_path / "outside.json"
    memory.folder.mkdir()
    key = memory_key({"pair": ["0.4.31", "0.4.33"]})
    watch = TargetWatch(
        "script-x", "script", (), (), {}, "triage-x.md", (), ("--script", "x.py"), {}
    )
    outside.write_text(json.dumps({"key": key, "watch": watch.to_json(), "watched_at": "then"}))
    planted = memory.folder / f"script-x-{key[:32]}.json"
    planted.symlink_to(outside)
    assert memory.recall("script-x", key) is None, "a link is not a memory: measured again"
    memory.remember(key, {}, watch, "now")
    assert not planted.is_symlink() and json.loads(planted.read_text())["watched_at"] == "now"
    assert json.loads(outside.read_text())["watched_at"] == "then", "never written through"


PLANTED = [
    ("watched_at", '2026-12-01 <img src=x onerror="alert(1)">'),
    ("watched_at", "\x1b]0;owned\x07\x1b[2J"),
    ("page", "javascript:alert(1)"),
    ("page", "x.md) [click](https://example.com"),
    ("page", "../../elsewhere.md"),
    ("kind", "<b>case</b>"),
    ("target", "script-x\x1b[31m"),
    ("loads", [{"release": "<img src=x>", "loaded": 0, "processes": 8}]),
    ("loads", [{"release": "0.4.31", "loaded": -1, "processes": 8}]),
    ("findings", [{"kind": "<script>", "metric": "", "text": "x", "ratio": None}]),
    ("findings", [{"kind": "regression", "metric": "", "text": "x", "ratio": -2.0}]),
    ("findings", [{"kind": "regression", "metric": "", "text": "\ud800", "ratio": 2.0}]),
    ("detectable", {"eager.wall_ns": 0}),
    ("libraries", {"<img src=x>": {}}),
    ("floor", {"process_s": "68", "said": "x"}),
    ("floor", {"process_s": -1.0, "said": "x"}),
    ("floor", {"said": 7}),
    ("floor", {"said": "\ud800"}),
    ("floor", {"said": "x", "imports": {"0.4.31": ["<img src=x onerror=alert(1)>"]}}),
    ("floor", {"said": "x", "imports": {"<b>": []}}),
]


def slower_watch(**extra):
    """A script's watch that found ``json.t`` slower ×3 on 0.4.31, as a memory keeps it."""
    return TargetWatch(
        "script-x",
        "script",
        (Finding("regression", Criterion.named("json.t"), "json.t: slower ×3", 3.0),),
        (SideLoad("0.4.31", 0, 8),),
        {parse_metric_name("json.t"): 1.2},
        "triage-x.md",
        **extra,
    )


@pytest.mark.parametrize(("field", "planted"), PLANTED)
def test_a_memory_file_whose_fields_no_watch_writes_is_measured_again(tmp_path, field, planted):
    """Issue 57 #7: each field of a remembered watch reaches watch.md, stdout or watch.json (its
    schema)."""
    memory = Memory(tmp_path)
    imports = {
        "0.4.31": ["`import sif2jax` 56 s, of it `sif2jax.cutest` 54 s", "`import jax` 3.1 s"]
    }
    floor = {"process_s": 68.0, "processes_needed": 7, "said": "a process", "imports": imports}
    watch = slower_watch(libraries={"0.4.31": {"numpy": "2.0.1"}}, floor=floor)
    key = memory_key({"pair": ["0.4.31", "0.4.33"]})
    memory.remember(key, {}, watch, "2026-12-02 10:00 UTC")
    recalled = memory.recall("script-x", key)
    assert recalled is not None and recalled.floor == floor
    [path] = tmp_path.iterdir()
    document = json.loads(path.read_text())
    if field == "watched_at":
        document["watched_at"] = planted
    else:
        document["watch"][field] = planted
    path.write_text(json.dumps(document))
    assert memory.recall("script-x", key) is None


class UninstallableRelease(SkippingReleases):
    """The newer release stored not installable, its detail the resolver's line, as the environments
    write it."""

    def __call__(self, release, again=False):
        from pathlib import Path

        from harness.steps.probes import Probe
        from harness.store.results import StoredResult
        from tests.conftest import derive, real_result

        if release == "old":
            return FakeReleases.__call__(self, release, again)
        data = derive(
            real_result("async_dispatch-0.12.0.1"),
            release=release,
            status="not installable",
            detail="not installable (the newest versions): jaxlib>=0.12.1 has no wheel for cp312",
        )
        return Probe(release, StoredResult.from_document(Path(f"{release}.json"), data), "fake")


def test_a_release_stored_not_installable_is_said_once_not_not_installable_twice():
    """Issue 57 #10: "not installable: not installable (the newest versions): …"."""
    scales = {"old": 1, "new": 1}
    found = triage(
        ["old", "new"],
        UninstallableRelease(scales),
        FakeConfirmer(UninstallableRelease(scales)),
        metrics=None,
        with_claim=True,
        thresholds=Thresholds(),
    )
    [finding] = findings(found)
    assert finding.text == (
        "could not be measured on jax new (ran on old): not installable (the newest versions): "
        "jaxlib>=0.12.1 has no wheel for cp312"
    )


def test_a_release_that_crashes_in_every_process_is_a_regression_with_where_it_died_said_once():
    from harness.steps.watch import first_regression

    found = watched({"old": 1, "new": SEGFAULT})
    [finding] = findings(found, answered(found))
    assert finding.kind == "regression" and finding.metric == "process.end"
    assert finding.text.startswith("status: crashes since new: SIGSEGV (exit 139) in 10 of 10")
    target = TargetWatch("t", "script", (finding,))
    assert first_regression(target) is None, "no metric to draft a timing issue about"
    flaky = watched({"old": 1, "new": {**SEGFAULT, "processes": 1}})
    [broken] = [f for f in findings(flaky, answered(flaky)) if f.metric == "process.end"]
    assert broken.kind == "broken" and "undecided" in broken.text, (
        "a new ending in one process of many: no confirmed step, but red until the counts say "
        "it is no change"
    )


class GoneOnNew(FakeScriptReleases):
    """A script whose reporting path broke on ``new``: it exits ok without printing
    ``json.loop_ms``; and whose draw ``json.draw`` changed there."""

    def adjust(self, data: dict, scale: float) -> None:
        super().adjust(data, scale)
        for record in data["processes"]:
            record["figures"]["json.draw"] = -0.49 if data["release"] == "new" else 0.25
            if data["release"] == "new":
                record["figures"].pop("json.loop_ms", None)


def test_a_metric_gone_and_a_value_changed_are_each_a_regression_and_the_watch_is_red():
    found = triage(
        ["old", "new"],
        GoneOnNew({"old": 1, "new": 1}),
        FakeConfirmer(GoneOnNew({"old": 1, "new": 1})),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    said = {f.metric: f for f in findings(found, answered(found))}
    gone, draw = said["json.loop_ms"], said["json.draw"]
    assert gone.kind == draw.kind == "regression"
    assert gone.text.startswith("json.loop_ms: printed on old in ")
    assert ", missing on new in " in gone.text
    assert draw.text.startswith("json.draw: changed from 0.25 to -0.49 in every process since new")
    assert exit_status([TargetWatch("t", "script", tuple(said.values()))]) == 1


class GoneOnceOnNew(FakeScriptReleases):
    """A script that leaves ``json.loop_ms`` out of one process of ``new`` only."""

    def adjust(self, data: dict, scale: float) -> None:
        super().adjust(data, scale)
        if data["release"] == "new":
            data["processes"][0]["figures"].pop("json.loop_ms", None)


def test_a_number_gone_from_one_process_is_red_until_its_counts_say_it_is_no_change():
    releases = GoneOnceOnNew({"old": 1, "new": 1})
    found = triage(
        ["old", "new"],
        releases,
        FakeConfirmer(GoneOnceOnNew({"old": 1, "new": 1})),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    [gone] = [f for f in findings(found, answered(found)) if f.metric == "json.loop_ms"]
    assert gone.kind == "broken" and "undecided" in gone.text, gone
    assert exit_status([TargetWatch("t", "script", (gone,))]) == 1, "never green"


TIMED_OUT = {"status": "timeout", "how": "timeout", "timeout_s": 300.0}
FAILED = {"status": "failed", "how": "exit", "exit_status": 1}


@pytest.mark.parametrize(
    ("ends", "said"),
    [
        ({"old": TIMED_OUT, "new": TIMED_OUT}, ["timed out at 300 s in 10 of 10", "--timeout 600"]),
        ({"old": FAILED, "new": FAILED}, ["jax old: exit 1 in 10 of 10", "jax new: exit 1"]),
    ],
)
def test_a_target_that_measured_nothing_fails_the_watch_and_says_both_releases(ends, said):
    """Issue 66 #3: with every process timed out, the summary named only the baseline, did not say
    to raise --timeout, and exited 3: a weekly job that warns for ever and measures nothing."""
    [finding] = findings(watched(ends))
    assert finding.kind == "measured nothing", finding
    assert "jax old:" in finding.text and "jax new:" in finding.text
    assert all(words in finding.text for words in said), finding.text
    watched_target = TargetWatch("t", "pytest-benchmark", (finding,))
    assert watched_target.outcome == "measured nothing" and not watched_target.settled
    assert exit_status([watched_target]) == 1


CUT_3_OF_12 = {"ran": 3, "planned": 12}


class CutShortReleases(FakeReleases):
    """Each process's suite stopped before its time-out, 3 of its 12 benchmarks measured."""

    def adjust(self, data, scale):
        for process in data["processes"]:
            # the counts are read from the record, never from the note's words
            process["notes"] = [f"{CUT_SHORT_NOTE}: words the watch does not read"]
            process["script"] = {**(process.get("script") or {}), "cut_short": CUT_3_OF_12}


def test_a_suite_cut_short_before_its_time_out_keeps_what_it_measured_and_asks_for_more_time():
    """Issue 66 #3: pytest-benchmark wrote its numbers at the end, so a process cut short kept
    none. What finished is judged; what did not is said, with the time that would let it finish."""
    scales = {"old": 1, "new": 3}
    found = triage(
        list(scales),
        CutShortReleases(scales),
        FakeConfirmer(CutShortReleases(scales)),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    said = findings(found, answered(found))
    assert "regression" in {f.kind for f in said}, "what finished is judged"
    [cut] = [f for f in said if f.kind == "not measured"]
    assert "10 of jax old and 10 of jax new stopped before it" in cut.text, cut.text
    assert "(stopped after 3 of 12 benchmarks, the benchmarks after not measured there)" in cut.text
    assert "--timeout 1440" in cut.text, "four times the benchmarks, with a margin: 1,440 s"


def test_a_process_that_timed_out_under_load_counts_in_the_load_section_not_in_a_comparison():
    """The Load section says every process that ran under load; a step's "measured under load"
    reads only those whose figures were compared (they finished ok)."""
    from tests.conftest import as_stored, derive, died, real_result

    data = derive(real_result("async_dispatch-0.12.0.1"), processes=4)
    died(data, {"status": "timeout", "how": "timeout", "processes": 1})
    data["processes"][0]["load"] = {"attempts": 1, "loaded": True, "other_cpu_cores": 1.2}
    stored = as_stored(data)
    assert loaded_processes(stored) == (0, 3)
    assert loaded_processes(stored, every=True) == (1, 4)


def test_a_tampered_memory_s_finding_is_recalled_redacted_and_a_token_s_metric_not_at_all(
    tmp_path,
):
    token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
    memory = Memory(tmp_path)
    watch = slower_watch(why=("comes with jax",))
    key = memory_key({"pair": ["0.4.31", "0.4.33"]})
    memory.remember(key, {}, watch, "2026-12-02 10:00 UTC")
    [path] = tmp_path.iterdir()
    document = json.loads(path.read_text())
    document["watch"]["findings"][0]["text"] = f"json.t: slower ×3 (Authorization: {token})"
    document["watch"]["why"] = [f"runs with TOKEN={token}"]
    path.write_text(json.dumps(document))
    back = memory.recall("script-x", key)
    assert back is not None and token not in repr(back)
    assert back.findings[0].text == "json.t: slower ×3 (Authorization: <redacted>"
    assert back.why == ("runs with TOKEN=<redacted>",)
    document["watch"]["findings"][0]["metric"] = f"json.{token}"
    path.write_text(json.dumps(document))
    assert memory.recall("script-x", key) is None, "a metric named like a token: measured again"


@pytest.mark.parametrize("new", [SEGFAULT, {**SEGFAULT, "processes": 9}])
def test_an_ending_found_is_remembered_without_a_ratio_and_recalled(tmp_path, new):
    """R8-8: a step of how processes end has no ratio; the memory keeps it as null (never NaN, which
    recall refuses: every watch would measure it and draft it again)."""
    found = watched({"old": 1, "new": new})
    said = [f for f in findings(found, answered(found)) if f.metric == "process.end"]
    assert said and all(f.ratio is None for f in said), said
    watch = TargetWatch("script-x", "script", tuple(said), page="triage-x.md")
    memory, key = Memory(tmp_path), memory_key({"pair": ["old", "new"]})
    memory.remember(key, {}, watch, "2026-12-02 10:00 UTC")
    assert "NaN" not in next(tmp_path.iterdir()).read_text()
    back = memory.recall("script-x", key)
    assert back is not None and back.findings == watch.findings


def test_a_crash_in_one_process_of_the_first_round_not_seen_again_is_red_in_watch_md():
    """R8-12: SIGSEGV in 1 of 10 processes of the release in the first round, none when measured
    again: undecided counts of a new ending, said (red), never left out of the summary."""
    from harness.render.watch_summary import WatchSummary, watch_markdown

    found = watched({"old": 1, "new": {**SEGFAULT, "processes": 1}}, {"old": 1, "new": 1})
    [crash] = [f for f in findings(found, answered(found)) if f.metric == "process.end"]
    assert crash.kind == "broken" and crash.ratio is None, crash
    assert crash.text.startswith(
        "process.end old → new: ok → SIGSEGV (exit 139) in the first round "
    )
    assert "1 of 10 on B" in crash.text and "undecided" in crash.text
    watch = TargetWatch("script-x", "script", (crash,), page="triage-x.md")
    summary = WatchSummary("old", "new", {}, "cpu", 5, 20, Thresholds(), [watch], 1.0, 1.5)
    page = watch_markdown(summary)
    assert "## Regressions" in page and "SIGSEGV (exit 139) in the first round" in page
