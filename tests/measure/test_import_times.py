"""``python -X importtime``'s report read as a tree: the costliest imports, and within each the
module whose own time is most of it (issue 78 #3)."""

import hashlib
import subprocess
import sys

from harness.catalogue.benchmark_suite import IMPORT_TIME
from harness.measure.import_times import SAID, costliest, parse
from harness.measure.script_process import run_script

# As a process of optimistix's suite printed it, cut to the lines that matter (microseconds): its
# conftest imports sif2jax, whose import is mostly one module filling a matrix entry by entry.
CAPTURED = """\
import time: self [us] | cumulative | imported package
import time:       132 |        132 |   _io
import time:       295 |        829 | _frozen_importlib_external
import time:      2101 |       2101 |     jax._src.config
import time:    180311 |     182412 |   jax._src.api
import time:    912000 |    3094412 | jax
some line the suite printed itself
import time:       804 |        804 |         sif2jax._misc
import time:  44917305 |   44918109 |       sif2jax.cutest._constrained_minimisation.cleuven7
import time:   2210333 |   47128442 |     sif2jax.cutest._constrained_minimisation
import time:   6801220 |   53929662 |   sif2jax.cutest
import time:   2070338 |   56000000 | sif2jax
"""


def test_the_report_is_read_as_the_tree_of_what_each_import_imported():
    roots = parse(CAPTURED)
    assert [(m.name, m.cumulative_us) for m in roots] == [
        ("_frozen_importlib_external", 829),
        ("jax", 3094412),
        ("sif2jax", 56000000),
    ]
    sif2jax = roots[-1]
    assert [m.name for m in sif2jax.children] == ["sif2jax.cutest"]
    below = [m.name for m in sif2jax.within()]
    assert below == [
        "sif2jax.cutest",
        "sif2jax.cutest._constrained_minimisation",
        "sif2jax.cutest._constrained_minimisation.cleuven7",
        "sif2jax._misc",
    ]


def test_the_costliest_imports_name_the_module_that_is_most_of_each():
    said = costliest(CAPTURED)
    print("\n".join(said))
    assert said == [
        "`import sif2jax` 56 s, of it `sif2jax.cutest._constrained_minimisation.cleuven7` 44.9 s",
        "`import jax` 3.09 s",
        "`import _frozen_importlib_external` 829 µs",
    ]
    assert all(SAID.fullmatch(line) for line in said), "the form a recalled memory is held to"
    assert costliest("no report here\n") == []


def test_the_interpreter_s_own_report_is_read():
    """The format as this Python writes it, not as a test remembers it."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    roots = {m.name: m for m in parse(done.stderr)}
    assert "json" in roots and roots["json"].cumulative_us >= roots["json"].self_us
    assert any(child.name == "json.decoder" for child in roots["json"].within())


def test_an_extra_process_of_a_script_copies_its_import_report_where_asked(tmp_path, monkeypatch):
    script = tmp_path / "s.py"
    script.write_text("import json\n")
    report = tmp_path / "importtime.txt"
    monkeypatch.setenv(IMPORT_TIME, str(report))
    run_script(script, hashlib.sha256(script.read_bytes()).hexdigest(), 60.0)
    assert "json" in {m.name for m in parse(report.read_text())}
    monkeypatch.delenv(IMPORT_TIME)
    report.unlink()
    run_script(script, hashlib.sha256(script.read_bytes()).hexdigest(), 60.0)
    assert not report.exists(), "a timed process runs without -X importtime"
