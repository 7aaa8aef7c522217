"""Imported first by the case forkserver (see harness.measure.launch), before JAX.

Older JAX releases (0.4.26 among them) warn on every ``os.fork()`` that JAX is
multithreaded.  The forkserver never starts a JAX backend — the threads that
warning is about — so its forks are as safe as a new interpreter; newer releases
warn only once a backend exists.  The filter is set in the forkserver alone.
"""

import warnings

warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
