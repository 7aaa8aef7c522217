"""The case process: what a case returns is checked there, before anything is stored."""

from harness.main import main
from harness.store.results import load_results
from tests.conftest import FIXTURES


def test_a_case_that_returns_what_cannot_be_stored_fails_with_the_reason_and_the_run_goes_on(
    tmp_path, capsys
):
    """facts() returning a list, a set inside facts, a step label that is a number: each cell is
    recorded as failed, saying which, and the case measured after them still is (not a traceback at
    storing)."""
    cases = FIXTURES / "case_bugs"
    argv = [
        "run",
        "--cases-dir",
        str(cases),
        "--results",
        str(tmp_path),
        "--processes",
        "1",
        "--profile",
        "t",
    ]
    for name in ("facts_list", "label_not_text", "facts_not_json", "fine"):
        argv += ["--case", name]
    assert main(argv) == 0
    found, problems = load_results(tmp_path)
    assert problems == []
    by_case = {r.result.case: r for r in found}
    assert by_case["fine"].result.status == "ok"
    reasons = {
        "facts_list": "facts() must return a dict",
        "label_not_text": "not text",
        "facts_not_json": "cannot hold",
    }
    for case, reason in reasons.items():
        assert by_case[case].result.status == "failed" and reason in by_case[case].result.detail, (
            by_case[case].result.detail
        )


def test_the_host_devices_beside_an_accelerator_count_only_where_the_platform_is_listed():
    from harness.measure.child import device_skip, host_device_count

    class Listed:
        def devices(self, backend=None):
            return ["cpu"] * 8

    class Unlisted:  # JAX_PLATFORMS=cuda alone
        def devices(self, backend=None):
            raise RuntimeError("Unknown backend cpu. Available backends are ['cuda']")

    assert host_device_count(Listed()) == 8 and host_device_count(Unlisted()) == 0
    assert device_skip(2, None, max(1, host_device_count(Unlisted())), cpu=False).startswith(
        "needs 2 devices, found 1"
    )


class FakeDevice:
    def __init__(self, stats):
        self.stats = stats

    def memory_stats(self):
        return self.stats


class FakeJax:
    def __init__(self, backend, *stats):
        self.backend, self.found = backend, [FakeDevice(each) for each in stats]

    def default_backend(self):
        return self.backend

    def devices(self):
        return self.found


def test_the_accelerator_s_own_peak_is_the_most_of_its_devices_where_its_backend_gives_one():
    from harness.measure.child import device_peak_bytes

    tpu = FakeJax("tpu", {"peak_bytes_in_use": 134_807_040}, {"peak_bytes_in_use": 26_624}, None)
    assert device_peak_bytes(tpu) == 134_807_040
    assert device_peak_bytes(FakeJax("gpu", {"bytes_in_use": 1}, None)) is None, "none given"
    assert device_peak_bytes(FakeJax("cpu", {"peak_bytes_in_use": 1})) is None, "the CPU: RSS"
