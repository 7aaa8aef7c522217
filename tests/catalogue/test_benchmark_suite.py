"""A pytest-benchmark suite as a script: identified by its files' digest, never by where it lies."""

import pytest

from harness.catalogue.benchmark_suite import SUITE_PATH, suite_digest, wrapper_name, wrapper_text
from harness.catalogue.script_deps import read_inline
from harness.errors import UsageError
from harness.host.environment import allowed_variables
from harness.measure.benchmark_json import BENCHMARK_JSON


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


def test_the_variables_that_carry_the_suite_s_paths_are_never_recorded(tmp_path):
    """Every result records the JAX_* variables of its process: the suite's path (a home folder, say) and the
    scratch file's must not be among them."""
    environ = {SUITE_PATH: str(tmp_path / "bench"), BENCHMARK_JSON: str(tmp_path / "b.json")}
    assert allowed_variables({**environ, "JAX_ENABLE_X64": "1"}) == {"JAX_ENABLE_X64": "1"}
