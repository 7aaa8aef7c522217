"""A file the user named that is not a regular file (``/dev/stdout``, a device, a FIFO, a shell's ``>(...)``).

Such a target is opened and written where it is: replacing it, as a regular file is replaced to be
written atomically, would put a regular file in place of the device (as root, ``/dev/null`` and
``/dev/full`` became files) and leave the reader of a FIFO or of ``>(...)`` with nothing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def is_stream(path: Path) -> bool:
    """Whether ``path``, its links followed, is something other than a regular file or a folder."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # missing, or a dangling link: a regular file will be written there
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_in_place(path: Path, payload: bytes) -> None:
    """Write ``payload`` to the stream at ``path`` (a FIFO waits for its reader, as a shell's redirection does)."""
    # Not O_CREAT nor O_TRUNC: there is nothing to create, and a device's length is not ours to cut.
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(payload)
