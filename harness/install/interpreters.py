"""Which interpreter a Python version names: the one nox's sessions and every release venv are made
with.

Standard library only: the noxfile builds its sessions' parametrization from it in nox's own
environment.
"""

from __future__ import annotations

import glob
import os

from harness.units import version_key


def interpreter(version: str) -> str:
    """An interpreter for ``version``: pyenv's own copy when it has one, else the bare version.
    pyenv shims answer "command not found" for versions installed but not activated, and nox
    cannot see through them: it would skip the session ("interpreter not found", an error on CI).
    """
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}"))
    return max(found, key=version_key) if found else version
