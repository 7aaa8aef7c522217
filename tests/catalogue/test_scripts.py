"""A plain script in place of a case: its name, its content hash, and no mixing with another version's results."""

import hashlib

import pytest

from harness.catalogue.scripts import check_results_folder, read_script, script_name
from harness.errors import UsageError
from harness.store.results import write_result
from tests.conftest import FIXTURES, derive, real_result

PLAIN = FIXTURES / "scripts" / "cumsum_loop.py"


def test_a_script_is_a_case_of_no_sizes_named_for_its_file_with_its_content_hash():
    case = read_script(PLAIN)
    assert case.name == "script-cumsum_loop" and case.path == PLAIN.resolve()
    assert case.script is not None and case.script.file == "cumsum_loop.py"
    assert case.script.sha256 == hashlib.sha256(PLAIN.read_bytes()).hexdigest()
    assert case.space.ranges == {} and case.anchors == [{}]


@pytest.mark.parametrize("name", ["bad name.py", "ünïcode.py", f"{'x' * 130}.py", "semi;colon.py", "a/../b .py"])
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
    with pytest.raises(UsageError, match=r"sparse.py is 4294967296 bytes, over the 4194304 a repro script may be"):
        read_script(tmp_path / "sparse.py")


def stored_as(results, case, sha256):
    record = derive(real_result("async_dispatch-0.12.0.1"), case=case.name)
    if sha256 is not None:
        record["script"] = {"file": case.script.file, "sha256": sha256}
    write_result(results, record)


def test_results_of_the_same_content_are_accepted_and_of_another_version_refused(tmp_path):
    case = read_script(PLAIN)
    check_results_folder(tmp_path / "nothing-yet", case)
    stored_as(tmp_path / "same", case, case.script.sha256)
    check_results_folder(tmp_path / "same", case)
    stored_as(tmp_path / "other", case, "0" * 64)
    with pytest.raises(UsageError, match=r"another version of it .*never mixed"):
        check_results_folder(tmp_path / "other", case)
    stored_as(tmp_path / "no-hash", case, None)
    with pytest.raises(UsageError, match="something other than it"):
        check_results_folder(tmp_path / "no-hash", case)
