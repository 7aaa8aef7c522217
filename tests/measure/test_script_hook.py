"""The hook runs a script as `python FILE ARGS` would, and reports its import and JAX's compile
phases."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.measure import script_hook

HOOK = Path(script_hook.__file__)


def run_hooked(
    tmp_path: Path, source: str, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict]:
    script = tmp_path / "user" / "repro.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(source)
    (script.parent / "helper_mod.py").write_text("VALUE = 41\n")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, str(HOOK), str(report), str(script), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    return done, json.loads(report.read_text()) if report.exists() else {}


def test_a_script_without_jax_runs_as_python_file_would(tmp_path):
    source = (
        "import sys, os, helper_mod\n"
        "print(__name__, sys.argv[1:], helper_mod.VALUE + 1, os.getcwd() == "
        "os.path.dirname(__file__) or 'cwd kept')\n"
        "sys.exit(3)\n"
    )
    done, report = run_hooked(tmp_path, source, "--size", "7")
    assert done.returncode == 3
    assert done.stdout.strip() == "__main__ ['--size', '7'] 42 cwd kept"
    assert "imported_ns" not in report and report["ended_ns"] >= report["started_ns"]
    assert 0 <= report["after_script_ns"] < 10**9, (
        "the hook's own time after the script, taken out of its wall"
    )


def test_a_traceback_shows_the_scripts_frames_and_exits_1(tmp_path):
    done, report = run_hooked(tmp_path, "def f():\n    raise ValueError('boom')\nf()\n")
    assert done.returncode == 1
    assert "ValueError: boom" in done.stderr and "repro.py" in done.stderr
    assert "script_hook" not in done.stderr and "runpy" not in done.stderr
    assert report["ended_ns"] > 0


@pytest.mark.jax
def test_the_first_import_of_jax_and_its_compile_phases_are_reported(tmp_path):
    source = (
        "import jax, jax.numpy as jnp\n"
        "f = jax.jit(lambda x: jnp.sin(x) * 2)\n"
        "f(jnp.ones(8)).block_until_ready()\n"
        "g = jax.jit(lambda x: x + 1)\n"
        "g(1.0).block_until_ready()\n"
        "print('{\"done\": 1}')\n"
    )
    done, report = run_hooked(tmp_path, source)
    assert done.returncode == 0, done.stderr
    assert report["listening"] is True
    assert 0 < report["import_ns"] < report["ended_ns"] - report["started_ns"]
    events = report["events"]
    assert events["compile"]["count"] >= 2 and events["compile"]["total_ns"] > 0
    assert events["trace"]["count"] >= 2 and events["lower"]["count"] >= 2


@pytest.mark.jax
def test_each_compile_is_counted_once_and_the_phases_fit_in_the_time_after_the_import(tmp_path):
    """jax's own imports run inside the first one: the listener is registered once, whatever they
    are."""
    source = (
        "import jax\nimport jax.numpy as jnp\nfor n in (3, 4, 5):\n    jax.jit(lambda x: x * "
        "n)(jnp.ones(n))\n"
    )
    done, report = run_hooked(tmp_path, source)
    assert done.returncode == 0, done.stderr
    events = report["events"]
    assert len({events[p]["count"] for p in events}) == 1, (
        "one trace, lowering and compile per compiled call"
    )
    spent = sum(e["total_ns"] for e in events.values())
    assert spent < report["ended_ns"] - report["imported_ns"], (
        "the phases lie inside the run after the import"
    )


def test_an_event_nested_in_another_of_its_phase_is_not_counted_twice(monkeypatch):
    """A jit traced inside another's tracing fires first: the enclosing event's span replaces it."""
    monkeypatch.setitem(
        script_hook._report, "events", {p: {"count": 0, "total_ns": 0} for p in script_hook.EVENTS}
    )
    monkeypatch.setattr(script_hook, "_spans", {p: [] for p in script_hook.EVENTS})
    trace = script_hook.EVENTS["trace"]
    for now, seconds in ((150, 50e-9), (300, 250e-9), (400, 50e-9), (470, 100e-9)):
        monkeypatch.setattr(script_hook.time, "perf_counter_ns", lambda now=now: now)
        script_hook._on_duration(trace, seconds)
    # 100–150 nested in 50–300; 350–400 apart; 370–470 overlaps it: 250 + 120 covered
    assert script_hook._report["events"]["trace"] == {"count": 4, "total_ns": 370}


@pytest.mark.jax
@pytest.mark.parametrize(
    "route",
    [
        "import importlib\nnp = importlib.import_module('jax.numpy')\n",
        "np = __import__('jax.numpy', fromlist=['ones'])\n",
        "import importlib.util, sys\nspec = importlib.util.find_spec('jax')\nimport jax.numpy as "
        "np\n",
    ],
)
def test_the_first_import_of_jax_is_timed_whatever_the_route(tmp_path, route):
    pytest.importorskip("jax")
    done, report = run_hooked(
        tmp_path, route + "import jax\nprint(jax.__loader__ is jax.__spec__.loader)\n"
    )
    assert done.returncode == 0, done.stderr
    # jax keeps its own loader, as an unhooked import leaves it
    assert done.stdout.strip() == "True"
    plain = (
        run_hooked(tmp_path / "plain", "import jax\n")
        if (tmp_path / "plain").mkdir() is None
        else None
    )
    # The import timed is jax's whole import: most of this process's time until it, and of the order
    # of a plain ``import jax`` in another process (a fifth of it at least: a loaded machine slows
    # either process, not a missed route, which would time a few submodules or nothing).
    assert plain is not None and report["import_ns"] > 0.2 * plain[1]["import_ns"]
    began = report["imported_ns"] - report["import_ns"]
    assert report["started_ns"] < began < report["imported_ns"] <= report["ended_ns"]
    assert report["import_ns"] > 0.5 * (report["imported_ns"] - report["started_ns"])


@pytest.mark.jax
@pytest.mark.parametrize(
    ("when", "read"),
    [
        ("before", "--xla_cpu_multi_thread_eigen=false"),
        ("after", "--xla_force_host_platform_device_count=2"),  # XLA read the harness's flags
    ],
)
def test_xla_flags_are_kept_as_they_were_when_jax_started_its_backend(
    tmp_path, monkeypatch, when, read
):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("HARNESS_TEST_WHEN", when)
    source = (Path(__file__).parents[1] / "fixtures" / "scripts" / "own_xla_flags.py").read_text()
    done, report = run_hooked(tmp_path, source)
    assert done.returncode == 0, done.stderr
    assert report["xla_flags"] == read


def test_an_interrupt_shows_the_scripts_frames_and_ends_the_process_as_python_file_would(tmp_path):
    source = "def f():\n    raise KeyboardInterrupt\nf()\n"
    done, report = run_hooked(tmp_path, source)
    script = tmp_path / "user" / "repro.py"
    bare = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == bare.returncode == -2, "dead of SIGINT, as Python ends on one"
    assert "KeyboardInterrupt" in done.stderr and "repro.py" in done.stderr
    assert "script_hook" not in done.stderr and "runpy" not in done.stderr
    assert report["ended_ns"] > 0, "the report is written first"
