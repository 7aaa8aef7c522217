"""``search``'s options: the budget follows the profile's device class."""

from harness.catalogue.sizes import FLOPS_PER_CALL
from harness.cli.parser import validate
from harness.pins import ACCELERATOR, HOST


def test_a_search_under_an_accelerator_profile_takes_the_accelerators_budget(tmp_path):
    where = ["--results", str(tmp_path / "r"), "--out", str(tmp_path / "o")]
    _, on_gpu = validate(["search", "scan_sync", "--profile", "cuda12", *where])
    _, on_tpu = validate(["search", "scan_sync", "--profile", "tpu", *where])
    _, plain = validate(["search", "scan_sync", *where])
    assert on_gpu.budget.limits["flops"] == on_tpu.budget.limits["flops"]
    assert on_tpu.budget.limits["flops"] == FLOPS_PER_CALL[ACCELERATOR]
    assert plain.budget.limits["flops"] == FLOPS_PER_CALL[HOST]
