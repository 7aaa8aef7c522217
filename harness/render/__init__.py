"""Render: a model in, text and plots out; what to show is decided before. Markdown pages
(``report`` index, ``case_page``, ``run_detail``), PNG plots and their look (``plots``), the
``compare`` command's output (``set_comparison``), the answers of bisect, sweep and triage
(``release_answers``, ``triage_answer``, ``triage_words``, ``commit_answer``) and each command's
one-screen answer (``screen``, ``range_screen``, ``triage_screen``, ``bisect_screen``,
``run_screen``, ``issue_screen``), a step's why (``why``), the upstream draft (``issue_draft``, a
metric's or an ending's), a watch's summary (``watch_summary``), answers as JSON (``json_out``),
tables and caveats' marks (``tables``), stored strings as text (``text``) and a machine's noise
floor in one sentence (``calibration``)."""
