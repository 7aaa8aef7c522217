"""``flags`` end to end on the JAX installed here: the same flags twice (the A/A) report no change;
flags that change what the program computes are found, each side's flags recorded."""

import json
import os
import subprocess

import pytest

pytest.importorskip("jax")

from harness.analysis.significance import MOVED
from harness.render.screen import fits
from tests.conftest import harness_command, stored_in

pytestmark = pytest.mark.jax

# A short measurement: few samples, three processes a side (the fewest a verdict is settled over),
# no retries under load (the machine is shared), no looks.
SHORT = ("--processes", "3", "--repeats", "3", "--max-load", "off", "--decide", "off")


def flags(tmp_path, *args):
    done = subprocess.run(
        harness_command("flags", *SHORT, "--json", "answer.json", *args),
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    answer = json.loads((tmp_path / "answer.json").read_text()) if done.returncode < 2 else None
    return done, answer


def verdicts(answer):
    return {m["metric"]: m["verdict"] for pair in answer["pairs"] for m in pair["metrics"]}


def test_the_same_flags_on_both_sides_report_no_change(tmp_path):
    same = "jax_default_matmul_precision=highest"
    done, answer = flags(
        tmp_path, "--case", "async_dispatch", "--size", "N=64", "--a", same, "--b", same
    )
    assert done.returncode == 0, done.stderr
    [pair] = answer["pairs"]
    found = verdicts(answer)
    # every shape judged: the timings, the compiled facts, the memory, how the processes ended
    assert {"eager.wall_ns", "jit.compile_ns", "process.peak_rss_bytes"} <= set(found)
    assert not [metric for metric, verdict in found.items() if verdict in MOVED], found
    assert answer["not_compared"] == [] and answer["broken"] == []
    assert pair["a"]["profile"] != pair["b"]["profile"], "two cells of one release"
    assert f"flags {same}" in answer["a"] and f"flags {same}" in answer["b"]
    assert "Nothing got significantly worse in B" in done.stdout and fits(done.stdout)
    stored = stored_in(tmp_path / "results")
    assert len(stored) == 2
    for result in stored:  # each side's flags, as its processes read them back
        assert all(
            p.facts["jax_config.jax_default_matmul_precision"] == "'highest'"
            for p in result.result.processes
        )
    [page] = (tmp_path / "reports").glob("flags-default-a-*.md")
    assert f"Report: reports/{page.name}" in done.stdout


def test_flags_that_change_what_the_program_computes_are_found(tmp_path):
    script = tmp_path / "width.py"
    script.write_text(
        "import json\nimport jax.numpy as jnp\n"
        'print(json.dumps({"itemsize": jnp.ones(3).dtype.itemsize}))\n'
    )
    done, answer = flags(
        tmp_path,
        "--script",
        str(script),
        "--b",
        "jax_enable_x64=true",
        "--b=XLA_FLAGS=--xla_cpu_enable_fast_math=false",
        "--b=LIBTPU_INIT_ARGS=--xla_tpu_enable_latency_hiding_scheduler=true",  # no TPU: unread
        "--a",
        "jax_no_such_option=1",
    )
    assert done.returncode in (0, 1), done.stderr
    assert verdicts(answer)["json.itemsize"] in MOVED, "4 bytes under A, 8 under B"
    [pair] = answer["pairs"]
    assert any("A: jax option jax_no_such_option not set" in note for note in pair["notes"])
    by_profile = {r.result.profile: r for r in stored_in(tmp_path / "results")}
    b = by_profile[pair["b"]["profile"]].result
    assert b.host.variables["XLA_FLAGS"].endswith("--xla_cpu_enable_fast_math=false")
    assert b.host.variables["LIBTPU_INIT_ARGS"].endswith("latency_hiding_scheduler=true")
    assert "XLA_FLAGS" not in by_profile[pair["a"]["profile"]].result.host.variables
