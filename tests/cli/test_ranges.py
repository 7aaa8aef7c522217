"""How the commands a page offers name what was measured."""

from harness.catalogue import discovery
from harness.catalogue.scripts import read_script
from harness.cli.ranges import target_words


def test_a_case_is_named_by_case_and_a_script_by_its_file_and_arguments(tmp_path):
    assert target_words(discovery.discover()["scan_sync"]) == ["--case", "scan_sync"]
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    assert target_words(read_script(script, ("--n", "a b"))) == [
        "--script", "repro.py", "--script-arg=--n", "--script-arg='a b'",
    ]  # fmt: skip
