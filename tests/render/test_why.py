"""The why's sentences: a plain script's libraries on a step (the library or JAX?)."""

from harness.render.why import libraries_line


def script_setting(**libraries):
    from harness.analysis.significance import Thresholds
    from harness.steps.answers import Libraries, Setting

    versions = {
        "0.4.31": {"equinox": "0.11.4"},
        "0.4.33": {"equinox": "0.11.6"},
        "0.4.34": {"equinox": "0.11.6"},
    }
    return Setting(
        "script-repro",
        {},
        "cpu",
        None,
        {},
        Thresholds(),
        1.0,
        target=("--script", "repro.py"),
        libraries=Libraries(**({"versions": versions, "policy": "as-of"} | libraries)),
    )


def test_a_step_where_a_library_moved_with_jax_offers_the_commands_that_tell_them_apart():
    said = libraries_line(script_setting(), "0.4.31", "0.4.33")
    assert said.startswith(
        "the script's libraries changed along with jax (equinox 0.11.4 → 0.11.6): the library or"
    )
    triage = "`nox -s triage -- --script repro.py"
    assert f"{triage} --from 0.4.31 --to 0.4.33 --hold equinox==0.11.4 --profile cpu`" in said
    assert f"{triage} --vary equinox --jax 0.4.33 --from 0.11.4 --to 0.11.6 --profile cpu`" in said


def test_a_step_the_libraries_did_not_move_with_comes_with_jax_and_a_varied_one_with_the_library():
    assert (
        libraries_line(script_setting(), "0.4.33", "0.4.34")
        == "comes with jax 0.4.34 (equinox 0.11.6 on both)"
    )
    held = libraries_line(script_setting(held=("equinox==0.11.6",)), "0.4.33", "0.4.34")
    assert held == "comes with jax 0.4.34 (equinox 0.11.6 held)"
    varied = script_setting(vary="equinox", jax="0.4.33", versions={})
    assert libraries_line(varied, "0.4.33+equinox.0.11.4", "0.4.33+equinox.0.11.5") == (
        "comes with equinox 0.11.5 (jax 0.4.33 held)"
    )
    assert libraries_line(script_setting(versions={}), "0.4.31", "0.4.33") == "", (
        "a case's step says nothing of them"
    )


class Compared:
    """Stands in for a Comparison: its direction, ratio and word."""

    def __init__(self, verdict, ratio):
        self.verdict, self.ratio, self.said = verdict, ratio, str(verdict)


def test_a_reproducer_that_moved_as_the_script_did_reproduces_it_with_both_ratios():
    from harness.analysis.significance import Verdict
    from harness.explain.reproducer import ReproducerAnswer
    from harness.render.why import reproduced_lines, reproducer_lines

    step = Compared(Verdict.SLOWER, 6.5)
    answer = ReproducerAnswer(
        "0.4.31", "0.4.33", "s-reproducer/", "repro_ab.py", "0.4.31", 34,
        ({"name": "f", "calls": 3, "inputs": [{"saved": False}]},),
        measured={"json.loop_ms": ("json.run_ms", Compared(Verdict.SLOWER, 5.9))},
        matched=(1, 1),
    )  # fmt: skip
    [line] = reproduced_lines(answer, step, "json.loop_ms")
    assert line == "reproduces it with jax alone: ×5.9 on json.run_ms (your script: ×6.5)"
    flat = ReproducerAnswer(**{**answer.__dict__, "measured": {
        "json.loop_ms": ("json.run_ms", Compared(Verdict.UNCHANGED, 1.0))}})  # fmt: skip
    [line] = reproduced_lines(flat, step, "json.loop_ms")
    assert line.startswith("does not reproduce it") and "outside the compiled programs" in line
    [line] = reproduced_lines(answer, step, "process.trace_ns")
    assert "before any compiled program runs" in line
    [head] = reproducer_lines(answer)
    assert "`s-reproducer/repro_ab.py` (34 lines, 1 program(s) exported on 0.4.31" in head
    assert "1 input(s) generated" in head
    fewer = ReproducerAnswer(**{**answer.__dict__, "left_out": 2})
    assert "; 2 more whose own time did not move left out" in reproducer_lines(fewer)[0]
