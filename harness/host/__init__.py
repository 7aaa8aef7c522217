"""Where a run happened (docs/layout.md names each module). Lowest stage: imports nothing of the
harness but ``errors`` and ``units``."""
