"""Answer file names: one per case, range, criterion, sizes and profile, built only from names."""

import pytest

from harness.errors import UsageError
from harness.metric_names import parse_metric_name
from harness.names import name_problem
from harness.steps.answers import LONGEST_STEM, answer_stem, criterion


def stem(**changes):
    given = {
        "command": "bisect",
        "case": "scan_sync",
        "first": "0.4.26",
        "last": "0.4.35",
        "criterion": "claim",
        "sizes": {"N": 100, "M": 500},
        "profile": "cpu",
    } | changes
    return answer_stem(
        given.pop("command"), given.pop("case"), given.pop("first"), given.pop("last"), **given
    )


def test_every_part_of_the_setting_is_in_the_name():
    assert stem() == "bisect-scan_sync-0.4.26-0.4.35-claim-M.500+N.100-cpu"
    assert (
        stem(command="triage", sizes={}, criterion="all")
        == "triage-scan_sync-0.4.26-0.4.35-all-nosizes-cpu"
    )
    names = {
        stem(),
        stem(last="0.5.3"),
        stem(criterion="scan.compile_ns"),
        stem(sizes={"N": 1}),
        stem(profile="cpu8"),
    }
    assert len(names) == 5, "another range, criterion, size point or profile never shares a name"


def test_the_criterion_is_the_metric_the_claim_or_every_metric():
    assert criterion(parse_metric_name("eager.dispatch_ns"), False) == "eager.dispatch_ns"
    assert (criterion(None, True), criterion(None, False)) == ("claim", "all")


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


def script_setting(**libraries):
    from harness.analysis.significance import Thresholds
    from harness.steps.answers import Libraries, Setting

    versions = {
        "0.4.31": {"equinox": "0.11.4"},
        "0.4.33": {"equinox": "0.11.6"},
        "0.4.34": {"equinox": "0.11.6"},
    }
    return Setting(
        "script-repro",
        {},
        "cpu",
        None,
        {},
        Thresholds(),
        1.0,
        target=("--script", "repro.py"),
        libraries=Libraries(**({"versions": versions, "policy": "as-of"} | libraries)),
    )


def test_a_step_where_a_library_moved_with_jax_offers_the_commands_that_tell_them_apart():
    said = script_setting().step_libraries("0.4.31", "0.4.33")
    assert said.startswith(
        "the script's libraries changed along with jax (equinox 0.11.4 → 0.11.6): the library or"
    )
    triage = "`nox -s triage -- --script repro.py"
    assert f"{triage} --from 0.4.31 --to 0.4.33 --hold equinox==0.11.4 --profile cpu`" in said
    assert f"{triage} --vary equinox --jax 0.4.33 --from 0.11.4 --to 0.11.6 --profile cpu`" in said


def test_a_step_the_libraries_did_not_move_with_comes_with_jax_and_a_varied_one_with_the_library():
    assert (
        script_setting().step_libraries("0.4.33", "0.4.34")
        == "comes with jax 0.4.34 (equinox 0.11.6 on both)"
    )
    held = script_setting(held=("equinox==0.11.6",)).step_libraries("0.4.33", "0.4.34")
    assert held == "comes with jax 0.4.34 (equinox 0.11.6 held)"
    varied = script_setting(vary="equinox", jax="0.4.33", versions={})
    assert varied.step_libraries("0.4.33+equinox.0.11.4", "0.4.33+equinox.0.11.5") == (
        "comes with equinox 0.11.5 (jax 0.4.33 held)"
    )
    assert script_setting(versions={}).step_libraries("0.4.31", "0.4.33") == "", (
        "a case's step says nothing of them"
    )
