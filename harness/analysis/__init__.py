"""Compare: the verdict over processes (``processes``, with Welch's test in ``t_test`` and the exact
Mann–Whitney guard in ``rank_test``), the verdict's vocabulary and thresholds (``significance``),
metric series and HLO facts of a result (``metrics``), what may be compared with what (``groups``),
claim verdicts as release ranges and over processes (``claims``), a release's processes by how they
ended (``statuses``), the one comparison of a value, a presence and an ending (``shapes``), the
pairing of two result sets (``set_comparison``), what a report shows, decided once
(``report_model``, with ``plot_points``), a machine's noise floor from calibrate's runs
(``noise_floor``), and measuring until decided (``spending``, ``sequential``, ``power``). Pure: no
rendering, no I/O beyond loading results."""
