"""A library's pytest-benchmark suite run unchanged as a plain script: ``watch --pytest-benchmark``.

A small script (``wrapper_text``) runs ``pytest ARGS --benchmark-only`` in the suite's folder once
per case process; a plugin of its own writes each benchmark's rounds to FILE as soon as it finishes
and stops before the process's time-out, so what finished is kept (``measure.benchmark_json``).

The suite's path reaches the script through ``SUITE_PATH`` in the environment, never its text or
arguments, which results record: a path names a home folder.  A digest of its files and of the
conftests and configuration above it (``suite_digest``) identifies the suite instead, so results of
two versions of a suite are never mixed.  Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import re
from fnmatch import fnmatch
from pathlib import Path

from harness.errors import UsageError
from harness.store.files import DocumentProblem, read_bounded

# not JAX_: results record JAX_ variables, and this one is a path
SUITE_PATH = "HARNESS_PYTEST_SUITE"
RUNNER = ("pytest", "pytest-benchmark")
# What a suite's behaviour depends on, as pytest collects it: tests, conftests, configuration.
SUITE_FILES = ("*.py", "*.ini", "*.toml", "*.cfg", "*.json", "*.yaml", "*.yml", "*.txt")
MAX_FILES, MAX_BYTES = 2000, 64 * 2**20
# Entries (files and folders) looked at before a folder is refused as larger than a suite: `/usr` is
# refused after these, not after walking all of it.
MAX_ENTRIES = 20_000
SKIPPED_FOLDERS = {"__pycache__", ".git", ".nox", ".venv", ".pytest_cache", ".benchmarks"}
NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
# What pytest reads above the suite's folder: its configuration file and the conftests from the
# folder that holds it (pytest's rootdir) down.  A folder holding one of these with pytest's section
# is that rootdir.
ABOVE = ("conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
ROOT_MARKS = {
    "pytest.ini": b"",
    ".pytest.ini": b"",
    "pyproject.toml": b"[tool.pytest",
    "tox.ini": b"[pytest]",
    "setup.cfg": b"[tool:pytest]",
}
MAX_LEVELS = 64


def _too_many(suite: Path, what: str) -> UsageError:
    return UsageError(f"--pytest-benchmark {suite}: {what}; no benchmark suite is that large")


def _walk(suite: Path) -> list[tuple[str, Path]]:
    """The suite folder's files as pytest collects them: links followed, each folder once;
    UsageError once it is larger than a suite, or a folder is unreadable."""
    found: list[tuple[str, Path]] = []
    seen: set[tuple[int, int]] = set()
    looked, stack = 0, [suite]
    while stack:
        folder = stack.pop()
        try:
            info = folder.stat()
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            raise UsageError(
                f"--pytest-benchmark {suite}: {folder} cannot be read ({exc.strerror or exc})"
            ) from None
        looked += len(entries)
        if looked > MAX_ENTRIES:
            raise _too_many(suite, f"over {MAX_ENTRIES:,} files and folders")
        folders = []
        for entry in entries:
            path = Path(entry.path)
            if _is(entry, "dir"):
                if entry.name not in SKIPPED_FOLDERS:
                    folders.append(path)
            elif _is(entry, "file") and any(fnmatch(entry.name, p) for p in SUITE_FILES):
                found.append((path.relative_to(suite).as_posix(), path))
        if len(found) > MAX_FILES:
            raise _too_many(suite, f"over the {MAX_FILES} files a suite may have")
        stack += reversed(folders)  # walked in order of name
    return sorted(found)


def _is(entry: os.DirEntry[str], kind: str) -> bool:
    """Whether an entry is a folder (or a file), its link followed; a dangling link is neither."""
    try:
        return entry.is_dir() if kind == "dir" else entry.is_file()
    except OSError:
        return False


def _is_rootdir(folder: Path) -> bool:
    for name, mark in ROOT_MARKS.items():
        path = folder / name
        if path.is_file():
            try:
                if mark in read_bounded(path, limit=MAX_BYTES):
                    return True
            except (OSError, DocumentProblem):
                return True  # a configuration pytest cannot read either: no folder above is reached
    return False


def files_above(suite: Path) -> list[tuple[str, Path]]:
    """The conftests and pytest configuration above the suite, up to its rootdir."""
    resolved = suite.resolve()
    folder, level = (resolved, 1) if resolved.is_dir() else (resolved.parent, 0)
    if level:
        if _is_rootdir(folder):
            return []
        folder = folder.parent
    found: list[tuple[str, Path]] = []
    for _ in range(MAX_LEVELS):
        found += [
            ("../" * level + name, folder / name) for name in ABOVE if (folder / name).is_file()
        ]
        if _is_rootdir(folder) or folder.parent == folder:
            break
        folder, level = folder.parent, level + 1
    return found


def suite_files(suite: Path) -> list[tuple[str, Path]]:
    """The suite's files, then those above it pytest reads; UsageError: no suite, or a huge one."""
    if suite.is_file():
        own = [(suite.name, suite)]
    elif not suite.is_dir():
        raise UsageError(f"--pytest-benchmark {suite}: no such file or folder")
    else:
        own = _walk(suite)
    if not any(name.endswith(".py") for name, _ in own):
        raise UsageError(f"--pytest-benchmark {suite}: no Python file in it")
    return own + files_above(suite)


def suite_digest(suite: Path) -> str:
    """SHA-256 over the suite's files, each by its path from the suite and its content."""
    digest, total = hashlib.sha256(), 0
    for name, path in suite_files(suite):
        try:
            content = read_bounded(path, limit=MAX_BYTES)
        except (OSError, DocumentProblem) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise UsageError(f"--pytest-benchmark: {path} cannot be read: {why}") from None
        total += len(content)
        if total > MAX_BYTES:
            raise UsageError(f"--pytest-benchmark {suite}: over {MAX_BYTES:,} bytes of files")
        digest.update(name.encode() + b"\0")
        digest.update(hashlib.sha256(content).digest())
    return digest.hexdigest()


def unchanged(suite: Path, digest: str) -> None:
    """UsageError where the suite's files are not those a watch began with: a fault of the run
    (the suite, or its arguments, wrote into its folder), never a change of JAX's."""
    now = suite_digest(suite)
    if now != digest:
        raise UsageError(
            f"--pytest-benchmark {suite.name}: the suite's files changed while it was watched "
            f"(sha256 {digest[:12]}, now {now[:12]}): a fault of the run, not a regression, and "
            "nothing of it is judged (does a test or an argument write into the suite's folder?)"
        )


def wrapper_name(suite: Path) -> str:
    """``pytest-<the suite's name>.py``: the wrapper's file name (stored as ``script-pytest-…``)."""
    stem = NAME_CHARS.sub("_", suite.resolve().stem).strip("_")[:60] or "suite"
    return f"pytest-{stem}.py"


DEADLINE = "HARNESS_SUITE_DEADLINE_UNIX_S"  # when the suite must have stopped, in Unix seconds
# An extra process under -X importtime writes its report here; not JAX_: results never record it.
IMPORT_TIME = "HARNESS_IMPORT_TIME"


def wrapper_text(digest: str, compile_cache: bool = False) -> str:
    """The script that runs the suite once with the maintainer's arguments.  ``compile_cache``:
    JAX's persistent compilation cache in the venv's folder, set through ``jax.config`` (a ``JAX_*``
    variable would be recorded) and part of the script, so cached and uncached runs are never mixed.
    """
    dependencies = ", ".join(f'"{r}"' for r in RUNNER)
    return (
        WRAPPER.replace("@DEPENDENCIES@", dependencies)
        .replace("@DIGEST@", digest)
        .replace("@SUITE_PATH@", SUITE_PATH)
        .replace("@DEADLINE@", DEADLINE)
        .replace("@IMPORT_TIME@", IMPORT_TIME)
        .replace("@COMPILE_CACHE@", CACHE if compile_cache else "")
    )


# The venv's own folder (sys.prefix): a release's cache stays with its venv, and a CI cache of
# ``.nox`` carries it.  Every compilation is cached, not only those over a second.
CACHE = """
import jax  # noqa: E402 - timed as an import

try:
    cache = os.path.join(sys.prefix, "harness-compile-cache")
    jax.config.update("jax_compilation_cache_dir", cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
except AttributeError as exc:  # a release without the option: the suite runs, uncached, and says so
    print(f"harness: no persistent compilation cache on this jax: {exc}", file=sys.stderr)
"""


WRAPPER = '''# /// script
# dependencies = [@DEPENDENCIES@]
# ///
"""Written by jax-repro-harness's watch: runs a pytest-benchmark suite once, unchanged (suite sha256 @DIGEST@).

pytest runs in the suite's folder ($@SUITE_PATH@; a file suite: in its folder, on that file), with this
script's arguments as its own: the maintainer's selection (-k, -m, node ids, the suite's options). Each
benchmark's rounds go to $HARNESS_BENCHMARK_JSON, in pytest-benchmark's form, as soon as it finishes, under a
name of its test and parameters ("harness_name"; pytest numbers a parameter it cannot spell, and the number
moves when the parameters do). A run that would not finish before $@DEADLINE@ stops after the benchmark
that ends in time, and says so in the file: what finished is kept. The file also says how long the process
spent in import statements until the suite was collected and in the rest of its collection ("harness_phases").
A run where no benchmark ran (plain tests
only, a suite that does not collect) fails, its cause the last line on standard error: never judged on the
time pytest took.
"""

import builtins
import hashlib
import json
import os
import re
import sys
import threading
import time


class Imports:
    """The time this process spends in import statements (the outermost of nested ones, on the main
    thread) until pytest has collected the suite: a suite's own imports and pytest's. Then the plain
    import is put back, so nothing of this runs while a benchmark is timed."""

    def __init__(self):
        self.ns, self.depth, self.plain = 0, 0, builtins.__import__
        self.thread = threading.get_ident()
        builtins.__import__ = self.timed

    def timed(self, *args, **kwargs):
        if self.depth or threading.get_ident() != self.thread:
            return self.plain(*args, **kwargs)
        self.depth, started = 1, time.perf_counter_ns()
        try:
            return self.plain(*args, **kwargs)
        finally:
            self.ns += time.perf_counter_ns() - started
            self.depth = 0

    def stop(self):
        builtins.__import__ = self.plain


imports = Imports()
import pytest  # noqa: E402 - timed as an import
@COMPILE_CACHE@

sys.dont_write_bytecode = True  # nothing written into the suite's folders (pytest's rewritten modules neither)
# A pytest run of its own: an outer pytest-xdist run's worker variables would make pytest-benchmark take this
# run for one of its workers and disable itself.
for name in [name for name in os.environ if name.startswith("PYTEST_XDIST_")]:
    del os.environ[name]
PLAIN = (str, int, float, bool, complex, type(None))
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def spelled(value):
    """A parameter's value in a few characters that stay the same from run to run."""
    if isinstance(value, PLAIN):
        return str(value)[:40]
    if isinstance(value, (tuple, list)):  # (solver, "its name"): each part
        return "+".join(spelled(part) for part in value)[:60]
    named = getattr(value, "__qualname__", None)
    if named is None:  # an instance: its class, and its fields where they are a few plain ones
        named = type(value).__qualname__
        fields = getattr(value, "__dict__", None)
        if isinstance(fields, dict) and 0 < len(fields) <= 3:
            if all(isinstance(field, PLAIN) for field in fields.values()):
                named += "(" + ",".join(f"{k}={v}" for k, v in fields.items()) + ")"
    return re.sub(r"[^A-Za-z0-9_.+=(),-]+", "_", str(named))[:60]


def stable_id(item):
    """The test's parameters as pytest spells them, each number pytest made up replaced by its value."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return ""
    said = callspec.id
    for name, value in callspec.params.items():
        if not isinstance(value, PLAIN):
            made_up = rf"(?<![A-Za-z0-9_]){re.escape(name)}[0-9]+(?![A-Za-z0-9_])"
            said = re.sub(made_up, lambda _, value=value: spelled(value), said)
    return said


def held(item):
    """A short digest of what a test's parameters hold (an object's fields where it prints as its
    address), the same from run to run."""
    said = []
    for value in getattr(item, "callspec", None) and item.callspec.params.values() or ():
        text = repr(value)
        if ADDRESS.search(text) and hasattr(value, "__dict__"):
            text += repr(sorted((k, repr(v)) for k, v in vars(value).items()))
        said.append(ADDRESS.sub("", text))
    return hashlib.sha256(repr(said).encode()).hexdigest()[:6]


class Suite:
    """The modules pytest could not collect, and each benchmark as it finishes."""

    def __init__(self, path, deadline):
        self.path, self.deadline = path, deadline
        self.errors, self.benchmarks, self.names = [], [], {}
        self.planned, self.longest, self.cut, self.failed = 0, 0.0, "", 0
        self.phases = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(self, session):
        """How long pytest took to collect, its imports apart (``harness_phases``)."""
        started, imported = time.perf_counter_ns(), imports.ns
        yield
        imports.stop()
        during = imports.ns - imported
        self.phases = {"import_ns": imports.ns, "collection_ns": time.perf_counter_ns() - started - during}

    def pytest_collectreport(self, report):
        if report.failed:
            lines = [line.strip() for line in str(report.longrepr).splitlines() if line.strip()]
            last = lines[-1] if lines else "error"
            module = report.nodeid.split("::")[0].rsplit("/", 1)[-1]  # the folders above may name a home
            self.errors.append(f"{module or 'the suite'}: {last}")

    def pytest_collection_finish(self, session):
        benchmarks = [item for item in session.items if "benchmark" in getattr(item, "fixturenames", ())]
        self.planned = len(benchmarks)
        named = {}
        for item in benchmarks:
            module = item.nodeid.split("::")[0].rsplit("/", 1)[-1]
            params = stable_id(item)
            name = f"{module}::{getattr(item, 'originalname', None) or item.name}"
            named.setdefault(name + (f"[{params}]" if params else ""), []).append(item)
        for name, items in named.items():  # two values spelled alike: told apart by what they hold
            told = {item.nodeid: held(item) for item in items}
            for number, item in enumerate(items, start=1):
                alike = list(told.values()).count(told[item.nodeid]) > 1  # then pytest's order
                apart = f"-{told[item.nodeid]}" + (f"-{number}" if alike else "")
                self.names[item.nodeid] = name if len(items) == 1 else name + apart

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        started = time.time()
        yield
        self.longest = max(self.longest, time.time() - started)
        if nextitem is not None and self.deadline and time.time() + 1.5 * self.longest + 1 > self.deadline:
            self.cut = (
                f"stopped after {len(self.benchmarks)} of {self.planned} benchmarks: the next would not "
                f"have finished before the time-out (the longest took {self.longest:.0f} s)"
            )
            item.session.shouldstop = self.cut

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield
        fixture = getattr(item, "funcargs", {}).get("benchmark")
        data = getattr(getattr(getattr(fixture, "stats", None), "stats", None), "data", None)
        if data:
            self.benchmarks.append(
                {
                    "name": item.name,
                    "fullname": item.nodeid,
                    "harness_name": self.names.get(item.nodeid, item.nodeid),
                    "stats": {"data": [float(value) for value in data]},
                }
            )
            self.write()

    def pytest_sessionfinish(self, session):
        self.failed = session.testsfailed

    def write(self):
        document = {"benchmarks": self.benchmarks, "harness_phases": self.phases}
        if self.cut:  # what a watch reads: how many ran of how many, and why it stopped
            ran = {"ran": len(self.benchmarks), "planned": self.planned, "said": self.cut}
            document["harness_cut_short"] = ran
        with open(self.path + ".part", "w", encoding="utf-8") as handle:
            json.dump(document, handle)
        os.replace(self.path + ".part", self.path)


given = os.environ["@SUITE_PATH@"]
folder, own = (given, []) if os.path.isdir(given) else (os.path.dirname(given), [os.path.basename(given)])
os.chdir(folder)
suite = Suite(os.environ["HARNESS_BENCHMARK_JSON"], float(os.environ.get("@DEADLINE@") or 0))
scratch = os.path.dirname(suite.path)  # the harness's, for this process: nothing written in the suite
storage, temporary = os.path.join(scratch, "pytest-benchmark"), os.path.join(scratch, "pytest-tmp")
fixed = ["-q", "-p", "no:cacheprovider", "--benchmark-only", "--benchmark-storage=file://" + storage]
fixed.append("--basetemp=" + temporary)  # tmp_path too: the last --basetemp is pytest's
if os.environ.get("@IMPORT_TIME@"):  # -X importtime writes to fd 2, which pytest's capture takes
    fixed.append("--capture=sys")  # while it collects: the suite's own imports would go unread
code = pytest.main([*own, *sys.argv[1:], *fixed], plugins=[suite])
if int(code) == pytest.ExitCode.USAGE_ERROR:  # said as what it is, not by pytest's last line (rootdir: …)
    print("pytest refused the suite's arguments (--pytest-args): a usage error, above", file=sys.stderr)
    sys.exit(4)
if suite.cut and suite.benchmarks:
    suite.write()
    print(f"pytest-benchmark: {suite.cut}", file=sys.stderr)
    code = 1 if suite.failed else 0
if suite.errors:
    said = "; ".join(suite.errors)
    print(f"pytest could not collect the suite (exit {int(code)}): {said}", file=sys.stderr)
    sys.exit(int(code) or 2)
if int(code) == 0 and not suite.benchmarks:
    said = "no test of the suite used the benchmark fixture (--benchmark-only skips the others)"
    if sys.argv[1:]:
        said += ", or none is in the selection (its arguments)"
    print(f"pytest-benchmark ran no benchmark: {said}", file=sys.stderr)
    sys.exit(5)
sys.exit(code)
'''  # noqa: E501
