"""The start-up hook a plain script runs under: ``python script_hook.py REPORT FILE ARGS...``.

It runs ``FILE`` exactly as ``python FILE ARGS...`` would (``__main__``, ``sys.argv``,
``sys.path[0]``, the working directory, exit status, standard output and error are the
script's), and writes REPORT, a small JSON file, with what the script spent where:

- ``import_ns``: the first ``import jax`` (JAX's own cost, never the user's code);
- per JAX duration event (``jax.monitoring``): how many fired and their total, from the
  listener registered the moment ``jax`` is imported; an event this release's source
  never names is reported as absent, so a reader records it missing, never as zero;
- ``started_ns`` / ``imported_ns`` / ``ended_ns``: ``perf_counter_ns`` at the hook's
  start, after the first import of jax, and at the script's end.

Standard library only, and never imported by the harness: the script runs in the
side's venv with the harness taken off its path, so this file is run by its path.
Nothing is written into the user's file or venv.
"""

from __future__ import annotations

import builtins
import json
import os
import runpy
import sys
import time
import traceback

STARTED_NS = time.perf_counter_ns()
# JAX's own duration events for the phases of a jitted call's first run (present from 0.4.26 on at least).
EVENTS = {
    "trace": "/jax/core/compile/jaxpr_trace_duration",
    "lower": "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "compile": "/jax/core/compile/backend_compile_duration",
}
_by_event = {event: phase for phase, event in EVENTS.items()}
_report: dict = {"schema": 1, "started_ns": STARTED_NS, "events": {p: {"count": 0, "total_ns": 0} for p in EVENTS}}
# jax options set for this process (``{"jax_cpu_enable_async_dispatch": false}``), as the harness tries a changed
# default with no edit to the script; each is set right after jax is first imported and read back.
JAX_CONFIG = "HARNESS_JAX_CONFIG"
# A folder to profile the process into (``jax.profiler``, a perfetto trace), from jax's import to the end: the
# one extra process per release that shows where a step's time went.
PROFILE_DIR = "HARNESS_PROFILE_DIR"
_plain_import = builtins.__import__


# Per phase, the spans its events covered, disjoint and in order: an event fires when it ends, so one that
# began before the spans already kept encloses them (a jit traced inside another's tracing), and a phase's
# total is the time its spans cover, never a nested event counted twice.
_spans: dict[str, list[list[int]]] = {phase: [] for phase in EVENTS}


def _on_duration(event: str, duration_secs: float, *args: object, **kwargs: object) -> None:
    phase = _by_event.get(event)
    if phase is not None:
        ended = time.perf_counter_ns()
        began = ended - round(duration_secs * 1e9)
        found, spans = _report["events"][phase], _spans[phase]
        found["count"] += 1
        while spans and spans[-1][1] > began:  # enclosed or overlapped: merged into this one
            earlier = spans.pop()
            began = min(began, earlier[0])
            found["total_ns"] -= earlier[1] - earlier[0]
        spans.append([began, max(ended, began)])
        found["total_ns"] += max(ended, began) - began


def _timed_import(name, globals=None, locals=None, fromlist=(), level=0):
    """``__import__`` that times the first import of jax, then listens to its duration events.

    Only the outermost import is timed: jax's own imports of ``jax._src...`` run inside it.
    """
    if _importing or level != 0 or not (name == "jax" or name.startswith("jax.")):
        return _plain_import(name, globals, locals, fromlist, level)
    _set_importing(True)
    began = time.perf_counter_ns()
    try:
        return _plain_import(name, globals, locals, fromlist, level)
    finally:
        _set_importing(False)
        if "jax" in sys.modules:  # imported (a failed import leaves the hook for the script's next try)
            _report["imported_ns"] = time.perf_counter_ns()
            _report["import_ns"] = _report["imported_ns"] - began
            builtins.__import__ = _plain_import
            _listen()
            configured = configure_jax(os.environ)
            if configured:
                _report["jax_config"] = configured
            _report["profiling"] = start_profile(os.environ)


_importing = False


def _set_importing(value: bool) -> None:
    global _importing
    _importing = value


def _listen() -> None:
    try:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_on_duration)
        _report["listening"] = True
    except Exception as exc:  # a release without the API: the phases are missing, the script still runs
        _report["listening"] = f"{type(exc).__name__}: {exc}"[:300]


def configure_jax(environ) -> dict:
    """Set the jax options ``environ[JAX_CONFIG]`` names; what each reads back as (or why it was not set)."""
    import jax

    found = {}
    for name, value in json.loads(environ.get(JAX_CONFIG) or "{}").items():
        try:
            jax.config.update(name, value)
            found[name] = repr(getattr(jax.config, name))
        except Exception as exc:  # an option this release does not have, or a value it refuses
            found[name] = f"not set: {type(exc).__name__}: {exc}"[:200]
    return found


def start_profile(environ) -> bool:
    """Start ``jax.profiler`` tracing into ``environ[PROFILE_DIR]`` where it names a folder; whether it started."""
    folder = environ.get(PROFILE_DIR)
    if not folder:
        return False
    import jax

    try:
        jax.profiler.start_trace(folder, create_perfetto_trace=True)
    except Exception as exc:  # a release without the option, or a profiler already running: no profile, said
        print(f"harness: no profile: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)
        return False
    return True


def stop_profile() -> None:
    import jax

    try:
        jax.profiler.stop_trace()
    except Exception as exc:
        print(f"harness: the profile did not stop cleanly: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)


def _events_in_source() -> dict[str, bool]:
    """Whether this jax's source names each event: an event that never fired is zero only where it exists."""
    jax = sys.modules.get("jax")
    folder = os.path.dirname(getattr(jax, "__file__", "") or "")
    wanted, found = set(EVENTS.values()), set[str]()
    for root, _, files in os.walk(folder):
        for file in files:
            if file.endswith(".py") and wanted - found:
                try:
                    with open(os.path.join(root, file), encoding="utf-8", errors="replace") as handle:
                        text = handle.read()
                except OSError:
                    continue
                found.update(event for event in wanted if event in text)
    return {phase: event in found for phase, event in EVENTS.items()}


def _write(path: str) -> None:
    _report["ended_ns"] = time.perf_counter_ns()
    if "imported_ns" in _report:
        unfired = [p for p, found in _report["events"].items() if found["count"] == 0]
        if unfired:
            present = _events_in_source()
            for phase in unfired:
                _report["events"][phase]["exists"] = present[phase]
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(_report, handle)
    except OSError:
        pass  # the harness reads a missing report as phases not measured


def main() -> None:
    report, script, *arguments = sys.argv[1:]
    sys.argv = [script, *arguments]
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python FILE` puts the script's folder first
    builtins.__import__ = _timed_import
    try:
        runpy.run_path(script, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:  # as `python FILE` reports it: the script's frames, not this hook's or runpy's
        frames = exc.__traceback__
        while frames is not None and frames.tb_frame.f_code.co_filename in (__file__, runpy.__file__, "<frozen runpy>"):
            frames = frames.tb_next
        traceback.print_exception(type(exc), exc, frames)
        sys.exit(1)
    finally:
        builtins.__import__ = _plain_import
        sys.stdout.flush()
        if _report.get("profiling"):
            stop_profile()
        _write(report)


if __name__ == "__main__":
    main()
