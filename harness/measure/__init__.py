"""Run and time: one case at one size point in a process of its own (``launch``, ``child``), timed
after JAX's benchmarking guide (``timing``), its compiled HLO counted (``hlo``), and the sweep that
runs planned cells and stores each outcome, whatever happens (``runner``).
"""
