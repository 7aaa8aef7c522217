"""jax's commits between two releases: first-parent order, each one's jaxlibs, the cuts, the
attribution pick."""

import pytest

from harness.errors import UsageError
from harness.install.commits import (
    Commit,
    attribution_choices,
    candidate_jaxlibs,
    clone_folder,
    first_parent_commits,
    open_repo,
    parse_version_file,
    pull_request,
    release_commit,
    segments,
)
from tests.install.fake_jax_repo import git, make_repo


def made(number: int, version: str, minimum: str) -> Commit:
    return Commit(
        f"{number:04x}{'c' * 36}", f"commit {number}", "2024-08-01T00:00:00+00:00", version, minimum
    )


# The shape of jax-v0.4.31..jax-v0.4.33: commits after 0.4.31 carry 0.4.32 with minimum 0.4.31, from
# 2024-09-11 the minimum is 0.4.32, and the 0.4.33 release commit accepts only its own number.
RANGE = [
    *(made(i, "0.4.31", "0.4.30") for i in range(3)),
    *(made(i, "0.4.32", "0.4.31") for i in range(3, 10)),
    *(made(i, "0.4.32", "0.4.32") for i in range(10, 12)),
    made(12, "0.4.33", "0.4.33"),
]


def test_version_file_lines_with_and_without_annotations():
    text = (
        '_version: str = "0.4.32"\n_release_version: str | None = None\n_minimum_jaxlib_version = '
        '"0.4.31"\n'
    )
    assert parse_version_file(text) == ("0.4.32", "0.4.31")
    assert parse_version_file("_version = '0.4.20'\n") == ("0.4.20", None)


@pytest.mark.parametrize(
    ("message", "number"),
    [
        ("Merge pull request #23415 from kaixih:key_value_seq_lengths", 23415),
        ("Fix the thing (#123)", 123),
        (
            "Reverts abc\n\nImported from GitHub PR https://github.com/jax-ml/jax/pull/23192\n",
            23192,
        ),
        ("Internal change\n\nPiperOrigin-RevId: 673411282", None),
    ],
)
def test_the_pull_request_a_message_names(message, number):
    assert pull_request(message) == number


def test_a_commit_accepts_jaxlibs_from_its_minimum_to_its_own_number():
    commit = made(1, "0.4.32", "0.4.31")
    assert commit.accepted(["0.4.30", "0.4.31", "0.4.32", "0.4.33"]) == ["0.4.31", "0.4.32"]
    assert not made(2, None, None).accepts("0.4.31"), (
        "without jax/version.py nothing is known to work"
    )


def test_the_numbers_the_commits_name_are_candidates_with_the_listed_jaxlibs_between_the_releases():
    # 0.4.32 is yanked, so the index does not list it; the commits name it, and it installs by exact
    # pin. 0.4.30, the first commits' minimum, is older than the good release's jaxlib: a commit may
    # need it.
    assert candidate_jaxlibs(
        RANGE, ["0.4.29", "0.4.31", "0.4.33", "0.4.34"], "0.4.31", "0.4.33"
    ) == [
        "0.4.30",
        "0.4.31",
        "0.4.32",
        "0.4.33",
    ]


def test_the_range_is_cut_where_no_one_jaxlib_fits_on():
    cut = segments(RANGE, ["0.4.31", "0.4.32", "0.4.33"])
    assert [(s.jaxlib, len(s.commits)) for s in cut] == [
        ("0.4.31", 10),
        ("0.4.32", 2),
        ("0.4.33", 1),
    ]
    assert [c for s in cut for c in s.commits] == RANGE


def test_of_two_jaxlibs_that_fit_as_far_the_older_one_is_taken():
    both = [made(i, "0.4.32", "0.4.31") for i in range(4)]
    assert [s.jaxlib for s in segments(both, ["0.4.31", "0.4.32"])] == ["0.4.31"]


def test_a_commit_accepting_no_candidate_is_a_segment_of_its_own():
    commits = [made(0, "0.4.32", "0.4.31"), made(1, None, None), made(2, "0.4.32", "0.4.31")]
    assert [s.jaxlib for s in segments(commits, ["0.4.31"])] == ["0.4.31", None, "0.4.31"]


def test_attribution_takes_the_latest_commits_accepting_the_pair_nearest_the_releases_own():
    # No commit accepts both 0.4.31 and 0.4.33: the nearest pair is (0.4.31, 0.4.32), late commits
    # first.
    choices = attribution_choices(RANGE, ["0.4.31", "0.4.32", "0.4.33"], "0.4.31", "0.4.33")
    assert [(c.sha, a, b) for c, a, b in choices] == [
        (RANGE[i].sha, "0.4.31", "0.4.32") for i in (9, 8, 7)
    ]
    assert attribution_choices(RANGE[:3], ["0.4.31", "0.4.32"], "0.4.31", "0.4.32") == []
    # A pair older than the step's (0.4.30 and 0.4.31, which the first commits accept) says nothing
    # of it.
    assert attribution_choices(RANGE[:3], ["0.4.30", "0.4.31", "0.4.32"], "0.4.31", "0.4.33") == []


def test_first_parent_commits_of_a_real_repository(tmp_path):
    repo, shas = make_repo(tmp_path)
    assert open_repo(str(repo), tmp_path / "cache") == repo
    good, bad = release_commit(repo, "0.1.0"), release_commit(repo, "0.1.2")
    assert (good, bad) == (shas["v0.1.0"], shas["v0.1.2"])
    commits = first_parent_commits(repo, good, bad)
    assert [c.sha for c in commits] == [shas["a"], shas["b"], shas["merge"], shas["v0.1.2"]], (
        "not the side branch"
    )
    first, _, merge, last = commits
    assert (first.title, first.pull_request, first.version, first.minimum_jaxlib) == (
        "Start 0.1.1 (#101)",
        101,
        "0.1.1",
        "0.1.0",
    )
    assert merge.pull_request == 202 and last.accepted(["0.1.0", "0.1.2"]) == ["0.1.2"]
    assert last.url == f"https://github.com/jax-ml/jax/commit/{shas['v0.1.2']}"


def test_a_url_is_cloned_once_into_the_cache(tmp_path):
    repo, shas = make_repo(tmp_path)
    cache = tmp_path / "cache"
    cloned = open_repo(f"file://{repo}", cache)
    assert cloned.parent == cache and release_commit(cloned, "0.1.2") == shas["v0.1.2"]
    assert open_repo(f"file://{repo}", cache) == cloned
    assert clone_folder(cache, "https://github.com/jax-ml/jax.git") == cache / "jax-repo.git"


def test_a_repository_that_cannot_be_had_is_one_error_naming_jax_repo(tmp_path):
    with pytest.raises(UsageError, match="--jax-repo PATH"):
        open_repo(f"file://{tmp_path}/nowhere", tmp_path / "cache")
    with pytest.raises(UsageError, match="--jax-repo"):
        open_repo(str(tmp_path / "nowhere"), tmp_path / "cache")
    repo, _ = make_repo(tmp_path)
    with pytest.raises(UsageError, match=r"no tag jax-v9\.9\.9"):
        release_commit(repo, "9.9.9")


def test_a_kept_clone_fetches_a_release_it_does_not_have_yet(tmp_path):
    repo, _ = make_repo(tmp_path)
    cloned = open_repo(f"file://{repo}", tmp_path / "cache")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Prepare for v0.1.3 release.")
    git(repo, "tag", "jax-v0.1.3")
    with pytest.raises(UsageError, match="no tag"):
        release_commit(cloned, "0.1.3")
    assert release_commit(cloned, "0.1.3", fetch=True) == git(repo, "rev-parse", "HEAD")


def test_the_jaxlibs_of_the_step_go_first_wherever_one_fits():
    # jax-v0.4.33..jax-v0.4.34 in small: main-line commits from before 0.4.33's branch accept 0.4.32
    # only.
    commits = [
        made(0, "0.4.32", "0.4.32"),
        made(1, "0.4.33", "0.4.32"),
        made(2, "0.4.34", "0.4.33"),
    ]
    jaxlibs = ["0.4.32", "0.4.33", "0.4.34"]
    assert [s.jaxlib for s in segments(commits, jaxlibs)] == ["0.4.32", "0.4.33"]
    assert [
        (s.jaxlib, len(s.commits)) for s in segments(commits, jaxlibs, ["0.4.33", "0.4.34"])
    ] == [
        ("0.4.32", 1),
        ("0.4.33", 2),
    ]
