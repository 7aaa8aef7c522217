"""Compare: the verdict over processes (``processes``, with Welch's test in ``t_test``) and the
older rule for pooled samples (``significance``), metric series and HLO facts of a result
(``metrics``), what may be compared with what (``groups``), claim verdicts as release ranges and
over processes (``claims``), the pairing of two result sets (``set_comparison``), what a report
shows, decided once (``report_model``), and a machine's noise floor from calibrate's runs
(``noise_floor``).  Pure: no rendering, no I/O beyond loading results.
"""
