"""Reproducibility harness for JAX performance surprises.

The pipeline's stages are subpackages, lowest first; a stage imports only from the
stages below it: ``host`` (where a run happens) → ``store`` (results on disk) →
``catalogue`` (discover, select, sizes) → ``measure`` (run and time, one process per
case run) → ``analysis`` (statistics, groups, claims) → ``render`` (markdown, plots)
→ ``releases`` (index, venvs, bisect, sweep) → ``upstream`` (standalone script, issue
draft) → ``ci``.  On top: ``commands`` (one module per command), ``cli`` (``python -m
harness``), ``sessions`` (what a nox session runs, checked), ``reporting`` and
``calibrating``; ``errors``, ``units``, ``names``, ``pins`` (the release and profile
tables), ``stats`` (robust summaries of raw samples) and ``claim_rule`` (when a claim over
processes is settled) under everything.  Only the case process imports JAX.
"""

__version__ = "0.1.0"
