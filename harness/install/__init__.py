"""Installing: the environments a side runs in, above ``measure`` and below ``steps``.

Releases on the package index (``index``) and when each was uploaded (``upload_times``); one cached
venv per release and build, the tools ``jax.export`` needs, and every installer's command run so
nothing it starts outlives it (``venvs``); a script's own venv per release, its libraries resolved
as of the release's date or newest (``script_envs``); which of them a side runs in
(``environments``); below releases, a range's jax commits (``commits``) and a venv per commit and
jaxlib (``commit_venvs``); the venvs no run has used for some days, removed (``prune``).
"""
