"""``bisect``: with ``--vary``, the range's releases are the varied library's, each named by its
label; a metric declared (``--higher-is-better``, ``--value``, ``--cost``) that no result has is
said.

The index and the installs are stood in for (every label's environment is this interpreter, whose
numpy is whatever it holds); what runs is real: the script measured in case processes, each result
stored.
"""

import json

from harness.main import main
from harness.steps.probes import ReleaseProber

from .conftest import VERSIONS, release_plan

SCRIPT = """# /// script
# dependencies = ["numpy"]
# ///
import json

import numpy

print(json.dumps({"total": float(numpy.arange(1000).sum())}))
"""


def test_a_bisect_of_a_library_s_releases_measures_the_labels_its_options_made_and_names_a_typo(
    tmp_path, this_interpreter_for_every_label, capsys, monkeypatch
):
    asked, measured = [], []
    prepare_ahead, measure_together = ReleaseProber.prepare_ahead, ReleaseProber.measure_together

    def told(prober, releases):
        asked.append((len(measured), list(releases)))
        prepare_ahead(prober, releases)

    def together(prober, releases, **how):
        measured.append(list(releases))
        measure_together(prober, releases, **how)

    monkeypatch.setattr(ReleaseProber, "prepare_ahead", told)
    monkeypatch.setattr(ReleaseProber, "measure_together", together)
    script = tmp_path / "np_s.py"
    script.write_text(SCRIPT)
    plan = release_plan(tmp_path, "0.12.0.1")
    argv = ["bisect", "--script", str(script), "--with", "numpy", "--vary", "numpy"]
    argv += ["--jax", "0.12.0.1", "--good", VERSIONS[0], "--bad", VERSIONS[-1]]
    argv += ["--releases", str(plan), "--results", str(tmp_path / "results")]
    argv += ["--out", str(tmp_path / "out"), "--processes", "3", "--max-processes", "3"]
    argv += ["--repeats", "2", "--max-seconds", "0.5", "--higher-is-better", "json.nope"]
    argv += ["--value", "json.nosuch", "--cost", "json.nocost"]
    status = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "KeyError" not in err, err[-3000:]
    assert status in (0, 1, 3), err[-3000:]
    stored = {
        json.loads(path.read_text())["release"] for path in (tmp_path / "results").rglob("*.json")
    }
    assert stored >= {"0.12.0.1+numpy.1.0.0", "0.12.0.1+numpy.1.2.0"}, stored
    # the first probe's release is installed while the endpoints are measured (ready.Ahead)
    assert asked[0] == (0, ["0.12.0.1+numpy.1.1.0"]), asked
    # A metric no result has, named higher-is-better, changes nothing: said, not ignored.
    assert "--higher-is-better json.nope: no metric of script-np_s has that name" in err, err[
        -3000:
    ]
    # R8-17: so is a --value or --cost of a metric that never appears.
    assert "--value json.nosuch: no metric of script-np_s has that name" in err
    assert "--cost json.nocost: no metric of script-np_s has that name" in err
