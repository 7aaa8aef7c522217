"""Render: a model in, text and plots out; what to show is decided before (docs/layout.md says what
each module renders): ``report`` (the index and each case's page), ``plots``, ``set_comparison``,
``release_answers``, ``triage_answer`` (its screen too), ``triage_words``, ``commit_answer``,
``screen``, ``range_screen``, ``bisect_screen``, ``run_screen``, ``issue_screen``, ``why``,
``issue_draft``, ``watch_summary``, ``json_out``, ``tables``, ``text``, ``calibration``."""
