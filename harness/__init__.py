"""Reproducibility harness for JAX performance surprises.

The pipeline's stages are subpackages; a stage imports only from the stages below it, lowest first:
``host`` (where a run happens) and ``ci`` (the CI matrix, a watch's issues: standard library alone)
→ ``store`` (results on disk) → ``analysis`` (statistics, claims: on the store alone) and
``catalogue`` (cases and scripts, sizes) → ``measure`` (run and time, one process per case run) →
``install`` (the index, venvs, commits) and ``upstream`` (the standalone script, the change a draft
is about) → ``steps`` (probes, bisect, sweep, triage, watch) and ``cli`` (every command line,
declared and checked: the standard-library boundary the noxfile imports) → ``explain`` (the why of a
step) → ``render`` (markdown, plots, every page and answer) → ``commands`` (what each command does)
→ ``main`` (``python -m harness``).  Under everything: ``errors``, ``units``, ``names``, ``pins``
(the release and profile tables), ``metric_names`` (a metric's name, what each kind of figure is,
and the criterion a range is judged by), ``stats`` (summaries of raw samples) and ``claim_rule``
(when a claim over processes is settled).  Only the case process imports JAX.
"""

__version__ = "0.1.0"
