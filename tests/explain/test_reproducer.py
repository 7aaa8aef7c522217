"""The reproducer with jax alone: which metric of it shows a script's metric, and, on real releases,
a ``lax.scan`` program captured on 0.4.31 with no edit to the script, loaded and timed on 0.4.33."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from harness.explain.reproducer import COMPILE, MEMORY, RUN, counterpart, matched, reproducer_text
from harness.install.venvs import ensure, export_tools, release_env
from harness.measure.script_hook import EXPORT_DIR, EXPORT_TOOLS
from harness.measure.script_process import HOOK
from harness.metric_names import parse_metric_name
from harness.pins import DEFAULT_PROFILE, index_release
from tests.conftest import REPO

SCRIPT = """
import functools
import jax, jax.numpy as jnp
from jax import lax

@jax.jit
def scanned(x):
    return lax.scan(lambda c, _: (jnp.tanh(c @ c), None), x, None, length=20)[0]

@functools.partial(jax.jit, static_argnums=1)
def looped(x, n):
    return lax.fori_loop(0, n, lambda i, c: c * 1.01, x)

x = jnp.ones((32, 32)) * 0.01
for _ in range(3):
    scanned(x).block_until_ready()
print(looped(x, 3).sum())
"""

M = parse_metric_name("json.m")


def test_each_script_metric_has_the_counterpart_that_can_show_it_or_none():
    assert (
        counterpart(parse_metric_name("json.loop_ms")) == RUN
        and counterpart(parse_metric_name("process.wall_ns")) == RUN
    )
    assert counterpart(parse_metric_name("process.compile_ns")) == COMPILE
    assert (
        counterpart(parse_metric_name("process.peak_rss_bytes")) == MEMORY
        and counterpart(parse_metric_name("json.temp_bytes")) == MEMORY
    )
    assert [
        counterpart(parse_metric_name(f"process.{p}_ns")) for p in ("trace", "lower", "import")
    ] == ["it happens before any compiled program runs"] * 3
    assert counterpart(parse_metric_name("json.temp_mb")) == MEMORY, "a size, not a run time"
    assert parse_metric_name("json.compile_ms") == COMPILE, "what the reproducer times"


def test_programs_are_matched_across_the_releases_by_name_and_inputs():
    inputs = [{"shape": [2], "dtype": "float32", "saved": True}]
    older = {"programs": [{"name": "f", "inputs": inputs}, {"name": "g", "inputs": inputs}]}
    newer = {"programs": [{"name": "f", "inputs": inputs}, {"name": "g", "inputs": []}]}
    assert matched({"a": older, "b": newer}) == (1, 2)
    assert matched({"a": older, "b": "jax b exported no program"}) == (0, 2)


@pytest.mark.releases
def test_a_program_exported_on_one_release_runs_on_the_next_with_jax_alone(tmp_path, two_releases):
    pythons, tools = two_releases
    script, folder = tmp_path / "user.py", tmp_path / "captured"
    script.write_text(SCRIPT)
    folder.mkdir()
    environ = {**os.environ, EXPORT_DIR: str(folder), EXPORT_TOOLS: str(tools)}
    environ.pop("PYTHONPATH", None)
    run = [str(pythons["0.4.31"]), str(HOOK), str(tmp_path / "report.json"), str(script)]
    subprocess.run(run, cwd=tmp_path, env=environ, check=True, capture_output=True, timeout=300)
    listing = json.loads((folder / "programs.json").read_text())
    assert listing["jax"] == "0.4.31"
    assert [(p["name"], p["calls"]) for p in listing["programs"]] == [("scanned", 3), ("looped", 1)]
    assert all(i["saved"] for p in listing["programs"] for i in p["inputs"]), "small inputs kept"
    (folder / "repro.py").write_text(reproducer_text("test", "repro.py", "0.4.31", "x"))
    assert len((folder / "repro.py").read_text().splitlines()) <= 55
    for version, python in pythons.items():
        done = subprocess.run(
            [str(python), "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300,
            env={**environ, "PYTHONPATH": str(tools)},
        )  # fmt: skip
        assert done.returncode == 0, (version, done.stderr[-2000:])
        [line] = done.stdout.strip().splitlines()
        found = json.loads(line)
        assert found["run_ms"] > 0 and found["compile_ms"] > 0, (version, found)
        assert {"p1_call_ms", "p2_call_ms", "p1_temp_bytes"} <= set(found), found


def test_a_release_that_cannot_run_the_others_export_is_said_in_one_line():
    from pathlib import Path

    from harness.explain.reproducer import _refusal
    from harness.store.results import StoredResult
    from tests.conftest import derive, real_result

    error = (
        "exit code 1\nValueError: Unsupported serialization version 10\n--------------------\n"
        "For simplicity, JAX has removed its internal frames from the traceback of the following "
        "exception. Set JAX_TRACEBACK_FILTERING=off to include these."
    )  # the error quoted, never JAX's trailer
    data = derive(real_result("async_dispatch-0.12.0.1"), release="0.4.30", status="failed")
    for process in data["processes"]:
        process.update(status="failed", detail=error)
    failed = StoredResult.from_document(Path("x.json"), data)
    assert _refusal("0.4.30", "0.4.33", failed) == (
        "jax 0.4.30 cannot run what jax 0.4.33 exported: ValueError: Unsupported serialization "
        "version 10"
    )
    assert _refusal("0.4.30", "0.4.33", None).startswith("jax 0.4.30 stored no result")
    ok = StoredResult.from_document(Path("y.json"), real_result("async_dispatch-0.12.0.1"))
    assert _refusal("0.4.33", "0.4.33", ok) == ""


def test_programs_that_call_back_into_python_are_captured_again_without_equinox_s_checks(
    monkeypatch, tmp_path
):
    from harness.explain import reproducer
    from tests.explain.test_held_library import step

    calls = []

    def capture(sides, label, folder, env=None):
        calls.append((label, env))
        if env is None:
            return (
                f"jax {label} exported no program: NotImplementedError: serialization of "
                "host_callbacks"
            )
        return {"jax": label, "programs": [{"name": "solve"}], "note": ""}

    monkeypatch.setattr(reproducer, "capture", capture)
    found = reproducer.capture_both(FakeProgress(), step(), tmp_path)
    assert [env for _, env in calls] == [
        None,
        None,
        {"EQX_ON_ERROR": "nan"},
        {"EQX_ON_ERROR": "nan"},
    ]
    assert all(listing["note"] == reproducer.CHECKS_LEFT_OUT for listing in found.values())


class FakeProgress:
    def progress(self, line):
        pass


def kept_programs(monkeypatch, tmp_path, moves_again):
    """The reproducer of three programs, the first two of which moved, kept or not after measuring
    again (``moves_again``: whether the reproducer of those two moves as the whole one did)."""
    from harness.analysis.significance import Verdict
    from harness.explain import reproducer
    from tests.explain.test_held_library import step

    captured = tmp_path / "captured" / "0.4.31"
    captured.mkdir(parents=True)
    programs = [{"file": f"program_0{n}", "name": f"f{n}", "calls": 1} for n in (1, 2, 3)]
    for program in programs:
        for suffix in (".jaxexport", ".npz"):
            (captured / f"{program['file']}{suffix}").write_bytes(b"x")
    unexported = {
        "file": "program_04",
        "name": "f4",
        "calls": 1,
        "problem": "ValueError: a callback",
    }
    listing = {"jax": "0.4.31", "programs": [*programs, unexported]}
    faster = type("Found", (), {"verdict": Verdict.FASTER})()
    moved = reproducer.ReproducerAnswer(
        "0.4.31", "0.4.33", "s-reproducer/", measured={M: (M, faster)}
    )
    measured = []

    def measure(step, sides, script, exported_on, listing):
        measured.append([p["file"] for p in listing["programs"]])
        again = {M: (M, faster if moves_again else None)}
        return dataclasses.replace(moved, programs=tuple(listing["programs"]), measured=again), {}

    monkeypatch.setattr(reproducer, "measure_reproducer", measure)
    monkeypatch.setattr(reproducer, "moved_programs", lambda *_: ["program_01", "program_02"])
    whole = reproducer.write_reproducer(tmp_path, captured, step(), listing)
    found = reproducer.keep_what_moved(
        step(), FakeProgress(), tmp_path, "0.4.31", listing, moved, {}
    )
    return found, measured, whole


def test_the_programs_whose_time_did_not_move_are_left_out_and_the_rest_measured_again(
    monkeypatch, tmp_path
):
    found, measured, whole = kept_programs(monkeypatch, tmp_path, moves_again=True)
    assert measured == [["program_01", "program_02", "program_04"]], (
        "the two that moved measured again"
    )
    assert found.left_out == 1 and [p["file"] for p in found.programs][-1] == "program_04", (
        "the one jax.export could not take still named, with its problem"
    )
    assert sorted(p.name for p in tmp_path.glob("program_*")) == [
        "program_01.jaxexport", "program_01.npz", "program_02.jaxexport", "program_02.npz"
    ]  # fmt: skip
    listed = json.loads((tmp_path / "programs.json").read_text())
    assert [p["file"] for p in listed["programs"]] == ["program_01", "program_02", "program_04"]
    assert [p.name for p in tmp_path.glob("repro_*.py")] != [whole.name], "another digest"


def test_a_reproducer_of_fewer_programs_that_no_longer_moves_gives_way_to_the_whole_one(
    monkeypatch, tmp_path
):
    found, measured, whole = kept_programs(monkeypatch, tmp_path, moves_again=False)
    assert found.left_out == 0 and measured == [["program_01", "program_02", "program_04"]]
    assert len(list(tmp_path.glob("program_*"))) == 6 and whole.exists(), (
        "the whole one written back"
    )


def test_a_reproducer_that_fails_where_it_was_exported_is_no_reproducer_and_says_why():
    """Its own exception's line and what it was run with, never JAX's trailer; the why calls it no
    reproducer, though its file was written."""
    from harness.explain.reproducer import ReproducerAnswer, unproven
    from harness.render.why import reproduced_lines, reproducer_lines

    listing = {
        "programs": [{"name": "f", "config": {"jax_enable_x64": True}}],
        "note": "exported with EQX_ON_ERROR=nan",
    }
    why = "failed: ValueError: Dtype mismatch for args[0]: expected float64 and called with float32"
    said = unproven("0.10.1", why, listing)
    assert said == (
        f"it does not run on jax 0.10.1, where it was exported: {why} (tried: run with "
        "jax_enable_x64=True; exported with EQX_ON_ERROR=nan)"
    )
    answer = ReproducerAnswer("0.10.1", "0.10.2", "x-reproducer/", "repro_ab.py", problem=said)
    assert [str(line) for line in reproducer_lines(answer)] == [
        f"no reproducer with jax alone: {said}"
    ]
    assert reproduced_lines(answer, None, parse_metric_name("json.loop_ms")) == []


CORPUS = REPO / "tests" / "fixtures" / "corpus"
# What each script's reproducer must carry, beyond running on both releases.
CARRIED = {
    "float64": lambda p: p[0]["config"] == {"jax_enable_x64": True},
    "x64_from_environment": lambda p: p[0]["config"] == {"jax_enable_x64": True},
    "random_keys": lambda p: p[0]["config"] == {"jax_default_matmul_precision": "highest"},
    "pytree_params": lambda p: p[0]["donated"] == [0, 1, 2, 3] and len(p[0]["inputs"]) == 6,
    "static_args": lambda p: p[0]["static"] == {"1": "3", "mode": "'sum'"},
    "while_loop": lambda p: [i["dtype"] for i in p[0]["inputs"]][1:] == ["int32", "int32"],
    "callback": lambda p: (
        p[0]["problem"].startswith("calls back into Python") and "problem" not in p[1]
    ),
    # jax.export of 0.4.31 has no typed key dtype (newer releases have: tests/measure's test).
    "typed_keys": lambda p: p[0]["problem"].startswith("takes a typed PRNG key"),
    "ahead_of_time": lambda p: [(x["calls"], x["lowered"]) for x in p] == [(5, 1), (0, 1)],
}


@pytest.fixture(scope="module")
def two_releases():
    """The interpreters of two real releases, and the folder of what jax.export needs."""
    pythons = {}
    for version in ("0.4.31", "0.4.33"):
        env = release_env(
            index_release(version, version), DEFAULT_PROFILE, "python3.12", REPO / ".nox"
        )
        assert ensure(env) is None
        pythons[version] = env.interpreter
    tools = export_tools(REPO / ".nox", pythons["0.4.31"])
    assert not isinstance(tools, str), tools
    return pythons, tools


@pytest.mark.releases
@pytest.mark.parametrize("name", sorted(p.stem for p in CORPUS.glob("*.py")))
def test_each_public_shaped_script_s_reproducer_runs_on_both_releases(name, two_releases, tmp_path):
    """Issue 63's corpus: each script run unmodified on 0.4.31 under the capture, its reproducer
    written as the why writes it (the flags it was traced under set first) and run with jax alone
    on 0.4.31 and 0.4.33: it exits 0 and measures every program it could export."""
    from harness.explain.reproducer import traced_under

    pythons, tools = two_releases
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environ["JAX_PLATFORMS"] = "cpu"
    captured = {**environ, EXPORT_DIR: str(tmp_path), EXPORT_TOOLS: str(tools)}
    run = [str(pythons["0.4.31"]), str(HOOK), str(tmp_path / "report.json"), f"{name}.py"]
    done = subprocess.run(
        run, cwd=CORPUS, env=captured, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    listing = json.loads((tmp_path / "programs.json").read_text())
    assert CARRIED.get(name, lambda p: True)(listing["programs"]), listing
    text = reproducer_text("corpus", "repro.py", "0.4.31", "x", traced_under(listing))
    (tmp_path / "repro.py").write_text(text)
    exported = [n for n, p in enumerate(listing["programs"], 1) if "problem" not in p]
    for version, python in pythons.items():
        ran = subprocess.run(
            [str(python), "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
            env={**environ, "PYTHONPATH": str(tools)},
        )  # fmt: skip
        assert ran.returncode == 0, (version, ran.returncode, ran.stderr[-2000:])
        found = json.loads(ran.stdout.strip().splitlines()[-1])
        assert all(found[f"p{n}_compile_ms"] > 0 for n in exported), (version, found)


def test_where_neither_release_reads_the_other_s_export_each_runs_its_own(monkeypatch, tmp_path):
    """Issue 63, item 3: one reproducer holding both releases' exports of the same programs (the
    newer one's renamed ``program_51``), proven on each release, its head naming both."""
    from harness.explain import reproducer
    from tests.explain.test_held_library import step as a_step

    the_step = dataclasses.replace(a_step(), out=tmp_path)
    step, folder = (lambda: the_step), the_step.folder("reproducer")
    inputs = [{"shape": [2], "dtype": "float32", "saved": True}]
    captured = {}
    for label in ("0.4.31", "0.4.33"):
        where = the_step.folder("reproducer", "captured", label)
        for suffix in (".jaxexport", ".npz"):
            (where / f"program_01{suffix}").write_bytes(label.encode())
        program = {"file": "program_01", "name": "f", "calls": 1, "inputs": inputs}
        captured[label] = {"jax": label, "programs": [program], "note": ""}
    seen = []

    def measure(step, sides, script, exported_on, listing, proof=()):
        seen.append((exported_on, proof, listing))
        answer = reproducer.ReproducerAnswer("0.4.31", "0.4.33", "s-reproducer/", script.name)
        return dataclasses.replace(answer, exported_on=exported_on), {}

    monkeypatch.setattr(reproducer, "measure_reproducer", measure)
    found = reproducer.own_exports(step(), FakeProgress(), folder, captured)
    [(exported_on, proof, listing)] = seen
    assert proof == ("0.4.31", "0.4.33") and found.exported_on == exported_on
    assert exported_on == "0.4.31 and 0.4.33, each its own export"
    assert listing["by_release"] == {
        "0.4.33": [{**captured["0.4.33"]["programs"][0], "file": "program_51"}]
    }
    assert (folder / "program_51.jaxexport").read_bytes() == b"0.4.33"
    assert (folder / "program_01.jaxexport").read_bytes() == b"0.4.31"
    other = {**captured["0.4.33"], "programs": []}
    unlike = reproducer.own_exports(step(), FakeProgress(), folder, {**captured, "0.4.33": other})
    assert unlike.problem.startswith("each release's own export holds other programs")


def test_the_reproducer_reads_the_export_of_the_release_running_it(tmp_path):
    """A ``by_release`` entry for the jax installed here is the one run: the other's files are
    garbage and never read."""
    tools = export_tools(REPO / ".nox", sys.executable)
    assert not isinstance(tools, str), tools
    script = tmp_path / "user.py"
    script.write_text("import jax, jax.numpy as jnp\nprint(jax.jit(jnp.sin)(jnp.ones(3)).sum())\n")
    environ = {**os.environ, EXPORT_DIR: str(tmp_path), EXPORT_TOOLS: str(tools)}
    environ["JAX_PLATFORMS"] = "cpu"
    run = [sys.executable, str(HOOK), str(tmp_path / "report.json"), str(script)]
    subprocess.run(run, cwd=tmp_path, env=environ, check=True, capture_output=True, timeout=300)
    listing = json.loads((tmp_path / "programs.json").read_text())
    for suffix in (".jaxexport", ".npz"):
        (tmp_path / f"program_01{suffix}").rename(tmp_path / f"program_51{suffix}")
        (tmp_path / f"program_01{suffix}").write_bytes(b"not a program")
    own = [{**listing["programs"][0], "file": "program_51"}]
    listing["by_release"] = {listing["jax"]: own, "0.0.1": listing["programs"]}
    (tmp_path / "programs.json").write_text(json.dumps(listing))
    (tmp_path / "repro.py").write_text(reproducer_text("test", "repro.py", "both", "x"))
    clean = {k: v for k, v in environ.items() if k != EXPORT_DIR}
    clean["PYTHONPATH"] = str(tools)
    ran = subprocess.run(
        [sys.executable, "repro.py"], cwd=tmp_path, env=clean, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads(ran.stdout.strip().splitlines()[-1])["p1_call_ms"] > 0


def calls_and_imports(text):
    """What a script calls and imports, as its syntax tree says."""
    import ast

    tree = ast.parse(text)
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return calls | {
        ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)
    }


def test_the_reproducer_is_a_fixed_template_whatever_text_it_is_given(tmp_path):
    """Issue 74, item 4: a script's file name and what its process listed (its jax version, a flag)
    fill the template as plain text or literals: never a call or an import of their own, and
    nothing of theirs runs."""
    marker = tmp_path / "PWNED"
    plain = reproducer_text(
        "A reproducer of user.py's step from jax 0.4.31 to 0.4.33", "repro_0123456789.py",
        "0.4.31", "0123456789", {"jax_enable_x64": True},
    )  # fmt: skip
    allowed = calls_and_imports(plain)
    code = f'import os; os.system("touch {marker}")'
    hostile = [
        f'0.4.30"); {code} #',
        f'0.4.30"""\n{code}\n"""',
        f"0.4.30'''\n{code}\n'''",
        "0.4.30\\",
        f"0.4.30\r{code}",
        f"0.4.30\u2028{code}",
        f"0.4.30\x0c\n{code}",
        "{title}{config}",
    ]
    for text in hostile:
        config = {"jax_enable_x64": text, text: True, "jax_debug_nans": float("nan")}
        written = reproducer_text(text, text, text, text, config)
        assert calls_and_imports(written) <= allowed, text
        assert written.count("jax.config.update(") == 1, "a known flag alone, its value a literal"
    written = reproducer_text(*hostile[1:5])
    (tmp_path / "programs.json").write_text(json.dumps({"programs": []}))
    (tmp_path / "repro.py").write_text(written)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    ran = subprocess.run(
        [sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**environ, "JAX_PLATFORMS": "cpu"},
    )  # fmt: skip
    assert ran.returncode == 0 and json.loads(ran.stdout) == {
        "compile_ms": 0.0, "run_ms": 0.0, "temp_bytes": 0
    }, ran.stderr[-2000:]  # fmt: skip
    assert not marker.exists()


def test_a_folder_or_link_planted_where_the_reproducer_s_files_go_is_removed_never_followed(
    tmp_path,
):
    """The script's process can write beside its export (the reproducer's folder is its export's
    grandparent): what it planted at a name the reproducer writes is removed, not written through
    and no traceback."""
    from harness.explain import reproducer
    from tests.explain.test_held_library import step

    captured, folder = tmp_path / "captured", tmp_path / "out"
    captured.mkdir()
    folder.mkdir()
    for name in ("program_01.jaxexport", "program_01.npz"):
        (captured / name).write_bytes(b"x")
    (folder / "programs.json").mkdir()
    (folder / "program_07").mkdir()
    (folder / "program_07" / "kept.txt").write_text("planted")
    (tmp_path / "user_file").write_text("the user's")
    (folder / "program_01.npz").symlink_to(tmp_path / "user_file")
    listing = {"jax": "0.4.31", "programs": [{"file": "program_01", "name": "f", "calls": 1}]}
    script = reproducer.write_reproducer(folder, captured, step(), listing)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["program_01.jaxexport", "program_01.npz", "programs.json", script.name]
    )
    assert (tmp_path / "user_file").read_text() == "the user's"
    assert not (folder / "program_01.npz").is_symlink()


def test_the_reproducer_reproduces_a_crash_where_its_processes_flip_the_same_way_round():
    """Judged on its counts at the step's thresholds, as the step was."""
    from harness.analysis.statuses import Ending
    from harness.explain.reproducer import status_reproduced
    from tests.explain.test_tried import ending_step as step
    from tests.explain.test_tried import ok, segfaults

    results = {"0.10.1": ok(), "0.10.2": segfaults()}
    found = status_reproduced(step(), results, Ending("ok", "SIGSEGV (exit 139)", "crashes"))
    assert found.reproduces
    assert found.ended == {
        "0.10.1": "ok in 3 of 3 processes",
        "0.10.2": "SIGSEGV (exit 139) in 3 of 3 processes",
    }
    both_ok = status_reproduced(
        step(), {"0.10.1": ok(), "0.10.2": ok()}, Ending("ok", "SIGSEGV (exit 139)", "crashes")
    )
    assert not both_ok.reproduces and both_ok.data()["reproduces"] is False
