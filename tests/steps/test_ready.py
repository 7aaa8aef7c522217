"""A release's side made ready, or the probe that says why not: a release that cannot be had is
stored as such once, however often it is probed; one that could not be tried is never stored."""

from harness.catalogue.scripts import read_script
from harness.install.environments import Environments, Failed, Unavailable
from harness.install.venvs import ReleaseEnv
from harness.pins import AS_OF
from harness.steps.probes import ReleaseProber
from harness.store.schema import Libraries, RunStatus, Settings

LINE = "not installable (as of 2024-08-06): equinox==9.9 cannot be had"


def script_prober(tmp_path, outcome):
    script = tmp_path / "repro.py"
    script.write_text("# /// script\n# dependencies = ['equinox']\n# ///\nprint(1)\n")
    case = read_script(script)
    environments = Environments(case, None, AS_OF, progress=lambda line: None)
    environments.prepare = lambda label, env: outcome  # type: ignore[method-assign]
    envs = {"0.4.31": ReleaseEnv("0.4.31", "0.4.31", "python3.12", (), tmp_path / "v")}
    settings = Settings(repeats=3, max_seconds=0.5, processes=3)
    results = tmp_path / "results"
    return ReleaseProber(
        envs, case, {}, "cpu", results, settings, lambda line: None, environments=environments
    ), results


def test_a_release_that_cannot_be_had_is_stored_once_however_often_it_is_probed(tmp_path):
    asked = Libraries(AS_OF, (), "0" * 64, None, ("equinox",))
    prober, results = script_prober(tmp_path, Unavailable(LINE, asked))
    first = prober("0.4.31")
    assert first.result is not None and first.result.result.status is RunStatus.NOT_INSTALLABLE
    for _ in range(3):
        again = prober("0.4.31")
        assert again.note == LINE and again.result is not None
    # the next run, into the same folder
    later, _ = script_prober(tmp_path, Unavailable(LINE, asked))
    assert later("0.4.31").result.result.id == first.result.result.id
    assert len(list(results.rglob("*.json"))) == 1, "stored once, read back after"


def test_a_release_that_could_not_be_tried_stores_nothing(tmp_path):
    prober, results = script_prober(tmp_path, Failed("could not be installed: the index is down"))
    found = prober("0.4.31")
    assert found.result is None and found.note == "could not be installed: the index is down"
    assert not results.exists() or not any(results.rglob("*.json"))
