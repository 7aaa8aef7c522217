"""Compare: the significance rule for two sets of samples
(``significance``), metric series and HLO facts of a result (``metrics``), what may be compared with
what (``groups``), claim verdicts as release ranges (``claims``), and the pairing of two result sets
(``set_comparison``), and what a report shows, decided once (``report_model``).  Pure: no rendering,
no I/O beyond loading results.
"""
