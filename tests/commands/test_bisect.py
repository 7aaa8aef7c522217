"""``bisect``: with ``--vary``, the range's releases are the varied library's, each named by its label.

The index and the installs are stood in for (every label's environment is this interpreter, whose numpy is
whatever it holds); what runs is real: the script measured in case processes, each result stored.
"""

import datetime
import json
import sys
from pathlib import Path

import pytest

from harness.commands import ranges
from harness.install.environments import Environments, Prepared
from harness.main import main

VERSIONS = ["1.0.0", "1.1.0", "1.2.0"]
SCRIPT = """# /// script
# dependencies = ["numpy"]
# ///
import json

import numpy

print(json.dumps({"total": float(numpy.arange(1000).sum())}))
"""


@pytest.fixture
def this_interpreter_for_every_label(monkeypatch):
    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    monkeypatch.setattr(
        ranges.UploadTimes, "versions_with_times", lambda self, name: [(v, when) for v in VERSIONS]
    )
    monkeypatch.setattr(
        Environments, "prepare", lambda self, release, env: Prepared(Path(sys.executable))
    )


def test_a_bisect_of_a_library_s_releases_measures_the_labels_its_options_made(
    tmp_path, this_interpreter_for_every_label, capsys
):
    script = tmp_path / "np_s.py"
    script.write_text(SCRIPT)
    plan = tmp_path / "plan.json"
    venv = str(tmp_path / "venv-0.12.0.1")
    plan.write_text(
        json.dumps([{"jax": "0.12.0.1", "jaxlib": "0.12.0.1", "python": "3", "install": [], "venv": venv}])
    )
    argv = ["bisect", "--script", str(script), "--with", "numpy", "--vary", "numpy"]
    argv += ["--jax", "0.12.0.1", "--good", VERSIONS[0], "--bad", VERSIONS[-1]]
    argv += ["--releases", str(plan), "--results", str(tmp_path / "results")]
    argv += ["--out", str(tmp_path / "out"), "--processes", "3", "--max-processes", "3"]
    argv += ["--repeats", "2", "--max-seconds", "0.5"]
    status = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "KeyError" not in err, err[-3000:]
    assert status in (0, 1, 3), err[-3000:]
    stored = {
        json.loads(path.read_text())["release"] for path in (tmp_path / "results").rglob("*.json")
    }
    assert stored >= {"0.12.0.1+numpy.1.0.0", "0.12.0.1+numpy.1.2.0"}, stored
