"""Where a script's host time went: the start-up hook's cProfile of a real script read back,
functions named below site-packages and grouped by where they live, and two releases' profiles
compared."""

import os
import subprocess
import sys
from collections import Counter

from harness.analysis.significance import Verdict
from harness.explain.profiles import (
    PYTHON,
    SCRIPT,
    HostAnswer,
    HostProfile,
    HostTimes,
    place,
    read_profile,
    shown_in_programs,
)
from harness.explain.reproducer import ReproducerAnswer
from harness.measure.script_process import HOOK
from harness.metric_names import parse_metric_name
from harness.render.why import host_lines as host_lines_found
from tests.explain.test_held_library import step


def host_lines(answer):
    """The findings' sentences (whether each leads is the why's tests')."""
    return [finding.text for finding in host_lines_found(answer)]


SCRIPT_TEXT = """
import jax, jax.numpy as jnp


def leaves(n):
    return [jnp.zeros(()) + i for i in range(n)]

tree = leaves(20)
for _ in range(50):
    jax.tree_util.tree_map(lambda x: x, tree)
"""


def test_functions_are_named_below_site_packages_and_grouped_by_where_they_live():
    venv = "/home/someone/proj/.venv/lib/python3.12/site-packages"
    assert place(f"{venv}/jax/_src/tree_util.py", "tree_map", "user.py") == (
        "jax",
        "jax/_src/tree_util.py:tree_map",
    )
    assert place(f"{venv}/equinox/_module.py", "__call__", "user.py")[0] == "equinox"
    assert place("/home/someone/proj/user.py", "step", "user.py") == (SCRIPT, "user.py:step")
    assert place("/usr/lib/python3.12/functools.py", "wraps", "user.py")[0] == PYTHON
    assert place("/usr/lib/python3.12/json/decoder.py", "decode", "user.py")[0] == PYTHON
    assert place("~", "<method 'match' of 're.Pattern' objects>", "user.py")[0] == PYTHON
    builtin = "<method 'flatten' of 'jaxlib.xla_extension.pytree.PyTreeDef' objects>"
    assert place("~", builtin, "user.py") == ("jaxlib", builtin)
    assert place("~", "<built-in method builtins.len>", "user.py")[0] == PYTHON
    assert place("~", "<method 'append' of 'list' objects>", "user.py")[0] == PYTHON


def test_the_hooks_profile_of_a_real_script_is_read_back_with_jax_and_the_script_apart(tmp_path):
    script, profile = tmp_path / "user.py", tmp_path / "profile.pstats"
    script.write_text(SCRIPT_TEXT)
    environ = {**os.environ, "HARNESS_PYTHON_PROFILE": str(profile), "JAX_PLATFORMS": "cpu"}
    run = [sys.executable, str(HOOK), str(tmp_path / "report.json"), str(script)]
    subprocess.run(run, cwd=tmp_path, env=environ, check=True, capture_output=True, timeout=120)
    found = read_profile(profile, "user.py")
    assert isinstance(found, HostTimes), found
    groups = found.by_group()
    assert groups["jax"] > 0 and groups[SCRIPT] > 0
    assert "user.py:leaves" in found.own_ns
    assert not any(str(tmp_path) in name for name in found.own_ns), "no path of this machine"
    assert read_profile(tmp_path / "missing", "user.py").startswith("its profile could not be read")


def times(**own_ms):
    found = HostTimes()
    for name, ms in own_ms.items():
        group, shown = name.split("__")
        found.own_ns[shown] = round(ms * 1e6)
        found.calls[shown] = 10
        found.where[shown] = group
    return found


def test_the_functions_whose_own_time_moved_most_come_first_beside_each_group():
    old = times(jax__tree_flatten=2, jaxlib__flatten=0.5, script__step=10)
    new = times(jax__tree_flatten=0.1, jaxlib__flatten=9, script__step=10.2)
    answer = HostAnswer("0.4.31", "0.4.33", old, new)
    assert [row[0] for row in answer.moved(2)] == ["flatten", "tree_flatten"]
    assert answer.groups()[0] == ("jaxlib", 500_000, 9_000_000)
    head, functions = host_lines(answer)
    assert head.startswith("host time by where it lives (one process each under cProfile): jaxlib")
    assert functions.startswith("Python functions whose own time moved most: `flatten`")
    assert host_lines(HostAnswer("a", "b", old, "the process wrote no profile")) == [
        "no Python profile to compare (b: the process wrote no profile)"
    ]
    assert Counter(answer.data()["groups"][0]) == Counter(old.by_group())


class Moved:
    def __init__(self, verdict):
        self.verdict = verdict


def test_asked_only_where_the_reproducer_did_not_show_the_step_in_the_programs():
    kind, asked = HostProfile(), step()
    run = parse_metric_name("json.run_ms")
    moved = ReproducerAnswer("a", "b", measured={run: (run, Moved(Verdict.SLOWER))})
    still = ReproducerAnswer("a", "b", measured={run: (run, Moved(Verdict.UNCHANGED))})
    assert shown_in_programs(moved) and not shown_in_programs(still)
    assert not kind.wanted(asked, (moved,))
    assert kind.wanted(asked, (still,)) and kind.wanted(asked, ())
    import dataclasses

    assert not kind.wanted(dataclasses.replace(asked, script=""), ())
