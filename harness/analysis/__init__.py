"""Compare: the verdict over processes and everything it is judged with, a report's content decided
once, a machine's noise floor, measuring until decided (docs/layout.md names each module). Pure: no
rendering, no I/O beyond loading results."""

# Each shape's object, which every comparison names (a cost's by default), made before any is.
from harness.analysis import shapes as shapes
