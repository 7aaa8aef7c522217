"""Which comparisons of sides measured together another look could still decide."""

from dataclasses import replace

from harness.analysis.power import is_open, open_comparison
from harness.analysis.significance import (
    Comparison,
    CostDetail,
    SideSpread,
    Thresholds,
    Verdict,
)
from harness.analysis.spending import Design
from harness.metric_names import ENDING
from harness.stats import summarize
from harness.store.schema import EndKind, ProcessEnd, RunStatus, Settings
from tests.analysis.test_power import _processes


def comparison(ratio: float, verdict: Verdict) -> Comparison:
    summary = summarize([1.0, 1.0])
    return Comparison(
        summary, summary, 0.01, verdict, (), cost=CostDetail(ratio, ratio * 0.9, ratio * 1.1)
    )


# looks at 5, 10 and 20 processes a side
DECIDING = Settings(processes=5, decide="changes", max_processes=20)


def test_a_clear_change_is_decided_at_the_second_look_the_first_that_can_pass_the_rank_guard():
    assert open_comparison(_processes(count=5), _processes(count=5, scale=10.0), DECIDING), (
        "×10 over 5 and 5: the ranks cannot go below 0.0079, above the first look's level"
    )
    assert (
        open_comparison(_processes(count=10), _processes(count=10, scale=10.0), DECIDING) == []
    ), "×10: decided"
    assert open_comparison(_processes(count=10), _processes(count=10), DECIDING) == [], (
        "the same processes: ×1"
    )


def test_all_mode_keeps_open_what_is_neither_changed_nor_unchanged():
    few = (_processes(count=2), _processes(count=2))  # two processes a side: no verdict at all
    assert open_comparison(*few, DECIDING) == [], "ratio ×1: no change suspected"
    found = open_comparison(*few, Settings(processes=3, decide="all", max_processes=12))
    assert found and all(line.startswith("A → B ") and "needs <" in line for line in found)


def test_only_the_metrics_asked_for_and_nothing_when_not_deciding():
    pair = (_processes(count=2), _processes(count=2, scale=1.3))
    every = open_comparison(*pair, DECIDING)
    assert every, "×1.3 on two processes a side: suspected, not yet significant"
    name = every[0].split()[3]
    only = open_comparison(
        *pair, Settings(processes=3, decide="changes", max_processes=12, decide_metrics=(name,))
    )
    assert [line.split()[3] for line in only] == [name]
    assert open_comparison(*pair, Settings(processes=3)) == []
    other = open_comparison(*pair, DECIDING, metrics=("nothing.wall_ns",))
    assert other == [], "the pair's own metrics replace the run's"
    named = open_comparison(*pair, DECIDING, name="jax 1 → 2 · cpu", metrics=(name,))
    assert [line.split(" · cpu ")[1].split()[0] for line in named] == [name] and named[
        0
    ].startswith("jax 1 → 2")


def test_open_means_undecided_and_a_ratio_inside_the_factor_is_no_reason_to_stop():
    thresholds = Thresholds()
    assert is_open(comparison(1.2, Verdict.UNDECIDED), "changes", thresholds)
    assert is_open(comparison(1.01, Verdict.UNDECIDED), "changes", thresholds), (
        "a ×1.10 may read ×1.01 at first"
    )
    assert is_open(comparison(1.01, Verdict.UNDECIDED), "all", thresholds)
    assert not is_open(comparison(1.2, Verdict.SLOWER), "all", thresholds)
    assert not is_open(comparison(1.01, Verdict.UNCHANGED), "changes", thresholds)


def test_a_trend_that_even_the_most_processes_would_not_decide_is_not_worth_more_looks():
    thresholds = Thresholds()
    spread = SideSpread(5, 50, 0.1, 0.01)
    weak, strong = (
        replace(
            comparison(1.06, Verdict.UNDECIDED),
            p_value=p,
            baseline_spread=spread,
            candidate_spread=spread,
        )
        for p in (0.4, 0.01)
    )
    last_look = (20, Design(5, 20).nominal_alpha(0.002, 20))
    # Passing at the last look (p < 0.001875) needs z ≥ 3.11; below 3.11 − 2.33 (MIN_POWER 0.01) =
    # 0.78, futile.
    assert is_open(weak, "changes", thresholds, last_look), (
        "z 0.84 at 5 processes projects to 1.7 at 20: open"
    )
    assert is_open(strong, "changes", thresholds, last_look), (
        "z 2.6, about 5.2 at 20 processes: worth it"
    )
    hopeless = replace(weak, p_value=0.9)
    assert not is_open(hopeless, "changes", thresholds, last_look), (
        "z 0.13, 0.25 at 20 processes: futile"
    )
    assert is_open(hopeless, "changes", thresholds), (
        "without a last look to reach, open as long as undecided"
    )


def test_only_processes_finished_ok_count_towards_the_look():
    pair = (_processes(count=2), _processes(count=2, scale=1.3))
    failed = [replace(pair[1][0], status=RunStatus.FAILED)] * 2
    with_failures = open_comparison([*pair[0], *failed], [*pair[1], *failed], DECIDING)
    assert with_failures == open_comparison(*pair, DECIDING) != [], (
        "two failed processes a side: still at 2 a side"
    )


def test_an_ending_in_some_processes_stays_open_until_its_counts_decide_at_the_look_all_reached():
    def dead(runs, count):
        return [
            replace(p, status=RunStatus.CRASHED) if i < count else p for i, p in enumerate(runs)
        ]

    # ``status``: as settings stored before the ending was a metric name it
    for name in (ENDING.metric_name, "status"):
        status = Settings(processes=5, decide="changes", max_processes=20, decide_metrics=(name,))
        early = open_comparison(_processes(count=10), dead(_processes(count=10), 5), status)
        assert early and "died in 0 of 10 processes on A, 5 of 10 on B" in early[0], name
        late = open_comparison(_processes(count=20), dead(_processes(count=20), 10), status)
        assert late == [], "0 of 20 against 10 of 20: decided at the last look, though 10 ran ok"
        none = open_comparison(_processes(count=10), _processes(count=10), status)
        assert none == [], "no process died: nothing to decide"


def test_a_process_killed_by_sigkill_in_some_is_an_ending_measured_until_decided():
    # SIGKILL may be the OOM killer's: an ending of the release, as ``statuses`` counts it, where a
    # SIGTERM from outside is a fault and no evidence.
    a, b = _processes(count=5), _processes(count=5)
    for signal, still_open in (("SIGKILL", True), ("SIGTERM", False)):
        end = ProcessEnd(EndKind.SIGNAL, signal=signal, exit_status=137, from_outside=True)
        killed = [replace(p, status=RunStatus.CRASHED, died=end) for p in b[:2]]
        found = open_comparison(a, [*killed, *b[2:]], DECIDING, metrics=[ENDING.metric_name])
        assert bool(found) is still_open, (signal, found)


def test_a_time_fallen_to_zero_in_every_process_is_decided_not_measured_more():
    """R8-11: the signs decide it (``shapes.compare_signs``); no look could add to it."""
    from harness.store.schema import ProcessRun

    def ran(*figures: float) -> list[ProcessRun]:
        return [ProcessRun(0, RunStatus.OK, figures={"json.step_ms": f}) for f in figures]

    mode = Settings(processes=3, decide="all", max_processes=12)
    assert open_comparison(ran(1.0, 1.2, 0.9), ran(0, 0, 0), mode) == []
    assert open_comparison(ran(1.0, 1.2, 0.9), ran(-1.0, -3.0, -2.0), mode) == []
    assert open_comparison(ran(1.0, 1.2, 0.9), ran(0.5, 0, 0.4), mode) != [], "not every process"


COUNTED = Settings(
    processes=5,
    decide="changes",
    max_processes=20,
    decide_metrics=("status",),
    max_count_processes=200,
)


def _counts_procedure(rates: tuple[float, float], seed: int) -> tuple[bool, int]:
    """One run of the counts' looks as the runner takes them (``Settings.count_looks``), each
    process of side A dying with chance ``rates[0]``, of B ``rates[1]``; then the stored pair as
    every page judges it (its counts at the full level): whether it reads a change, and where it
    stopped."""
    import random

    from harness.analysis.shapes import compare_counts
    from harness.analysis.significance import Shape
    from harness.analysis.spending import at_level

    draw = random.Random(seed)
    most = COUNTED.count_looks[-1]
    died = [[draw.random() < rate for _ in range(most)] for rate in rates]
    for n in COUNTED.count_looks:
        counts = (sum(died[0][:n]), n), (sum(died[1][:n]), n)
        if not (counts[0][0] or counts[1][0]):
            break  # nothing died: nothing to decide (``_open_ending``)
        level = at_level(Thresholds(), COUNTED, n, counts=True)
        if compare_counts(Shape.ENDING, *counts, level).verdict is not Verdict.UNDECIDED:
            break
    return compare_counts(Shape.ENDING, *counts, Thresholds()).verdict is Verdict.CHANGED, n


def test_counts_looked_at_up_to_200_processes_hold_the_level_where_nothing_changed():
    """#73.5: the A/A of endings, with looks on to 200 processes a side: 0 of n against 0 of n and
    1 of 40 against 0 of 40 are never a change; sides that crash alike, rarely or in every other
    process, flag a change within the level's binomial bound (seeded: the same every push)."""
    from harness.analysis.shapes import compare_counts
    from harness.analysis.significance import Shape
    from harness.analysis.spending import at_level

    for n in COUNTED.count_looks:
        for level in (Thresholds(), at_level(Thresholds(), COUNTED, n, counts=True)):
            assert compare_counts(Shape.ENDING, (0, n), (0, n), level).verdict is Verdict.UNCHANGED
    once = compare_counts(Shape.ENDING, (1, 40), (0, 40), Thresholds())
    assert once.verdict is Verdict.UNDECIDED and once.p_value == 1.0
    flagged = sum(
        _counts_procedure((rate, rate), seed)[0] for rate in (0.05, 0.5) for seed in range(300)
    )
    assert flagged <= 3, f"{flagged} of 600 A/A runs (α = 0.002: 1.2 expected, 3 its 97 % bound)"


def test_a_crash_in_half_of_a_cheap_script_s_processes_is_decided_past_the_last_look():
    """0 of 20 against 7 of 20 (Fisher p = 0.0083) was undecided at 20 processes a side; the counts'
    looks go on, and it is decided, by 80 processes a side in nine runs of ten."""
    runs = [_counts_procedure((0.0, 0.5), seed) for seed in range(100)]
    missed = [n for changed, n in runs if not changed]
    assert len(missed) <= 5 and set(missed) <= {5}, "only where none of the first 5 died (1 in 32)"
    assert sorted(n for _, n in runs)[89] <= 80, sorted(n for _, n in runs)
    still = open_comparison(
        _processes(count=20),
        [
            replace(p, status=RunStatus.CRASHED) if i < 7 else p
            for i, p in enumerate(_processes(count=20))
        ],
        COUNTED,
    )
    assert still and "died in 0 of 20 processes on A, 7 of 20 on B" in still[0], still
