"""A plain script's process: run once as ``python FILE``, judged on the figure lines it prints, else
timed whole."""

import hashlib
import json
import os

import pytest

from harness.host.environment import REPO_ROOT
from harness.measure.figures import Figure, parse_output
from harness.measure.script_process import (
    lost_flags,
    programs_from,
    run_script,
    script_environment,
    script_numbers,
    undeclared_import,
)
from harness.metric_names import PROCESS
from harness.store.schema import CompiledFunction, TimedSample
from tests.conftest import FIXTURES

SCRIPTS = FIXTURES / "scripts"


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(name, timeout_s=120.0):
    path = SCRIPTS / name
    return run_script(path, sha(path), timeout_s).to_json()  # as the case process writes it


def figure(program, metric, median, n=5):
    return Figure(program, metric, median, median - 1, median + 1, n)


def test_a_programs_printed_figures_become_one_sample_of_its_medians_with_its_steps_as_marks():
    programs, compiled = programs_from(
        [
            figure("scan", "lower_ns", 700),
            figure("scan", "compile_ns", 900),
            figure("two", "first_call_ns", 5000, n=1),
            figure("two", "dispatch_ns", 300),
            figure("two", "wall_ns", 400),
            figure("two", "mark:scan 1", 100),
            figure("two", "mark:scan 2", 300),
        ]
    )
    assert compiled == {"scan": CompiledFunction(lower_ns=(700,), compile_ns=(900,))}
    two = programs["two"]
    assert two.steps == ("scan 1", "scan 2") and two.kinds == ("wall", "dispatch")
    assert two.samples == (TimedSample((100, 300), 400),)
    assert two.first_call == TimedSample((5000,), 5000)
    assert {line["metric"] for line in two.printed} == {
        "first_call_ns",
        "dispatch_ns",
        "wall_ns",
        "mark:scan 1",
        "mark:scan 2",
    }


def test_a_figure_the_script_did_not_print_is_never_stood_in_for_by_another():
    programs, _ = programs_from([figure("p", "wall_ns", 400), figure("q", "dispatch_ns", 30)])
    assert programs["p"].kinds == ("wall",) and programs["q"].kinds == ("dispatch",)
    assert programs["q"].samples[0].marks_ns == (30,)


def test_figures_of_metrics_the_statistics_do_not_know_make_no_program():
    assert programs_from([figure("p", "throughput", 7)]) == ({}, {})


def test_the_figure_lines_are_read_with_their_spread_as_printed():
    figures = parse_output(
        "noise\nmetric p wall_ns median=25 min=10 max=40 n=4\nmetric p wall_ns median=x\n"
    )
    assert figures.lines == [Figure("p", "wall_ns", 25, 10, 40, 4)]


def test_a_script_that_prints_figures_is_judged_on_them_and_its_claim_kept():
    payload = run("prints_figures.py")
    assert payload["status"] == "ok", payload
    assert (
        set(payload["programs"]) == {"small", "large", "process"} and "compiled" not in payload
    ), "and the whole"
    assert payload["claim"] == {"holds": True, "evidence": "large work takes longer than small"}
    script = payload["script"]
    assert (
        script["judged_on"] == "printed figures"
        and script["exit_status"] == 0
        and script["wall_ns"] > 0
    )
    large = payload["programs"]["large"]["samples"][0]["wall_ns"]
    small = payload["programs"]["small"]["samples"][0]["wall_ns"]
    assert large > small, "20 times the work"


def test_any_other_script_is_timed_as_a_whole_process():
    payload = run("sleeps.py")
    assert payload["status"] == "ok"
    [(name, program)] = payload["programs"].items()
    assert name == PROCESS and program["kinds"] == ["wall"]
    assert program["samples"][0]["wall_ns"] == payload["script"]["wall_ns"]
    assert payload["script"]["judged_on"] == "whole process" and "claim" not in payload


def test_a_non_zero_exit_is_a_failed_process_with_its_exit_status_and_last_lines():
    payload = run("exits_nonzero.py")
    assert payload["status"] == "failed" and payload["script"]["exit_status"] == 1
    assert payload["detail"].startswith("python exits_nonzero.py exited with code 1")
    assert "RuntimeError: the repro broke here" in payload["detail"]
    assert "programs" not in payload


def test_a_script_that_changed_since_the_run_began_is_not_run(tmp_path):
    path = tmp_path / "edited.py"
    path.write_text("print('new')\n")
    payload = run_script(path, hashlib.sha256(b"print('old')\n").hexdigest(), 60.0).to_json()
    assert payload["status"] == "failed" and "changed since this run began" in payload["detail"]


def test_a_script_past_its_timeout_is_killed(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_TEST_SLEEP_S", "30")
    payload = run("sleeps.py", timeout_s=0.5)
    assert payload["status"] == "timeout"


def test_the_script_runs_from_its_folder_with_the_sides_environment(tmp_path, monkeypatch):
    path = tmp_path / "where.py"
    path.write_text(
        "import os, sys\nprint('metric where wall_ns median=1 min=1 max=1 n=1')\n"
        "print('fact cwd', '\"' + os.getcwd() + '\"')\nprint('fact flags', '\"' + "
        "os.environ.get('XLA_FLAGS', '') + '\"')\n"
    )
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=3")
    payload = run_script(path, sha(path), 60.0).to_json()
    assert payload["facts"] == {
        "cwd": str(tmp_path),
        "flags": "--xla_force_host_platform_device_count=3",
    }


def test_the_harness_put_first_on_pythonpath_is_taken_out_and_the_sides_own_entries_kept():
    both = script_environment({"PYTHONPATH": os.pathsep.join([str(REPO_ROOT), "/mine"]), "A": "1"})
    assert both == {"PYTHONPATH": "/mine", "A": "1"}
    assert "PYTHONPATH" not in script_environment({"PYTHONPATH": str(REPO_ROOT)})


def test_a_module_the_script_does_not_declare_is_named_with_the_two_ways_to_declare_it():
    from harness.measure.script_process import undeclared_import

    stderr = (
        "Traceback (most recent call last):\n  ...\nModuleNotFoundError: No module named "
        "'equinox.nn'\n"
    )
    said = undeclared_import(stderr)
    assert said.startswith("the script imports equinox, which it does not declare")
    assert '(dependencies = ["equinox"]' in said and "--with equinox" in said
    assert undeclared_import("ValueError: no") == ""


def test_a_flag_is_lost_where_the_script_replaced_or_reset_it_and_kept_where_it_appended():
    harness = "--xla_force_host_platform_device_count=8 --xla_dump_to=/d"
    assert lost_flags(harness, "--xla_cpu_multi_thread_eigen=false") == [
        "--xla_force_host_platform_device_count",
        "--xla_dump_to",
    ]
    assert lost_flags(harness, f"{harness} --xla_cpu_multi_thread_eigen=false") == []
    assert lost_flags(harness, f"{harness} --xla_dump_to=/mine") == ["--xla_dump_to"]
    assert lost_flags("", "--anything") == []


@pytest.mark.jax
@pytest.mark.parametrize(
    ("when", "lost"),
    [
        ("before", ["--xla_force_host_platform_device_count"]),
        ("putenv", ["--xla_force_host_platform_device_count"]),
        ("append", None),
        ("after", None),  # XLA read the harness's flags before the script replaced them
    ],
)
def test_a_script_that_sets_xla_flags_itself_is_recorded_with_the_flags_xla_never_got(
    monkeypatch, when, lost
):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=3")
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("HARNESS_TEST_WHEN", when)
    payload = run("own_xla_flags.py")
    assert payload["status"] == "ok", payload
    record = payload["script"].get("xla_flags")
    if lost is None:
        assert record is None and not any("XLA_FLAGS" in n for n in payload.get("notes", []))
        return
    assert record == {"lost": lost, "read": "--xla_cpu_multi_thread_eigen=false"}
    [note] = [n for n in payload["notes"] if "XLA_FLAGS" in n]
    assert "sets XLA_FLAGS itself" in note and "--xla_force_host_platform_device_count" in note


def test_a_credential_the_script_prints_into_a_field_is_redacted_before_it_is_stored(monkeypatch):
    monkeypatch.setenv("HARNESS_TEST_SECRET_KEY", "sk-live-0123456789abcdefXYZ")
    payload = run("prints_secrets.py")
    printed = payload["processes"][0]["printed"] if "processes" in payload else payload["printed"]
    stored = json.dumps(payload)
    assert "ghp_" not in stored and "hunter2pass" not in stored and "sk-live" not in stored
    assert (
        printed["json.env_token"] == ['"<redacted>"'] and "example.org" in printed["json.mirror"][0]
    )
    assert payload["figures"]["json.steps"] == 3.0


def test_jax_missing_from_the_venv_is_never_advice_to_declare_jax(monkeypatch):
    said = undeclared_import("ModuleNotFoundError: No module named 'jax'")
    assert "declare" not in said and "a Python other than its venv's" in said, "jax is here"
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    said = undeclared_import("ModuleNotFoundError: No module named 'jax'")
    assert "declare" not in said and "the venv changed" in said
    assert "add it to the script's" in undeclared_import(
        "ModuleNotFoundError: No module named 'optax'"
    )


def test_numbers_are_figures_strings_values_and_nested_objects_facts():
    out = script_numbers(
        'warming up\n{"reg_ms": 12.5, "jax": "0.5.1", "n": 3, "cfg": {"k": 1}}\n'
        '{"reg_ms": 13.5}\n{"reg_ms": 20}\n'
    )
    assert out.values == {"reg_ms": 13.5, "n": 3}  # several lines: their median
    # several values in one process, and a string, are kept as written; one number needs not be
    assert out.printed == {"reg_ms": ("12.5", "13.5", "20"), "jax": ('"0.5.1"',)}
    assert out.facts == {"cfg": '{"k": 1}'}


def test_an_integer_is_kept_exactly_and_what_no_figure_holds_as_written():
    out = script_numbers(
        '{"sum": 12345678901234567, "big": 1180591620717411303425, "over": 1e400, "ok": true,'
        ' "nan": NaN, "inf": -Infinity, "none": null, "half": 0.5, "neg0": -0.0}'
    )
    assert out.values == {"sum": 12345678901234567, "half": 0.5, "neg0": -0.0}
    assert type(out.values["sum"]) is int  # never a float: …567 and …568 differ
    assert out.printed == {
        "big": ("1180591620717411303425",),
        "over": ("1e400",),
        "ok": ("true",),
        "nan": ("NaN",),
        "inf": ("-Infinity",),
        "none": ("null",),
    }
    assert out.skipped == []


def test_two_values_in_one_process_are_both_kept_never_only_their_median():
    out = script_numbers('{"x": 1}\n{"x": 3}\n' + "".join(f'{{"t": {i}}}\n' for i in range(20)))
    assert out.printed["x"] == ("1", "3") and out.values["x"] == 2.0
    assert out.printed["t"][:8] == tuple(map(str, range(8)))  # at most 8 kept, then the rest's
    assert out.printed["t"][8].startswith("… 20 values, sha256 ")  # count and digest
    other = script_numbers("".join(f'{{"t": {i}}}\n' for i in [*range(19), 99])).printed["t"]
    assert other[:8] == out.printed["t"][:8] and other != out.printed["t"]


def test_hostile_lines_are_left_out_without_an_error():
    lines = [
        '{"ok": true, "nan": NaN, "inf": Infinity, "huge": ' + "9" * 400 + "}",
        '{"digits": ' + "1" * 5000 + "}",  # over Python's digit limit: the line is skipped
        "{" * 10000 + "}" * 10000,  # too deep
        '{"../x": 1, "a b": 2, "nested": {"k": [1, 2]}}',
        '{"long": "' + "x" * 1000 + '"}',
        "[1, 2, 3]",
        '{"fine": 1}',
    ]
    out = script_numbers("\n".join(lines))
    assert out.values == {"fine": 1}
    assert out.printed["ok"] == ("true",) and out.printed["nan"] == ("NaN",)
    assert out.facts["nested"] == '{"k": [1, 2]}'
    assert out.printed["long"][0].startswith('"' + "x" * 200 + "… (1,000 characters, sha256 ")
    assert any("huge: a number of 400 characters" in s for s in out.skipped)
    assert any("../x" in s for s in out.skipped)


def test_a_line_nested_past_the_recursion_limit_is_left_out_with_a_note():
    out = script_numbers('{"a": ' + "[" * 20_000 + "]" * 20_000 + '}\n{"fine": 1}')
    assert out.values == {"fine": 1.0}
    assert out.skipped == ["line 1: nested deeper than a JSON line may be read"]


def test_a_credential_nested_in_a_printed_object_is_redacted_in_its_fact():
    out = script_numbers('{"cfg": {"api_token": "abcd1234efgh5678", "size": 3, "key_bits": 128}}')
    assert out.facts["cfg"] == '{"api_token": "<redacted>", "size": 3, "key_bits": 128}'


def test_two_long_strings_that_differ_past_the_cut_still_differ():
    a, b = (script_numbers(f'{{"s": "{"x" * 300}{end}"}}').printed["s"] for end in "ab")
    assert a != b and len(a[0]) < 300


def test_a_field_named_like_a_credential_is_no_metric():
    token = "ghp_" + "A1b2C3d4E5f6" * 3
    out = script_numbers(f'{{"{token}": 1, "fine": 2}}')
    assert out.values == {"fine": 2} and token not in repr(out)


def test_a_number_below_a_float_s_range_is_kept_as_written_never_zero():
    out = script_numbers('{"tiny": 1e-400, "TINY": 1E-400, "zero": 0e5}')
    assert out.printed == {"tiny": ("1e-400",), "TINY": ("1E-400",)}
    assert out.values == {"zero": 0.0}
