"""A library's pytest-benchmark suite as a plain script the harness can run: ``watch --pytest-benchmark PATH``.

The suite runs unchanged: a small script (``wrapper_text``) runs ``pytest PATH --benchmark-json=FILE``
with the interpreter of the side's venv, once per case process, and the harness reads each benchmark's
rounds from FILE (``harness.measure.benchmark_json``).  The venv holds what the script declares: pytest,
pytest-benchmark, and the libraries the suite needs (``--with``), resolved for each release as a
script's are.

The suite's path reaches the script through ``SUITE_PATH`` in the environment, never through its text
or arguments, which results and pages record: a path names a home folder.  What identifies the suite
instead is a digest of its files (``suite_digest``), written into the script, so results of two versions
of a suite are never mixed, and a watch remembers a suite only while its files stay the same.
Standard library only.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from harness.errors import UsageError

SUITE_PATH = (
    "HARNESS_PYTEST_SUITE"  # not JAX_: results record JAX_ variables, and this one is a path
)
RUNNER = ("pytest", "pytest-benchmark")
# What a suite's behaviour depends on, as pytest collects it: test modules, conftests, configuration.
SUITE_FILES = ("*.py", "*.ini", "*.toml", "*.cfg", "*.json", "*.yaml", "*.yml", "*.txt")
MAX_FILES, MAX_BYTES = 2000, 64 * 2**20
SKIPPED_FOLDERS = {"__pycache__", ".git", ".nox", ".venv", ".pytest_cache", ".benchmarks"}
NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


def suite_files(suite: Path) -> list[Path]:
    """The files of the suite its digest covers, in a fixed order; UsageError when there is no such suite or it
    is larger than a benchmark suite is."""
    if suite.is_file():
        return [suite]
    if not suite.is_dir():
        raise UsageError(f"--pytest-benchmark {suite}: no such file or folder")
    found = sorted(
        path
        for pattern in SUITE_FILES
        for path in suite.rglob(pattern)
        if path.is_file()
        and not path.is_symlink()
        and not SKIPPED_FOLDERS & set(path.relative_to(suite).parts)
    )
    if len(found) > MAX_FILES:
        raise UsageError(
            f"--pytest-benchmark {suite}: {len(found)} files, more than the {MAX_FILES} a suite may have"
        )
    if not any(path.suffix == ".py" for path in found):
        raise UsageError(f"--pytest-benchmark {suite}: no Python file in it")
    return found


def suite_digest(suite: Path) -> str:
    """SHA-256 over the suite's files, each by its path inside the suite and its content."""
    digest, total = hashlib.sha256(), 0
    root = suite if suite.is_dir() else suite.parent
    for path in suite_files(suite):
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"--pytest-benchmark: {path} cannot be read: {exc.strerror}") from None
        total += len(content)
        if total > MAX_BYTES:
            raise UsageError(f"--pytest-benchmark {suite}: over {MAX_BYTES:,} bytes of files")
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(content).digest())
    return digest.hexdigest()


def wrapper_name(suite: Path) -> str:
    """The wrapper script's file name: ``pytest-<the suite's name>.py`` (stored as ``script-pytest-…``)."""
    stem = NAME_CHARS.sub("_", suite.resolve().stem).strip("_")[:60] or "suite"
    return f"pytest-{stem}.py"


def wrapper_text(digest: str) -> str:
    """The script that runs the suite once, its rounds to the file the harness names; what the suite needs
    besides is the command line's (``--with``)."""
    dependencies = ", ".join(f'"{r}"' for r in RUNNER)
    return f'''# /// script
# dependencies = [{dependencies}]
# ///
"""Written by jax-repro-harness's watch: runs a pytest-benchmark suite once, unchanged (suite sha256 {digest}).

The suite's path comes from ${SUITE_PATH}; the harness reads each benchmark's rounds from the JSON
pytest-benchmark writes to $HARNESS_BENCHMARK_JSON.
"""

import os
import sys

import pytest

sys.dont_write_bytecode = True  # nothing written into the suite's folders (pytest's rewritten modules neither)
# A pytest run of its own: an outer pytest-xdist run's worker variables would make pytest-benchmark take this
# run for one of its workers and disable itself.
for name in [name for name in os.environ if name.startswith("PYTEST_XDIST_")]:
    del os.environ[name]
sys.exit(
    pytest.main(
        [
            os.environ["{SUITE_PATH}"],
            "-q",
            "-p",
            "no:cacheprovider",
            "--benchmark-only",
            "--benchmark-json=" + os.environ["HARNESS_BENCHMARK_JSON"],
        ]
    )
)
'''
