from collections import Counter

import pytest

from harness.analysis.groups import comparison_groups, latest_runs
from harness.analysis.metrics import (
    MetricKey,
    ProcessSamples,
    compare_group,
    compare_metric,
    compare_runs,
    hlo_fact_names,
    hlo_facts,
    metric_samples,
    union_keys,
)
from harness.analysis.shapes import SEPARATE_UNDER_LOAD, separate_invocations
from harness.analysis.significance import DEFAULT_THRESHOLDS, Thresholds, Verdict
from harness.metric_names import parse_metric_name
from harness.render.tables import said_text
from harness.store.results import load_results
from tests.conftest import (
    FIXTURES,
    as_stored,
    derive,
    in_processes,
    real_result,
    v1_result,
    write_results,
)


def sample_series(result):
    """Raw samples per metric, one list per process that finished ok (in the order they ran)."""
    return {key: found.processes for key, found in metric_samples(result).items()}


def test_on_an_accelerator_the_device_s_own_peak_is_a_metric_and_the_rss_named_the_runtime_s():
    """A TPU process: its resident memory is mostly libtpu's mapping of the chip, shown as that
    (``host_rss``), and the chip's own peak in use (``device_peak``) is judged like any metric."""
    data = real_result("async_dispatch-0.12.0.1")
    for number, process in enumerate(data["processes"]):
        process["jax"]["backend"] = "tpu"
        process["peak_rss_bytes"] = 14_000_000_000
        process["device_peak_bytes"] = 201_326_592 + number
    series = sample_series(as_stored(data))
    assert MetricKey("process", "peak_rss") not in series
    assert series[MetricKey("process", "host_rss")] == [[14e9]] * 5
    assert series[MetricKey("process", "device_peak")] == [[201_326_592 + n] for n in range(5)]
    assert "runtime's mapping" in MetricKey("process", "host_rss").label()
    assert MetricKey("process", "device_peak").metric_name == "process.device_peak_bytes"
    compared = compare_metric(*(ProcessSamples([[v]] * 5) for v in (2e8, 4e8)))
    assert compared.cost.ratio == 2.0


def test_series_are_the_raw_samples_programs_first():
    data = real_result("async_dispatch-0.12.0.1")
    series = sample_series(as_stored(data))
    assert list(series) == [
        MetricKey("eager", "wall"),
        MetricKey("eager", "dispatch"),
        MetricKey("jit", "wall"),
        MetricKey("jit", "dispatch"),
        MetricKey("jit", "lower"),
        MetricKey("jit", "compile"),
        MetricKey("process", "peak_rss"),
    ]
    processes = data["processes"]
    assert series[MetricKey("process", "peak_rss")] == [[p["peak_rss_bytes"]] for p in processes], (
        "one a process"
    )
    assert len(processes) == 5, "one list per process, in the order they ran"
    assert series[MetricKey("jit", "wall")] == [
        [s["wall_ns"] for s in p["programs"]["jit"]["samples"]] for p in processes
    ]
    assert series[MetricKey("jit", "dispatch")] == [
        [s["marks_ns"][-1] for s in p["programs"]["jit"]["samples"]] for p in processes
    ]
    assert series[MetricKey("jit", "compile")] == [
        p["compiled"]["jit"]["compile_ns"] for p in processes
    ]
    one = as_stored(v1_result("async_dispatch-0.12.0.1"))
    assert all(len(found) == 1 for found in sample_series(one).values()), (
        "one process: one list per metric"
    )
    assert MetricKey("jit", "compile").label() == "jit · compile (cold)"


def test_series_of_a_scan_use_the_last_step_for_dispatch():
    data = real_result("scan_sync-0.12.0.1")
    dispatch = sample_series(as_stored(data))[MetricKey("two_scans", "dispatch")]
    programs = [p["programs"]["two_scans"] for p in data["processes"]]
    assert all(len(s["marks_ns"]) == 2 for program in programs for s in program["samples"]), (
        "two steps"
    )
    assert dispatch == [[s["marks_ns"][1] for s in program["samples"]] for program in programs]


def test_a_program_gives_only_the_kinds_it_measured():
    data = real_result("async_dispatch-0.12.0.1")
    for process in data["processes"]:
        # as a plain script's whole-process time is stored
        process["programs"]["jit"]["kinds"] = ["wall"]
    series = sample_series(as_stored(data))
    assert MetricKey("jit", "wall") in series and MetricKey("jit", "dispatch") not in series
    assert MetricKey("eager", "dispatch") in series


def test_series_keep_each_finished_process_apart():
    data = real_result("async_dispatch-0.12.0.1")
    walls = [s["wall_ns"] for s in data["processes"][0]["programs"]["jit"]["samples"]]
    several = as_stored(in_processes(data, ["ok", "crashed", "ok"]))
    series = sample_series(several)
    assert series[MetricKey("jit", "wall")] == [walls, [round(w * 3) for w in walls]], (
        "the crashed process has none"
    )
    assert len(series[MetricKey("jit", "compile")]) == 2
    assert list(series) == list(sample_series(as_stored(data))), (
        "the same metrics in the same order"
    )


def test_compare_runs_flags_an_injected_slowdown_and_lists_unshared_metrics():
    data = real_result("async_dispatch-0.12.0.1")
    slower = derive(data, scale=1.3)
    for process in slower["processes"]:
        del process["programs"]["eager"]
    compared, only_a, only_b = compare_runs(as_stored(data), as_stored(slower))
    verdicts = {m.key: m.comparison.verdict for m in compared}
    assert verdicts[MetricKey("jit", "wall")] == Verdict.SLOWER
    assert only_a == [MetricKey("eager", "wall"), MetricKey("eager", "dispatch")] and only_b == []
    assert [m.comparison.cost.ratio for m in compared if m.key.kind == "wall"] == [
        pytest.approx(1.3, rel=1e-3)
    ]


def test_compare_group_against_the_chosen_baseline(tmp_path):
    data = real_result("scan_sync-0.12.0.1")
    folder = write_results(tmp_path / "r", [derive(data, release="0.4.26", scale=1.25), data])
    [group] = comparison_groups(latest_runs(load_results(folder)[0]))
    oldest = compare_group(group, None)
    assert oldest.baseline == "0.4.26" and list(oldest.comparisons) == ["0.12.0.1"]
    assert oldest.comparisons["0.12.0.1"][MetricKey("two_scans", "wall")].verdict == Verdict.FASTER
    newest = compare_group(group, "0.12.0.1")
    assert newest.comparisons["0.4.26"][MetricKey("two_scans", "wall")].verdict == Verdict.SLOWER
    verdicts = Counter(c.verdict for c in newest.comparisons["0.4.26"].values())
    assert verdicts == {Verdict.SLOWER: 3, Verdict.UNDECIDED: 1, Verdict.UNCHANGED: 1}, (
        "wall and compile: ×1.25 over 10 processes against 5; lower: too spread; the memory, left "
        "as it was, unchanged"
    )
    # one cold timing a process: spread apart
    cold = newest.comparisons["0.4.26"][MetricKey("scan", "lower")]
    assert cold.cost.ratio == pytest.approx(1.25) and cold.p_value >= DEFAULT_THRESHOLDS.alpha
    old = v1_result("scan_sync-0.12.0.1")
    folder = write_results(tmp_path / "v1", [derive(old, release="0.4.26", scale=1.25), old])
    [group] = comparison_groups(latest_runs(load_results(folder)[0]))
    v1 = compare_group(group, "0.12.0.1").comparisons["0.4.26"]
    assert Counter(c.verdict for c in v1.values()) == {Verdict.UNDECIDED: 4}, (
        "one process a side cannot tell"
    )


def test_union_keeps_first_appearance_order():
    a = {MetricKey("x", "wall"): [1.0]}
    b = {MetricKey("y", "wall"): [1.0], MetricKey("x", "wall"): [2.0]}
    assert union_keys([a, b]) == [MetricKey("x", "wall"), MetricKey("y", "wall")]


def test_hlo_facts_are_optional():
    assert hlo_facts(as_stored(v1_result("async_dispatch-0.12.0.1"))) == {}
    without = real_result("async_dispatch-0.12.0.1")
    for process in without["processes"]:
        del process["compiled"]["jit"]["hlo"]
    assert hlo_facts(as_stored(without)) == {}
    facts = hlo_facts(as_stored(real_result("async_dispatch-0.12.0.1")))
    assert (
        set(facts) == {"jit"} and facts["jit"]["fusions"] == 4 and facts["jit"]["while_loops"] == 0
    )
    [synthetic, _] = load_results(FIXTURES / "synthetic")[0]
    facts = hlo_facts(synthetic)
    assert set(facts) == {"jit_d8"} and "fusions" in facts["jit_d8"]
    assert hlo_fact_names([{"custom": 1, "fusions": 2}, {"while_loops": 1}]) == [
        "while_loops",
        "fusions",
        "custom",
    ]


def test_results_know_whether_they_were_measured_in_one_run():
    data = real_result("scan_sync-0.12.0.1")
    one, same, other = (
        derive(data, invocation=name, profile=p)
        for name, p in (("r1", "a"), ("r1", "b"), ("r2", "c"))
    )
    assert not separate_invocations(as_stored(one).result, as_stored(same).result)
    assert separate_invocations(as_stored(one).result, as_stored(other).result)
    # Results stored before invocations were recorded: interleaved when both name other sides and
    # overlap in time.
    end = data["window_unix_ns"][1]
    older = [derive(data, profile=p, interleaved_with=["x"]) for p in "ab"]
    for document in older:
        document.pop("invocation", None)
    apart = derive(older[1], window_unix_ns=[end + 1, end + 2])
    alone = derive(older[1], interleaved_with=[])
    assert not separate_invocations(as_stored(older[0]).result, as_stored(older[1]).result)
    assert separate_invocations(as_stored(older[0]).result, as_stored(apart).result)
    assert separate_invocations(as_stored(older[0]).result, as_stored(alone).result)


def test_separate_runs_are_compared_with_the_spread_between_invocations():
    data = real_result("scan_sync-0.12.0.1")
    a, b = (
        as_stored(derive(data, invocation="r1")),
        as_stored(derive(data, invocation="r2", scale=1.06)),
    )
    c = as_stored(derive(data, invocation="r1", profile="other", scale=1.06))
    separate = {m.key: m.comparison for m in compare_runs(a, b)[0]}
    together = {m.key: m.comparison for m in compare_runs(a, c)[0]}
    wall = MetricKey("two_scans", "wall")
    assert separate[wall].invocation_spread == DEFAULT_THRESHOLDS.invocation_spread
    assert together[wall].invocation_spread == 0.0
    assert separate[wall].p_value > together[wall].p_value


def test_separate_runs_under_load_give_no_verdict_and_say_why():
    data = real_result("scan_sync-0.12.0.1")
    base = as_stored(derive(data, invocation="r1"))
    loaded = derive(data, invocation="r2", scale=2.0)
    loaded["processes"][0]["load"].update(other_cpu_cores=1.0, loaded=True)
    wall = MetricKey("two_scans", "wall")
    apart = {m.key: m.comparison for m in compare_runs(base, as_stored(loaded))[0]}
    assert apart[wall].verdict == Verdict.UNDECIDED and apart[wall].cost.ratio == pytest.approx(2.0)
    assert SEPARATE_UNDER_LOAD in apart[wall].flags
    together = {
        m.key: m.comparison
        for m in compare_runs(base, as_stored({**loaded, "invocation": "r1"}))[0]
    }
    assert together[wall].verdict == Verdict.SLOWER, (
        "interleaved sides share the load: a verdict stands"
    )
    assert SEPARATE_UNDER_LOAD not in together[wall].flags


@pytest.mark.parametrize(
    ("metric", "scale", "higher", "said"),
    [
        ("eager.wall_ns", 2.0, (), "slower"),
        ("eager.wall_ns", 0.5, (), "faster"),
        ("process.peak_rss_bytes", 2.0, (), "higher"),
        ("json.items_per_s", 0.5, ("json.items_per_s",), "lower"),
        ("json.items_per_s", 1.0, (), "unchanged"),
    ],
)
def test_a_verdict_is_said_in_the_metric_s_words_and_bold_only_the_worse_way(
    metric, scale, higher, said
):
    a = ProcessSamples([[100.0 + i * 0.1 + j * 0.01 for j in range(9)] for i in range(8)])
    b = ProcessSamples([[v * scale for v in process] for process in a.processes])
    compared = compare_metric(a, b, Thresholds(higher_is_better=higher), parse_metric_name(metric))
    assert compared.said.split(" (")[0] == said, (
        "unchanged with its margin: 'unchanged (within ±0.4%)'"
    )
    worse = compared.verdict is Verdict.SLOWER
    assert said_text(compared) == (f"**{compared.said}**" if worse else compared.said)
    assert said_text(compared, markdown=False) == compared.said
