import gc
import itertools

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


def test_time_budget_stops_sampling_but_not_below_minimum():
    prog = timing.time_program(
        [("x", lambda: None)], lambda o: o, warmup=0, repeats=1000, min_repeats=4, max_seconds=1e-12
    )
    assert len(prog.samples) == 4
    assert prog.stopped_by == "time budget"


def test_collector_is_off_while_sampling_and_restored():
    states = []
    timing.time_program([("x", lambda: states.append(gc.isenabled()))], lambda o: o, warmup=0, repeats=3)
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
    result, executable = timing.time_compile(fake, (1,), repeats=3, clear_caches=lambda: cleared.append(1))
    assert len(cleared) == 3 and fake.lowered == 3
    assert len(result.lower_ns) == len(result.compile_ns) == 3
    assert executable == "executable 3"
