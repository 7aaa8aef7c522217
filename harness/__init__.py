"""Reproducibility harness for JAX performance surprises.

The pipeline's stages are subpackages, lowest first; a stage imports only from the
stages below it: ``host`` (where a run happens) → ``store`` (results on disk) →
``catalogue`` (discover, select, sizes) → ``measure`` (run and time, one process per
case run) → ``analysis`` (statistics, groups, claims) → ``releases`` (index, venvs,
probes, bisect, sweep, triage) → ``upstream`` (standalone script, the change a draft
is about) → ``render`` (markdown, plots, every page and answer) → ``ci``.  On top:
``cli`` (every command line, declared and checked: the standard-library boundary the
noxfile imports) and ``commands`` (what each command does); ``main`` (``python -m
harness``).  ``errors``, ``units``, ``names``, ``pins`` (the release and profile
tables), ``metric_names``, ``stats`` (robust summaries of raw samples) and
``claim_rule`` (when a claim over processes is settled) are under everything.  Only
the case process imports JAX.
"""

__version__ = "0.1.0"
