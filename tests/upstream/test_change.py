"""The change a draft is about: from a stored bisect answer, --good/--bad and stored results, or the
script's output."""

import dataclasses
import json
import os

import pytest

from harness.analysis.metrics import ProcessSamples, compare_metric
from harness.analysis.significance import Thresholds, Verdict
from harness.findings import Finding, FollowUp
from harness.metric_names import Criterion, MetricKey, parse_metric_name
from harness.store.results import StoredResult
from harness.upstream.change import (
    MAX_ANSWER_BYTES,
    MAX_WORKAROUND_CHARS,
    BisectAnswer,
    Change,
    answer_ends,
    change_from,
    ending_between,
    newest_result,
    read_bisect_answers,
    read_steps,
    title,
    triage_steps,
    with_script_figures,
    workaround_of,
)
from tests.conftest import FIXTURES, stored_in, with_processes

from ..conftest import SEGFAULT, as_stored, derive, died, real_result

STORED_SIZES = {"N": 100, "M": 500}  # the fixtures' results of scan_sync on 0.4.26 and 0.12.0.1
WALL = MetricKey("two_scans", "wall")


def stored(tmp_path=None):
    """The two real results of one interleaved run (5 processes each); with ``tmp_path``, copies
    whose processes are repeated to 10 each (``with_processes``), enough for the rank guard."""
    folders = (FIXTURES / "results", FIXTURES / "issue" / "results")
    if tmp_path is None:
        return stored_in(*folders)
    for folder in folders:
        for path in folder.glob("scan_sync-*.json"):
            grown = with_processes(json.loads(path.read_text()))
            (tmp_path / path.name).write_text(json.dumps(grown))
    return stored_in(tmp_path)


def metric_answer(**changes):
    data = {
        "case": "scan_sync",
        "sizes": {"N": 600, "M": 2},
        "profile": "cpu",
        "criterion": "metric",
        "metric": "two_scans.wall_ns",
        "last_good": "0.4.31",
        "first_bad": "0.4.33",
        "answer": "first bad 0.4.33, last good 0.4.31",
        "created_at": "2026-11-30T10:00:00+00:00",
        "probes": [
            {
                "release": "0.4.33",
                "verdict": "bad",
                "median_ns": 2.9e8,
                "vs_good": {"ratio": 1.32, "p_value": 1e-4},
            },
            {
                "release": "0.4.31",
                "verdict": "good",
                "median_ns": 2.2e8,
                "vs_good": None,
                "vs_bad": None,
            },
        ],
    }
    return BisectAnswer("bisect-scan_sync-0.4.31-0.4.33-wall.json", data | changes)


def test_bisect_answers_are_read_by_case_name_through_one_function(tmp_path):
    (tmp_path / "bisect-scan_sync.json").write_text('{"answer": "a"}')
    (tmp_path / "bisect-scan_sync-0.4.31-0.4.33-k1.json").write_text('{"answer": "b"}')
    (tmp_path / "bisect-scan_sync_other.json").write_text('{"answer": "another case"}')
    (tmp_path / "bisect-scan_sync-broken.json").write_text("{")
    found = read_bisect_answers(tmp_path, "scan_sync")
    assert [b.name for b in found] == [
        "bisect-scan_sync.json",
        "bisect-scan_sync-0.4.31-0.4.33-k1.json",
        "bisect-scan_sync-broken.json",
    ]
    assert found[1].data == {"answer": "b"} and found[2].data is None and found[2].problem
    assert read_bisect_answers(tmp_path, "async_dispatch") == []


def test_a_metric_bisect_gives_the_releases_figures_and_probes_in_release_order():
    change = change_from(
        [metric_answer()], [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu"
    )
    assert change is not None
    assert (change.metric, change.last_good, change.first_bad) == (WALL, "0.4.31", "0.4.33")
    assert (change.before_ns, change.after_ns) == (2.2e8, 2.9e8)
    assert [p.release for p in change.probes] == ["0.4.31", "0.4.33"]
    assert change.probes[1].vs_good == "×1.32, p=0.0001" and change.probes[0].vs_bad == "–"
    assert change.source == "`bisect-scan_sync-0.4.31-0.4.33-wall.json`"


def test_answers_of_other_sizes_profiles_or_cases_and_broken_ones_are_not_quoted():
    answers = [
        metric_answer(sizes={"N": 16, "M": 3}),
        metric_answer(profile="cpu8"),
        metric_answer(case="async_dispatch"),
        BisectAnswer("bisect-scan_sync.json", None, "not JSON"),
        BisectAnswer("bisect-scan_sync-x.json", ["0.4.31", "0.4.33"]),
        metric_answer(last_good=None),
    ]
    assert (
        change_from(answers, [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu") is None
    )


def test_the_newest_answer_wins_and_good_bad_pick_their_own_range():
    older = metric_answer(
        created_at="2026-01-01T00:00:00+00:00", last_good="0.4.26", first_bad="0.4.30"
    )
    answers = [metric_answer(), older]
    sizes = {"N": 600, "M": 2}
    assert (
        change_from(answers, [], case="scan_sync", sizes=sizes, profile="cpu").first_bad == "0.4.33"
    )
    picked = change_from(
        answers, [], case="scan_sync", sizes=sizes, profile="cpu", good="0.4.26", bad="0.4.30"
    )
    assert (picked.last_good, picked.first_bad, picked.source) == (
        "0.4.26",
        "0.4.30",
        older.name.join("``"),
    )
    unknown = change_from(
        answers, [], case="scan_sync", sizes=sizes, profile="cpu", good="0.4.35", bad="0.5.0"
    )
    assert (unknown.last_good, unknown.first_bad, unknown.metric, unknown.source) == (
        "0.4.35",
        "0.5.0",
        None,
        "",
    )


def test_a_fix_bisects_last_broken_and_first_fixed_release_are_the_changes_two_releases():
    fix = metric_answer(last_good=None, first_bad=None, last_broken="0.4.31", first_fixed="0.4.33")
    fix.data.pop("last_good"), fix.data.pop("first_bad")
    change = change_from([fix], [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu")
    assert (change.last_good, change.first_bad) == ("0.4.31", "0.4.33")
    assert (change.before_ns, change.after_ns) == (2.2e8, 2.9e8)


def test_a_claim_bisect_quotes_the_metric_that_slowed_down_most_in_the_stored_results(tmp_path):
    claim = metric_answer(
        sizes=STORED_SIZES, criterion="claim", metric=None, last_good="0.4.26", first_bad="0.12.0.1"
    )
    change = change_from(
        [claim], stored(tmp_path), case="scan_sync", sizes=STORED_SIZES, profile="cpu"
    )
    # two_scans dispatch fell from 143 ms to 2.14 ms (×0.015), but what got slower comes first.
    assert change.metric is not None
    assert change.ratio is not None and change.ratio > 1, (change.metric, change.ratio)
    faster_only = change_from(
        [claim],
        stored(),
        case="scan_sync",
        sizes=STORED_SIZES,
        profile="cpu",
        metric=MetricKey("two_scans", "dispatch"),
    )
    assert faster_only.before_ns == pytest.approx(
        143e6, rel=0.01
    ) and faster_only.after_ns == pytest.approx(2.14e6, rel=0.01)


def test_figures_missing_from_stored_results_come_from_the_short_scripts_output():
    change = Change(None, "0.4.31", "0.4.33", source="--good/--bad")
    outputs = {
        "0.4.31": {("two_scans", "dispatch_ns"): 2.0e8, ("two_scans", "wall_ns"): 2.0e8},
        "0.4.33": {("two_scans", "dispatch_ns"): 2.0e6, ("two_scans", "wall_ns"): 3.0e8},
    }
    filled = with_script_figures(change, outputs)
    assert filled.metric == MetricKey("two_scans", "dispatch") and filled.ratio == pytest.approx(
        0.01
    )
    named = with_script_figures(Change(WALL, "0.4.31", "0.4.33"), outputs)
    assert (named.before_ns, named.after_ns) == (2.0e8, 3.0e8)
    assert with_script_figures(change, {}) == change


def test_the_title_states_what_changed_by_how_much_and_since_when():
    slower = Change(WALL, "0.4.31", "0.4.33", 2.18e8, 2.89e8)
    assert (
        title(slower, "Scans return early", "cpu")
        == "`two_scans` wall ×1.33 slower since jax 0.4.33 (218 ms → 289 ms) on CPU"
    )
    faster = Change(MetricKey("two_scans", "dispatch"), "0.4.31", "0.4.33", 2.18e8, 3.7e6)
    assert (
        title(faster, "x", "gpu")
        == "`two_scans` dispatch ×58.9 faster since jax 0.4.33 (218 ms → 3.7 ms) on GPU"
    )
    assert title(None, "Scans return early", "cpu") == "Scans return early (jax, CPU)"


def test_the_fixture_answer_has_the_stored_shape():
    data = json.loads((FIXTURES / "issue" / "bisect-scan_sync.json").read_text())
    assert {"case", "sizes", "profile", "last_good", "first_bad"} <= set(data)


def test_stored_figures_come_with_every_metric_s_comparison_judged_once(tmp_path):
    """The page formats what the change carries: the metric's comparison and every other metric's,
    each by its own rule, judged here and never again by a renderer."""
    claim = metric_answer(
        sizes=STORED_SIZES, criterion="claim", metric=None, last_good="0.4.26", first_bad="0.12.0.1"
    )
    dispatch = MetricKey("two_scans", "dispatch")
    where = {"case": "scan_sync", "sizes": STORED_SIZES, "profile": "cpu", "metric": dispatch}
    as_run = change_from([claim], stored(), **where)
    assert as_run.compared is not None and as_run.compared.processes == (5, 5)
    assert as_run.compared.verdict is Verdict.UNDECIDED and as_run.significant is False, (
        "×0.015 over 5 and 5 processes measured together: the ranks cannot go below 0.0079"
    )
    change = change_from([claim], stored(tmp_path), **where)
    assert change.compared is not None and change.compared.verdict is Verdict.FASTER
    assert change.compared.processes == (10, 10) and change.significant is True
    assert MetricKey("two_scans", "wall") in change.comparisons, "the other metrics, judged too"


def test_a_change_the_stored_runs_do_not_tell_from_noise_is_titled_so():
    unsettled = Change(WALL, "0.4.31", "0.4.33", 2.87e8, 2.38e8, significant=False)
    assert (
        title(unsettled, "x", "cpu")
        == "`two_scans` wall 287 ms → 238 ms from jax 0.4.31 to 0.4.33, within noise, on CPU"
    )


def test_a_hostile_bisect_answer_is_named_with_its_problem_not_raised(tmp_path):
    (tmp_path / "bisect-scan_sync-deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "bisect-scan_sync-digits.json").write_text('{"answer": ' + "9" * 5000 + "}")
    with (tmp_path / "bisect-scan_sync-sparse.json").open("wb") as sparse:
        sparse.truncate(MAX_ANSWER_BYTES + 1)  # no disk used, but more than an answer may be
    # read whole, it would hang the draft forever
    os.mkfifo(tmp_path / "bisect-scan_sync-fifo.json")
    (tmp_path / "bisect-scan_sync-link.json").symlink_to("/dev/zero")
    found = {b.name: b for b in read_bisect_answers(tmp_path, "scan_sync")}
    assert all(b.data is None and b.problem for b in found.values()) and len(found) == 5
    assert "nested deeper than" in found["bisect-scan_sync-deep.json"].problem
    assert "digits" in found["bisect-scan_sync-digits.json"].problem
    assert "too large" in found["bisect-scan_sync-sparse.json"].problem
    assert "not a regular file" in found["bisect-scan_sync-fifo.json"].problem
    assert "a link" in found["bisect-scan_sync-link.json"].problem


WHY = ["on 0.4.33, XLA_FLAGS=--xla_cpu_use_thunk_runtime=false gives ×1.02 of 0.4.31: a workaround"]


@pytest.mark.parametrize(
    ("folder", "kept"),
    [
        ("bisect-scan_sync-0.4.31-0.4.33-two_scans.wall_ns-N.600+M.2-cpu-compiled/", True),
        ("../elsewhere-compiled/", False),
        ("/etc/x-compiled/", False),
        ("a/b-compiled/", False),
        ("x..y-compiled/", False),
        (["list"], False),
    ],
)
def test_a_bisect_s_why_is_quoted_and_its_dumps_folder_kept_only_as_a_plain_name(folder, kept):
    compiled = [{"before": "0.4.31", "after": "0.4.33", "folder": folder, "problem": ""}]
    answer = metric_answer(why=[*WHY, 7], compiled=compiled)
    change = change_from([answer], [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu")
    assert change is not None and change.why == tuple(map(Finding, WHY)), (
        "lines that are not text are dropped; an older answer's sentences lead none"
    )
    assert change.dumps == (folder if kept else "")


def test_a_bisect_s_findings_are_read_as_data_with_its_run_s_thresholds():
    findings = [
        {"text": WHY[0], "follow_ups": [], "leads": True},
        {"text": "defaults that changed", "follow_ups": [{"purpose": "p", "command": "nox -s x"}]},
        "a plain sentence",
        {"text": 7},
    ]
    thresholds = {"factor": 1.2, "alpha": 0.01, "confidence": "x", "higher_is_better": ["json.f"]}
    answer = metric_answer(why=["ignored: findings are read"], findings=findings)
    answer.data["thresholds"] = thresholds
    change = change_from([answer], [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu")
    assert change is not None
    assert change.why == (
        Finding(WHY[0], leads=True),
        Finding("defaults that changed", (FollowUp("p", "nox -s x"),)),
        Finding("a plain sentence"),
    )
    rule = change.thresholds
    assert (rule.factor, rule.alpha, rule.higher_is_better) == (1.2, 0.01, ("json.f",))
    assert rule.confidence == Thresholds().confidence, "what is not a number is left as it was"


def test_dumps_of_another_step_or_that_failed_are_not_the_change_s():
    for compiled in (
        [{"before": "0.4.30", "after": "0.4.33", "folder": "s-compiled/", "problem": ""}],
        [
            {
                "before": "0.4.31",
                "after": "0.4.33",
                "folder": "s-compiled/",
                "problem": "XLA wrote no dump",
            }
        ],
    ):
        answer = metric_answer(compiled=compiled)
        change = change_from(
            [answer], [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu"
        )
        assert change is not None and change.dumps == ""


def reproducer_entry(**changes):
    entry = {
        "before": "0.4.31",
        "after": "0.4.33",
        "folder": "bisect-x-reproducer/",
        "script": "repro_0123456789.py",
        "exported_on": "0.4.31",
        "lines": 34,
        "measured": {
            "two_scans.wall_ns": {"counterpart": "json.run_ms", "verdict": "slower", "ratio": 1.3}
        },
    }
    return entry | changes


@pytest.mark.parametrize(
    ("entry", "kept"),
    [
        (reproducer_entry(), True),
        (reproducer_entry(folder="../x-reproducer/"), False),
        (reproducer_entry(script="../../etc/passwd"), False),
        (reproducer_entry(before="0.4.30"), False),
        ("text", False),
    ],
)
def test_a_reproducer_is_the_change_s_only_by_plain_names_of_its_own_step(entry, kept):
    answer = metric_answer(reproducer=[entry])
    change = change_from([answer], [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu")
    assert change is not None and (change.reproducer is not None) == kept


def test_a_reproducer_s_figure_under_a_name_no_metric_has_is_left_out():
    bad = {"counterpart": "../x", "verdict": "slower", "ratio": 1.3}
    measured = {**reproducer_entry()["measured"], "<b>x</b>": bad, "two_scans.lower_ns": bad}
    answer = metric_answer(reproducer=[reproducer_entry(measured=measured)])
    change = change_from([answer], [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu")
    assert change is not None and change.reproducer is not None
    assert change.reproducer.counterparts == {
        parse_metric_name("two_scans.wall_ns"): parse_metric_name("json.run_ms")
    }


def test_a_reproducer_leads_only_where_it_moved_as_the_change_did():
    def change_with(verdict, ratio, after_ns=2.9e8):
        said = {"counterpart": "json.run_ms", "verdict": verdict, "ratio": ratio}
        entry = reproducer_entry(measured={"two_scans.wall_ns": said})
        answer = metric_answer(reproducer=[entry])
        found = change_from([answer], [], case="scan_sync", sizes={"N": 600, "M": 2}, profile="cpu")
        assert found is not None and found.reproducer is not None
        return dataclasses.replace(found, before_ns=2.2e8, after_ns=after_ns)

    assert change_with("slower", 1.3).reproduced()
    assert not change_with("unchanged", 1.0).reproduced()
    assert not change_with("faster", 0.7).reproduced(), "the other way from the change"
    assert change_with("faster", 0.7, after_ns=1.1e8).reproduced()


# An ending's step: read from stored answers and stored results.

ANSWERS = FIXTURES / "crash"
WHERE = {"case": "async_dispatch", "sizes": {"N": 1000}, "profile": "cpu"}
STACK = (
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n"
    '  File "repro.py", line 9 in <module>'
)


def side(release: str, *, dead: bool = False, created: str = "") -> StoredResult:
    """A result of ``release`` in five processes, every one ok or every one segfaulted."""
    data = derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=5)
    if created:
        data["created_at"] = created
    if dead:
        died(data, {**SEGFAULT, "stack": STACK})
    return as_stored(data)


def ending(steps, results=(), **where):
    """The ending's step the stored steps give, as ``issue`` reads it."""
    return change_from(steps, list(results), **(WHERE | where), ending=True)


def test_a_bisect_by_status_gives_the_step_and_the_workaround_its_why_found():
    found = ending(read_bisect_answers(ANSWERS, "async_dispatch"))
    assert found is not None
    assert found.ends == ("0.4.31", "0.4.33")
    assert found.workaround == "XLA_FLAGS=--xla_cpu_use_thunk_runtime=false"
    assert "by how the script's processes end" in found.source
    assert found.reproducer is None, (
        "its reproducer ran ok on both: it does not reproduce the crash"
    )
    assert found.dead is None, "no stored results: nothing to say how each side ended"


def test_an_answer_written_before_the_ending_was_a_metric_reads_as_process_end():
    """The stored answers here were written when a step of how the processes end had the criterion
    ``status`` (a triage's confirmation the metric ``status``): they read as ``process.end``, the
    same step as an answer written now gives."""
    [old] = read_bisect_answers(ANSWERS, "async_dispatch")
    assert old.data["criterion"] == "status" and "-status-" in old.name
    new = BisectAnswer(old.name, old.data | {"criterion": "process.end"})
    assert ending([old]) is not None and ending([old]) == ending([new])
    assert Criterion.named(old.data["criterion"]) == Criterion.named("process.end")
    assert Criterion.named(old.data["criterion"]).ending
    triaged = [s for s in read_steps(ANSWERS, "async_dispatch") if s.name.startswith("triage-")]
    assert triaged and {s.data["criterion"] for s in triaged} == {"status"}
    assert [ending([s]) for s in triaged] == [
        ending(
            [BisectAnswer(s.name, s.data | {"criterion": "process.end", "metric": "process.end"})]
        )
        for s in triaged
    ]


def test_a_reproducer_is_taken_only_where_it_died_as_the_script_did():
    [stored] = read_bisect_answers(ANSWERS, "async_dispatch")
    data = stored.data | {
        "reproducer": [dict(stored.data["reproducer"][0], status={"reproduces": True})]
    }
    found = ending([BisectAnswer(stored.name, data)])
    assert found is not None and found.reproducer is not None
    assert found.reproducer.script == "repro_0123456789.py"


def test_a_triage_s_confirmed_status_step_is_one_its_unconfirmed_ones_are_not():
    steps = read_steps(ANSWERS, "async_dispatch")
    found = ending([step for step in steps if step.name.startswith("triage-")])
    assert found is not None and found.ends == ("0.4.31", "0.4.33")
    assert found.workaround == "", "the triage found none: the draft has no such line"


@pytest.mark.parametrize(
    "data",
    [
        {
            **WHERE,
            "criterion": "metric",
            "metric": "jit.wall_ns",
            "last_good": "1",
            "first_bad": "2",
        },
        {**WHERE, "criterion": "status", "sizes": {"N": 10}, "last_good": "1", "first_bad": "2"},
        {**WHERE, "criterion": "status", "last_good": 1, "first_bad": None},
        ["not", "an", "answer"],
        None,
    ],
)
def test_an_answer_of_another_criterion_size_or_shape_gives_no_step(data):
    answer = BisectAnswer("bisect-async_dispatch-x.json", data)
    assert ending([answer, BisectAnswer("triage-x.json", data)]) is None


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"workaround": {"setting": "jax.config.update('a', 1)"}},  # a key no answer writes
        {"next": "text", "findings": {"a": 1}},
        {"next": [{"purpose": "the workaround", "command": "x", "shell": True}]},
        {"findings": [{"follow_ups": [{"purpose": "workaround", "command": 3, "shell": False}]}]},
    ],
)
def test_no_workaround_is_read_where_the_answer_does_not_say_one(data):
    assert workaround_of(data) == ""


def test_a_workaround_is_read_in_each_shape_bounded_to_one_line():
    """A setting offered (``shell`` false) is a workaround, whatever its purpose's words."""
    offered = {"purpose": "", "command": "XLA_FLAGS=--a", "shell": False}
    assert workaround_of({"findings": [{"follow_ups": [offered]}]}) == "XLA_FLAGS=--a"
    crash = {"before": "1", "after": "2", "workaround": {"setting": "XLA_FLAGS=--b", "runs": True}}
    assert workaround_of({"crash": [crash]}, ("1", "2")) == "XLA_FLAGS=--b"
    assert workaround_of({"crash": [crash]}, ("0", "2")) == "", "another step's"
    failed = crash | {"workaround": {"setting": "XLA_FLAGS=--b", "runs": False}}
    assert workaround_of({"crash": [failed]}, ("1", "2")) == ""
    long = workaround_of({"next": [offered | {"command": "XLA_FLAGS=" + "--x\n" * 200}]})
    assert "\n" not in long and len(long) == MAX_WORKAROUND_CHARS


def test_the_crash_is_every_process_ok_on_one_release_and_dead_alike_on_the_other():
    ok, dead = side("0.4.31"), side("0.4.33", dead=True)
    crash = ending_between(ok, dead, Thresholds())
    assert crash is not None and crash.regression and crash.verb == "crashes"
    assert (crash.runs, crash.crashes, crash.how) == ("0.4.31", "0.4.33", "SIGSEGV (exit 139)")
    assert crash.dead_words == "SIGSEGV (exit 139) in 5 of 5 processes"
    assert crash.end is not None and "repro.py" in crash.end.stack
    assert crash.cpu_model, "the machine the crashing release ran on"
    assert crash.shares is None, "every process of each side alike: no counts to say"
    fixed = ending_between(side("0.4.31", dead=True), side("0.4.33"), Thresholds())
    assert fixed is not None and not fixed.regression and fixed.runs == "0.4.33"


def partial(release: str, dead: int, processes: int = 20) -> StoredResult:
    """A result of ``release`` in ``processes`` processes, its first ``dead`` segfaulted."""
    data = derive(real_result("async_dispatch-0.12.0.1"), release=release, processes=processes)
    return as_stored(died(data, {**SEGFAULT, "stack": STACK, "processes": dead}) if dead else data)


def test_a_crash_in_some_processes_is_a_step_by_its_counts_never_a_disagreement():
    """10 of 20 against 0 of 20 is decided by Fisher's exact test at the default level: an
    ending's step, drafted with its counts; 7 of 20 against 0 of 20 is not (measured more first);
    a triage's confirmed step is read with it from the stored results."""
    crash = ending_between(partial("0.4.38", 0), partial("0.5.0", 10), Thresholds())
    assert crash is not None and crash.regression and crash.verb == "crashes"
    assert crash.shares == ((10, 20), (0, 20))
    assert crash.dead_words == "ok in 10, SIGSEGV (exit 139) in 10 of 20 processes"
    assert (crash.how, crash.ok_words) == ("SIGSEGV (exit 139)", "ok in 20 of 20 processes")
    assert ending_between(partial("0.4.38", 0), partial("0.5.0", 7), Thresholds()) is None
    confirmed = {"metric": "status", "before": "0.4.38", "after": "0.5.0", "outcome": "confirmed"}
    first = {"case": "async_dispatch", "sizes": {"N": 1000}, "profile": "cpu"}
    data = {"first_round": first, "confirmations": [confirmed]}
    steps = triage_steps(BisectAnswer("triage-async_dispatch.json", data))
    found = ending(steps, [partial("0.4.38", 0), partial("0.5.0", 10)])
    assert found is not None and found.dead is not None and found.dead.shares == ((10, 20), (0, 20))
    assert title(found, "", "cpu", "repro.py") == (
        "repro.py crashes since jax 0.5.0 in 10 of 20 processes (0 of 20 on 0.4.38) on CPU: "
        "SIGSEGV (exit 139)"
    )


def test_no_crash_where_both_run_or_where_the_counts_do_not_differ():
    assert ending_between(side("0.4.31"), side("0.4.33"), Thresholds()) is None
    some = partial("0.4.33", 2, 5)
    assert ending_between(side("0.4.31"), some, Thresholds()) is None, "2 of 5 against 0 of 5"


def test_the_newest_stored_result_of_a_release_counts_whatever_its_status():
    older = side("0.4.33", created="2026-01-01T00:00:00+00:00")
    newer = side("0.4.33", dead=True, created="2026-02-01T00:00:00+00:00")
    assert newest_result([older, newer], "0.4.33", {"N": 1000}, "cpu", any_end=True) is newer
    assert newest_result([older, newer], "0.4.33", {"N": 10}, "cpu", any_end=True) is None


def test_a_triage_answer_s_confirmed_metric_steps_are_steps_a_draft_can_be_about():
    """Each confirmed step of a metric, with its findings and the run's thresholds, and of how the
    processes end (read as an ending's step); not the claim's, nor a step not confirmed."""
    confirmations = [
        {"metric": "json.draw", "before": "0.4.38", "after": "0.5.0", "outcome": "confirmed"},
        {"metric": "status", "before": "0.5.0", "after": "0.5.1", "outcome": "confirmed"},
        {"metric": "claim", "before": "0.5.0", "after": "0.5.1", "outcome": "confirmed"},
        {"metric": "scan.wall", "before": "0.5.0", "after": "0.5.1", "outcome": "undecided"},
    ]
    confirmations[0]["findings"] = [{"text": "the workaround: set it", "leads": True}]
    first = {"case": "c", "sizes": {}, "profile": "cpu", "thresholds": {"factor": 1.2}}
    answer = BisectAnswer("triage-c.json", {"first_round": first, "confirmations": confirmations})
    [step, ends] = triage_steps(answer)
    assert answer_ends(step.data) == ("0.4.38", "0.5.0") and step.data["metric"] == "json.draw"
    assert (ends.data["criterion"], answer_ends(ends.data)) == ("status", ("0.5.0", "0.5.1"))
    found = ending([step, ends], case="c", sizes={}, profile="cpu")
    assert found is not None and "a triage" in found.source
    change = change_from([step], [], case="c", sizes={}, profile="cpu")
    assert change is not None and change.source == "`triage-c.json`"
    assert change.thresholds.factor == 1.2 and [f.text for f in change.why] == [
        "the workaround: set it"
    ]
    assert triage_steps(BisectAnswer("triage-c.json", None, "not JSON")) == []


@pytest.mark.parametrize(
    ("a", "b", "words"),
    [
        ("0.25", "NaN", "became NaN in every process (was 0.25)"),
        ('"converged"', '"diverged"', 'changed from "converged" to "diverged" in every process'),
        ("true", "false", "changed from true to false in every process"),
    ],
)
def test_a_value_s_title_says_what_it_became_never_missing(a, b, words):
    """R8-9: NaN is a value a release printed, in the draft's title too."""
    loss = parse_metric_name("json.loss")
    compared = compare_metric(
        ProcessSamples([[0.0]] * 3, printed=[(a,)] * 3),
        ProcessSamples([[0.0]] * 3, printed=[(b,)] * 3),
        Thresholds(),
        loss,
    )
    change = Change(loss, "0.10.1", "0.10.2", significant=True, comparisons={loss: compared})
    assert title(change, "x", "cpu") == f"`json.loss` {words} since jax 0.10.2 on CPU"


def test_a_value_that_ceased_to_be_one_is_titled_so():
    loss = parse_metric_name("json.loss")
    compared = compare_metric(
        ProcessSamples([[0.5]] * 3), ProcessSamples([[0.5], [0.6], [0.7]]), Thresholds(), loss
    )
    change = Change(loss, "0.10.1", "0.10.2", significant=True, comparisons={loss: compared})
    assert "on B: no longer one value since jax 0.10.2" in title(change, "x", "cpu")
