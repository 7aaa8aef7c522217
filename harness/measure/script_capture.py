"""The compiled programs a plain script runs, captured with no edit to it: loaded by the start-up
hook by its path (the harness stays off the script's ``sys.path``), right after jax's import.

``start`` wraps ``jax.jit``: each jitted function records its first call outside tracing (its
inputs; the small ones' values copied before the call could donate them) and its calls; one
compiled ahead of time is recorded at its lowering. ``finish`` exports the most called
(``jax.export``) beside a ``programs.json`` listing what each depends on, so its reproducer runs
where the script ran: the ``PROGRAM_FLAGS`` changed since jax's import (or set by a ``JAX_…``
variable), integer, boolean and small inputs' values, typed PRNG keys as raw data, static and
donated arguments. A program that calls back into Python is left out (``jax.export`` cannot
serialize it). Serializing needs flatbuffers (some releases absl) from ``HARNESS_EXPORT_TOOLS``.
"""

from __future__ import annotations

import functools
import json
import os

MAX_PROGRAMS = 8
SAVED_LEAF_BYTES = 1 << 20  # an input up to this size keeps its values; a larger one is generated
SAVED_PROGRAM_BYTES = 16 << 20

# The flags that change what a program computes or how it runs; any other flag (caches, logging,
# paths) is never listed, so nothing of the machine's leaks into a reproducer.
PROGRAM_FLAGS = (
    "jax_enable_x64",
    "jax_default_matmul_precision",
    "jax_default_prng_impl",
    "jax_threefry_partitionable",
    "jax_enable_custom_prng",
    "jax_numpy_rank_promotion",
    "jax_numpy_dtype_promotion",
    "jax_softmax_custom_jvp",
    "jax_debug_nans",
    "jax_debug_infs",
    "jax_cpu_enable_async_dispatch",
    "jax_num_cpu_devices",
    "jax_use_shardy_partitioner",
)
CALLS_BACK = (
    "calls back into Python (jax.pure_callback, io_callback, jax.debug.print or a library's "
    "runtime check), which jax.export cannot serialize: left out"
)
TYPED_KEY = (
    "takes a typed PRNG key (jax.random.key), which jax.export on jax {} cannot serialize (a key "
    "from jax.random.PRNGKey can be): left out"
)

_programs: list[dict] = []
_at_import: dict = {}  # PROGRAM_FLAGS' values right after jax's import, less those a variable set


def start(jax) -> None:
    """Wrap ``jax.jit`` so that every function jitted from now on records its calls."""
    # JAX_ENABLE_X64=1 before the import: still carried
    _at_import.update((k, v) for k, v in _flags(jax).items() if k.upper() not in os.environ)
    real_jit = jax.jit

    @functools.wraps(real_jit)
    def jit(fun=None, *args, **kwargs):
        # jax.jit(static_argnums=...) as a decorator factory, on releases that allow it
        if fun is None:
            return lambda f: jit(f, *args, **kwargs)
        return _Recorded(jax, real_jit(fun, *args, **kwargs), fun, kwargs)

    jax.jit = jit


class _Recorded:
    """A jitted function that records its calls made outside tracing; else the jitted one."""

    def __init__(self, jax, jitted, fun, options) -> None:
        self._jax, self._jitted, self._options, self.__wrapped__ = jax, jitted, options, fun
        name = getattr(fun, "__name__", "program")
        self._entry = {"name": name, "calls": 0, "lowered": 0, "options": options, "jitted": jitted}

    def __getattr__(self, name):
        return getattr(self._jitted, name)

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        if not _tracing(self._jax, args, kwargs):
            self._record(args, kwargs)
            self._entry["calls"] += 1
        return self._jitted(*args, **kwargs)

    def _staged(self, how, *args, **kwargs):
        """The jitted function's own lowering or tracing, its inputs recorded: what will run."""
        if not _tracing(self._jax, args, kwargs):
            self._record(args, kwargs)
            self._entry["lowered"] += 1
        return _Staged(getattr(self._jitted, how)(*args, **kwargs), self._entry)

    lower = functools.partialmethod(_staged, "lower")
    trace = functools.partialmethod(_staged, "trace")  # 0.4.30 has it, 0.4.26 not

    def _record(self, args, kwargs) -> None:
        """The first inputs seen outside tracing, by a call or a lowering; listed once."""
        entry = self._entry
        if "shaped" in entry or "problem" in entry:
            return
        flags = _flags(self._jax)
        entry["config"] = {k: v for k, v in flags.items() if _at_import.get(k, not v) != v}
        try:
            entry.update(_inputs(self._jax, args, kwargs, self._options))
        except Exception as exc:  # an input it cannot describe: said in the listing
            entry["problem"] = f"{type(exc).__name__}: {exc}"[:300]
        _programs.append(entry)


class _Staged:
    """A stage of a program compiled ahead of time, otherwise the stage itself (``isinstance``
    included): the next stage stays recorded, each call of the compiled program counted."""

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


def _flags(jax) -> dict:
    """The values of PROGRAM_FLAGS this jax has, as in force here (a ``with`` block's included), in
    the form ``jax.config.update`` takes (an enum as its value)."""
    found = {}
    for name in (name for name in PROGRAM_FLAGS if name in jax.config.values):
        value = getattr(jax.config, name, jax.config.values[name])
        value = getattr(value, "value", value)  # an enum: its value
        if value is None or isinstance(value, (bool, int, float, str)):
            found[name] = value
    return found


def _tracing(jax, args, kwargs) -> bool:
    tracer = jax.core.Tracer
    return any(isinstance(leaf, tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs)))


def _static(args, kwargs, options) -> tuple[set, set]:
    static = options.get("static_argnums")
    static = {static} if isinstance(static, int) else set(static or ())
    names = options.get("static_argnames")
    names = {names} if isinstance(names, str) else set(names or ())
    return {n % len(args) if args else n for n in static}, names


def _dynamic(args, kwargs, options):
    """The arguments jit traces (the static ones, by position or name, left out)."""
    static, names = _static(args, kwargs, options)
    traced = tuple(a for i, a in enumerate(args) if i not in static)
    return traced, {k: v for k, v in kwargs.items() if k not in names}


def _arguments(jax, args, kwargs, options) -> dict:
    """The static arguments (baked in, named so a reader sees them) and the donated ones as their
    leaves' positions among the traced inputs (``_flat``'s one list)."""
    static, names = _static(args, kwargs, options)
    shown = {str(i): repr(args[i])[:80] for i in sorted(static) if i < len(args)}
    shown.update((k, repr(kwargs[k])[:80]) for k in sorted(names) if k in kwargs)
    donated = options.get("donate_argnums")
    donated = {donated} if isinstance(donated, int) else set(donated or ())
    positions: list[int] = []
    first = 0
    for number, arg in ((n, arg) for n, arg in enumerate(args) if n not in static):
        leaves = len(jax.tree_util.tree_leaves(arg))
        positions += range(first, first + leaves) if number in donated else []
        first += leaves
    return {"static": shown, "donated": positions}


def _flat(jax, entry):
    """The recorded function over the flat list of its traced inputs to the flat list of its
    outputs, statics bound: jax.export refuses a library's pytree nodes (an equinox Module)."""
    args, kwargs = entry["shaped"]
    static, names = _static(args, kwargs, entry["options"])
    dynamic_args, dynamic_kwargs = _dynamic(args, kwargs, entry["options"])
    leaves, tree = jax.tree_util.tree_flatten((dynamic_args, dynamic_kwargs))

    def flat(*inputs):
        given, named = jax.tree_util.tree_unflatten(tree, inputs)
        given = list(given)
        for number in sorted(static):
            given.insert(number, args[number])
        named.update((k, v) for k, v in kwargs.items() if k in names)
        return jax.tree_util.tree_leaves(entry["jitted"](*given, **named))

    flat.__name__ = entry["name"]
    return jax.jit(flat), leaves


def _inputs(jax, args, kwargs, options) -> dict:
    """The call's arguments as jax.export takes them (shapes and dtypes), and the traced inputs'
    values worth keeping, copied before the call may donate them: integer, boolean (they index)
    and key ones within the program's cap, others up to ``SAVED_LEAF_BYTES``."""
    import numpy as np

    def described(leaf):
        if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
        return leaf

    shaped = jax.tree_util.tree_map(described, (args, kwargs))
    saved, keys, total = {}, {}, 0
    for number, leaf in enumerate(jax.tree_util.tree_leaves(_dynamic(args, kwargs, options))):
        if isinstance(leaf, jax.ShapeDtypeStruct):  # a lowering's input with no values: generated
            continue
        if jax.dtypes.issubdtype(getattr(leaf, "dtype", None), jax.dtypes.extended):
            impl = jax.random.key_impl(leaf)  # its name: "fry" on 0.4.31, so the impl's own
            keys[f"a{number}"] = getattr(getattr(impl, "_impl", None), "name", None) or str(impl)
            leaf = jax.random.key_data(leaf)
        value = np.array(leaf, copy=True)
        indexes = value.dtype.kind in "biu" or f"a{number}" in keys
        fits = total + value.nbytes <= SAVED_PROGRAM_BYTES
        if fits and (indexes or value.nbytes <= SAVED_LEAF_BYTES):
            saved[f"a{number}"] = value
            total += value.nbytes
    return {
        "shaped": shaped,
        "saved": saved,
        "keys": keys,
        **_arguments(jax, args, kwargs, options),
    }


def finish(folder: str) -> None:
    """Export every recorded program into ``folder``, most called first, listed in programs.json."""
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
            flat, leaves = _flat(jax, entry)
            exported = export.export(flat)(*leaves)
            blob = exported.serialize()
        except Exception as exc:  # a program jax.export cannot take (a callback, say): said
            said = f"{type(exc).__name__}: {exc}"[:300]
            if "host_callbacks" in said:
                said = f"{CALLS_BACK} ({said})"
            elif isinstance(exc, KeyError) and "key<" in str(exc):  # 0.4.33 has no key dtype
                said = f"{TYPED_KEY.format(jax.__version__)} ({said})"
            item["problem"] = said
            continue
        with open(os.path.join(folder, f"{item['file']}.jaxexport"), "wb") as handle:
            handle.write(bytes(blob))
        values = _as_avals(np, entry["saved"], entry["keys"], exported.in_avals)
        np.savez(os.path.join(folder, f"{item['file']}.npz"), **values)
        item["inputs"] = [
            _input(aval, f"a{i}", values, entry["keys"]) for i, aval in enumerate(exported.in_avals)
        ]
        item.update((k, entry[k]) for k in ("config", "static", "donated") if entry[k])
    more = max(len(ordered) - MAX_PROGRAMS, 0)
    note = f"{more} more program(s) over the cap of {MAX_PROGRAMS} not exported" if more else ""
    _write_listing(folder, listed, note, jax.__version__)


def _as_avals(np, saved: dict, keys: dict, avals) -> dict:
    """Each kept value in its input's dtype, as raw bytes (any dtype, bfloat16 too, reads back from
    them; a typed key as its raw data); one whose shape is not its input's is left to generate."""
    found = {}
    for number, aval in enumerate(avals):
        name = f"a{number}"
        value = saved.get(name)
        if value is None or tuple(value.shape[: len(aval.shape)]) != tuple(aval.shape):
            continue
        if name not in keys and value.shape != tuple(aval.shape):
            continue
        raw = value if name in keys else value.astype(aval.dtype)
        found[name] = np.frombuffer(raw.tobytes(), np.uint8)
    return found


def _input(aval, name: str, values: dict, keys: dict) -> dict:
    """An input as listed: shape, dtype, weak type, kept or generated, a key's implementation."""
    said = {"shape": list(aval.shape), "dtype": str(aval.dtype), "saved": name in values}
    if getattr(aval, "weak_type", False):
        said["weak_type"] = True
    if name in keys:
        said["key"] = keys[name]
    return said


def _write_listing(folder: str, listed: list, note: str, version: str = "") -> None:
    document = {"jax": version, "programs": listed, "note": note}
    with open(os.path.join(folder, "programs.json"), "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
