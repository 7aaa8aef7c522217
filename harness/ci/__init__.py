"""Continuous integration (docs/layout.md names each module). Standard library only, low in the
house: it reads nox's and a watch's output, not the harness's objects."""
