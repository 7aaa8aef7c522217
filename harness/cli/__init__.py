"""The command line, declared and checked, one module per command (docs/layout.md names each): the
noxfile imports this package in nox's own environment to refuse bad posargs in one line before
anything is installed, so it and what it imports are standard library only (and ``packaging``,
which nox needs; ``tests/test_noxfile.py`` holds it to that). What a command does with its checked
options is its workflow, in ``harness.commands``.
"""
