"""The start-up hook a plain script runs under: ``python script_hook.py REPORT FILE ARGS...``.

It runs ``FILE`` exactly as ``python FILE ARGS...`` would (``__main__``, ``sys.argv``,
``sys.path[0]``, working directory, exit status and output are the script's) and writes REPORT, a
small JSON file: the first import of jax by any route, JAX's duration events (one this release's
source never names is reported absent, never zero), what the hook spent after the script, and what
``XLA_FLAGS`` held when jax started its backend, the one moment XLA reads it.

Standard library only, importing nothing of the harness (the script's venv need not hold it): run
by its path; the case process imports it for ``configure_jax`` and ``start_profile``.
"""

from __future__ import annotations

import faulthandler
import json
import os
import runpy
import signal
import sys
import threading
import time
import traceback
from typing import IO

STARTED_NS, STARTED_S = time.perf_counter_ns(), time.time()
# JAX's own duration events for the phases of a jitted call's first run (present from 0.4.26 on at
# least); each phase is a row of ``metric_names.PHASES`` marked ``from_events``.
EVENTS = {
    "trace": "/jax/core/compile/jaxpr_trace_duration",
    "lower": "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "compile": "/jax/core/compile/backend_compile_duration",
}
_by_event = {event: phase for phase, event in EVENTS.items()}
_report: dict = {
    "schema": 1,
    "started_ns": STARTED_NS,
    "events": {p: {"count": 0, "total_ns": 0} for p in EVENTS},
}
# The extra processes of a why: jax options set right after jax's import (a changed default tried);
# a folder to profile into (``jax.profiler``); a folder to export the programs jitted into
# (``script_capture``) with jax.export's tools (flatbuffers); a file for ``cProfile``.
JAX_CONFIG = "HARNESS_JAX_CONFIG"
PROFILE_DIR = "HARNESS_PROFILE_DIR"
EXPORT_DIR = "HARNESS_EXPORT_DIR"
EXPORT_TOOLS = "HARNESS_EXPORT_TOOLS"
PYTHON_PROFILE = "HARNESS_PYTHON_PROFILE"
_capture = None  # the capture module, once loaded
# XLA reads ``XLA_FLAGS`` once, when jax starts its backend (the first ``jax.devices()`` or jitted
# call), not at ``import jax``: a script that sets it before then runs with its flags, not ours.
XLA_FLAGS = "XLA_FLAGS"
# Where the script's Python stack goes at a fatal signal, and when (Unix seconds) to write it if
# still running: read back as where the process died (``harness.measure.deaths``).
FAULT_FILE = "HARNESS_FAULT_FILE"
FAULT_AT = "HARNESS_FAULT_AT_UNIX_S"
_armed: list[IO[str]] = []  # the open fault files: faulthandler writes to their descriptors


def watch_faults(path: str | None, at_unix_s: float | None) -> None:
    """faulthandler on, into the harness's file ``path``: every thread's Python stack at a fatal
    signal, and at ``at_unix_s`` (``dump_stacks_at``); nothing where there is no file to write."""
    if not path:
        return
    try:
        handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life
    except OSError:  # no stack then; the process still runs
        return
    _armed.append(handle)
    faulthandler.enable(file=handle, all_threads=True)
    if at_unix_s:
        dump_stacks_at(at_unix_s, handle)


OTHER_THREADS, OTHER_FRAMES, MAIN_FRAMES = 20, 8, 100  # faulthandler's own: 100 frames a thread


def dump_stacks_at(at_unix_s: float, file: IO[str]) -> None:
    """Every thread's Python stack into ``file`` at ``at_unix_s`` (a little before the time-out),
    in faulthandler's words and order: the others first, a few frames each, the main thread last
    and whole, where the end of the file the harness keeps (``deaths.read_stack``) has it.

    Written by a thread of Python, which holds the GIL while it reads the frames: faulthandler's
    own ``dump_traceback_later`` reads the other threads' frames while they run, and can crash the
    process it only meant to describe (a slow suite's processes died of SIGSEGV at the dump, and
    read as a new crash).  A thread that holds the GIL and never lets go leaves no stack here."""

    def dump() -> None:
        time.sleep(max(0.1, at_unix_s - time.time()))
        main, mine = threading.main_thread().ident, threading.get_ident()
        frames = sys._current_frames()
        threads = [(i, f) for i, f in frames.items() if i not in (main, mine)]
        ran = time.time() - STARTED_S
        lines = [f"Timeout ({int(ran // 3600)}:{int(ran % 3600 // 60):02d}:{ran % 60:05.2f})!"]
        last = [(main, frames[main])] if main in frames else []
        for ident, frame in [*threads[-OTHER_THREADS:], *last]:
            most = MAIN_FRAMES if ident == main else OTHER_FRAMES
            stack = traceback.extract_stack(frame, limit=most + 1)
            lines.append(f"Thread 0x{ident:016x} (most recent call first):")
            lines += [
                f'  File "{f.filename}", line {f.lineno} in {f.name}'
                for f in reversed(stack[-most:])
            ]
            lines += ["  ...", ""] if len(stack) > most else [""]
        try:
            file.write("\n".join(lines) + "\n")
            file.flush()
        except (OSError, ValueError):  # closed at the interpreter's exit
            pass

    threading.Thread(target=dump, name="harness-stack-at-time-out", daemon=True).start()


# Per phase, the spans its events covered, disjoint and in order: an event fires when it ends, so
# one that began before the spans already kept encloses them (a jit traced inside another's
# tracing), and a phase's total is the time its spans cover, never a nested event counted twice.
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


class _JaxImportTimer:
    """A finder first on ``sys.meta_path``, which every route of import passes (``__import__``
    alone misses ``importlib``'s): jax's loader wrapped for its ``exec_module``, then restored."""

    def find_spec(self, name, path=None, target=None):
        if name != "jax" or "imported_ns" in _report:
            return None
        for finder in [finder for finder in sys.meta_path if finder is not self]:
            find = getattr(finder, "find_spec", None)
            if find is not None and (spec := find(name, path, target)) is not None:
                break
        else:
            return None  # no jax here: the import fails as it would without the hook
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _TimedLoader(spec.loader)
        return spec


class _TimedLoader:
    """jax's own loader, ``exec_module`` timed; then the listener and the harness's options."""

    def __init__(self, loader):
        self.loader = loader

    def __getattr__(self, name):  # create_module and the rest: jax's loader's
        return getattr(self.loader, name)

    def exec_module(self, module):
        began = time.perf_counter_ns()
        try:
            self.loader.exec_module(module)
        finally:
            # The module keeps jax's own loader, as an unhooked import leaves it.
            module.__loader__ = self.loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self.loader
        _report["imported_ns"] = time.perf_counter_ns()
        _report["import_ns"] = _report["imported_ns"] - began
        _stop_timing()
        try:
            import jax.monitoring

            jax.monitoring.register_event_duration_secs_listener(_on_duration)
            _report["listening"] = True
        except Exception as exc:  # a release without the API: phases missing, the script runs
            _report["listening"] = f"{type(exc).__name__}: {exc}"[:300]
        if configured := configure_jax(os.environ):
            _report["jax_config"] = configured
        _report["profiling"] = start_profile(os.environ)
        _watch_backend()
        if os.environ.get(EXPORT_DIR):
            _start_capture(module)


def _watch_backend() -> None:
    """Keep ``XLA_FLAGS`` as it is when jax starts its backend (now, if started): ``backends`` is
    wrapped for its first call only (every route to a device goes through it), then put back."""
    try:
        from jax._src import xla_bridge

        original = xla_bridge.backends
        started = getattr(xla_bridge, "backends_are_initialized", lambda: False)()
    except Exception:  # a release laid out otherwise: the harness reads the flags as not seen
        return
    if started:
        _report["xla_flags"] = _xla_flags_now()
        return

    def backends(*args, **kwargs):
        _report.setdefault("xla_flags", _xla_flags_now())
        if xla_bridge.backends is backends:
            xla_bridge.backends = original
        return original(*args, **kwargs)

    xla_bridge.backends = backends


def _xla_flags_now() -> str:
    """``XLA_FLAGS`` as XLA's ``getenv`` reads it: the process's own environment, which
    ``os.putenv`` changes without ``os.environ`` seeing it ("" where it is not set)."""
    try:
        import ctypes

        getenv = ctypes.CDLL(None).getenv
        getenv.restype, getenv.argtypes = ctypes.c_char_p, [ctypes.c_char_p]
        found = getenv(XLA_FLAGS.encode())
        return "" if found is None else found.decode(errors="replace")
    except Exception:  # no C library to ask: Python's view of it
        return os.environ.get(XLA_FLAGS, "")


def _start_capture(jax) -> None:
    """Load ``script_capture`` by its path (the harness stays off the script's) and wrap jax.jit."""
    global _capture
    import importlib.util

    where = os.path.join(os.path.dirname(os.path.abspath(__file__)), "script_capture.py")
    try:
        spec = importlib.util.spec_from_file_location("_harness_script_capture", where)
        assert spec is not None and spec.loader is not None
        _capture = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_capture)
        _capture.start(jax)
    except Exception as exc:  # no capture: the script still runs, and the listing says why
        _capture = None
        _say("programs not captured", exc)


_TIMER = _JaxImportTimer()


def _stop_timing() -> None:
    if _TIMER in sys.meta_path:
        sys.meta_path.remove(_TIMER)


def configure_jax(environ) -> dict:
    """Set the jax options ``environ[JAX_CONFIG]`` names; what each reads back (or why unset)."""
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
    """Trace ``jax.profiler`` into ``environ[PROFILE_DIR]`` where it is set; whether it started."""
    folder = environ.get(PROFILE_DIR)
    if not folder:
        return False
    import jax

    try:
        jax.profiler.start_trace(folder, create_perfetto_trace=True)
    except Exception as exc:  # a release without the option, or a profiler already running
        _say("no profile", exc)
        return False
    return True


def stop_profile() -> None:
    import jax

    try:
        jax.profiler.stop_trace()
    except Exception as exc:
        _say("the profile did not stop cleanly", exc)


def _say(what: str, exc: Exception) -> None:
    print(f"harness: {what}: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)


def _write(path: str) -> None:
    _report["ended_ns"] = ended = time.perf_counter_ns()
    unfired = [p for p, found in _report["events"].items() if found["count"] == 0]
    if "imported_ns" in _report and unfired:
        # Whether this jax's source names each event: one never fired is zero only if it exists.
        folder = os.path.dirname(getattr(sys.modules.get("jax"), "__file__", "") or "")
        wanted, found = set(EVENTS.values()), set[str]()
        for root, _, files in os.walk(folder):
            for file in (file for file in files if file.endswith(".py") and wanted - found):
                try:
                    with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
                        found.update(event for event in wanted if event in f.read())
                except OSError:
                    continue
        for phase in unfired:
            _report["events"][phase]["exists"] = EVENTS[phase] in found
    # The scan of jax's source is the hook's: the harness takes it out of the process's time.
    _report["after_script_ns"] = time.perf_counter_ns() - ended
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(_report, handle)
    except OSError:
        pass  # the harness reads a missing report as phases not measured


def main() -> None:
    report, script, *arguments = sys.argv[1:]
    at = os.environ.pop(FAULT_AT, "")  # both variables out of the script's view
    watch_faults(os.environ.pop(FAULT_FILE, ""), float(at) if at else None)
    sys.argv = [script, *arguments]
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python FILE` puts it
    if os.environ.get(EXPORT_DIR) and os.environ.get(EXPORT_TOOLS):
        # Last on the path, and before jax's import: jax registers its key types' serialization
        # only where flatbuffers imports then (a program of a typed key is refused otherwise).
        sys.path.append(os.environ[EXPORT_TOOLS])
    if "jax" not in sys.modules:  # else imported before the script (a .pth file): none to time
        sys.meta_path.insert(0, _TIMER)
    profiler = None
    if os.environ.get(PYTHON_PROFILE):
        import cProfile

        profiler = cProfile.Profile()
    interrupted = False
    try:
        if profiler is not None:
            profiler.runcall(runpy.run_path, script, run_name="__main__")
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:  # as `python FILE` ends: its traceback, a Ctrl-C then of SIGINT
        _print_script_traceback(exc)
        interrupted = isinstance(exc, KeyboardInterrupt)
        if not interrupted:
            sys.exit(1)
    finally:
        _stop_timing()
        sys.stdout.flush()
        if _report.get("profiling"):
            stop_profile()
        if profiler is not None:
            profiler.dump_stats(os.environ[PYTHON_PROFILE])
        if _capture is not None:
            try:
                _capture.finish(os.environ[EXPORT_DIR])
            except Exception as exc:
                _say("programs not exported", exc)
        _write(report)
    if interrupted:
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)


def _print_script_traceback(exc: BaseException) -> None:
    """The traceback as `python FILE` prints it: the script's frames, not this hook's or runpy's."""
    frames, ours = exc.__traceback__, (__file__, runpy.__file__, "<frozen runpy>")
    while frames is not None and frames.tb_frame.f_code.co_filename in ours:
        frames = frames.tb_next
    traceback.print_exception(type(exc), exc, frames)


if __name__ == "__main__":
    main()
