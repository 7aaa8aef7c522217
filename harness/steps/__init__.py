"""Searching: where along releases (or commits) a behaviour changed, above ``install``, below
``explain`` (docs/layout.md names each module). Engines return data, with a short answer or reason
in words where one is kept (``BisectOutcome.answer``, a probe's note); pages are written in
``render``."""
