"""The jax commit that changed an option's default, read from a clone (a small one built here; jax's
own layout: options declared in ``jax/_src``)."""

from pathlib import Path

import pytest

from harness.analysis.significance import Thresholds
from harness.errors import UsageError
from harness.explain import tried
from harness.explain.defaults import JAX, XLA, Change, OptionCommit, option_commits, repo_at_hand
from harness.explain.tried import DefaultsAnswer
from harness.install.commits import JAX_REPO_URL, clone_folder
from harness.metric_names import Criterion, parse_metric_name
from harness.steps.evidence import Step
from tests.explain.test_tried import said
from tests.install.fake_jax_repo import commit, git

EAGER = parse_metric_name("eager.wall_ns")
DECLARED = """from jax._src import config
_dispatch = config.bool_state(
    name="jax_cpu_enable_async_dispatch",
    default={default},
    help="Only applies to non-parallel computations.",
)
"""


def history(root: Path) -> tuple[Path, dict[str, str]]:
    """0.1.0 declares the option False; a commit touches the file without changing it, the next
    flips it to True (a commit elsewhere between them), and an option added after that; 0.1.1 is
    tagged."""
    repo = root / "jax-clone"
    (repo / "jax" / "_src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    source = repo / "jax" / "_src" / "xla_bridge.py"
    shas = {}
    source.write_text(DECLARED.format(default="False"))
    shas["0.1.0"] = commit(repo, "Prepare for v0.1.0 release.")
    git(repo, "tag", "jax-v0.1.0")
    source.write_text("# a comment\n" + DECLARED.format(default="False"))
    shas["comment"] = commit(repo, "Touch the file")
    (repo / "README").write_text("elsewhere\n")
    commit(repo, "Elsewhere")
    source.write_text("# a comment\n" + DECLARED.format(default="True"))
    shas["flip"] = commit(
        repo, "Async dispatch expensive computations on the JAX CPU backend " + "x" * 80
    )
    (repo / "jax" / "_src" / "config.py").write_text(
        'no_tracing = bool_flag(name="jax_no_tracing", default=False)\n'
    )
    shas["added"] = commit(repo, "Add jax_no_tracing")
    git(repo, "tag", "jax-v0.1.1")
    return repo, shas


def test_the_commit_that_turned_a_default_and_the_one_that_added_an_option_are_named(tmp_path):
    repo, shas = history(tmp_path)
    listed = [
        Change("jax_cpu_enable_async_dispatch", JAX, "False", "True"),
        Change("jax_no_tracing", JAX, None, "False"),
        Change("xla_cpu_use_thunk_runtime", XLA, "false", "true"),  # XLA's: not in jax's history
        Change("jax_never_declared", JAX, "1", "2"),
    ]
    found = option_commits(repo, "0.1.0", "0.1.1", listed)
    assert set(found) == {"jax_cpu_enable_async_dispatch", "jax_no_tracing"}
    flip = found["jax_cpu_enable_async_dispatch"]
    assert flip.sha == shas["flip"], "not the commit that only touched the file"
    assert flip.words().startswith(
        f'jax commit {shas["flip"][:10]} ("Async dispatch expensive computations'
    )
    assert flip.words().endswith('…")') and len(flip.words()) < 100
    assert found["jax_no_tracing"].sha == shas["added"]
    assert flip.url == f"https://github.com/jax-ml/jax/commit/{shas['flip']}"


def test_a_clone_without_the_releases_tags_says_so_in_one_line(tmp_path):
    repo, _ = history(tmp_path)
    with pytest.raises(UsageError, match=r"has no tag jax-v0\.9\.9 \(give a fuller clone"):
        option_commits(repo, "0.1.0", "0.9.9", [Change("jax_no_tracing", JAX, None, "False")])


def test_the_repository_at_hand_is_a_local_clone_or_the_kept_one_never_a_url(tmp_path):
    assert repo_at_hand(str(tmp_path), tmp_path / "cache") == tmp_path
    assert repo_at_hand(None, tmp_path / "cache") is None, "nothing cloned for it"
    kept = clone_folder(tmp_path / "cache", JAX_REPO_URL)
    kept.mkdir(parents=True)
    (kept / "HEAD").write_text("ref: refs/heads/main\n")
    assert repo_at_hand(None, tmp_path / "cache") == kept
    assert repo_at_hand("https://example.com/jax.git", tmp_path / "cache") is None


def test_an_option_s_commit_follows_it_in_the_answer_and_its_data():
    change = Change("jax_cpu_enable_async_dispatch", JAX, "False", "True")
    commits = {change.name: OptionCommit(change.name, "f" * 40, "T")}
    answer = DefaultsAnswer("0.4.31", "0.4.33", [change], commits=commits)
    [line] = said(answer, None, EAGER)
    assert line.endswith(
        'jax_cpu_enable_async_dispatch: False → True in jax commit ffffffffff ("T")'
    )
    url = "https://github.com/jax-ml/jax/commit/" + "f" * 40
    assert answer.metric_data(EAGER)["commits"] == {
        change.name: {"sha": "f" * 40, "title": "T", "url": url}
    }


def test_a_clone_that_cannot_name_the_commits_is_said_on_the_answer_not_in_silence(tmp_path):
    repo, _ = history(tmp_path)
    lines = []

    class Sides:
        progress = lines.append

    step = Step("0.1.0", "0.9.9", (Criterion.of(EAGER),), "cpu", Thresholds(), tmp_path, "s", repo)
    listed = [Change("jax_no_tracing", JAX, None, "False")]
    commits, unread = tried._commits(step, listed, Sides())
    assert commits == {} and unread.startswith(
        f"the jax commits of the changed defaults not read from {repo}"
    )
    assert "has no tag jax-v0.9.9" in unread and lines == [f"  {unread}"]
    xla_only = [Change("xla_cpu_use_thunk_runtime", XLA, "false", "true")]
    assert tried._commits(step, xla_only, Sides()) == ({}, ""), (
        "no jax option: the clone is not asked"
    )
    answer = DefaultsAnswer("0.1.0", "0.9.9", listed, problem=unread)
    assert unread in said(answer, None, parse_metric_name("eager.wall_ns"))
