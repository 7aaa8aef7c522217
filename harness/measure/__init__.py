"""Run and time: each cell in several case processes per side, sides interleaved, each process
started by its side's long-lived worker and run in isolation (docs/layout.md names each module)."""
