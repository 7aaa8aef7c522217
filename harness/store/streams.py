"""A file the user named that is not a regular file (``/dev/stdout``, a device, a FIFO, a shell's
``>(...)``).

Such a target is opened and written where it is: replacing it, as a regular file is replaced to be
written atomically, would put a regular file in place of the device (as root, ``/dev/null`` and
``/dev/full`` became files) and leave the reader of a FIFO or of ``>(...)`` with nothing.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

# Names of this process's own descriptors: written through the descriptor itself, which keeps its
# offset and append mode (``> out.txt``, ``>> log``), and never replaced (``/dev/stdout`` is a link
# in ``/dev``).
_OWN_DESCRIPTOR = re.compile(r"/dev/(?:fd/(\d+)|(stdin)|(stdout)|(stderr))|/proc/self/fd/(\d+)")


def own_descriptor(path: Path) -> int | None:
    """The descriptor ``path`` names (``/dev/stdout``: 1, ``/dev/fd/63``: 63), or None."""
    found = _OWN_DESCRIPTOR.fullmatch(str(path))
    if found is None:
        return None
    number, stdin, stdout, _stderr, proc = found.groups()
    return int(number or proc) if (number or proc) else 0 if stdin else 1 if stdout else 2


def is_stream(path: Path) -> bool:
    """Whether ``path`` is our descriptor or, links followed, not a regular file nor a folder."""
    if own_descriptor(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:  # missing, or a dangling link: a regular file will be written there
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_in_place(path: Path, payload: bytes) -> None:
    """Write ``payload`` to the stream at ``path`` (a FIFO waits for its reader, as ``>`` does)."""
    own = own_descriptor(path)
    if own is not None:
        view = memoryview(payload)
        while view:
            view = view[os.write(own, view) :]
        return
    # Not O_CREAT nor O_TRUNC: there is nothing to create, and a device's length is not ours to cut.
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(payload)
