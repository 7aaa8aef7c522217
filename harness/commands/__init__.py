"""What each command does, one module per command, from the options ``harness.cli`` checked:
``run``, ``search``, ``export``, ``issue``, ``report``, ``compare``, ``flags``, ``watch``,
``calibrate``, ``merge``, ``listing``, ``new``, ``prune``; ``bisect`` (``--commits`` too),
``sweep`` and ``triage`` share ``ranges``; a nox session's end (``nox_session``), the installed
command's (``packaged_sessions``), and a long command's progress (``progress``).

A workflow module is imported only when its command runs: ``jax-repro list`` should not pay for
hypothesis, the statistics and the renderers that ``run`` and ``report`` need.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# A command's workflow module under harness.commands is named as the command (``list``'s aside:
# a module named ``list`` would shadow the builtin where imported); each has
# ``execute(options) -> int``.
MODULES = {"list": "listing"}


def workflow(command: str) -> Callable[[Any], int]:
    """The run of ``command``: its module's ``execute``, the module imported now."""
    module = importlib.import_module(f"harness.commands.{MODULES.get(command, command)}")
    run: Callable[[Any], int] = module.execute
    return run
