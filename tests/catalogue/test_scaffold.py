"""``harness new NAME``: a template case that reads, lists, runs, exports and passes the linters as
written."""

import os
import shutil
import subprocess
import sys

import pytest

from harness.catalogue import discovery, scaffold
from harness.catalogue.discovery import anchor_sizes, outline
from harness.errors import UsageError
from harness.main import main
from harness.upstream.export import export_script

from ..conftest import REPO, harness_command


def test_the_template_is_a_case_the_catalogue_reads(tmp_path):
    path = scaffold.write_case("my_case", tmp_path)
    assert path == tmp_path / "my_case.py"
    case = discovery.read_case(path)
    assert case.name == "my_case" and case.anchors and case.claim and case.source.startswith("TODO")
    shape = outline(path)
    assert shape.programs == ["loop"] and shape.compiled == ["step"] and shape.verdict_takes_sizes
    compile(
        export_script(case, anchor_sizes(case, {}), {"compile_repeats": 1}), "my_case.py", "exec"
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("My-Case", "is not a case name"),
        ("1case", "is not a case name"),
        ("", "is not a case name"),
        ("x" * 65, "is not a case name"),
        ("compat", "is taken"),
        ("jax", "is taken"),
        ("os", "is taken"),
        ("class", "is taken"),
        ("index", "the name of a report's own page"),
    ],
)
def test_a_bad_name_is_refused(name, message, tmp_path):
    with pytest.raises(UsageError, match=message):
        scaffold.write_case(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_case_is_never_overwritten(tmp_path):
    (tmp_path / "mine.py").write_text("# my work\n")
    with pytest.raises(UsageError, match="exists already"):
        scaffold.write_case("mine", tmp_path)
    assert (tmp_path / "mine.py").read_text() == "# my work\n"


def test_new_then_list_through_the_command_line(tmp_path, capsys):
    assert main(["new", "fresh", "--cases-dir", str(tmp_path)]) == 0
    assert "written:" in capsys.readouterr().err
    assert main(["list", "fresh", "--cases-dir", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    for line in (
        "sizes: N in [16, 2048], K in [1, 1000]",
        "anchors (quick): K=20 N=256",
        "loop.wall_ns",
    ):
        assert line in shown
    assert "step.compile_ns" in shown and "verdict(medians, **sizes)" in shown
    assert main(["new", "fresh", "--cases-dir", str(tmp_path)]) == 2


def test_the_template_passes_the_linters(tmp_path):
    """As `nox -s lint` checks case files: ruff (rules and format) and mypy, with the project's
    settings."""
    tools = {
        tool: shutil.which(tool, path=os.path.dirname(sys.executable)) for tool in ("ruff", "mypy")
    }
    if not all(tools.values()):
        pytest.skip("ruff and mypy are in the lint extra (nox -s lint), not installed here")
    cases = tmp_path / "cases"
    cases.mkdir()
    path = scaffold.write_case("linted", cases)
    config = ["--config", str(REPO / "pyproject.toml")]
    for command in (
        [tools["ruff"], "check", *config, str(path)],
        [tools["ruff"], "format", "--check", *config, str(path)],
    ):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run(
        [tools["mypy"], "--config-file", str(REPO / "pyproject.toml"), str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.jax
def test_the_template_runs_on_the_jax_installed_here_and_its_claim_is_judged(tmp_path):
    pytest.importorskip("jax")
    cases = tmp_path / "cases"
    cases.mkdir()
    scaffold.write_case("runs", cases)
    options = [
        "--size",
        "N=16",
        "--size",
        "K=2",
        "--repeats",
        "2",
        "--warmup",
        "1",
        "--processes",
        "1",
    ]
    done = subprocess.run(
        harness_command(
            "run", "--cases-dir", str(cases), *options, "--results", str(tmp_path / "r")
        ),
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0 and "1 ok" in " ".join(done.stderr.split()), done.stderr
    [stored] = (tmp_path / "r").rglob("*.json")
    assert (
        '"evidence": "dispatch' in stored.read_text() and "per call at N=16" in stored.read_text()
    )
