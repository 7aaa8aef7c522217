"""``bisect --commits`` end to end over a small git repository, its commits' results already stored:
the real prober and judge, the answer files, and an issue draft's reading of them."""

import json
import subprocess

import pytest

from harness.cli.parser import parse
from harness.cli.ranges import check as checked_range_args
from harness.errors import UsageError
from harness.host.environment import machine_identity
from harness.install import commit_venvs
from harness.install.commit_venvs import commit_label
from harness.install.venvs import ReleaseEnv, write_plan
from harness.main import main
from harness.store.results import load_results, write_result
from harness.upstream.change import change_from, read_bisect_answers
from tests.commands.test_release_commands import flat, on_screen
from tests.conftest import derive, real_result
from tests.install.fake_jax_repo import make_repo

STEM = "bisect-async_dispatch-0.1.0-0.1.2-eager.wall_ns-N.1000-cpu-commits"


def stored(tmp_path, scales):
    """A plan of releases 0.1.0 and 0.1.2 (no venv exists), and a stored result for each label in
    ``scales``."""
    write_plan(
        tmp_path / "plan.json",
        [
            ReleaseEnv(
                r, r, str(tmp_path / "no-python"), (f"jax=={r}",), tmp_path / f"release-jax-{r}"
            )
            for r in ("0.1.0", "0.1.2")
        ],
    )
    data = real_result("async_dispatch-0.12.0.1")
    data["host"]["machine"] = machine_identity()
    for label, scale in scales.items():
        write_result(tmp_path / "results", derive(data, release=label, scale=scale))


def argv(tmp_path, repo, *more):
    return [
        "bisect",
        "async_dispatch",
        "--commits",
        "--good",
        "0.1.0",
        "--bad",
        "0.1.2",
        "--metric",
        "eager.wall_ns",
        "--jax-repo",
        str(repo),
        "--profile",
        "cpu",
        "--releases",
        str(tmp_path / "plan.json"),
        "--results",
        str(tmp_path / "results"),
        "--out",
        str(tmp_path / "reports"),
        *more,
    ]


def test_a_commit_bisect_names_the_first_bad_commit_and_a_draft_quotes_it(
    tmp_path, capsys, monkeypatch
):
    repo, shas = make_repo(tmp_path)
    slower_from_b = {"a": 1, "b": 3, "merge": 3}
    scales = {"0.1.0": 1, "0.1.2": 3, commit_label(shas["v0.1.2"], "0.1.2"): 3}
    for name, scale in slower_from_b.items():
        scales.update({commit_label(shas[name], jaxlib): scale for jaxlib in ("0.1.0", "0.1.1")})
    stored(tmp_path, scales)
    installed = []
    monkeypatch.setattr(commit_venvs, "ensure", lambda env, environ: installed.append(env.label))
    assert main(argv(tmp_path, repo)) == 0
    out = capsys.readouterr().out
    assert on_screen(out, tmp_path)
    said = flat(out)
    assert f"Answer: first bad commit {shas['b'][:10]} “Use an API of a newer jaxlib”" in said
    assert f"Commit: https://github.com/jax-ml/jax/commit/{shas['b']}" in out.splitlines()
    assert (
        f"last good: {shas['a'][:10]} “Start 0.1.1 (#101)” (" in said
        and "#101, jaxlib 0.1.0)" in said
    )
    assert "Attribution: jax's Python, at or before" in out
    assert (
        "nox -s issue -- --case async_dispatch --metric eager.wall_ns --good 0.1.0 --bad 0.1.2"
        in said
    )
    # the attribution commit is the last one accepting jaxlib 0.1.0 and 0.1.1, the merge
    assert installed[:2] == [
        commit_label(shas["merge"], "0.1.0"),
        commit_label(shas["merge"], "0.1.1"),
    ]
    data = json.loads((tmp_path / "reports" / f"{STEM}.json").read_text())
    assert data["commit"]["sha"] == shas["b"] and data["commit"]["jaxlib"] == "0.1.0"
    assert (data["last_good"], data["first_bad"], data["by"]) == ("0.1.0", "0.1.2", "commits")
    assert [p["release"] for p in data["probes"]] == ["0.1.0", "0.1.2"]
    assert {p["stage"] for p in data["commit_probes"]} == {"endpoint", "attribution", "bisect"}
    assert (
        (tmp_path / "reports" / f"{STEM}.md")
        .read_text()
        .startswith("# Bisect over jax commits: async_dispatch")
    )

    results, _ = load_results(tmp_path / "results" / "async_dispatch")
    change = change_from(
        read_bisect_answers(tmp_path / "reports", "async_dispatch"),
        results,
        case="async_dispatch",
        sizes={"N": 1000},
        profile="cpu",
    )
    assert change is not None and change.below.startswith(f"first bad commit {shas['b'][:10]}")
    assert (change.last_good, change.first_bad) == ("0.1.0", "0.1.2")


def test_a_figure_that_moves_with_jaxlib_is_answered_as_jaxlibs(tmp_path, capsys, monkeypatch):
    repo, shas = make_repo(tmp_path)
    scales = {"0.1.0": 1, "0.1.2": 3}
    for name in ("a", "b", "merge"):
        scales.update({commit_label(shas[name], "0.1.0"): 1, commit_label(shas[name], "0.1.1"): 3})
    stored(tmp_path, scales)
    monkeypatch.setattr(commit_venvs, "ensure", lambda env, environ: None)
    assert main(argv(tmp_path, repo)) == 0
    said = flat(capsys.readouterr().out)
    assert "Answer: jaxlib takes part (XLA / C++, between 0.1.0 and 0.1.2): jax at" in said
    assert "whether jax's Python takes part too is not measured here" in said
    data = json.loads((tmp_path / "reports" / f"{STEM}.json").read_text())
    assert data["jaxlib_change"] == "between jaxlib 0.1.0 and 0.1.1" and "commit" not in data
    assert data["probe_count"] == 4


def test_commits_and_jax_repo_are_checked_before_anything_runs(tmp_path):
    somewhere = tmp_path / "somewhere"
    subprocess.run(["git", "init", "-q", str(somewhere)], check=True)
    options = checked_range_args(parse(argv(tmp_path, somewhere)))
    assert (options.commits, options.jax_repo) == (True, str(somewhere))
    with pytest.raises(UsageError, match="--jax-repo x: no such folder"):
        checked_range_args(parse(argv(tmp_path, "x")))
    plain = [a for a in argv(tmp_path, "x") if a != "--commits"]
    with pytest.raises(UsageError, match="--jax-repo x: no such folder"):
        checked_range_args(parse(plain))
    folder = tmp_path / "not-a-clone"
    folder.mkdir()
    (folder / "jax").mkdir()
    for commits in (True, False):
        given = [str(folder) if a == "x" else a for a in argv(tmp_path, "x")]
        given = given if commits else [a for a in given if a != "--commits"]
        with pytest.raises(UsageError) as refused:
            checked_range_args(parse(given))
        assert str(refused.value) == (
            f"--jax-repo {folder}: not a git repository (give the top folder of a clone of jax: "
            "git clone https://github.com/jax-ml/jax)"
        )
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    clone = [str(folder) if a == "x" else a for a in plain]
    assert checked_range_args(parse(clone)).jax_repo == str(folder), (
        "a local clone names a default's commit"
    )
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert checked_range_args(parse([str(bare) if a == "x" else a for a in plain])).jax_repo
    without = plain[: plain.index("--jax-repo")] + plain[plain.index("--jax-repo") + 2 :]
    assert checked_range_args(parse(without)).commits is False


def test_nox_checks_the_commit_bisect_options_before_installing():
    from harness.cli.sessions import session_view

    posargs = [
        "--case",
        "scan_sync",
        "--commits",
        "--good",
        "0.4.31",
        "--bad",
        "0.4.33",
        "--metric",
        "scan.lower_ns",
    ]
    request = session_view("bisect", [*posargs, "--jax-repo", "https://example.com/jax.git"])
    assert request.span == ("0.4.31", "0.4.33") and "--commits" in request.harness_argv
    with pytest.raises(UsageError, match="--jax-repo URL is cloned for --commits only"):
        session_view(
            "bisect",
            [a for a in posargs if a != "--commits"] + ["--jax-repo", "https://example.com/j"],
        )
