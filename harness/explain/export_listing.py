"""What a script's capture left in its export folder, read as data: never as code, nor a path.

The capture (``harness.measure.script_capture``) runs in the script's own process, so the folder
and its listing are the script's to write: a string of ``programs.json`` may be code, a file a link
to a system file, a kept input a token.  ``read_export`` takes nothing on trust.  The folder holds
regular files of the capture's names alone (no link, FIFO, device, folder, nor a file linked from
elsewhere), else it is refused and emptied.  The listing is checked field by field, by type and
allow-list (a version is a version, a name a name, a count a count), and rebuilt from the checked
values alone, else refused in one line naming the field; its free text is scrubbed.  A kept input
whose bytes read as a credential (``reads_as_secret``) is dropped from its ``.npz``, to be generated
by the reproducer, and the listing's note says so; a program whose module reads as one is left out.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import stat
import zipfile
from pathlib import Path
from typing import Any

from harness.host.environment import holds_secret, redact, scrub
from harness.measure.script_capture import MAX_PROGRAMS, PROGRAM_FLAGS
from harness.store.bounds import MAX_DOCUMENT_BYTES
from harness.store.files import DocumentProblem, parse_document, read_bounded, replace_file

LISTING = "programs.json"
EXPORT_FILE = re.compile(r"programs\.json|program_\d{2}\.(jaxexport|npz)")
PROGRAM_FILE = re.compile(r"program_\d{2}")
# A release as PEP 440 writes one (0.4.31, 0.10.0.1, 0.5.0rc1, 0.4.36.dev20241122+cuda12).
VERSION = re.compile(
    r"\d{1,4}(\.\d{1,6}){0,4}((a|b|rc)\d{1,4})?(\.post\d{1,4})?(\.dev\d{1,10})?"
    r"(\+[A-Za-z0-9]{1,32}(\.[A-Za-z0-9]{1,32}){0,8})?"
)
NAME = re.compile(r"[\w<>.-]{1,100}")  # a function's __name__ (``<lambda>``), a keyword argument
DTYPE = re.compile(r"[a-z][a-z0-9_]{0,31}(<[a-z0-9_]{1,32}>)?")  # float32, bfloat16, key<fry>
WORD = re.compile(r"[A-Za-z0-9_.-]{0,40}")  # a flag's value (highest), a key's implementation
INPUT_NAME = re.compile(r"a(\d{1,5})\.npy")  # an input's kept values in its program's .npz
MAX_TEXT, MAX_COUNT, MAX_INPUTS, MAX_DIMS = 1000, 10**12, 10_000, 64
MAX_FILE = MAX_DOCUMENT_BYTES  # a module or the kept values of a program, at most
MAX_LISTING = 4 * 2**20
SECRET_INPUTS = "the kept values of {} read as a credential: left out, generated instead"
SECRET_MODULE = "its module holds what reads as a credential: left out"


class Refused(ValueError):
    """What makes an export folder or its listing one no capture wrote, in a few words."""


def read_export(folder: Path, label: str) -> dict[str, Any] | str | None:
    """The listing of ``folder``, checked, its files made safe to copy; one line saying why it is
    refused (the folder then emptied: nothing planted is left); None where nothing is listed."""
    try:
        names = _files(folder)
        if LISTING not in names:
            return None
        listing = _listing(_document(folder / LISTING))
        for program in listing["programs"]:
            _their_files(folder, program, names)
        _withhold_secrets(folder, listing)
        replace_file(folder / LISTING, json.dumps(listing, indent=1))  # as checked, and no more
    except (Refused, OSError) as exc:
        with contextlib.suppress(OSError):
            _empty(folder)
        return f"jax {label}'s export refused: {scrub(str(exc))}"
    return listing


def _document(path: Path) -> Any:
    try:
        return parse_document(_read(path, MAX_LISTING))
    except DocumentProblem as exc:
        raise Refused(f"{path.name}: {exc}") from None


def _read(path: Path, limit: int) -> bytes:
    try:
        return read_bounded(path, limit=limit, follow_links=False)
    except DocumentProblem as exc:
        raise Refused(f"{path.name} is {exc}") from None


def _files(folder: Path) -> set[str]:
    """The names in ``folder``, each a regular file the capture writes, linked from nowhere else."""
    if folder.is_symlink() or not folder.is_dir():
        raise Refused("its folder is a link or no folder")
    names = set()
    for entry in os.scandir(folder):
        if not EXPORT_FILE.fullmatch(entry.name):
            raise Refused(f"{_shown(entry.name)} is no file the capture writes")
        info = entry.stat(follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{entry.name} is a link or a special file, not a file")
        if info.st_nlink != 1:
            raise Refused(f"{entry.name} is linked from elsewhere (a hard link)")
        names.add(entry.name)
    return names


def _shown(name: str) -> str:
    return repr(scrub(name)[:40])


def _empty(folder: Path) -> None:
    """``folder`` removed, never followed: what the script planted in it goes too."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)


def _listing(document: Any) -> dict[str, Any]:
    """The listing rebuilt from its checked fields alone; Refused naming the first that is not."""
    top = _fields(document, "programs.json", {"jax", "programs", "note"})
    programs = _list(top.get("programs", []), "programs", MAX_PROGRAMS)
    listed = [_program(p, f"programs[{n}]") for n, p in enumerate(programs)]
    if len({p["file"] for p in listed}) != len(listed):
        raise Refused("programs.json lists a file twice")
    jax = top.get("jax")  # "" where this jax has no jax.export: then nothing is listed
    return {
        "jax": "" if jax == "" and not listed else _match(jax, "jax", VERSION, "a version"),
        "programs": listed,
        "note": _text(top.get("note", ""), "note"),
    }


PROGRAM_FIELDS = {"file", "name", "calls", "lowered", "problem", "inputs", "config", "static"}


def _program(value: Any, where: str) -> dict[str, Any]:
    found = _fields(value, where, PROGRAM_FIELDS | {"donated"})
    program: dict[str, Any] = {
        "file": _match(found.get("file"), f"{where}.file", PROGRAM_FILE, "a program's file"),
        "name": redact(_match(found.get("name"), f"{where}.name", NAME, "a name")),
        "calls": _count(found.get("calls"), f"{where}.calls"),
    }
    if "lowered" in found:
        program["lowered"] = _count(found["lowered"], f"{where}.lowered")
    if "problem" in found:
        return {**program, "problem": _text(found["problem"], f"{where}.problem")}
    inputs = _list(found.get("inputs"), f"{where}.inputs", MAX_INPUTS)
    program["inputs"] = [_input(each, f"{where}.inputs[{n}]") for n, each in enumerate(inputs)]
    if "config" in found:
        program["config"] = _config(found["config"], f"{where}.config")
    if "static" in found:
        static = _fields(found["static"], f"{where}.static", None)
        program["static"] = {
            redact(_match(k, f"{where}.static", NAME, "a name")): _text(v, f"{where}.static.{k}")
            for k, v in static.items()
        }
    if "donated" in found:
        donated = _list(found["donated"], f"{where}.donated", len(inputs))
        program["donated"] = [_count(d, f"{where}.donated", len(inputs) - 1) for d in donated]
    return program


def _input(value: Any, where: str) -> dict[str, Any]:
    found = _fields(value, where, {"shape", "dtype", "saved", "weak_type", "key"})
    shape = _list(found.get("shape"), f"{where}.shape", MAX_DIMS)
    said: dict[str, Any] = {
        "shape": [_count(dim, f"{where}.shape") for dim in shape],
        "dtype": _match(found.get("dtype"), f"{where}.dtype", DTYPE, "a dtype"),
        "saved": _flag(found.get("saved"), f"{where}.saved"),
    }
    if "weak_type" in found:
        said["weak_type"] = _flag(found["weak_type"], f"{where}.weak_type")
    if "key" in found:
        said["key"] = _match(found["key"], f"{where}.key", WORD, "a key's implementation")
    return said


def _config(value: Any, where: str) -> dict[str, Any]:
    """The jax flags a program was traced under: known flags, each of a plain value."""
    config = _fields(value, where, set(PROGRAM_FLAGS))
    for flag, setting in config.items():
        plain = setting is None or isinstance(setting, bool | int)
        plain = plain or (isinstance(setting, float) and math.isfinite(setting))
        if not (plain or (isinstance(setting, str) and WORD.fullmatch(setting))):
            raise Refused(f"{where}.{flag} is not a flag's value")
    return dict(config)


def _fields(value: Any, where: str, allowed: set[str] | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Refused(f"{where} is not an object")
    unknown = sorted(set(value) - allowed) if allowed is not None else []
    if unknown:
        raise Refused(f"{where} has a field no capture writes ({_shown(unknown[0])})")
    return value


def _list(value: Any, where: str, most: int) -> list[Any]:
    if not isinstance(value, list) or len(value) > most:
        raise Refused(f"{where} is not a list of at most {most}")
    return value


def _count(value: Any, where: str, most: int = MAX_COUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise Refused(f"{where} is not a count (a whole number from 0 to {most})")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise Refused(f"{where} is not true or false")
    return value


def _match(value: Any, where: str, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise Refused(f"{where} is not {what}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise Refused(f"{where} is not a text of at most {MAX_TEXT} characters")
    return scrub(value)


def _their_files(folder: Path, program: dict[str, Any], names: set[str]) -> None:
    """A program exported has its module and its kept values; one whose module reads as a
    credential is left out, its files removed, said as its problem."""
    if "problem" in program:
        return
    module, kept = (f"{program['file']}{suffix}" for suffix in (".jaxexport", ".npz"))
    if not {module, kept} <= names:
        raise Refused(f"{program['file']} is listed without its two files")
    if reads_as_secret(_read(folder / module, MAX_FILE)):
        for name in (module, kept):
            (folder / name).unlink()
        for field in ("inputs", "config", "static", "donated"):
            program.pop(field, None)
        program["problem"] = SECRET_MODULE


def reads_as_secret(data: bytes) -> bool:
    """Whether ``data`` read as text holds a credential: its runs of ASCII text (as Latin-1 bytes,
    and again with every zero byte left out: ASCII as 2-, 4- or 8-byte integers, code points of
    either byte order), which no shape is shorter than."""
    for view in dict.fromkeys((data, data.replace(b"\0", b""))):  # one, where no zero byte
        if holds_secret(b"\n".join(TEXT_RUN.findall(view)).decode("ascii"), binary=True):
            return True
    return False


TEXT_RUN = re.compile(rb"[\t\n\r\x20-\x7e]{8,}")


# How numpy (1.x and 2.x alike) writes the header of a 1-D array of bytes, as the capture keeps one.
RAW_BYTES = re.compile(
    rb"\{'descr': '\|u1', 'fortran_order': False, 'shape': \((\d{1,9}),\), \} *\n"
)


def _withhold_secrets(folder: Path, listing: dict[str, Any]) -> None:
    """Each program's kept values that read as a credential dropped from its ``.npz`` (the
    reproducer generates them), the inputs' ``saved`` as kept, the listing's note saying so."""
    withheld = []
    for program in listing["programs"]:
        if "problem" in program:
            continue
        path = folder / f"{program['file']}.npz"
        members = _members(_read(path, MAX_FILE), path.name)
        inputs = program["inputs"]
        if any(number >= len(inputs) for number in members):
            raise Refused(f"{path.name} keeps values of an input its program does not take")
        secret = {n for n, data in members.items() if reads_as_secret(_raw(data, path.name))}
        for number, said in enumerate(inputs):
            said["saved"] = number in members and number not in secret
        withheld += [f"{program['file']}'s input {number}" for number in sorted(secret)]
        if secret:
            replace_file(path, _npz({n: d for n, d in members.items() if n not in secret}))
    if withheld:
        said = SECRET_INPUTS.format(", ".join(withheld))
        listing["note"] = "; ".join(filter(None, [listing["note"], said]))


def _members(data: bytes, name: str) -> dict[int, bytes]:
    """The ``.npy`` members of an ``.npz``, by the number of the input each keeps."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if sum(info.file_size for info in infos) > MAX_FILE:
                raise Refused(f"{name} holds over {MAX_FILE:,} bytes")
            found = {}
            for info in infos:
                member = INPUT_NAME.fullmatch(info.filename)
                if member is None:
                    raise Refused(f"{name} holds {_shown(info.filename)}, no input's values")
                found[int(member[1])] = archive.read(info)
    except (zipfile.BadZipFile, ValueError, NotImplementedError, EOFError) as exc:
        if isinstance(exc, Refused):
            raise
        raise Refused(f"{name} is no archive of kept values") from None
    return found


def _raw(npy: bytes, name: str) -> bytes:
    """The bytes of one kept value as numpy saved it (a 1-D array of bytes), else Refused."""
    start = {b"\x93NUMPY\x01": 10, b"\x93NUMPY\x02": 12, b"\x93NUMPY\x03": 12}.get(npy[:7])
    length = int.from_bytes(npy[8:start], "little") if start else 0
    header = RAW_BYTES.fullmatch(npy, start or 0, (start or 0) + length)
    if start is None or header is None or len(npy) - start - length != int(header[1]):
        raise Refused(f"{name} keeps a value that is not an array of bytes")
    return npy[start + length :]


def _npz(members: dict[int, bytes]) -> bytes:
    """An ``.npz`` of ``members`` (stored, as ``numpy.savez`` writes one)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for number, data in sorted(members.items()):
            archive.writestr(f"a{number}.npy", data)
    return buffer.getvalue()
