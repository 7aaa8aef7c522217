"""A plain repro script in place of a case: ``--script FILE``.

It is the user's code and runs as such (``harness.measure.script_process``); only what becomes a
name or a path is checked here.  Stored as case ``script-<stem>`` with its content's SHA-256: a
changed script measures something else, so results of two versions are never mixed.  Standard
library only: the noxfile checks ``--script`` in nox's own environment.
"""

from __future__ import annotations

import hashlib
import io
import tokenize
from collections.abc import Sequence
from pathlib import Path

from harness.catalogue.discovery import CaseInfo
from harness.catalogue.script_deps import check_requires_python, collect
from harness.catalogue.sizes import SizeSpace
from harness.catalogue.subjects import PlainScript
from harness.errors import UsageError
from harness.names import name_problem
from harness.pins import Release
from harness.store.bounds import string_problem
from harness.store.files import DocumentProblem, read_bounded

PREFIX = "script-"
# A repro script is a page or two; reading a larger one whole (4 GB sparse) could exhaust memory.
MAX_SCRIPT_BYTES = 4 * 1024 * 1024


def script_name(path: Path) -> str:
    """``script-<stem>``: a script's results' case name; UsageError if it is not a name."""
    name = f"{PREFIX}{path.stem}"
    problem = name_problem(name)
    if problem:
        raise UsageError(
            f"script {str(path)[:120]!r}: its results would be stored as {problem}; rename the file"
        )
    return name


MAX_ARGS, MAX_ARG_CHARS = 64, 1000


def source_text(path: Path, content: bytes) -> str:
    """The script's text in the encoding Python reads: its PEP 263 cookie (``coding: latin-1``),
    else UTF-8 (a BOM too); UsageError when it is not such text."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(content).readline)
    except SyntaxError as exc:  # an unknown encoding named, or a cookie that contradicts a BOM
        raise UsageError(
            f"script {path} is not UTF-8 text, nor text in an encoding it declares ({exc.msg})"
        ) from None
    try:
        return content.decode(encoding).removeprefix("\ufeff")
    except (UnicodeDecodeError, LookupError):
        named = "UTF-8" if encoding.startswith("utf-8") else f"{encoding} (its coding cookie's)"
        raise UsageError(f"script {path} is not {named} text, so not a Python script") from None


# The Python every release of the table runs on (``harness.pins.Release.python``): a script's
# requires-python is checked against it before anything is installed, and against the exact
# interpreter once its venv is made.
RUNS_ON = Release.python


def read_script(
    path: Path,
    args: tuple[str, ...] = (),
    *,
    with_specs: Sequence[str] = (),
    requirements: Path | None = None,
) -> CaseInfo:
    """The script as a case of no sizes run with ``args``; UsageError naming what is wrong."""
    name = script_name(path)
    try:  # opened without blocking: a FIFO is refused, not waited on
        content = read_bounded(path, limit=MAX_SCRIPT_BYTES)
    except FileNotFoundError:
        if path.is_symlink():
            raise UsageError(f"script {path} is a link to nothing") from None
        raise UsageError(f"script not found: {path}") from None
    except DocumentProblem as exc:  # not a regular file, or larger than a repro script is
        raise UsageError(f"script {path} is {exc}") from None
    except OSError as exc:
        raise UsageError(f"script {path} cannot be read: {exc.strerror or exc}") from None
    text = source_text(path, content)
    if len(args) > MAX_ARGS or any(len(a) > MAX_ARG_CHARS or "\x00" in a for a in args):
        most = f"at most {MAX_ARGS} arguments of {MAX_ARG_CHARS} characters"
        raise UsageError(f"--script-arg: {most}, no NUL")
    for arg in args:
        # bytes the locale could not decode: no result, page or command line could hold it
        if string_problem(arg):
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")[:80]
            as_text = "give the script its arguments as text"
            raise UsageError(f"--script-arg {shown!r} is not UTF-8 text; {as_text}")
    declared = collect(text, path.name, with_specs, requirements)
    check_requires_python(declared, RUNS_ON)
    given = [word for spec in with_specs for word in ("--with", spec)]
    given += ["--requirements", str(requirements)] if requirements is not None else []
    digest = hashlib.sha256(content).hexdigest()
    source = PlainScript(path.name, digest, tuple(args), declared, tuple(given))
    return CaseInfo(
        name=name,
        path=path.resolve(),
        claim=(
            f"plain script {path.name}, run as it is: judged on its phases (process.import_ns, "
            "trace, lower, compile, run), its JSON numbers (json.FIELD) and the metric lines it "
            "prints"
        ),
        source=f"plain script {path.name}, sha256 {source.sha256[:12]}",
        space=SizeSpace({}, {}),
        anchors=[{}],
        subject=source,
    )
