"""A probe reuses the stored result of its cell; without one it installs, and says why it could not."""

from harness.releases.probes import ReleaseProber
from harness.releases.venvs import ReleaseEnv
from harness.store.results import write_result
from tests.conftest import derive, real_result


def prober(tmp_path, python="python3.12"):
    envs = {
        release: ReleaseEnv(release, release, python, ("jax==" + release,), tmp_path / f"venv-{release}")
        for release in ("0.4.30", "0.4.31")
    }
    lines = []
    found = ReleaseProber(envs, "async_dispatch", {"N": 1000}, "cpu", tmp_path / "results", [], 7, 1.0, lines.append)
    return found, lines


def test_a_stored_result_of_the_cell_is_reused_without_installing(tmp_path):
    probe, lines = prober(tmp_path)
    data = real_result("async_dispatch-0.12.0.1")
    older = derive(data, release="0.4.30", created_at="2026-01-01T00:00:00+00:00")
    newer = derive(data, release="0.4.30", scale=2)
    other_sizes = derive(data, release="0.4.30", sizes={"N": 64}, id="other")
    for record in (older, newer, other_sizes):
        write_result(tmp_path / "results", record)
    measured = probe("0.4.30")
    assert measured.result is not None and measured.result.id == newer["id"]
    assert measured.note.startswith("stored result reused") and lines == []


def test_a_release_that_cannot_be_installed_has_no_result_and_a_reason(tmp_path):
    probe, lines = prober(tmp_path, python=str(tmp_path / "no-such-python"))
    measured = probe("0.4.31")
    assert measured.result is None and measured.note.startswith("could not be installed: ")
    assert "0.4.31" in lines[0]
