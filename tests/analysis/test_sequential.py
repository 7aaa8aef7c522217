"""Which comparisons of sides measured together another look could still decide."""

from dataclasses import replace

from harness.analysis.sequential import STATUS, is_open, open_comparison
from harness.analysis.significance import Comparison, SideSpread, Thresholds, Verdict
from harness.analysis.spending import Design
from harness.stats import summarize
from harness.store.schema import EndKind, ProcessEnd, RunStatus, Settings
from tests.analysis.test_power import _processes


def comparison(ratio: float, verdict: Verdict) -> Comparison:
    summary = summarize([1.0, 1.0])
    return Comparison(summary, summary, ratio, ratio * 0.9, ratio * 1.1, 0.01, verdict, ())


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

    status = Settings(processes=5, decide="changes", max_processes=20, decide_metrics=("status",))
    early = open_comparison(_processes(count=10), dead(_processes(count=10), 5), status)
    assert early and "died in 0 of 10 processes on A, 5 of 10 on B" in early[0]
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
        found = open_comparison(a, [*killed, *b[2:]], DECIDING, metrics=[STATUS])
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
