"""Older result documents brought up to the newest schema version, one version at a time:
``MIGRATIONS[n]`` turns version n into n + 1, on the raw JSON, never failing on a malformed one
(``schema.parse`` checks).  Files on disk are never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from harness.store.schema import SCHEMA_VERSION, SchemaError, check_identity

# What one case process measured, as a version-1 result held it at its top level.  Frozen: it names
# fields of files written back then, so it never follows ``schema.ProcessRun`` as that grows.
V1_PROCESS_FIELDS = ("programs", "compiled", "facts", "claim", "jax", "phases_s", "peak_rss_bytes")


def v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 result, measured in one process: its process's fields go to ``processes[0]``."""
    upgraded = {key: value for key, value in data.items() if key not in V1_PROCESS_FIELDS}
    process: dict[str, Any] = {
        "index": 0,
        "status": data.get("status"),
        "detail": data.get("detail", ""),
        "duration_s": data.get("duration_s", 0.0),
        "window_unix_ns": data.get("window_unix_ns"),
        "load": None,
        "affinity": None,
    }
    process.update((key, data[key]) for key in V1_PROCESS_FIELDS if key in data)
    programs = process.get("programs")
    if isinstance(programs, dict):  # version 1 timed one iteration per sample
        process["programs"] = {
            name: {**record, "loops": 1} if isinstance(record, dict) else record
            for name, record in programs.items()
        }
    settings = data.get("settings")
    if isinstance(settings, dict):
        upgraded["settings"] = {
            **settings,
            "processes": 1,
            "min_sample_ns": 0,
            "affinity": None,
            "max_load": None,
        }
    upgraded.update(schema_version=2, interleaved_with=[], processes=[process])
    return upgraded


# How a version-2 process's detail began, by how it ended: "killed by SIGSEGV", "exit code 1" (a
# case process), "python FILE was killed by SIGSEGV" / "python FILE exited with code 1" (a script),
# "no result within 60 s".
_V2_SIGNAL = re.compile(r"killed by (SIG[A-Z0-9]+|signal \d+)")
_V2_EXIT = re.compile(r"(?:exit code|exited with code) (-?\d+)")
_V2_TIMEOUT = re.compile(r"no (?:result|exit) within ([0-9.]+) s")
_V2_OUTSIDE = ("SIGKILL", "SIGTERM", "SIGINT", "SIGHUP")


def _v2_end(process: dict[str, Any]) -> dict[str, Any] | None:
    """How a version-2 process died (version 3's ``died``), from its ``status`` and ``detail``: the
    first line names the signal, exit status or time-out, the rest are its last lines."""
    status, detail = process.get("status"), process.get("detail")
    if status not in ("crashed", "failed", "timeout") or not isinstance(detail, str):
        return None
    first, _, rest = detail.partition("\n")
    signal, code, limit = (found.search(first) for found in (_V2_SIGNAL, _V2_EXIT, _V2_TIMEOUT))
    end: dict[str, Any]
    if status == "timeout":
        end = {"how": "timeout", **({"timeout_s": float(limit.group(1))} if limit else {})}
    elif signal is not None:
        name = signal.group(1)
        end = {"how": "signal", "signal": name, "from_outside": name in _V2_OUTSIDE}
    elif code is not None:
        end = {"how": "exit", "exit_status": int(code.group(1))}
    elif first.startswith("its worker died"):
        end = {"how": "worker"}
    elif status == "failed":
        return {"how": "raised", "last_lines": detail}
    else:
        return None
    return {**end, "last_lines": rest.strip()} if rest.strip() else end


def v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 keeps where each process that ended not ok died (``died``), from its detail."""
    processes = data.get("processes")
    if isinstance(processes, list):
        ends = [_v2_end(p) if isinstance(p, dict) else None for p in processes]
        died = [
            p if end is None else {**p, "died": end} for p, end in zip(processes, ends, strict=True)
        ]
        data = {**data, "processes": died}
    return {**data, "schema_version": 3}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: v1_to_v2, 2: v2_to_v3}
OLDEST_VERSION = min(MIGRATIONS)


def upgrade(data: Any) -> dict[str, Any]:
    """A result document of any version read here, as the newest version; ``SchemaError``."""
    document = dict(check_identity(data))
    version = document.get("schema_version")
    if type(version) is not int or not OLDEST_VERSION <= version <= SCHEMA_VERSION:  # no bool
        raise SchemaError(
            "schema_version",
            f"schema version {version!r} is not one this harness reads (it reads {OLDEST_VERSION} "
            f"to {SCHEMA_VERSION})",
        )
    for step in range(version, SCHEMA_VERSION):
        document = MIGRATIONS[step](document)
    return document
