"""The project files the packaged sessions need, shipped in the wheel beside the code.

``jax-repro triage`` (and every command that installs jax releases) runs from an installed
package as from a clone: it copies the noxfile, pyproject.toml, README.md, the harness and the
cases into a project folder of the user's cache and drives nox on it
(``harness.commands.anywhere``).  The three root files are not in a package, so the wheel's
build copies them into ``harness/project/``; everything else is in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PROJECT_FILES = ("noxfile.py", "pyproject.toml", "README.md")


class WithProjectFiles(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "harness" / "project"
        self.mkpath(str(target))
        for name in PROJECT_FILES:
            self.copy_file(name, str(target / name))


setup(cmdclass={"build_py": WithProjectFiles})
