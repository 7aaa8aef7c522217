"""The short script: the case's own code and a plain timing loop, short for every case, and it
really runs."""

import ast
import subprocess
import sys

import pytest

from harness.catalogue import discovery
from harness.errors import UsageError
from harness.measure.child import load_case
from harness.measure.figures import parse_output
from harness.upstream.export import foreign_imports, undefined_names
from harness.upstream.minimal import (
    LINE_BUDGET,
    PROGRAMS_FUNCTION,
    compact,
    minimal_script,
    prune_programs,
)

CATALOGUE = discovery.discover()


def smallest(case: discovery.CaseInfo) -> dict[str, int]:
    return {name: low for name, (low, _) in case.space.ranges.items()}


def program_names(case: discovery.CaseInfo) -> list[str]:
    """What ``programs()`` returns at the smallest sizes on the devices here: names built at run
    time too."""
    return sorted(load_case(case.path).programs(**smallest(case)))


def program_keys(source: str) -> list[str]:
    """The string keys of ``programs()``'s dict literals: the programs a case names in its
    source."""
    found: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == PROGRAMS_FUNCTION:
            for dict_node in (d for d in ast.walk(node) if isinstance(d, ast.Dict)):
                for key in dict_node.keys:
                    if (
                        isinstance(key, ast.Constant)
                        and isinstance(key.value, str)
                        and key.value not in found
                    ):
                        found.append(key.value)
    return found


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_program_of_every_case_gets_a_short_plain_script(name):
    case = CATALOGUE[name]
    for program in program_names(case):
        script = minimal_script(case, case.anchors[0], [program], repeats=20, warmup=2)
        lines = script.splitlines()
        assert len(lines) <= LINE_BUDGET == 60, f"{name} {program}: {len(lines)} lines\n{script}"
        compile(script, f"{name}.py", "exec")
        assert foreign_imports(script) == set() and undefined_names(script) == set()
        assert "block_until_ready" in script and "perf_counter_ns" in script
        assert f'PROGRAMS = ["{program}"]' in script or f'"{program}"], 20, 2' in script
        assert "CLAIM" not in script and "verdict" not in script and "ANCHORS" not in script, (
            "harness metadata left"
        )
        assert "#" not in script.replace("# ns until", ""), (
            "comments are left out (the loop's own stays)"
        )


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_the_script_keeps_the_programs_asked_for_and_their_code(name):
    case = CATALOGUE[name]
    programs = program_names(case)
    script = minimal_script(case, case.anchors[0], programs, repeats=20, warmup=2)
    for program in program_keys(case.path.read_text()):
        if any(program in p for p in programs):
            assert f'"{program}"' in script, f"{program} was asked for: its entry stays"


def test_entries_of_other_programs_and_what_only_they_use_are_left_out():
    case = CATALOGUE["nested_scan"]
    script = minimal_script(case, case.anchors[0], ["nested"], repeats=5, warmup=1)
    assert "def nested(" in script and "def cell(" in script and "def inner_scan(" in script
    for gone in ("def unrolled(", "def python_loop(", "inner_jit", "xs_list", '"python_loop"'):
        assert gone not in script, gone


def test_pruning_leaves_an_if_only_when_it_still_does_something():
    source = (
        "def programs(N):\n"
        "    found = {\n"
        '        "a": [1],\n'
        '        "b": [2],\n'
        "    }\n"
        "    extra = N + 1\n"
        "    if N > 1:\n"
        '        found["b2"] = [extra]\n'
        "    if N > 2:\n"
        "        kept = N\n"
        '        found[f"a_{kept}"] = [kept]\n'
        "    return found\n"
    )
    pruned = prune_programs(source, {"a", "a_3"})
    assert '"b"' not in pruned and "b2" not in pruned and "extra" not in pruned
    assert 'found[f"a_{kept}"]' in pruned and "if N > 2:" in pruned, "it may build a_3"
    assert "if N > 2:" not in prune_programs(source, {"a"})
    compile(pruned, "pruned.py", "exec")
    assert prune_programs(source, {"a", "b", "b2", "a_3"}) == source


def test_compact_drops_comments_docstrings_and_blank_lines_but_not_string_contents():
    code = (
        "# a comment\n"
        "def f(x):  # trailing\n"
        '    """Doc."""\n'
        "\n"
        '    text = """line\n'
        "\n"
        'after a blank"""\n'
        "    return x, text\n"
        "\n\n"
        "class E(Exception):\n"
        '    """Only a docstring,\n'
        "    on two lines.\n"
        '    """\n'
        "A = 1\n"
        "B = 2\n"
    )
    assert compact(code) == (
        "def f(x):\n"
        '    text = """line\n'
        "\n"
        'after a blank"""\n'
        "    return x, text\n"
        "\n"
        "class E(Exception):\n"
        '    """Only a docstring,"""\n'
        "\n"
        "A = 1\n"
        "B = 2"
    )


def test_no_program_is_refused():
    with pytest.raises(UsageError, match="no program to time"):
        minimal_script(CATALOGUE["scan_sync"], {"N": 16, "M": 1}, [], repeats=5, warmup=1)


def test_the_short_script_runs_for_real_and_prints_the_figures(tmp_path):
    """At the case's smallest sizes with the JAX installed here, in a process of its own."""
    case = CATALOGUE["scan_sync"]
    script = tmp_path / "scan_sync.py"
    script.write_text(minimal_script(case, smallest(case), ["two_scans"], repeats=5, warmup=1))
    done = subprocess.run(
        [sys.executable, script.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = parse_output(done.stdout)
    assert set(figures.medians) == {("two_scans", "dispatch_ns"), ("two_scans", "wall_ns")}
    assert figures.counts[("two_scans", "wall_ns")] == 5, "the warm-up calls are left out"
    assert (
        0
        < figures.medians[("two_scans", "dispatch_ns")]
        <= figures.medians[("two_scans", "wall_ns")]
    )
    assert figures.header["jax"] and figures.header["backend"] == "cpu"


def test_a_program_s_name_from_a_stored_answer_is_a_literal_never_code():
    """A metric's program name is anything before its last dot (a stored answer, edited, is input):
    in the short script it is a string, and the script calls and imports what it would anyway."""
    case = CATALOGUE["scan_sync"]
    plain = minimal_script(case, smallest(case), ["two_scans"], repeats=5, warmup=1)
    hostile = 'two_scans"]; import os; os.system("touch PWNED"); X = ["\u2028'
    text = minimal_script(case, smallest(case), [hostile], repeats=5, warmup=1)

    def calls(source):
        tree = ast.parse(source)
        found = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        return found | {ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Import)}

    assert calls(text) == calls(plain)
    assert "PROGRAMS, REPEATS, WARMUP = {" in text and '"two_scans\\"]; import os' in text
