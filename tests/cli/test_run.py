"""``run``'s options: the profile's device class picks the sizes each case runs."""

import pytest

from harness.catalogue.sizes import FLOPS_PER_CALL
from harness.cli.parser import validate
from harness.cli.run import run_device
from harness.commands.run import plan_of
from harness.errors import UsageError
from harness.measure.sides import Side
from harness.pins import ACCELERATOR, HOST


def planned(tmp_path, *words):
    _, checked = validate(["run", "--case", "scan_sync", "--results", str(tmp_path / "r"), *words])
    return checked, [cell.sizes for cell in plan_of(checked)]


@pytest.mark.parametrize("accelerator", ["cuda13", "tpu"])
def test_an_accelerator_profile_runs_the_discussions_sizes_a_cpu_profile_the_scaled_ones(
    tmp_path, accelerator
):
    on_gpu, gpu_sizes = planned(tmp_path, "--profile", accelerator)
    on_cpu, cpu_sizes = planned(tmp_path, "--profile", "cpu")
    assert gpu_sizes == [{"N": 10000, "M": 2}, {"N": 100, "M": 10000}]
    assert cpu_sizes == [{"N": 600, "M": 2}, {"N": 100, "M": 500}]
    assert on_gpu.budget.limits["flops"] == FLOPS_PER_CALL[ACCELERATOR]
    assert FLOPS_PER_CALL[ACCELERATOR] > on_cpu.budget.limits["flops"]
    _, unpinned = planned(tmp_path)
    assert unpinned == cpu_sizes, "a label outside the profile table runs the CPU sizes"


def test_sides_of_cpu_and_gpu_profiles_are_refused_together():
    assert run_device([Side("0.12.0.1", "cuda12"), Side("0.11.2", "tpu")]) == ACCELERATOR
    assert run_device([Side("0.12.0.1", "cpu8"), Side("0.11.2", "mine")]) == HOST
    with pytest.raises(UsageError, match="host's CPU and of an accelerator"):
        run_device([Side("0.12.0.1", "cpu"), Side("0.11.2", "cuda12")])
