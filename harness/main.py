"""``python -m harness``: every user mistake becomes one line on stderr and exit code 2; a traceback
here is a bug in the harness, not in the input.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import sys

from harness.cli import sessions
from harness.cli.parser import COMMANDS, parse
from harness.commands import workflow
from harness.errors import WRITE_FAILED, WRITE_REFUSED, HarnessError, interrupted_status, terminate
from harness.host import installed_jax
from harness.measure.guardian import follow_parent, guarded
from harness.pins import PROFILE_BY_NAME
from harness.render.text import terminal


def installed_here(argv: list[str]) -> list[str] | None:
    """As the installed program: a command line that needs releases (or an environment this one
    lacks) goes to its packaged session (None after); one measuring here, its devices' profile."""
    here = sessions.Here(installed_jax.version(), importlib.util.find_spec("tabulate") is not None)
    session = sessions.session_for(argv, here, os.environ)
    if session is not None:
        from harness.commands import packaged_sessions

        packaged_sessions.drive(session, argv, here.jax)
        return None
    with_profile = sessions.device_profile_argv(
        argv, installed_jax.device_profile if here.jax else None
    )
    if with_profile != argv:
        for name, value in PROFILE_BY_NAME[with_profile[-1]].env.items():
            # before any case process starts JAX; the user's own win
            os.environ.setdefault(name, value)
    return with_profile


def main(argv: list[str] | None = None) -> int:
    """The harness's command line; ``argv`` None: run as the program, which ends with whatever
    started it (``follow_parent``) and runs ``guarded``, so that nothing it started outlives it."""
    previous = signal.signal(signal.SIGTERM, terminate)
    for stream in (sys.stdout, sys.stderr):  # a path that is not UTF-8 prints its bytes escaped
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    try:
        if argv is None:
            follow_parent(signal.SIGTERM)
        line = installed_here(sys.argv[1:]) if argv is None else argv
        if line is None:
            return 0  # not reached: the packaged nox session replaced this process
        args = parse(line)
        checked = COMMANDS[args.command].check(args)
        with guarded() if argv is None else contextlib.nullcontext():
            return workflow(args.command)(checked)
    except HarnessError as exc:  # a path or name in it may hold an escape sequence: shown, not run
        print(terminal(f"harness: error: {exc}"), file=sys.stderr)
        return exc.exit_code
    # a command's extra is not installed here (tabulate, matplotlib, JAX)
    except ModuleNotFoundError as exc:
        said = f"{exc.name} is not installed in this environment: the nox session of the command"
        fix = "installs what it needs, or `pip install -e '.[report]'`"
        print(f"harness: error: {said} {fix} (JAX: the release to measure)", file=sys.stderr)
        return 2
    # the reader left (`jax-repro list | head`): stop quietly, as other tools do
    except BrokenPipeError:
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, sys.stdout.fileno())  # Python's own flush at exit would raise again
        return 128 + signal.SIGPIPE
    except OSError as exc:
        if exc.errno not in WRITE_REFUSED:
            raise
        # A folder that took writes when the command started (``prove_writable``) and stopped.
        where = f" {exc.filename}" if exc.filename else ""
        said = f"cannot write{where}: {exc.strerror}; every result stored so far is kept"
        print(terminal(f"harness: error: {said}"), file=sys.stderr)
        return WRITE_FAILED
    except KeyboardInterrupt as exc:
        resume = "every result stored so far is kept, run the same command to resume"
        print(f"harness: interrupted; {resume}", file=sys.stderr)
        return interrupted_status(exc)
    finally:
        signal.signal(signal.SIGTERM, previous)
