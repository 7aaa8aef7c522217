"""A plain script in place of a case: its name, its content hash, and no mixing with another
version's results."""

import hashlib

import pytest

from harness.catalogue.scripts import read_script, script_name
from harness.errors import UsageError
from tests.conftest import FIXTURES

PLAIN = FIXTURES / "scripts" / "cumsum_loop.py"


def test_a_script_is_a_case_of_no_sizes_named_for_its_file_with_its_content_hash():
    case = read_script(PLAIN)
    assert case.name == "script-cumsum_loop" and case.path == PLAIN.resolve()
    assert case.subject.kind == "script" and case.subject.script_file == "cumsum_loop.py"
    assert case.subject.content_digest(case.path) == hashlib.sha256(PLAIN.read_bytes()).hexdigest()
    assert case.space.ranges == {} and case.anchors == [{}]


@pytest.mark.parametrize(
    "name", ["bad name.py", "ünïcode.py", f"{'x' * 130}.py", "semi;colon.py", "a/../b .py"]
)
def test_a_file_name_that_is_no_result_name_is_refused(tmp_path, name):
    with pytest.raises(UsageError, match="rename the file"):
        script_name(tmp_path / name)


def test_a_missing_script_a_folder_and_a_binary_file_are_refused(tmp_path):
    with pytest.raises(UsageError, match="script not found"):
        read_script(tmp_path / "missing.py")
    (tmp_path / "folder.py").mkdir()
    with pytest.raises(UsageError, match="not a regular file"):
        read_script(tmp_path / "folder.py")
    (tmp_path / "binary.py").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not UTF-8"):
        read_script(tmp_path / "binary.py")


def test_a_script_too_big_to_be_a_repro_is_refused_before_it_is_read(tmp_path):
    with (tmp_path / "sparse.py").open("wb") as sparse:
        sparse.truncate(4 * 1024**3)  # 4 GB and no disk used: read whole, it exhausted memory
    with pytest.raises(
        UsageError,
        match=r"sparse.py is too large \(4,294,967,296 bytes; at most 4,194,304 are read",
    ):
        read_script(tmp_path / "sparse.py")


def test_a_scripts_pep_263_coding_cookie_is_honoured(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\nprint('caf\xe9')\n")
    assert read_script(latin).subject.identity()
    wrong = tmp_path / "wrong.py"
    wrong.write_bytes(b"# -*- coding: ascii -*-\nprint('caf\xe9')\n")
    with pytest.raises(UsageError, match="not ascii"):
        read_script(wrong)


def test_a_script_argument_that_is_not_utf8_is_refused(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    with pytest.raises(UsageError, match=r"--script-arg 'a\\\\xff' is not UTF-8"):
        read_script(script, (b"a\xff".decode("utf-8", "surrogateescape"),))
