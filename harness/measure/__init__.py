"""Run and time: each cell (a case at sizes) in several case processes per side, sides interleaved
(``runner``), each process started by its side's long-lived worker (``worker``, ``launch``) and
run in isolation (``child``, ``case_process``), timed after JAX's benchmarking guide with loops for
short programs (``timing``), its compiled HLO counted (``hlo``), the machine's load over its window
recorded (``load``), optionally pinned to CPUs (``affinity``); ``sides`` reads a plan of sides.
"""
