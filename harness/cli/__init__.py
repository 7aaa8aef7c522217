"""The command line, declared and checked: the harness's one standard-library boundary.

``parser`` assembles every command's declaration on ``argparsing`` (one-line errors) and
``command``, one module each here with its options and the check that types them (``run``,
``search``, ``export``, ``issue``, ``report``, ``compare``, ``ranges``, ``watch``, ``calibrate``,
``merge``, ``listing``, ``new``); ``options`` declares the options several commands share, once
each; ``sessions`` says what each nox session installs and runs, ``routing`` which command lines the
installed command's packaged session runs. The noxfile imports this package in nox's own
environment, before anything is installed, to refuse bad posargs in one line: it and what it imports
are standard library only (and ``packaging``, which nox needs), which ``tests/test_noxfile.py``
holds it to. What a command does with its checked options is its workflow, in ``harness.commands``.
"""
