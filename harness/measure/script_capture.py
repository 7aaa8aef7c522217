"""The compiled programs a plain script runs, captured with no edit to it: loaded by the start-up
hook.

With ``HARNESS_EXPORT_DIR`` set, the hook loads this file by its path (the harness stays off the
script's ``sys.path``) right after jax is imported; ``start`` wraps ``jax.jit`` so that each jitted
function records its first call made outside any tracing (its inputs' shapes and dtypes, and the
values of the small ones copied before the call could donate them) and how often it was called.  A
program compiled ahead of time (``jax.jit(f).lower(...)``, or ``.trace(...)`` where a release has
it: 0.4.30 does, 0.4.26 not; then ``.compile()``, the usual way to time a compile) is recorded at
its lowering, inputs given as ``jax.ShapeDtypeStruct`` included, whether it is then called or only
compiled; each call of the compiled program counts.  ``finish`` then exports each
(``jax.export``: the StableHLO module with its input avals, serialized) into the folder, beside a
``programs.json`` that says what each file holds.  Most called first, at most ``MAX_PROGRAMS``.

Serializing needs ``flatbuffers`` (and, on some releases, ``absl``): ``HARNESS_EXPORT_TOOLS`` names
a folder holding them, put last on ``sys.path`` so that the script's own packages come first.
"""

from __future__ import annotations

import functools
import json
import os
import sys

EXPORT_DIR = "HARNESS_EXPORT_DIR"
EXPORT_TOOLS = "HARNESS_EXPORT_TOOLS"
MAX_PROGRAMS = 8
SAVED_LEAF_BYTES = 1 << 20  # an input up to this size keeps its values; a larger one is generated
SAVED_PROGRAM_BYTES = 16 << 20

_programs: list[dict] = []


def start(jax) -> None:
    """Wrap ``jax.jit`` so that every function jitted from now on records its calls."""
    tools = os.environ.get(EXPORT_TOOLS)
    if tools and tools not in sys.path:
        sys.path.append(tools)
    real_jit = jax.jit

    @functools.wraps(real_jit)
    def jit(fun=None, *args, **kwargs):
        if (
            fun is None
        ):  # jax.jit(static_argnums=...) as a decorator factory, on releases that allow it
            return lambda f: jit(f, *args, **kwargs)
        return _Recorded(jax, real_jit(fun, *args, **kwargs), fun, kwargs)

    jax.jit = jit


class _Recorded:
    """A jitted function that records its calls made outside tracing, and is otherwise the jitted
    one."""

    def __init__(self, jax, jitted, fun, options) -> None:
        self._jax, self._jitted, self._options = jax, jitted, options
        self.__wrapped__ = fun
        self._entry: dict = {"name": getattr(fun, "__name__", "program"), "calls": 0, "lowered": 0}
        self._entry["jitted"] = jitted

    def __getattr__(self, name):
        return getattr(self._jitted, name)

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        if not _tracing(self._jax, args, kwargs):
            self._record(args, kwargs)
            self._entry["calls"] += 1
        return self._jitted(*args, **kwargs)

    def lower(self, *args, **kwargs):
        """The jitted function's own lowering, its inputs recorded: what the compiled program
        runs."""
        if not _tracing(self._jax, args, kwargs):
            self._record(args, kwargs)
            self._entry["lowered"] += 1
        return _Staged(self._jitted.lower(*args, **kwargs), self._entry)

    def trace(self, *args, **kwargs):
        """The jitted function's own tracing (0.4.30 has it, 0.4.26 not), its inputs recorded as at
        ``lower``."""
        if not _tracing(self._jax, args, kwargs):
            self._record(args, kwargs)
            self._entry["lowered"] += 1
        return _Staged(self._jitted.trace(*args, **kwargs), self._entry)

    def _record(self, args, kwargs) -> None:
        """The first inputs seen outside tracing, by a call or a lowering; the program listed
        once."""
        entry = self._entry
        if "shaped" in entry or "problem" in entry:
            return
        try:
            entry.update(_inputs(self._jax, args, kwargs, self._options))
        except Exception as exc:  # an input it cannot describe: said in the listing
            entry["problem"] = f"{type(exc).__name__}: {exc}"[:300]
        _programs.append(entry)


class _Staged:
    """A stage of a program compiled ahead of time (``Traced``, ``Lowered``, ``Compiled``),
    otherwise the stage itself (``isinstance`` included): the next stage stays recorded, and each
    call of the compiled program counts as a call of the jitted function."""

    def __init__(self, stage, entry) -> None:
        self._stage, self._entry = stage, entry

    @property  # type: ignore[misc]
    def __class__(self):  # isinstance(lowered, jax.stages.Lowered) holds, as without the capture
        return type(self._stage)

    def __getattr__(self, name):
        return getattr(self._stage, name)

    def lower(self, *args, **kwargs):
        return _Staged(self._stage.lower(*args, **kwargs), self._entry)

    def compile(self, *args, **kwargs):
        return _Staged(self._stage.compile(*args, **kwargs), self._entry)

    def __call__(self, *args, **kwargs):
        self._entry["calls"] += 1
        return self._stage(*args, **kwargs)


def _tracing(jax, args, kwargs) -> bool:
    tracer = jax.core.Tracer
    return any(isinstance(leaf, tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs)))


def _dynamic(args, kwargs, options):
    """The arguments jit traces (the static ones, by position or name, left out)."""
    static = options.get("static_argnums") or ()
    static = {static} if isinstance(static, int) else set(static)
    static = {n % len(args) if args else n for n in static}
    names = options.get("static_argnames") or ()
    names = {names} if isinstance(names, str) else set(names)
    return (
        tuple(a for i, a in enumerate(args) if i not in static),
        {k: v for k, v in kwargs.items() if k not in names},
    )


def _inputs(jax, args, kwargs, options) -> dict:
    """The call's arguments as jax.export takes them (arrays as their shapes and dtypes), and the
    values of the traced inputs small enough to keep, copied now, before the call may donate
    them."""
    import numpy as np

    def described(leaf):
        if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
        return leaf

    shaped = jax.tree_util.tree_map(described, (args, kwargs))
    saved, total = {}, 0
    for number, leaf in enumerate(jax.tree_util.tree_leaves(_dynamic(args, kwargs, options))):
        if isinstance(leaf, jax.ShapeDtypeStruct):  # a lowering's input with no values: generated
            continue
        value = np.array(leaf, copy=True)
        if value.nbytes <= SAVED_LEAF_BYTES and total + value.nbytes <= SAVED_PROGRAM_BYTES:
            saved[f"a{number}"] = value
            total += value.nbytes
    return {"shaped": shaped, "saved": saved}


def finish(folder: str) -> None:
    """Export every recorded program into ``folder``, most called first, and list them in
    programs.json."""
    import jax
    import numpy as np

    try:
        from jax import export
    except ImportError as exc:
        _write_listing(folder, [], f"this jax has no jax.export: {exc}"[:300])
        return
    # Most used first: a program compiled ahead of time and never called counts its lowerings.
    ordered = sorted(_programs, key=lambda entry: -(entry["calls"] + entry["lowered"]))
    listed = []
    for number, entry in enumerate(ordered[:MAX_PROGRAMS], start=1):
        item = {"file": f"program_{number:02d}", "name": entry["name"], "calls": entry["calls"]}
        if entry["lowered"]:
            item["lowered"] = entry["lowered"]
        listed.append(item)
        if "problem" in entry:
            item["problem"] = entry["problem"]
            continue
        try:
            args, kwargs = entry["shaped"]
            exported = export.export(entry["jitted"])(*args, **kwargs)
            blob = exported.serialize()
        except (
            Exception
        ) as exc:  # a program jax.export cannot take (a callback, say): said, not fatal
            item["problem"] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        with open(os.path.join(folder, f"{item['file']}.jaxexport"), "wb") as handle:
            handle.write(bytes(blob))
        values = _as_avals(np, entry["saved"], exported.in_avals)
        np.savez(os.path.join(folder, f"{item['file']}.npz"), **values)
        item["inputs"] = [
            {"shape": list(aval.shape), "dtype": str(aval.dtype), "saved": f"a{i}" in values}
            for i, aval in enumerate(exported.in_avals)
        ]
    more = max(len(ordered) - MAX_PROGRAMS, 0)
    note = f"{more} more program(s) over the cap of {MAX_PROGRAMS} not exported" if more else ""
    _write_listing(folder, listed, note, jax.__version__)


def _as_avals(np, saved: dict, avals) -> dict:
    """Each kept value in its input's dtype, as raw bytes (any dtype, bfloat16 too, reads back from
    them); a value whose shape is not its input's is left to be generated."""
    found = {}
    for number, aval in enumerate(avals):
        value = saved.get(f"a{number}")
        if value is not None and tuple(value.shape) == tuple(aval.shape):
            found[f"a{number}"] = np.frombuffer(value.astype(aval.dtype).tobytes(), np.uint8)
    return found


def _write_listing(folder: str, listed: list, note: str, version: str = "") -> None:
    document = {"jax": version, "programs": listed, "note": note}
    with open(os.path.join(folder, "programs.json"), "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
