"""Render: markdown pages (``report`` index, ``case_page``, ``run_detail``), PNG plots (``plots``),
the ``compare`` command's output (``set_comparison``) and table formatting (``tables``).  Results
and analyses in, text out.
"""
