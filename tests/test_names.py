import shutil

import pytest

from harness.errors import UsageError
from harness.names import (
    MAX_COMPONENT_BYTES,
    MAX_PATH_BYTES,
    NAME,
    SIZE_NAME,
    inside,
    name_problem,
    path_problem,
)
from harness.store.results import load_results, merge

from .conftest import FIXTURES


@pytest.mark.parametrize(
    "name", ["scan_sync", "0.12.0.1", "cpu8", "cpu-classic", "20261129T1200-ab12cd34", "rc+local"]
)
def test_ordinary_names_pass(name):
    assert name_problem(name) is None


@pytest.mark.parametrize(
    "name", ["", ".", "..", "../x", "/abs", "a/b", "a\\b", "-flag", "a b", "x" * 129, "é"]
)
def test_names_that_could_become_other_paths_are_refused(name):
    assert name_problem(name) is not None


def test_size_names_are_identifiers():
    assert name_problem("N", SIZE_NAME) is None and name_problem("../N", SIZE_NAME) is not None
    assert NAME.pattern != SIZE_NAME.pattern


def test_inside_refuses_a_path_that_leaves_its_folder(tmp_path):
    assert inside(tmp_path, "a", "b.md") == tmp_path / "a" / "b.md"
    for parts in (("..", "x"), ("/etc/passwd",), ("a", "..", "..", "x")):
        with pytest.raises(UsageError, match="is not inside"):
            inside(tmp_path, *parts)
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(UsageError, match="is not inside"):
        inside(tmp_path, "link", "x")


def _tree(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_hostile_results_are_named_and_nothing_is_written_outside_the_output_folders(
    tmp_path, capsys
):
    from harness.main import main

    outside = tmp_path / "outside"
    outside.mkdir()
    results = outside / "in" / "results"
    shutil.copytree(FIXTURES / "hostile", results / "hostile")
    shutil.copytree(FIXTURES / "results", results / "fine")
    loaded, problems = load_results(results)
    hostile = sorted(p.name for p in (FIXTURES / "hostile").iterdir())
    assert sorted(p.path.name for p in problems) == hostile, "every hostile file is named"
    assert all("is not a name" in p.reason for p in problems), [str(p) for p in problems]
    assert len(loaded) == len(list((FIXTURES / "results").iterdir()))
    before = _tree(outside)
    out = outside / "in" / "reports"
    assert main(["report", "--results", str(results), "--out", str(out)]) == 0
    into = outside / "in" / "merged"
    merged = merge([results], into)
    assert len(merged.problems) == len(hostile) and len(merged.copied) == len(loaded)
    new = set(_tree(outside)) - set(before)
    assert new and all(p.startswith(("in/reports", "in/merged")) for p in new), sorted(new)
    assert "escaped" not in " ".join(_tree(tmp_path)), (
        "no file named by a hostile result exists anywhere"
    )


@pytest.mark.parametrize(
    "text",
    [
        "results",
        "/tmp/x",
        "a" * MAX_COMPONENT_BYTES,
        "é" * 127,
        "/".join(["b" * 200] * 20),
        "with space/ok",
    ],
)
def test_paths_the_system_takes_pass(text):
    assert path_problem(text) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty path"),
        ("  ", "empty path"),
        ("a\x00b", "NUL"),
        ("a" * (MAX_COMPONENT_BYTES + 1), "is 256 bytes, more than the 255"),
        ("ok/" + "é" * 128 + "/ok", "is 256 bytes"),  # 128 characters, 256 bytes
        ("/".join(["b" * 200] * 21), f"longer than the {MAX_PATH_BYTES}"),
        ("\ud800", "file name encoding"),
    ],
)
def test_paths_no_system_takes_are_named_in_one_line(text, reason):
    problem = path_problem(text)
    assert problem is not None and reason in problem and "\n" not in problem and len(problem) < 200


def test_inside_names_a_link_loop_on_the_way_instead_of_raising(tmp_path):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(UsageError, match=r"refusing to write .*a/x\.json: .*loop"):
        inside(tmp_path, "a", "x.json")
