"""Where a run happened: the allow-listed environment, versions, CPU, memory, GPUs and TPU chips
(``environment``, ``gpu``, ``tpu``), the machine id that keeps timings of different machines apart
(``machine``), and the JAX installed beside the harness (``installed_jax``). Lowest stage: imports
nothing of the harness but ``errors`` and ``units``."""
