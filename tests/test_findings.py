"""A finding: its sentence and commands apart, as a page joins them and as stored data reads back;
and the one builder of follow-up nox commands."""

from harness.findings import Finding, FollowUp, finding_from, findings, leading, nox_command


def test_a_page_joins_the_sentence_and_its_commands_and_the_data_reads_back_whole():
    found = Finding(
        "the library or JAX?",
        (FollowUp("one held", "nox -s triage -- --hold x==1"), FollowUp("", "nox -s x")),
        leads=True,
    )
    assert found.markdown() == (
        "the library or JAX? one held: `nox -s triage -- --hold x==1`; `nox -s x`"
    )
    assert Finding("a workaround", (FollowUp("set", "XLA_FLAGS=--f", shell=False),)).markdown() == (
        "a workaround: set: `XLA_FLAGS=--f`"
    )
    assert finding_from(found.data()) == found
    assert finding_from("an  older\nanswer's sentence") == Finding("an older answer's sentence")
    assert finding_from({"text": 3}) is None and finding_from(None) is None
    assert findings(["plain", leading("first")]) == [Finding("plain"), Finding("first", leads=True)]


def test_a_follow_up_command_names_sizes_and_a_profile_nox_knows_only():
    words = ["--commits", "--good", "a", "--bad", "b"]
    assert nox_command("bisect", ["--case", "c"], words, {"N": 2}, "cpu") == (
        "nox -s bisect -- --case c --commits --good a --bad b --size N=2 --profile cpu"
    )
    assert nox_command("issue", ["--script", "s.py"], [], {}, "default") == (
        "nox -s issue -- --script s.py"
    ), "a direct run's own profile is no nox profile"
