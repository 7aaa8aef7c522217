"""Hostile script outputs, numbers at the bounds, names and encodings (issue 37): whatever a script
prints, the result stored of it is read back by every reader, and what had to be left out is said in
its notes.

Each script runs as a plain script's case process runs it (``run_script``), in ``PROCESSES``
processes; the result is stored as a run stores it (``storing.store``) and loaded as report, compare
and a rerun load it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.measure.script_process import run_script
from harness.measure.storing import store
from harness.store.results import load_results
from harness.store.schema import parse
from tests.conftest import derive, real_result

BASE = real_result("async_dispatch-0.12.0.1")
PROCESSES = 2
BIG = "9" * 20  # an integer of 20 digits: one past the bound
# (name, the script's source, its arguments): each prints what no measurement gives.
HOSTILE_SCRIPTS = {
    # The issue's own inputs.
    "float 1e25 in a JSON line": 'print(\'{"x": 1e25, "y": 5}\')',
    "20-digit integer in a JSON line": f"print('{{\"x\": {BIG}}}')",
    "20-digit figure median": f"print('metric p wall_ns median={BIG} min=1 max=2 n=3')",
    "20-digit figure n": f"print('metric p wall_ns median=1 min=1 max=2 n={BIG}')",
    "fact NaN": "print('fact x NaN')",
    "fact of 30 digits": "print('fact x ' + '9' * 30)",
    "fact nested 200 deep": "print('fact x ' + '[' * 200 + ']' * 200)",
    "lone surrogate in a JSON line": 'print(\'{"x": "\\\\ud800"}\')',
    "lone surrogate in a fact": "print('fact x \"\\\\ud800\"')",
    "5,000-digit figure "
    "field": "print('metric p wall_ns median=' + '9' * 5000 + ' min=1 max=2 n=3')",
    "figure of program json": "print('metric json x_ns median=5 min=1 max=9 n=3')",
    "figure of program process": "print('metric process wall_ns median=5 min=1 max=9 n=3')",
    "201 JSON fields": "import json; print(json.dumps({f'f{i}': i for i in range(201)}))",
    "JSON line over 65,536 "
    "characters": "import json; print(json.dumps({'x': 1, 'pad': 'a' * 70000}))",
    # Numbers at and past the bounds.
    "float -1e25": "print('{\"x\": -1e25}')",
    "float 1.0000001e19": "print('{\"x\": 1.0000001e19}')",
    "float 1e19 exactly": "print('{\"x\": 1e19}')",
    "Infinity in a JSON line": "print('{\"x\": Infinity}')",
    "-Infinity in a JSON line": "print('{\"x\": -Infinity}')",
    "NaN in a JSON line": "print('{\"x\": NaN}')",
    "1e400 in a JSON line": "print('{\"x\": 1e400}')",
    "negative 20-digit integer": f"print('{{\"x\": -{BIG}}}')",
    "19-digit integer": "print('{\"x\": 9999999999999999999}')",
    "5,000-digit integer in a JSON line": "print('{\"x\": ' + '9' * 5000 + '}')",
    "20-digit figure min": f"print('metric p wall_ns median=1 min={BIG} max=2 n=3')",
    "20-digit figure max": f"print('metric p wall_ns median=1 min=1 max={BIG} n=3')",
    "19-digit figure "
    "median": "print('metric p wall_ns median=9999999999999999999 min=1 max=2 n=3')",
    "fact Infinity": "print('fact x Infinity')",
    "fact -Infinity": "print('fact x -Infinity')",
    "fact 1e400": "print('fact x 1e400')",
    "fact 1e25 in a list": "print('fact x [1, 2, 1e25]')",
    "fact 20 digits in an object": f'print(\'fact x {{"a": {{"b": {BIG}}}}}\')',
    "fact nested 60 deep": "print('fact x ' + '[' * 60 + ']' * 60)",
    "fact nested 64 deep": "print('fact x ' + '[' * 64 + ']' * 64)",
    "fact nested 900 deep": "print('fact x ' + '[' * 900 + ']' * 900)",
    "fact of 100,000 characters": "print('fact x \"' + 'a' * 100000 + '\"')",
    "fact of a surrogate pair, whole": "print('fact x \"\\\\ud83d\\\\ude00\"')",
    "fact of a lone low surrogate": "print('fact x \"\\\\udc00\"')",
    "surrogate in a fact's key": "print('fact x {\"\\\\ud800\": 1}')",
    "surrogate in a nested JSON value": 'print(\'{"x": {"y": "\\\\udfff"}}\')',
    "surrogate in the claim's "
    "evidence": "print('claim holds: True — \\ud800'.encode('utf-8', 'surrogatepass')"
    ".decode('utf-8', 'replace'))",
    "JSON line nested 200 deep": "print('{\"x\": ' + '[' * 200 + ']' * 200 + '}')",
    "JSON line nested 2,000 deep": "print('{\"x\": ' + '[' * 2000 + ']' * 2000 + '}')",
    "JSON line of 65,536 "
    "characters": "import json; print(json.dumps({'x': 1, 'p': 'a' * (65536 - 20)}))",
    "a field named like a figure": 'print(\'{"wall_ns": 5, "process": 3}\')',
    "field name of 65 characters": "print('{\"' + 'a' * 65 + '\": 1}')",
    "field name with a dot": "print('{\"a.b\": 1}')",
    "10,000 fields": "import json; print(json.dumps({f'f{i}': i for i in range(10000)}))",
    "a fact per line, 5,000 lines": "for i in range(5000): print(f'fact f{i} {i}')",
    "fact lines of 1 MB each, "
    "five": "for i in range(5): print(f'fact big{i} \"' + 'x' * 1_000_000 + '\"')",
    "figure line with a program named "
    "json.x": "print('metric json.x wall_ns median=5 min=1 max=9 n=3')",
    "figure line of 0 samples": "print('metric p wall_ns median=5 min=1 max=9 n=0')",
    "bytes not UTF-8 on stdout": 'import sys; sys.stdout.buffer.write(b\'{"x": "\\xff\\xfe"}\\n\')',
    "NUL in a fact": "print('fact x \"a\\\\u0000b\"')",
    "bidi control in a fact": "print('fact x \"\\u202e evil\"')",
    "booleans and nulls": 'print(\'{"a": true, "b": null, "c": false}\')',
}


def measured(tmp_path: Path, name: str, source: str) -> Path:
    """The script run in PROCESSES processes and stored as a run stores it; the results folder."""
    script = tmp_path / "hostile.py"
    script.write_text(source + "\n", encoding="utf-8")
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    runs = [run_script(script, digest, 60.0) for _ in range(PROCESSES)]
    document = derive(BASE, case="script-hostile")
    document["processes"] = [
        {**json.loads(json.dumps(run.to_json())), "index": i} for i, run in enumerate(runs)
    ]
    document["script"] = {"file": script.name, "sha256": digest}
    results = tmp_path / "results"
    store(results, parse(document))
    return results


@pytest.fixture(scope="module")
def results_of(tmp_path_factory) -> Callable[[str], Path]:
    """``results_of(name)``: the script ``name`` measured once in this module (``measured``), its
    results folder read by every test that asks about it."""
    made: dict[str, Path] = {}

    def of(name: str) -> Path:
        if name not in made:
            made[name] = measured(tmp_path_factory.mktemp("hostile"), name, HOSTILE_SCRIPTS[name])
        return made[name]

    return of


@pytest.mark.parametrize("name", HOSTILE_SCRIPTS)
def test_what_a_script_printed_is_stored_readable(results_of, name):
    results = results_of(name)
    loaded, problems = load_results(results)
    assert problems == [] and len(loaded) == 1
    assert all(p.status == "ok" for p in loaded[0].result.processes), (
        loaded[0].result.processes[0].detail
    )


# What had to be left out is said: a note names it (the bound kept, never silent).
SAID = {
    "20-digit figure median": "20 digits",
    "5,000-digit figure field": "5,000 digits",
    "fact NaN": "not a number",
    "fact nested 200 deep": "nested deeper",
    "lone surrogate in a fact": "surrogate",
    "figure of program json": "the harness's own",
    "figure of program process": "the harness's own",
    "201 JSON fields": "past the first 200",
    "JSON line over 65,536 characters": "over the 65,536",
    "fact of 100,000 characters": "cut to the first",
}


@pytest.mark.parametrize("name", SAID)
def test_what_was_left_out_is_said_in_the_results_notes(results_of, name):
    [stored], _ = load_results(results_of(name))
    assert any(SAID[name] in note for note in stored.result.all_notes()), stored.result.all_notes()


# What no figure holds is kept as written, a value: never left out, never "missing".
KEPT = {
    "float 1e25 in a JSON line": ("1e+25",),
    "20-digit integer in a JSON line": (BIG,),
    "negative 20-digit integer": (f"-{BIG}",),
    "1e400 in a JSON line": ("1e400",),
    "NaN in a JSON line": ("NaN",),
    "-Infinity in a JSON line": ("-Infinity",),
    "booleans and nulls": ("true",),
    "lone surrogate in a JSON line": ('"\ufffd"',),
}


@pytest.mark.parametrize("name", KEPT)
def test_a_value_no_figure_holds_is_stored_as_written(results_of, name):
    [stored], _ = load_results(results_of(name))
    printed = [p.printed.get("json.x") or p.printed.get("json.a") for p in stored.result.processes]
    assert printed == [KEPT[name]] * PROCESSES


def test_a_reserved_program_name_never_merges_into_the_harnesss_own_figures(results_of):
    [stored], _ = load_results(results_of("figure of program json"))
    process = stored.result.processes[0]
    assert "json" not in process.programs and not any(
        k.startswith("json.") for k in process.figures
    )
    [stored], _ = load_results(results_of("figure of program process"))
    assert stored.result.processes[0].programs["process"].stopped_by == "whole process"
