from pathlib import Path

from harness.catalogue.script_deps import Declared
from harness.catalogue.subjects import CASE_MODULE, ChildStart, PlainScript
from harness.store.schema import ScriptIdentity

SCRIPT = PlainScript(
    "repro.py",
    "ab" * 32,
    ("--n", "a b"),
    Declared(("optax",), ("--with",), script="repro.py"),
    given=("--with", "optax"),
)


def test_a_case_and_a_script_start_their_processes_and_record_themselves_apart():
    assert CASE_MODULE.child_start() == ChildStart() and CASE_MODULE.identity() is None
    assert SCRIPT.child_start() == ChildStart("ab" * 32, ("--n", "a b"))
    assert SCRIPT.identity() == ScriptIdentity("repro.py", "ab" * 32, ("--n", "a b"))


def test_only_a_result_of_the_same_content_and_arguments_measured_the_script():
    assert SCRIPT.measured_by(ScriptIdentity("repro.py", "ab" * 32, ("--n", "a b")))
    assert not SCRIPT.measured_by(ScriptIdentity("repro.py", "ab" * 32))
    assert not SCRIPT.measured_by(None)
    assert CASE_MODULE.measured_by(None)


def test_a_script_refuses_a_folder_of_other_results_and_a_case_never_reads_one():
    def unread():
        raise AssertionError("a case's folder is read")
        yield None

    assert CASE_MODULE.mixing_problem("results/c", unread()) == ""
    same = ScriptIdentity("repro.py", "ab" * 32, ("--n", "a b"))
    assert SCRIPT.mixing_problem("results/s", [same, same]) == ""
    assert "other arguments (none)" in SCRIPT.mixing_problem(
        "results/s", [same, ScriptIdentity("r", "ab" * 32)]
    )
    assert "another version of it" in SCRIPT.mixing_problem(
        "results/s", [ScriptIdentity("r", "cd" * 32)]
    )
    assert "something other than it" in SCRIPT.mixing_problem("results/s", [None])


def test_a_command_line_names_a_case_by_name_and_a_script_by_path_with_what_it_runs_with():
    assert CASE_MODULE.command_words("c", "/c.py", ("--deps", "newest")) == ["--case", "c"]
    assert SCRIPT.command_words("script-repro", "/r.py", ("--deps", "newest")) == [
        "--script",
        "/r.py",
        "--script-arg=--n",
        "--script-arg='a b'",
        "--with",
        "optax",
        "--deps",
        "newest",
    ]


def test_what_a_case_declares_and_needs_is_its_own_and_a_scripts_is_known_only_to_its_process(
    tmp_path: Path,
):
    assert not CASE_MODULE.declared.requirements and not CASE_MODULE.own_venv and SCRIPT.own_venv
    assert SCRIPT.declared.requirements == ("optax",) and SCRIPT.declared.script == "repro.py"
    assert CASE_MODULE.device_needs(8, 8) == (8, 8) and SCRIPT.device_needs(1, None) == (0, None)
    case_file = tmp_path / "c.py"
    case_file.write_text("CLAIM = ''\n")
    assert CASE_MODULE.own_text(case_file) is None and SCRIPT.own_text(case_file) == b"CLAIM = ''\n"
    assert (
        len(CASE_MODULE.content_digest(case_file)) == 64
        and SCRIPT.content_digest(case_file) == "ab" * 32
    )
