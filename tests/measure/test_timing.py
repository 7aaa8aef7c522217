import gc
import itertools

import pytest

from harness.measure import timing


def test_run_once_marks_each_step_then_wall():
    ticks = itertools.count(0, 10)
    blocked = []
    sample = timing.run_once(
        [("a", lambda: "A"), ("b", lambda: "B")],
        block=blocked.append,
        clock=lambda: next(ticks),
    )
    assert sample.marks_ns == [10, 20]
    assert sample.wall_ns == 30
    assert sample.dispatch_ns == 20
    assert blocked == [["A", "B"]], "every step's output is blocked on, once, after all steps"


def test_program_keeps_every_sample_and_the_cold_call():
    calls = []
    prog = timing.time_program([("x", lambda: calls.append(1))], lambda o: o, warmup=3, repeats=7)
    assert len(prog.samples) == 7
    assert len(calls) == 1 + 3 + 7
    assert prog.stopped_by == "repeats"
    assert all(s.wall_ns >= s.dispatch_ns >= 0 for s in prog.samples)


def test_the_cold_calls_outputs_are_checked_before_any_warm_up():
    counter = itertools.count()
    seen = []
    steps = [("a", lambda: ("a", next(counter))), ("b", lambda: ("b", next(counter)))]
    prog = timing.time_program(steps, lambda o: o, warmup=2, repeats=3, check_outputs=seen.append)
    assert seen == [[("a", 0), ("b", 1)]], "once, with every step's output of the first call"
    assert len(prog.samples) == 3

    def refuse(outputs):
        raise ValueError("nothing dispatched")

    calls = []
    with pytest.raises(ValueError, match="nothing dispatched"):
        timing.time_program(
            [("x", lambda: calls.append(1))], lambda o: o, warmup=2, check_outputs=refuse
        )
    assert calls == [1], "no warm-up or sample after a refused cold call"


def test_time_budget_stops_sampling_but_not_below_minimum():
    prog = timing.time_program(
        [("x", lambda: None)], lambda o: o, warmup=0, repeats=1000, min_repeats=4, max_seconds=1e-12
    )
    assert len(prog.samples) == 4
    assert prog.stopped_by == "time budget"


def test_collector_is_off_while_sampling_and_restored():
    states = []
    timing.time_program(
        [("x", lambda: states.append(gc.isenabled()))], lambda o: o, warmup=0, repeats=3
    )
    assert states[0] is True, "the cold call runs with the collector as the user had it"
    assert states[1:] == [False, False, False]
    assert gc.isenabled()


class FakeJitted:
    def __init__(self):
        self.lowered = 0

    def lower(self, *args):
        self.lowered += 1
        return self

    def compile(self):
        return f"executable {self.lowered}"


def test_compile_clears_caches_before_every_repetition():
    cleared = []
    fake = FakeJitted()
    result, executable = timing.time_compile(
        fake, (1,), repeats=3, clear_caches=lambda: cleared.append(1)
    )
    assert len(cleared) == 3 and fake.lowered == 3
    assert len(result.lower_ns) == len(result.compile_ns) == 3
    assert executable == "executable 3"


class Ticking:
    """A clock that advances ``step`` ns per reading: each iteration of a program lasts a known
    time."""

    def __init__(self, step: int) -> None:
        self.now = 0
        self.step = step

    def __call__(self) -> int:
        self.now += self.step
        return self.now


def test_a_sample_of_loops_stores_the_mean_per_iteration():
    calls = []
    steps = [("a", lambda: calls.append("a")), ("b", lambda: calls.append("b"))]
    sample = timing.run_loops(steps, lambda outputs: outputs, 4, clock=Ticking(10))
    assert calls == ["a", "b"] * 4, "every step of every iteration runs"
    assert sample.marks_ns == [10, 20] and sample.wall_ns == 30, (
        "the same as one iteration, not four"
    )


def test_loops_fill_a_sample_of_at_least_the_minimum_time():
    # One iteration reads the clock 4 times (start, 2 marks, wall): 30 ns with a 10 ns tick.
    loops = timing.calibrate_loops(
        [("a", lambda: 1), ("b", lambda: 2)], lambda o: o, 1000, clock=Ticking(10)
    )
    assert 1000 <= loops * 30 <= 1.5 * 1000, loops


def test_loops_are_capped_and_a_long_program_runs_once():
    never = timing.calibrate_loops(
        [("x", lambda: 0)], lambda o: o, 10**12, max_loops=50, clock=Ticking(1)
    )
    assert never == 50
    assert timing.calibrate_loops([("x", lambda: 0)], lambda o: o, 5, clock=Ticking(10)) == 1


def test_a_calibrated_program_records_its_loops_and_per_iteration_times():
    calls = []
    prog = timing.time_program(
        [("x", lambda: calls.append(1))], lambda o: o, warmup=1, repeats=3, min_sample_ns=200_000
    )
    assert prog.loops > 1, "a no-op lasts far less than 0.2 ms"
    assert len(prog.samples) == 3
    assert all(0 <= s.dispatch_ns <= s.wall_ns < 200_000 for s in prog.samples), (
        "per iteration, not per sample"
    )
    assert len(calls) > 1 + 1 + 3 * prog.loops, "cold call, warm-up, calibration and every loop ran"
    assert timing.time_program([("x", lambda: None)], lambda o: o, repeats=2).loops == 1, (
        "off by default"
    )


def test_settings_without_a_minimum_sample_time_mean_one_iteration():
    settings = {"warmup": 0, "repeats": 2, "min_repeats": 2, "max_seconds": 1.0}
    assert timing.time_program_with([("x", lambda: None)], lambda o: o, settings).loops == 1
    assert (
        timing.time_program_with(
            [("x", lambda: None)], lambda o: o, {**settings, "min_sample_ns": 10**5}
        ).loops
        > 1
    )


def test_a_program_whose_warm_up_fills_a_sample_is_not_calibrated():
    calls = []
    prog = timing.time_program(
        [("x", lambda: calls.append(1))], lambda o: o, warmup=1, repeats=2, min_sample_ns=1
    )
    assert prog.loops == 1 and len(calls) == 1 + 1 + 2, "no calibration run"


def test_a_verdict_gets_the_sizes_when_it_takes_more_than_the_medians():
    medians = {"p": {"wall_ns": 8.0}}
    seen = []
    timing.judge_claim(
        lambda m, N, M: seen.append((m, N, M)) or (True, ""), medians, {"N": 2, "M": 3}
    )
    timing.judge_claim(lambda m, **sizes: seen.append((m, sizes)) or (True, ""), medians, {"N": 2})
    timing.judge_claim(lambda m: seen.append(m) or (True, ""), medians, {"N": 2})  # the older form
    assert seen == [(medians, 2, 3), (medians, {"N": 2}), medians]
    # a parameter that is no size fails the case process, with its traceback
    with pytest.raises(TypeError):
        timing.judge_claim(lambda m, Q: (True, ""), medians, {"N": 2})
