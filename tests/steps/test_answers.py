"""Answer file names: one per case, range, criterion, sizes and profile, built only from names."""

import pytest

from harness.errors import UsageError
from harness.metric_names import Criterion, Judged, parse_metric_name
from harness.names import name_problem
from harness.steps.answers import LONGEST_STEM, answer_stem


def stem(**changes):
    given = {
        "command": "bisect",
        "case": "scan_sync",
        "first": "0.4.26",
        "last": "0.4.35",
        "criterion": Criterion(Judged.CLAIM),
        "sizes": {"N": 100, "M": 500},
        "profile": "cpu",
    } | changes
    return answer_stem(
        given.pop("command"), given.pop("case"), given.pop("first"), given.pop("last"), **given
    )


def test_every_part_of_the_setting_is_in_the_name():
    assert stem() == "bisect-scan_sync-0.4.26-0.4.35-claim-M.500+N.100-cpu"
    assert (
        stem(command="triage", sizes={}, criterion=Criterion(Judged.EVERY))
        == "triage-scan_sync-0.4.26-0.4.35-all-nosizes-cpu"
    )
    names = {
        stem(),
        stem(last="0.5.3"),
        stem(criterion=Criterion.of(parse_metric_name("scan.compile_ns"))),
        stem(sizes={"N": 1}),
        stem(profile="cpu8"),
    }
    assert len(names) == 5, "another range, criterion, size point or profile never shares a name"


def test_the_criterion_is_the_metric_the_claim_or_every_metric_and_says_itself_again():
    metric = Criterion.of(parse_metric_name("eager.dispatch_ns"), Judged.CLAIM)
    assert (metric.name, metric.words()) == ("eager.dispatch_ns", ["--metric", "eager.dispatch_ns"])
    claim, every = Criterion(Judged.CLAIM), Criterion.of(None)
    assert (claim.name, claim.words(), claim.is_claim) == ("claim", ["--claim"], True)
    assert (every.name, every.words(), every.said()) == ("all", [], "every metric and the claim")


def test_a_long_setting_is_shortened_by_a_digest_and_stays_a_name():
    sizes = {f"size_{i}": 10**8 + i for i in range(12)}
    long = stem(sizes=sizes)
    assert len(long) <= LONGEST_STEM and name_problem(long) is None
    assert long.startswith("bisect-scan_sync-0.4.26-0.4.35-") and long != stem(
        sizes=sizes | {"size_0": 1}
    )


@pytest.mark.parametrize(
    "changes", [{"first": "../x"}, {"profile": "a/b"}, {"case": ""}, {"last": "0.4 .1"}]
)
def test_a_part_that_is_not_a_name_is_refused(changes):
    with pytest.raises(UsageError, match="cannot name the bisect answer"):
        stem(**changes)


def test_every_package_that_moved_with_jax_is_a_library_jax_s_own_distributions_are_not():
    from harness.steps.answers import RangeLibraries

    installed = {
        "a": {"equinox": "0.11.4", "numpy": "2.5.3", "jaxlib": "0.4.31", "nvidia-cublas-cu12": "1"},
        "b": {"equinox": "0.11.6", "numpy": "2.5.4", "jaxlib": "0.4.33", "nvidia-cublas-cu12": "2"},
    }
    versions = {"a": {"equinox": "0.11.4"}, "b": {"equinox": "0.11.6"}}
    moved = RangeLibraries(versions, installed=installed).moved_with_jax("a", "b")
    assert moved == {"equinox": ("0.11.4", "0.11.6"), "numpy": ("2.5.3", "2.5.4")}
    assert list(moved) == ["equinox", "numpy"], "the declared first"
