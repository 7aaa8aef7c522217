"""``search``'s options: the budget follows the profile's device class."""

from harness.catalogue.sizes import FLOPS_PER_CALL
from harness.cli.parser import validate


def test_a_search_under_a_gpu_profile_takes_the_gpu_budget(tmp_path):
    where = ["--results", str(tmp_path / "r"), "--out", str(tmp_path / "o")]
    _, on_gpu = validate(["search", "scan_sync", "--profile", "cuda12", *where])
    _, plain = validate(["search", "scan_sync", *where])
    assert on_gpu.budget.limits["flops"] == FLOPS_PER_CALL["gpu"]
    assert plain.budget.limits["flops"] == FLOPS_PER_CALL["cpu"]
