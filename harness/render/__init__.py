"""Render: markdown pages (``report`` index, ``case_page``, ``run_detail``), PNG plots (``plots``),
the ``compare`` command's output (``set_comparison``), table formatting (``tables``) and a machine's
noise floor in one sentence (``calibration``).  Results and analyses in, text out.
"""
