"""A pytest-benchmark suite as a script: identified by its files' digest, never by where it lies."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.catalogue import benchmark_suite
from harness.catalogue.benchmark_suite import (
    CACHE,
    IMPORT_TIME,
    RUNNER,
    SUITE_PATH,
    suite_digest,
    wrapper_name,
    wrapper_text,
)
from harness.catalogue.script_deps import read_inline
from harness.errors import UsageError
from harness.host.environment import allowed_variables
from harness.install.venvs import uv_command
from harness.measure.benchmark_json import BENCHMARK_JSON, CUT_SHORT_NOTE
from harness.measure.import_times import parse
from harness.measure.script_hook import FAULT_AT
from tests.conftest import REPO


def suite(tmp_path, text="def test_b(benchmark):\n    benchmark(sum, [1])\n"):
    folder = tmp_path / "bench"
    folder.mkdir(exist_ok=True)
    (folder / "test_b.py").write_text(text)
    return folder


def test_the_digest_follows_the_files_and_not_where_they_lie(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = suite_digest(suite(tmp_path / "a")), suite_digest(suite(tmp_path / "b"))
    assert first == second
    changed = suite(tmp_path / "a")
    (changed / "conftest.py").write_text("# a fixture\n")
    assert suite_digest(changed) != first
    before = suite_digest(changed)
    (changed / "__pycache__").mkdir()
    (changed / "__pycache__" / "x.py").write_text("")
    assert suite_digest(changed) == before, "caches are not the suite"


def test_no_suite_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="no such file or folder"):
        suite_digest(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no Python file"):
        suite_digest(tmp_path / "empty")


def test_the_wrapper_declares_pytest_benchmark_and_names_no_path(tmp_path):
    folder = suite(tmp_path)
    text = wrapper_text(suite_digest(folder))
    requirements, _, notes = read_inline(text, "wrapper")
    assert requirements == ["pytest", "pytest-benchmark"] and notes == []
    assert str(tmp_path) not in text and SUITE_PATH in text and suite_digest(folder) in text
    assert wrapper_name(folder) == "pytest-bench.py"
    compile(text, "wrapper", "exec")


def test_a_compilation_cache_is_set_through_jax_config_in_the_venv_and_changes_the_script(tmp_path):
    """Issue 78 #4: the cache lies in the venv of the side (sys.prefix), set through jax.config,
    never a recorded JAX_ variable; the script differs, so results and the memory of a cached run
    are never mixed with an uncached one's."""
    digest = suite_digest(suite(tmp_path))
    cached, plain = wrapper_text(digest, compile_cache=True), wrapper_text(digest)
    compile(cached, "wrapper", "exec")
    assert cached != plain and "jax_compilation_cache_dir" not in plain
    assert 'os.environ["JAX' not in cached
    assert CACHE in cached
    program = f"import os, sys\n{CACHE}\nprint(jax.config.jax_compilation_cache_dir)\n"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == os.path.join(sys.prefix, "harness-compile-cache")


def test_the_variables_that_carry_the_suite_s_paths_are_never_recorded(tmp_path):
    """Every result records the JAX_* variables of its process: the suite's path (a home
    folder, say) and the scratch file's must not be among them."""
    environ = {SUITE_PATH: str(tmp_path / "bench"), BENCHMARK_JSON: str(tmp_path / "b.json")}
    assert allowed_variables({**environ, "JAX_ENABLE_X64": "1"}) == {"JAX_ENABLE_X64": "1"}


def test_what_pytest_reads_above_the_suite_and_through_links_is_in_its_digest(tmp_path):
    """Issue 57 #3: a conftest.py or pytest.ini above the watched folder, and a test module that is
    a link, are read by pytest; an edit to any of them is another suite, never "not measured
    again"."""
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    folder = suite(repo)
    before = suite_digest(folder)
    (repo / "conftest.py").write_text("import pytest\n")
    with_conftest = suite_digest(folder)
    assert with_conftest != before, "a conftest above the suite"
    (repo / "conftest.py").write_text("import pytest  # the fixture now does 100x the work\n")
    assert suite_digest(folder) != with_conftest
    (repo / "pytest.ini").write_text("[pytest]\naddopts = --benchmark-min-rounds=100\n")
    configured = suite_digest(folder)
    assert configured != with_conftest, "pytest's configuration file above the suite"
    (tmp_path / "conftest.py").write_text("# above pytest's rootdir: never loaded\n")
    assert suite_digest(folder) == configured, "the folder holding pytest.ini is the last one read"
    (folder / "conftest.py").write_text("# beside a file suite\n")
    alone = suite(elsewhere) / "test_b.py"
    assert suite_digest(folder / "test_b.py") != suite_digest(alone), "a file suite's own conftest"
    (folder / "conftest.py").unlink()

    shared = tmp_path / "shared_test_heavy.py"
    shared.write_text("def test_h(benchmark):\n    benchmark(sum, [1])\n")
    (folder / "test_heavy.py").symlink_to(shared)
    linked = suite_digest(folder)
    shared.write_text("def test_h(benchmark):\n    benchmark(sum, [1] * 100)\n")
    assert suite_digest(folder) != linked, "a test module that is a link: its content counts"
    unlinked = suite_digest(folder)
    (folder / "more").symlink_to(elsewhere / "bench", target_is_directory=True)
    assert suite_digest(folder) != unlinked, "pytest walks linked folders"
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    suite_digest(folder)  # a link back up is walked once, not for ever


def test_a_folder_far_larger_than_a_suite_is_refused_at_the_bound_in_one_line(
    tmp_path, monkeypatch
):
    """Issue 57 #12: ``--pytest-benchmark /`` was a traceback (a folder of /proc gone or
    unreadable), and /usr was walked whole (28,259 files) before the 2,000-file refusal."""
    with pytest.raises(UsageError, match=r"^--pytest-benchmark /: over "):
        suite_digest(Path("/"))
    big = tmp_path / "big"
    (big / "a").mkdir(parents=True)
    for number in range(benchmark_suite.MAX_FILES + 1):
        (big / "a" / f"test_{number}.py").write_text("")
    for number in range(30):
        (big / "z" / str(number)).mkdir(parents=True)
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(
        benchmark_suite.os, "scandir", lambda path: listed.append(path) or real_scandir(path)
    )
    with pytest.raises(UsageError, match="over the 2000 files a suite may have"):
        suite_digest(big)
    assert not [path for path in listed if "z" in Path(path).relative_to(big).parts], (
        "nothing walked past the bound"
    )
    monkeypatch.setattr(benchmark_suite, "MAX_ENTRIES", 40)
    with pytest.raises(UsageError, match="over 40 files and folders"):
        suite_digest(big)


@pytest.fixture(scope="module")
def pytest_benchmark_python(tmp_path_factory):
    """A venv holding pytest and pytest-benchmark, as a suite's side has (made with uv from its
    cache or the index)."""
    uv = uv_command()
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path_factory.mktemp("pytest-benchmark") / "venv"
    python = sys.executable
    made = subprocess.run(
        [*uv, "venv", "-q", "-p", python, str(venv)], capture_output=True, text=True, timeout=300
    )
    installed = (
        made.returncode == 0
        and not subprocess.run(
            [*uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *RUNNER],
            capture_output=True,
            text=True,
            timeout=600,
        ).returncode
    )
    if not installed:
        pytest.skip("pytest-benchmark could not be installed here")
    return venv / "bin" / "python"


SUITES = {
    "plain tests only": ("def test_p():\n    assert sum([1]) == 1\n", "ran no benchmark"),
    "a test that ends the process": (
        "import os\n\ndef test_b(benchmark):\n    os._exit(0)\n",
        "exited with code 0, but pytest-benchmark ran no benchmark",
    ),
    "no collection": (
        "import no_such_module_57\n\ndef test_b(benchmark):\n    benchmark(sum, [1])\n",
        "could not collect the suite (exit 2): test_b.py: E   ModuleNotFoundError: No module named "
        "'no_such_module_57'",
    ),
}


@pytest.mark.venv
@pytest.mark.parametrize("kind", list(SUITES))
def test_a_suite_where_no_benchmark_ran_fails_with_pytest_s_own_cause(
    tmp_path, pytest_benchmark_python, kind
):
    """Issue 57 #4: a suite of plain tests (skipped by --benchmark-only) was judged on pytest's
    process time alone, "no change found". #13: a suite that does not collect was reported with
    pytest-benchmark's warning, pytest's collection error never shown. Each process now fails with
    the cause as its detail's last line, which the watch says ("could not be measured … failed:
    …")."""
    text, cause = SUITES[kind]
    folder = suite(tmp_path, text)
    wrapper = tmp_path / "pytest-bench.py"
    wrapper.write_text(wrapper_text(suite_digest(folder)))
    program = (
        "import json, sys\nfrom pathlib import Path\n"
        "from harness.measure.script_process import run_script\n"
        "path = Path(sys.argv[1])\n"
        "done = run_script(path, sys.argv[2], 300)\n"
        "print(json.dumps({'status': str(done.status), 'detail': done.detail,"
        " 'programs': sorted(done.programs)}))\n"
    )
    digest = hashlib.sha256(wrapper.read_bytes()).hexdigest()
    environ = {**os.environ, SUITE_PATH: str(folder), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [str(pytest_benchmark_python), "-c", program, str(wrapper), digest],
        capture_output=True,
        text=True,
        env=environ,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    measured = json.loads(done.stdout.splitlines()[-1])
    assert measured["status"].endswith("failed"), measured
    last = measured["detail"].strip().splitlines()
    assert cause in "\n".join(last[-2:]), measured["detail"]
    assert "PytestBenchmarkWarning" not in last[-1]


LIBRARY = REPO / "tests" / "fixtures" / "watch" / "library"


def measured(python, suite_path, tmp_path, args=(), **environ):
    """One case process's run of the suite through its wrapper (``run_script``), as data."""
    wrapper = tmp_path / "pytest-benchmarks.py"
    wrapper.write_text(wrapper_text(suite_digest(suite_path)))
    program = (
        "import json, sys\nfrom pathlib import Path\n"
        "from harness.measure.script_process import run_script\n"
        "done = run_script(Path(sys.argv[1]), sys.argv[2], 300, args=tuple(sys.argv[3:]))\n"
        "print(json.dumps({'status': str(done.status), 'detail': done.detail, 'notes':"
        " list(done.notes), 'programs': {n: len(p.samples) for n, p in done.programs.items()},"
        " 'script': done.script}))\n"
    )
    digest = hashlib.sha256(wrapper.read_bytes()).hexdigest()
    env = {**os.environ, SUITE_PATH: str(suite_path), "PYTHONPATH": str(REPO), **environ}
    done = subprocess.run(
        [str(python), "-c", program, str(wrapper), digest, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.venv
def test_an_extra_process_under_importtime_reports_the_suite_s_own_imports(
    tmp_path, pytest_benchmark_python
):
    """Issue 78 #3: -X importtime writes to fd 2, which pytest captures while it collects; on
    optimistix the report then named pytest's imports alone, never sif2jax's minute."""
    library = tmp_path / "library"
    shutil.copytree(LIBRARY, library)
    report = tmp_path / "importtime.txt"
    args = ("-k", "solve", "--max-dimension=4", "--benchmark-max-time=0.005")
    measured(
        pytest_benchmark_python,
        library / "benchmarks",
        tmp_path,
        args,
        **{IMPORT_TIME: str(report)},
    )
    names = {m.name for root in parse(report.read_text()) for m in (root, *root.within())}
    assert any(name.endswith("_slow_import") for name in names), sorted(names)[:40]


@pytest.mark.venv
def test_a_library_s_suite_runs_as_its_maintainer_selects_and_each_benchmark_is_named_stably(
    tmp_path, pytest_benchmark_python
):
    """Issue 66 #1, #2, #5, #6: pytest's arguments pass through (-k, -m, the conftest's own option)
    to a suite shaped like optimistix's (settings in pyproject.toml, a relative import, a slow
    import); the whole selection runs in the one process, its slow import and collection paid once;
    each benchmark is named by its test and parameters, not pytest's running index, and nothing is
    written into the suite."""
    library = tmp_path / "library"
    shutil.copytree(LIBRARY, library)
    before = listing(library)
    # a round of each benchmark is what is asserted: pytest-benchmark's second of rounds is not
    args = ("-k", "solve or tolerance", "-m", "not slow", "--max-dimension=4")
    args += ("--benchmark-max-time=0.005",)
    imports = tmp_path / "imports.log"
    run = measured(
        pytest_benchmark_python, library / "benchmarks", tmp_path, args, FIXTURE_IMPORT_LOG=imports
    )
    assert run["status"].endswith("ok"), run["detail"]
    assert len(imports.read_text().split()) == 1, "one import for the six benchmarks"
    phases = run["script"]["suite_phases"]  # issue 78 #1: what the process cost, where
    assert phases["import_ns"] >= 0.5e9, "the slow import (a sleep of 0.5 s) is import"
    assert phases["collection_ns"] > 0 and phases["benchmarks_ns"] > 0
    parts = phases["import_ns"] + phases["collection_ns"] + phases["benchmarks_ns"]
    assert parts < run["script"]["wall_ns"], "the parts lie within the process"
    benches = sorted(name for name in run["programs"] if name.startswith("bench."))
    solves = [name for name in benches if "py_test_solve_" in name]
    assert solves == [
        "bench.test_optimise_py_test_solve_Bisection_tol_0_001_+bisection-Problem_dimension_1",
        "bench.test_optimise_py_test_solve_Bisection_tol_0_001_+bisection-Problem_dimension_4",
        "bench.test_optimise_py_test_solve_Newton_tol_1e-06_+newton-Problem_dimension_1",
        "bench.test_optimise_py_test_solve_Newton_tol_1e-06_+newton-Problem_dimension_4",
    ], benches
    tolerances = [name for name in benches if "test_tolerance" in name]
    assert tolerances == [
        "bench.test_optimise_py_test_tolerance_Newton_tol_0_001",
        "bench.test_optimise_py_test_tolerance_Newton_tol_1e-06",
    ], benches
    assert len(benches) == 6, "the selection: no slow one, no dimension 16, no plain test"
    assert all(run["programs"][name] >= 1 for name in benches), "each round a sample"
    assert listing(library) == before, "nothing written into the suite"
    fewer = ("-k", "solve", "--benchmark-max-time=0.005")
    again = measured(pytest_benchmark_python, library / "benchmarks", tmp_path, fewer)
    same = [name for name in again["programs"] if "py_test_solve_" in name]
    assert set(solves) < set(same), "the names stay when the selection changes"


@pytest.mark.venv
def test_a_run_that_would_pass_its_time_out_stops_after_the_benchmarks_that_fit_and_keeps_them(
    tmp_path, pytest_benchmark_python
):
    """Issue 66 #3: pytest-benchmark wrote its numbers at the end, so a process cut short kept none.
    Given a few seconds for eight benchmarks of about a second each, the run stops after those that
    fit, ends ok with each of them, and says where it stopped."""
    library = tmp_path / "library"
    shutil.copytree(LIBRARY, library)
    deadline = str(time.time() + 6)
    run = measured(
        pytest_benchmark_python,
        library / "benchmarks" / "test_paced.py",
        tmp_path,
        **{FAULT_AT: deadline},
    )
    assert run["status"].endswith("ok"), run["detail"]
    benches = [name for name in run["programs"] if name.startswith("bench.")]
    assert 1 <= len(benches) < 8, run
    assert all(run["programs"][name] == 5 for name in benches), "every round of each that ran"
    [note] = [n for n in run["notes"] if n.startswith(CUT_SHORT_NOTE)]
    assert f"stopped after {len(benches)} of 8 benchmarks" in note
    assert run["script"]["cut_short"] == {"ran": len(benches), "planned": 8}, "what a watch reads"


def test_a_suite_changed_while_watched_is_a_fault_of_the_run_never_a_regression(tmp_path):
    """Issue 74 #6: a run that emptied the suite's tests/ was called a regression. The suite is
    read-only to the run: its digest after is its digest before, else the run is a fault."""
    folder = suite(tmp_path)
    digest = suite_digest(folder)
    benchmark_suite.unchanged(folder, digest)
    (folder / "test_b.py").write_text("def test_b(benchmark):\n    benchmark(sum, [2])\n")
    with pytest.raises(UsageError, match="a fault of the run, not a regression") as fault:
        benchmark_suite.unchanged(folder, digest)
    assert str(tmp_path) not in str(fault.value), "the suite's path names a home folder"


@pytest.mark.venv
def test_a_suite_s_temporary_files_lie_in_the_scratch_and_a_usage_error_is_said_as_one(
    tmp_path, pytest_benchmark_python
):
    """Issue 74 #5/#6: pytest's basetemp (tmp_path) is the harness's scratch, never the suite nor
    a shared /tmp folder; R8-16: a usage error of pytest's was `exit 4 (rootdir)`, named by
    pytest's last line."""
    folder = suite(
        tmp_path,
        "import os\n\ndef test_b(benchmark, tmp_path):\n"
        "    scratch = os.path.dirname(os.environ['HARNESS_BENCHMARK_JSON'])\n"
        "    assert str(tmp_path).startswith(scratch + os.sep), tmp_path\n"
        "    (tmp_path / 'x').write_text('x')\n    benchmark(sum, [1])\n",
    )
    before = listing(folder)
    run = measured(pytest_benchmark_python, folder, tmp_path)
    assert run["status"].endswith("ok"), run["detail"]
    assert listing(folder) == before, "nothing written into the suite"
    # Issue 74 #6: `--basetemp=tests` emptied the suite's tests/; refused on the command line, and
    # were it to reach the wrapper, the wrapper's own --basetemp (pytest's last) stands.
    (folder / "tests").mkdir()
    (folder / "tests" / "keep.txt").write_text("the suite's own")
    before = listing(folder)
    run = measured(pytest_benchmark_python, folder, tmp_path, args=("--basetemp=tests",))
    assert run["status"].endswith("ok"), run["detail"]
    assert listing(folder) == before, "the suite's tests/ kept"
    refused = measured(pytest_benchmark_python, folder, tmp_path, args=("--no-such-option",))
    assert refused["status"].endswith("failed"), refused
    last = refused["detail"].strip().splitlines()[-1]
    assert "pytest refused the suite's arguments (--pytest-args): a usage error" in last
