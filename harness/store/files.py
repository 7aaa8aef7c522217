"""Files read from untrusted folders, and files written into output folders.

Reading: a result or calibration file is input, read only if it is a regular file (a FIFO would
block, ``/dev/zero`` never end) within ``store.bounds``; each refusal a ``DocumentProblem``.

Writing: an output folder may hold planted links.  ``output_folder`` refuses a link where a folder
is expected; ``replace_file`` writes a fresh temporary file and renames it over the final name,
replacing a link rather than writing through it.  A file the user named that is no regular file
(``/dev/stdout``, a FIFO, ``>(...)``) is written in place: replacing it would put a regular file
where the device was (as root, ``/dev/null`` became one) and leave a FIFO's reader with nothing.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from harness.errors import UsageError, cannot_write
from harness.store.bounds import MAX_DEPTH, MAX_DOCUMENT_BYTES, MAX_INTEGER_DIGITS, number_problem

# Outside strings, an integer of more digits than any number below MAX_MAGNITUDE; the digits of a
# float's fraction (0.00012345678901234567 is a float's shortest form) are not one, floats being
# bounded as they are parsed.
_LONG_INTEGER = re.compile(rb"(?<![0-9.eE+\-])-?[0-9]{%d,}(?![0-9.eE])" % (MAX_INTEGER_DIGITS + 1))
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_INNERMOST = re.compile(rb"\[\]|\{\}")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # rare, so only then is every string checked


class DocumentProblem(ValueError):
    """Why a file is not read as a document, in a few words."""


def read_bounded(
    path: Path, *, limit: int = MAX_DOCUMENT_BYTES, follow_links: bool = True
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, opened without blocking (a FIFO is
    refused, not waited on); DocumentProblem otherwise, OSError if unreadable."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_links else os.O_NOFOLLOW)
    if not follow_links and path.is_symlink():
        raise DocumentProblem("a link, not a regular file")
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link planted after the check
            raise DocumentProblem("a link, not a regular file") from None
        raise
    try:  # a folder opens too, and is told apart before Python's file object refuses it
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise DocumentProblem("not a regular file")
        if info.st_size > limit:
            raise DocumentProblem(f"too large ({info.st_size:,} bytes; at most {limit:,} are read)")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)  # the file may have grown since fstat
    finally:
        os.close(fd)
    if len(data) > limit:
        raise DocumentProblem(f"too large (over {limit:,} bytes)")
    return data


def _refuse_constant(name: str) -> Any:
    raise DocumentProblem(f"{name} is not a number a harness stores")


def _bounded_float(text: str) -> float:
    value = float(text)
    if number_problem(value):
        raise DocumentProblem(f"number {text[:24]} is out of range")
    return value


def _depth_over(structure: bytes, limit: int) -> bool:
    """Whether the brackets of (valid) JSON nest deeper than ``limit``: each pass removes the
    innermost pairs, in C, so depth costs no recursion and a flat document a few passes."""
    brackets = structure.translate(None, _NOT_BRACKETS)
    for _ in range(limit):
        if not brackets:
            return False
        brackets = _INNERMOST.sub(b"", brackets)
    return bool(brackets)


def parse_document(data: bytes) -> Any:
    """``data`` as strict UTF-8 JSON within the bounds above; DocumentProblem saying why not."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # json.loads would guess UTF-16 from the bytes; every later reader decodes UTF-8.
        raise DocumentProblem(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        document = json.loads(text, parse_constant=_refuse_constant, parse_float=_bounded_float)
    except RecursionError:
        raise DocumentProblem(f"unreadable JSON (nested deeper than {MAX_DEPTH} levels)") from None
    except json.JSONDecodeError as exc:
        raise DocumentProblem(f"unreadable JSON ({exc})") from None
    except DocumentProblem as exc:
        raise DocumentProblem(f"unreadable JSON ({exc})") from None
    except ValueError as exc:  # an integer past Python's digit limit for conversions
        raise DocumentProblem(f"unreadable JSON ({str(exc).split(':')[0]})") from None
    structure = _STRING.sub(b'""', data)  # what lies outside strings
    digits = _LONG_INTEGER.search(structure)
    if digits:
        count = len(digits.group().lstrip(b"-"))
        raise DocumentProblem(f"unreadable JSON (a number of {count:,} digits is out of range)")
    if _depth_over(structure, MAX_DEPTH):
        raise DocumentProblem(f"unreadable JSON (nested deeper than {MAX_DEPTH} levels)")
    if _SURROGATE.search(data):
        try:  # half a surrogate pair in a string, which no page or copy could encode as UTF-8
            json.dumps(document, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise DocumentProblem(
                "unreadable JSON (a \\u escape of half a UTF-16 pair: no character)"
            ) from None
    return document


def read_plan_document(path: Path, what: str, limit: int) -> Any:
    """A plan file read as any untrusted document; UsageError naming it where it cannot be."""
    try:
        return parse_document(read_bounded(path, limit=limit))
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise UsageError(f"cannot read {what} {path}: {why}") from None


def output_folder(root: Path, *parts: str) -> Path:
    """``root / parts``, each level made if missing; UsageError where one below ``root`` (the user's
    choice) is a link or not a folder."""
    root.mkdir(parents=True, exist_ok=True)
    folder = root
    for part in parts:
        folder = folder / part
        if folder.is_symlink():
            raise UsageError(f"refusing to write under {folder}: it is a link, not a folder")
        if not folder.exists():
            folder.mkdir(exist_ok=True)
        if folder.is_symlink() or not folder.is_dir():
            raise UsageError(f"refusing to write under {folder}: it is not a folder")
    return folder


def child(folder: Path, name: str) -> Path:
    """``folder / name`` for a plain file name; unlike ``names.inside`` it does not follow a link
    planted at ``name``: ``replace_file`` replaces one."""
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise UsageError(f"refusing to write {name!r} under {folder}: not a plain file name")
    return folder / name


def replace_file(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically, replacing a file or a link (never written through)."""
    if path.is_dir() and not path.is_symlink():
        raise UsageError(f"refusing to write {path}: it is a folder")
    # A character UTF-8 cannot hold (half a surrogate pair) shows as "?", not losing the file.
    payload = data.encode(errors="replace") if isinstance(data, str) else data
    fd, tmp = temporary_file(path.parent, f".{path.name[:64]}.", ".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        # a write's error names no file: this one
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)
        raise


def temporary_file(folder: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file in ``folder`` to write, then move into place (descriptor, name), with ``open()``'s
    mode under the umask: ``mkstemp``'s 0600 would make results and pages differ."""
    fd, name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    mask = os.umask(0o022)  # read by setting it: set back at once
    os.umask(mask)
    try:
        os.fchmod(fd, 0o666 & ~mask)
    except BaseException:
        os.close(fd)
        Path(name).unlink(missing_ok=True)
        raise
    return fd, name


def write_text(path: Path, text: str) -> None:
    """Write a file the user named atomically (a stream such as ``/dev/stdout`` in place); a folder
    there, a missing folder or no permission is one line, not a traceback."""
    if path.is_dir() and not path.is_symlink():
        raise UsageError(f"{path} is a folder: name a file to write")
    try:
        # /dev/stdout, a FIFO, >(...): written where it is, never replaced by a file
        if is_stream(path):
            write_in_place(path, text.encode(errors="replace"))
        else:
            replace_file(path, text)
    except OSError as exc:
        raise cannot_write(f"cannot write {path}", exc) from None


# Names of this process's own descriptors: written through the descriptor itself, which keeps its
# offset and append mode (``> out.txt``, ``>> log``), and never replaced (``/dev/stdout`` is a link
# in ``/dev``).
_OWN_DESCRIPTOR = re.compile(r"/dev/(?:fd/(\d+)|(stdin)|(stdout)|(stderr))|/proc/self/fd/(\d+)")


def own_descriptor(path: Path) -> int | None:
    """The descriptor ``path`` names (``/dev/stdout``: 1, ``/dev/fd/63``: 63), or None."""
    found = _OWN_DESCRIPTOR.fullmatch(str(path))
    if found is None:
        return None
    number, stdin, stdout, _stderr, proc = found.groups()
    return int(number or proc) if (number or proc) else 0 if stdin else 1 if stdout else 2


def is_stream(path: Path) -> bool:
    """Whether ``path`` is our descriptor or, links followed, not a regular file nor a folder."""
    if own_descriptor(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:  # missing, or a dangling link: a regular file will be written there
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_in_place(path: Path, payload: bytes) -> None:
    """Write ``payload`` to the stream at ``path`` (a FIFO waits for its reader, as ``>`` does)."""
    own = own_descriptor(path)
    if own is not None:
        view = memoryview(payload)
        while view:
            view = view[os.write(own, view) :]
        return
    # Not O_CREAT nor O_TRUNC: there is nothing to create, and a device's length is not ours to cut.
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(payload)
