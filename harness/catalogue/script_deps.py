"""What a plain script needs besides JAX: its PEP 723 block, ``--with SPEC``, ``--requirements
FILE``, read into one typed ``Declared`` of canonical PEP 508 requirements.

All of it is untrusted input, so only plain requirements on the package index are taken: no direct
references, paths or pip options, none of which may become a path or reach another index.  A
requirement on jax, jaxlib or a JAX plugin is refused: the release under test is the harness's.  The
script's ``[tool]`` table is not applied (the harness resolves each release's set itself); a
``[tool.uv]`` table is said in a note.  Standard library and ``packaging`` only: the noxfile checks
a command line in nox's own environment.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.errors import UsageError
from harness.names import path_problem
from harness.store.files import DocumentProblem, read_bounded

# PEP 723's reference regex, but for an empty block (nothing between its markers): uv reads none.
BLOCK = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)*)^# ///$")
BLOCK_TYPE = "script"
# PEP 723's fields; anything else at the top level is most likely misspelt, else silently dropped.
KNOWN_KEYS = frozenset({"dependencies", "requires-python", "tool"})
# A requirements file is a few dozen lines; read whole, a huge one would exhaust memory.
MAX_REQUIREMENTS_BYTES = 256 * 1024
MAX_LINE_CHARS = 1000
# A script needs a few libraries; a project's lock file, a few hundred: beyond this, no script's.
MAX_REQUIREMENTS = 500
# Which option picks the release under test, for the refusal of a requirement on JAX itself.
JAX_OPTIONS = "--jax for one release, --good/--bad for a bisect, --from/--to for a range"
# JAX itself, its plugins and PJRT builds (jax-cuda12-plugin, jax-rocm60-pjrt, ...), Apple's and
# TPU's builds: all are part of the release under test.  Names as PEP 503 normalizes them.
JAX_PACKAGE = re.compile(
    r"jax|jaxlib|jax-metal|jax-tpu|libtpu|libtpu-nightly|jax-(cuda|rocm)[0-9]*-(plugin|pjrt)"
)


@dataclass(frozen=True)
class Declared:
    """Canonical requirements, once each in order, where each came from, and ``requires-python``."""

    requirements: tuple[str, ...] = ()
    # one per requirement: "repro.py (inline metadata)", "--with", "reqs.txt:3"
    sources: tuple[str, ...] = ()
    requires_python: str | None = None
    script: str | None = None  # the script's file name, for messages
    notes: tuple[str, ...] = ()  # what was read but is not applied (its [tool.uv] table), said once

    def key(self) -> str:
        """SHA-256 of the canonical requirements, whatever their source; ``requires-python`` is
        checked against the interpreter, never resolved, so it is left out."""
        return hashlib.sha256(json.dumps(list(self.requirements)).encode()).hexdigest()


def is_jax_package(name: str) -> bool:
    return JAX_PACKAGE.fullmatch(canonicalize_name(name)) is not None


def canonical(text: str, where: str) -> str:
    """``text`` as one canonical PEP 508 requirement; UsageError naming ``where`` when it is not
    one, is a direct reference (a URL or path), or asks for JAX itself."""
    if len(text) > MAX_LINE_CHARS:
        most = f"at most {MAX_LINE_CHARS}"
        raise UsageError(f"{where}: a requirement of {len(text)} characters is not one ({most})")
    stripped = text.strip()
    said, on_the_index = f"{where}: {stripped[:60]!r}", "only requirements on the package index"
    if stripped.startswith("-"):
        raise UsageError(
            f"{said} is an installer option; only requirements are taken (name, extras, versions, "
            "markers), from the package index the harness uses"
        )
    try:
        requirement = Requirement(stripped)
    except InvalidRequirement as exc:
        if _looks_like_location(stripped):
            raise UsageError(f"{said} is a URL or path; {on_the_index} are taken") from None
        problem = str(exc).splitlines()[0]
        raise UsageError(f"{said} is not a requirement (PEP 508): {problem}") from None
    if requirement.url:
        raise UsageError(f"{said} is a direct reference (name @ URL); {on_the_index} are taken")
    requirement.name = canonicalize_name(requirement.name)
    if is_jax_package(requirement.name):
        choose = f"the release under test is the harness's to choose ({JAX_OPTIONS})"
        raise UsageError(f"{said} asks for {requirement.name}, but {choose}; leave it out")
    requirement.extras = {canonicalize_name(extra) for extra in requirement.extras}
    return str(requirement)


def _looks_like_location(text: str) -> bool:
    # A bare path or URL is no PEP 508 requirement, and the parser's message puzzles: named as such.
    return (
        "://" in text
        or text.startswith((".", "/", "~", "\\"))
        or text.endswith((".whl", ".tar.gz", ".zip"))
    )


def read_inline(text: str, script: str) -> tuple[list[str], str | None, list[str]]:
    """The ``dependencies`` and ``requires-python`` of a script's ``# /// script`` block, and notes
    on what is not applied; a malformed block is a UsageError naming ``script``."""
    # As Python reads the file (universal newlines): a block in a CRLF or CR-only file is a block.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = [match for match in BLOCK.finditer(text) if match.group("type") == BLOCK_TYPE]
    if len(blocks) > 1:
        raise UsageError(
            f"script {script}: {len(blocks)} `# /// script` blocks; PEP 723 allows one"
        )
    if not blocks:
        if re.search(rf"(?m)^# /// {BLOCK_TYPE}$", text):
            between = "with a `# ///` line (every line between must start with `#`)"
            raise UsageError(f"script {script}: its `# /// script` block never closes {between}")
        return [], None, []
    content = "".join(
        line[2:] if line.startswith("# ") else line[1:]
        for line in blocks[0].group("content").splitlines(keepends=True)
    )
    where = f"script {script}, `# /// script` block"
    try:
        table = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: not valid TOML: {exc}") from None
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        known = "PEP 723 knows dependencies, requires-python, [tool]"
        raise UsageError(f"{where}: unknown key {unknown[0]!r} ({known})")
    dependencies = table.get("dependencies", [])
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        raise UsageError(f"{where}: `dependencies` must be a list of requirement strings")
    requirements = [canonical(item, f"{where}, dependencies") for item in dependencies]
    requires_python = _requires_python(table.get("requires-python"), where)
    return requirements, requires_python, _tool_notes(table, script)


def _tool_notes(table: dict[str, object], script: str) -> list[str]:
    tool = table.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    if not isinstance(uv, dict) or not uv:
        return []
    keys = ", ".join(sorted(str(key)[:40] for key in uv)[:5])
    more = f" and {len(uv) - 5} more" if len(uv) > 5 else ""
    return [
        f"script {script}: its [tool.uv] settings ({keys}{more}) are not applied: the harness "
        "resolves each release's set itself, by --deps and --hold, from uv's index (UV_INDEX_URL)"
    ]


def _requires_python(value: object, where: str) -> str | None:
    if value is None:
        return None
    field = f"{where}: `requires-python`"
    if not isinstance(value, str):
        raise UsageError(f'{field} must be a version specifier string, like ">=3.11"')
    try:
        return str(SpecifierSet(value))
    except InvalidSpecifier:
        raise UsageError(f"{field} {value[:60]!r} is not a version specifier") from None


def check_requires_python(declared: Declared, python_version: str) -> None:
    """Refuse an interpreter outside ``requires-python`` before anything is installed; a minor
    release ("3.12") passes when any of its patch releases would do (checked again once known)."""
    if declared.requires_python is None:
        return
    try:
        version = Version(python_version)
    except InvalidVersion:
        raise UsageError(f"{python_version[:40]!r} is not a Python version") from None
    wanted = SpecifierSet(declared.requires_python)
    if len(version.release) >= 3:
        candidates = [version]
    else:
        # Patch releases of one minor stay below 100 (3.8 ended at 3.8.20).
        major, minor = (*version.release, 0)[:2]
        candidates = [Version(f"{major}.{minor}.{patch}") for patch in range(100)]
    if not any(wanted.contains(candidate, prereleases=True) for candidate in candidates):
        who = f"script {declared.script}" if declared.script else "the script"
        needs = f"{who} requires Python {declared.requires_python} (requires-python)"
        raise UsageError(f"{needs}, but the interpreter is Python {python_version}")


def parse_with(values: Iterable[str]) -> list[str]:
    """``--with SPEC`` values, each one PEP 508 requirement, in canonical form."""
    return [canonical(value, "--with") for value in values]


def read_requirements(path: Path) -> list[tuple[str, str]]:
    """(requirement, "FILE:LINE") per line; options, continuations, URLs and paths refused."""
    shown = str(path)[:200]
    problem = path_problem(str(path))
    if problem:
        raise UsageError(f"--requirements {shown}: {problem}")
    try:
        # a byte-order mark, as Windows editors write, is no requirement
        text = read_bounded(path, limit=MAX_REQUIREMENTS_BYTES).decode("utf-8-sig")
    except DocumentProblem as exc:
        raise UsageError(f"--requirements: {shown} is {exc}") from None
    except FileNotFoundError:
        raise UsageError(f"--requirements: {shown} not found") from None
    except OSError as exc:
        raise UsageError(f"--requirements: {shown} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--requirements: {shown} is not UTF-8 text") from None
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{path.name}:{number}"
        # pip's rule: a comment starts at a `#` at the line's start or after whitespace.
        content = re.sub(r"(^|\s)#.*", "", line).strip()
        if not content:
            continue
        if content.endswith("\\"):
            one = "write each requirement on one line"
            raise UsageError(f"{where}: a line continued with `\\` is not taken; {one}")
        found.append((canonical(content, where), where))
    return found


def collect(
    script_text: str | None = None,
    script: str = "",
    with_specs: Sequence[str] = (),
    requirements_file: Path | None = None,
) -> Declared:
    """What a script run needs besides JAX: block, ``--with``, ``--requirements``; each once."""
    requires_python = None
    notes: list[str] = []
    pairs: list[tuple[str, str]] = []
    if script_text is not None:
        inline, requires_python, notes = read_inline(script_text, script)
        pairs += [(requirement, f"{script} (inline metadata)") for requirement in inline]
    pairs += [(requirement, "--with") for requirement in parse_with(with_specs)]
    if requirements_file is not None:
        pairs += read_requirements(requirements_file)
    seen: dict[str, str] = {}
    for requirement, source in pairs:
        seen.setdefault(requirement, source)
    if len(seen) > MAX_REQUIREMENTS:
        first = ", ".join(list(seen)[:3])
        most = f"a script may declare at most {MAX_REQUIREMENTS}"
        raise UsageError(f"{len(seen)} requirements declared ({first}, ...); {most}")
    return Declared(
        tuple(seen), tuple(seen.values()), requires_python, script or None, tuple(notes)
    )
