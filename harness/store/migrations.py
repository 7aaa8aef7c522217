"""Older result documents brought up to the newest schema version, one version at a time (as asv's ``update_to_N``).

``MIGRATIONS[n]`` turns a version-n document into a version-(n + 1) one.  Migrations
work on the raw JSON and never fail on a malformed document: they move what is there
and leave checking to ``harness.store.schema.parse``.  Files on disk are never rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.store.schema import SCHEMA_VERSION, SchemaError, check_identity

# What one case process measured, as a version-1 result held it at its top level.  Frozen: it names
# fields of files written back then, so it never follows ``schema.ProcessRun`` as that grows.
V1_PROCESS_FIELDS = ("programs", "compiled", "facts", "claim", "jax", "phases_s", "peak_rss_bytes")


def v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 result as measured in one process: its per-process fields move into ``processes[0]``."""
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


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: v1_to_v2}
OLDEST_VERSION = min(MIGRATIONS)


def upgrade(data: Any) -> dict[str, Any]:
    """A result document of any version this harness reads, as the newest version; raises ``SchemaError``."""
    document = dict(check_identity(data))
    version = document.get("schema_version")
    if (
        isinstance(version, bool)
        or not isinstance(version, int)
        or not OLDEST_VERSION <= version <= SCHEMA_VERSION
    ):
        raise SchemaError(
            "schema_version",
            f"schema version {version!r} is not one this harness reads (it reads {OLDEST_VERSION} to {SCHEMA_VERSION})",
        )
    for step in range(version, SCHEMA_VERSION):
        document = MIGRATIONS[step](document)
    return document
