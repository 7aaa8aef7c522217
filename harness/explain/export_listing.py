"""What a script's capture left in its export folder, read as data: never as code, nor a path.

The capture runs in the script's own process, so the folder is the script's to write: a string may
be code, a file a link to a system file, a kept input a token. The folder holds regular files of the
capture's names alone, else it is refused and emptied; the listing is checked field by field by type
and allow-list and rebuilt from the checked values alone, else refused in one line naming the field.
A kept input that reads as a credential is dropped (the reproducer generates it), said in the note;
a program whose module reads as one is left out.
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
from harness.store.checks import SchemaError, as_is, boolean, integer, json_object, list_of, string
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
TEXT_RUN = re.compile(rb"[\t\n\r\x20-\x7e]{8,}")
# How numpy (1.x and 2.x alike) writes the header of a 1-D array of bytes, as the capture keeps one.
RAW_BYTES = re.compile(
    rb"\{'descr': '\|u1', 'fortran_order': False, 'shape': \((\d{1,9}),\), \} *\n"
)


def read_export(folder: Path, label: str) -> dict[str, Any] | str | None:
    """The listing of ``folder``, checked; one line saying why it is refused (the folder then
    emptied); None where nothing is listed."""
    try:
        names = _files(folder)
        if LISTING not in names:
            return None
        listing = _listing(_read(folder / LISTING, MAX_LISTING, parse=True))
        for program in listing["programs"]:
            _their_files(folder, program, names)
        _withhold_secrets(folder, listing)
        replace_file(folder / LISTING, json.dumps(listing, indent=1))  # as checked, and no more
    except (SchemaError, OSError) as exc:  # what no capture writes, named by its path
        with contextlib.suppress(OSError):
            removed(folder)
        return f"jax {label}'s export refused: {scrub(str(exc))}"
    return listing


def _read(path: Path, limit: int, *, parse: bool = False) -> Any:
    try:
        data = read_bounded(path, limit=limit, follow_links=False)
        return parse_document(data) if parse else data
    except DocumentProblem as exc:
        raise SchemaError(path.name, str(exc)) from None


def _files(folder: Path) -> set[str]:
    if folder.is_symlink() or not folder.is_dir():
        raise SchemaError("its folder", "a link or no folder")
    names = set()
    for entry in os.scandir(folder):
        if not EXPORT_FILE.fullmatch(entry.name):
            raise SchemaError(_shown(entry.name), "no file the capture writes")
        info = entry.stat(follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            raise SchemaError(entry.name, "a link or a special file, not a file")
        if info.st_nlink != 1:
            raise SchemaError(entry.name, "linked from elsewhere (a hard link)")
        names.add(entry.name)
    return names


def _shown(name: str) -> str:
    return repr(scrub(name)[:40])


def removed(path: Path) -> None:
    """``path`` removed, a folder with all it holds, never followed."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _listing(document: Any) -> dict[str, Any]:
    top = _fields(document, "programs.json", {"jax", "programs", "note"})
    programs = _list(top.get("programs", []), "programs", MAX_PROGRAMS)
    listed = [_program(p, f"programs[{n}]") for n, p in enumerate(programs)]
    if len({p["file"] for p in listed}) != len(listed):
        raise SchemaError("programs", "a file listed twice")
    jax = top.get("jax")  # "" where this jax has no jax.export: then nothing is listed
    return {
        "jax": "" if jax == "" and not listed else _match(jax, "jax", VERSION, "a version"),
        "programs": listed,
        "note": _text(top.get("note", ""), "note"),
    }


def _program(value: Any, where: str) -> dict[str, Any]:
    named = {"file", "name", "calls", "lowered", "problem", "inputs", "config", "static", "donated"}
    found = _fields(value, where, named)
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
        "saved": boolean(found.get("saved"), f"{where}.saved"),
    }
    if "weak_type" in found:
        said["weak_type"] = boolean(found["weak_type"], f"{where}.weak_type")
    if "key" in found:
        said["key"] = _match(found["key"], f"{where}.key", WORD, "a key's implementation")
    return said


def _config(value: Any, where: str) -> dict[str, Any]:
    config = _fields(value, where, set(PROGRAM_FLAGS))
    for flag, setting in config.items():
        plain = setting is None or isinstance(setting, bool | int)
        plain = plain or (isinstance(setting, float) and math.isfinite(setting))
        if not (plain or (isinstance(setting, str) and WORD.fullmatch(setting))):
            raise SchemaError(f"{where}.{flag}", "not a flag's value")
    return dict(config)


def _fields(value: Any, where: str, allowed: set[str] | None) -> dict[str, Any]:
    found = dict(json_object(value, where))
    unknown = sorted(set(found) - allowed) if allowed is not None else []
    if unknown:
        raise SchemaError(where, f"a field no capture writes ({_shown(unknown[0])})")
    return found


def _list(value: Any, where: str, most: int) -> list[Any]:
    if len(found := list(list_of(as_is)(value, where))) > most:
        raise SchemaError(where, f"more than {most}")
    return found


def _count(value: Any, where: str, most: int = MAX_COUNT) -> int:
    if not 0 <= integer(value, where) <= most:
        raise SchemaError(where, f"not a count from 0 to {most}")
    return value


def _match(value: Any, where: str, pattern: re.Pattern[str], what: str) -> str:
    if not pattern.fullmatch(string(value, where)):
        raise SchemaError(where, f"not {what}")
    return value


def _text(value: Any, where: str) -> str:
    if len(string(value, where)) > MAX_TEXT:
        raise SchemaError(where, f"longer than {MAX_TEXT} characters")
    return scrub(value)


def _their_files(folder: Path, program: dict[str, Any], names: set[str]) -> None:
    """A program's module and kept values; one whose module reads as a credential is left out."""
    if "problem" in program:
        return
    module, kept = (f"{program['file']}{suffix}" for suffix in (".jaxexport", ".npz"))
    if not {module, kept} <= names:
        raise SchemaError(program["file"], "listed without its two files")
    if reads_as_secret(_read(folder / module, MAX_FILE)):
        for name in (module, kept):
            (folder / name).unlink()
        for field in ("inputs", "config", "static", "donated"):
            program.pop(field, None)
        program["problem"] = SECRET_MODULE


def reads_as_secret(data: bytes) -> bool:
    """Whether ``data``'s runs of ASCII text hold a credential (again with every zero byte left out:
    ASCII as 2-, 4- or 8-byte integers, code points of either byte order)."""
    views = dict.fromkeys((data, data.replace(b"\0", b"")))  # one, where no zero byte
    texts = (b"\n".join(TEXT_RUN.findall(view)).decode("ascii") for view in views)
    return any(holds_secret(text, binary=True) for text in texts)


def _withhold_secrets(folder: Path, listing: dict[str, Any]) -> None:
    """Each program's kept values that read as a credential dropped from its ``.npz``, its inputs'
    ``saved`` as kept, the listing's note saying so."""
    withheld = []
    for program in listing["programs"]:
        if "problem" in program:
            continue
        path = folder / f"{program['file']}.npz"
        members = _members(_read(path, MAX_FILE), path.name)
        inputs = program["inputs"]
        if any(number >= len(inputs) for number in members):
            raise SchemaError(path.name, "values of an input its program does not take")
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
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if sum(info.file_size for info in infos) > MAX_FILE:
                raise SchemaError(name, f"over {MAX_FILE:,} bytes")
            found = {}
            for info in infos:
                member = INPUT_NAME.fullmatch(info.filename)
                if member is None:
                    raise SchemaError(name, f"{_shown(info.filename)} is no input's values")
                found[int(member[1])] = archive.read(info)
    except SchemaError:
        raise
    except Exception:  # whatever an archive no capture wrote makes zipfile raise
        raise SchemaError(name, "no archive of kept values") from None
    return found


def _raw(npy: bytes, name: str) -> bytes:
    """The bytes of one kept value as numpy saved it (a 1-D array of bytes), else SchemaError."""
    start = {b"\x93NUMPY\x01": 10, b"\x93NUMPY\x02": 12, b"\x93NUMPY\x03": 12}.get(npy[:7])
    length = int.from_bytes(npy[8:start], "little") if start else 0
    header = RAW_BYTES.fullmatch(npy, start or 0, (start or 0) + length)
    if start is None or header is None or len(npy) - start - length != int(header[1]):
        raise SchemaError(name, "a kept value that is not an array of bytes")
    return npy[start + length :]


def _npz(members: dict[int, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for number, data in sorted(members.items()):
            archive.writestr(f"a{number}.npy", data)
    return buffer.getvalue()
