"""Render: markdown pages (``report`` index, ``case_page``, ``run_detail``), PNG plots (``plots``,
``series_plot``, their look decided in ``plot_style``), the ``compare`` command's output
(``set_comparison``), table formatting (``tables``), stored strings as text (``text``) and a machine's
noise floor in one sentence (``calibration``).  A model in (``analysis.report_model``, a comparison, a
calibration), text and plots out: what to show is decided before.
"""
