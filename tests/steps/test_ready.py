"""A release's side made ready, or the probe that says why not: a release that cannot be had is
stored as such once, however often it is probed; one that could not be tried is never stored; the
next releases installed beside a measurement, two at a time."""

import threading
import time
from pathlib import Path

import pytest

from harness.catalogue.scripts import read_script
from harness.errors import UsageError
from harness.install.environments import Environments, Failed, Prepared, Unavailable
from harness.install.venvs import ReleaseEnv
from harness.pins import AS_OF
from harness.steps.probes import Ahead, ReleaseProber
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


class FakeInstaller:
    """Each install waits until it is let go (or 10 s), recording how many ran at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.begun = []
        self.go = threading.Event()

    def __call__(self, release):
        with self.lock:
            self.begun.append(release)
            self.running += 1
            self.most = max(self.most, self.running)
        self.go.wait(10)
        with self.lock:
            self.running -= 1
        return Prepared(Path(f"/venvs/{release}/bin/python"))

    def begun_soon(self, count):
        deadline = time.monotonic() + 10
        while len(self.begun) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.begun)


def test_the_next_releases_install_while_one_is_measured_two_at_a_time():
    installer = FakeInstaller()
    ahead = Ahead(installer)
    ahead.start(["0.4.33", "0.4.34", "0.4.35"])
    # a fake measurement of another release: the installs begin while it runs, not after it
    assert installer.begun_soon(2) == ["0.4.33", "0.4.34"]
    time.sleep(0.1)
    assert installer.begun == ["0.4.33", "0.4.34"], "at most two installs at once"
    installer.go.set()  # the measurement is over
    taken = [ahead.take(release) for release in ("0.4.33", "0.4.34", "0.4.35")]
    assert [str(found.interpreter) for found in taken] == [
        f"/venvs/{release}/bin/python" for release in ("0.4.33", "0.4.34", "0.4.35")
    ]
    assert installer.most == 2
    assert ahead.take("0.4.33") is None, "taken once; a release never asked for is the caller's"


def test_an_install_that_raises_raises_where_it_is_taken():
    def broken(release):
        raise UsageError(f"{release}: requires-python excludes this interpreter")

    ahead = Ahead(broken)
    ahead.start(["0.4.33"])
    with pytest.raises(UsageError, match=r"0\.4\.33: requires-python"):
        ahead.take("0.4.33")


def test_a_range_s_sides_are_installed_two_at_a_time_each_side_in_order(tmp_path):
    installer = FakeInstaller()
    prober, _ = script_prober(tmp_path, None)
    releases = ["0.4.31", "0.4.33", "0.4.34", "0.4.35"]
    prober.envs.update({r: ReleaseEnv(r, r, "python3.12", (), tmp_path / r) for r in releases})
    prober.environments.prepare = lambda label, env: installer(label)  # type: ignore[method-assign]
    sides = []
    making = threading.Thread(
        target=lambda: sides.extend(prober.readiness.sides(releases, lambda line: None))
    )
    making.start()
    assert installer.begun_soon(2) == releases[:2], "the first two at once"
    installer.go.set()
    making.join(10)
    assert [side.release for side in sides] == releases
    assert sorted(installer.begun) == sorted(releases) and installer.most == 2
