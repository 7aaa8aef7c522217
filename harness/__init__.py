"""Reproducibility harness for JAX performance surprises.

The pipeline's stages are subpackages; a stage imports only from the stages below it, lowest first
(``tests/test_layout.py`` holds the imports to this order): ``host`` (where a run happens) →
``store`` (results on disk) → ``catalogue`` (cases and scripts, sizes) → ``measure`` (run and time,
one process per case run) → ``analysis`` (statistics, claims, each shape's comparison) → ``install``
(the index, venvs, commits) → ``steps`` (probes, bisect, sweep, triage, watch) → ``cli`` (every
command line, declared and checked: the standard-library boundary the noxfile imports) → ``explain``
(the why of a step) → ``upstream`` (the standalone script, the change a draft is about) → ``render``
(markdown, plots, every page and answer) → ``ci`` (the CI matrix, a watch's issues: standard library
alone) → ``commands`` (what each command does) → ``main`` (``python -m harness``). Under everything:
``errors``, ``units``, ``names``, ``pins`` (the release and profile tables), ``metric_names`` (a
metric's name, what each kind of figure is, and the criterion a range is judged by), ``stats``
(summaries of raw samples) and ``claim_rule`` (when a claim over processes is settled). Only the
case process imports JAX.
"""

__version__ = "0.1.0"
