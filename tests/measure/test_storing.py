"""A plain script's results never mix with another version's in one results folder."""

import pytest

from harness.catalogue.scripts import read_script
from harness.errors import UsageError
from harness.measure.storing import check_results_folder
from harness.store.results import write_result
from tests.conftest import FIXTURES, derive, real_result

PLAIN = FIXTURES / "scripts" / "cumsum_loop.py"


def stored_as(results, case, sha256):
    record = derive(real_result("async_dispatch-0.12.0.1"), case=case.name)
    if sha256 is not None:
        record["script"] = {"file": case.subject.script_file, "sha256": sha256}
    write_result(results, record)


def test_results_of_the_same_content_are_accepted_and_of_another_version_refused(tmp_path):
    case = read_script(PLAIN)
    check_results_folder(tmp_path / "nothing-yet", case)
    stored_as(tmp_path / "same", case, case.subject.content_digest(case.path))
    check_results_folder(tmp_path / "same", case)
    stored_as(tmp_path / "other", case, "0" * 64)
    with pytest.raises(UsageError, match=r"another version of it .*never mixed"):
        check_results_folder(tmp_path / "other", case)
    stored_as(tmp_path / "no-hash", case, None)
    with pytest.raises(UsageError, match="something other than it"):
        check_results_folder(tmp_path / "no-hash", case)
