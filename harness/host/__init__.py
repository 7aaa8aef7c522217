"""Where a run happened: the allow-listed environment, versions, CPU, memory and GPUs
(``environment``, ``gpu``), and the machine id that keeps timings of different machines apart
(``machine``).  Lowest stage: imports nothing of the harness but ``errors`` and ``units``.
"""
