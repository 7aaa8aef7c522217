"""The measuring end of exported scripts, on pure-Python programs (no JAX)."""

import statistics

from harness.measure import child, timing
from harness.measure.figures import parse_output
from harness.store.schema import CompiledFunction
from harness.upstream import standalone


class FakeJitted:
    def lower(self, *args):
        return self

    def compile(self):
        return "executable"


def test_figure_lines_have_a_stable_format():
    assert (
        standalone.figure_line("p", "wall_ns", [30, 10, 20, 40])
        == "metric p wall_ns median=25 min=10 max=40 n=4"
    )


def test_verdict_sees_what_the_harness_verdict_sees():
    timed = timing.time_program(
        [("a b", lambda: 1), ("c", lambda: 2)], lambda o: o, warmup=1, repeats=6
    )
    cold = timing.CompileTiming(lower_ns=[5, 1, 3, 9], compile_ns=[2, 8, 4])
    compiled = CompiledFunction(tuple(cold.lower_ns), tuple(cold.compile_ns))
    harness_view = child.medians({"p": child.program_record(timed)}, {"jit": compiled})
    ours = {
        metric: statistics.median(values) for metric, values in standalone.series(timed).items()
    }
    assert ours == harness_view["p"]
    assert standalone.compile_medians(cold) == harness_view["compiled:jit"]


def test_measure_prints_every_figure_then_the_verdict_and_parses_back():
    lines: list[str] = []
    seen = {}
    cleared = []

    def verdict(medians):
        seen.update(medians)
        return medians["p"]["wall_ns"] >= medians["p"]["dispatch_ns"], "wall | dispatch — fine"

    holds, evidence = standalone.measure(
        lambda N: {"p": [("step one", lambda: N), ("step two", lambda: N)]},
        verdict,
        sizes={"N": 3},
        settings={
            "warmup": 1,
            "repeats": 4,
            "min_repeats": 4,
            "max_seconds": 1.0,
            "compile_repeats": 2,
        },
        block=lambda outputs: outputs,
        compiled=lambda N: {"jit": (FakeJitted(), (N,))},
        facts=lambda N: {"devices": [N, N], "implementation": "pmap (classic)"},
        clear_caches=lambda: cleared.append(1),
        emit=lines.append,
    )
    assert holds is True and evidence == "wall | dispatch — fine"
    assert len(cleared) == 2, "every compile repetition starts cold"
    assert lines[-1] == "claim holds: True — wall | dispatch — fine"
    figures = parse_output("\n".join(lines))
    assert set(figures.medians) == {
        ("jit", "lower_ns"),
        ("jit", "compile_ns"),
        ("p", "first_call_ns"),
        ("p", "dispatch_ns"),
        ("p", "wall_ns"),
        ("p", "mark:step one"),
        ("p", "mark:step two"),
    }
    assert figures.counts[("p", "wall_ns")] == 4 and figures.counts[("jit", "compile_ns")] == 2
    assert figures.medians[("p", "wall_ns")] == round(seen["p"]["wall_ns"])
    assert figures.holds is True and figures.evidence == "wall | dispatch — fine"
    assert figures.facts == {"devices": [3, 3], "implementation": "pmap (classic)"}
    assert set(seen["compiled:jit"]) == {"lower_ns", "compile_ns"}, (
        "the verdict sees compile times too"
    )


def test_parse_output_reads_the_header_and_ignores_noise():
    figures = parse_output(
        "jax 0.4.26 jaxlib 0.4.26 backend cpu devices 1\n"
        "sizes N=4\n"
        "WARNING: something from XLA\n"
        "metric eager mark:X @ X median=12 min=10 max=15 n=3\n"
        "claim holds: False — dispatch 99% of completion\n"
    )
    assert figures.header == {"jax": "0.4.26", "jaxlib": "0.4.26", "backend": "cpu", "devices": "1"}
    assert figures.medians == {("eager", "mark:X @ X"): 12.0}
    assert figures.holds is False and figures.evidence == "dispatch 99% of completion"
    assert parse_output("").holds is None
