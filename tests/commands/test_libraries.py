"""A plain script that imports a library, for real through nox: each release in a venv of its own
holding jax, jaxlib and what the script declares; the library held (--hold) or varied (--vary) to
tell it from JAX; a set that cannot be had, not installable; a module the script does not declare,
named.

These install real releases from the package index (jax 0.4.31 and 0.4.33, which the real bisect of
``tests/commands/test_release_commands.py`` installs too, and small releases of equinox) into venvs
under .nox/, and measure three processes a side.
"""

import json
import re
import shutil

import pytest

from tests.conftest import FIXTURES, nox_in_repo

SCRIPT = FIXTURES / "deps" / "equinox_mlp.py"
FEW = ["--processes", "3", "--max-processes", "3", "--repeats", "3", "--max-seconds", "0.5"]


def triage(tmp_path, *posargs):
    script = tmp_path / SCRIPT.name
    shutil.copy(SCRIPT, script)
    places = ["--results", str(tmp_path / "results"), "--out", str(tmp_path / "out")]
    return nox_in_repo("-s", "triage", "--", "--script", str(script), *posargs, *FEW, *places)


def stored_libraries(tmp_path):
    found = {}
    for path in sorted((tmp_path / "results").rglob("*.json")):
        data = json.loads(path.read_text())
        found[data["release"]] = (data["status"], data.get("libraries"), data.get("detail", ""))
    return found


@pytest.mark.releases
def test_a_library_held_on_two_jax_releases_is_the_same_version_on_both_and_recorded(tmp_path):
    done = triage(tmp_path, "--from", "0.4.31", "--to", "0.4.33", "--hold", "equinox==0.11.4")
    assert done.returncode in (0, 1, 3), done.stderr[-4000:]
    stored = stored_libraries(tmp_path)
    assert set(stored) == {"0.4.31", "0.4.33"}
    for release, (status, libraries, _) in stored.items():
        assert status == "ok"
        assert libraries["held"] == ["equinox==0.11.4"] and libraries["declared"] == ["equinox"]
        assert (
            "equinox==0.11.4" in libraries["installed"]
            and f"jax=={release}" in libraries["installed"]
        )
        assert libraries["policy"] == "as-of" and libraries["cutoff"].startswith("2024-")
        harness_own = ("hypothesis==", "tabulate==", "jax-repro-harness")
        assert not any(pin.startswith(harness_own) for pin in libraries["installed"]), (
            "only what it declared"
        )
    [page] = (tmp_path / "out").glob("triage-*.md")
    text = page.read_text()
    assert "equinox 0.11.4" in text and "the script's libraries" in text, (
        "the report has each release's"
    )


@pytest.mark.releases
def test_a_library_s_own_releases_vary_on_one_jax_release_held(tmp_path):
    done = triage(
        tmp_path, "--vary", "equinox", "--jax", "0.4.33", "--from", "0.11.6", "--to", "0.11.7"
    )
    assert done.returncode in (0, 1, 3), done.stderr[-4000:]
    stored = stored_libraries(tmp_path)
    assert set(stored) == {"0.4.33+equinox.0.11.6", "0.4.33+equinox.0.11.7"}
    for label, (status, libraries, _) in stored.items():
        version = label.rpartition(".0.")[2]
        assert status == "ok" and libraries["held"] == [f"equinox==0.{version}"]
        assert (
            f"equinox==0.{version}" in libraries["installed"]
            and "jax==0.4.33" in libraries["installed"]
        )


@pytest.mark.releases
def test_a_set_that_cannot_be_had_is_stored_as_not_installable_and_an_undeclared_import_is_named(
    tmp_path,
):
    done = triage(tmp_path, "--from", "0.4.31", "--to", "0.4.33", "--hold", "equinox==0.13.8")
    assert done.returncode in (1, 3), done.stderr[-4000:]
    stored = stored_libraries(tmp_path)
    assert {status for status, _, _ in stored.values()} == {"not installable"}
    assert all(
        detail.startswith("not installable (as of 2024-") for _, _, detail in stored.values()
    )
    assert "not installable" in done.stdout, "shown as such in the releases table"

    script = tmp_path / "undeclared.py"
    script.write_text("import jax\nimport equinox\n")
    places = ["--results", str(tmp_path / "undeclared"), "--jax", "0.4.31", "--processes", "1"]
    ran = nox_in_repo("-s", "run", "--", "--script", str(script), *places)
    said = ran.stdout + ran.stderr  # nox passes the harness's lines through on either
    assert (
        "the script imports equinox, which it does not declare" in said and "--with equinox" in said
    )


@pytest.mark.releases
def test_a_step_that_moved_with_a_library_is_measured_with_it_held_and_comes_with_jax(tmp_path):
    """idna resolves to 3.7 on jax 0.4.31's date and 3.10 on 0.4.33's; the step in dispatch
    (0.4.33's asynchronous CPU dispatch) is jax's: 0.4.33 with idna 3.7 held dispatches as fast as
    0.4.33 does.  That answer comes first, once per step.  Only the library kind is asked, the
    changed defaults after it (45 s) left out, so the why's budget (200 s, none of it kept for
    them) covers the library's first look (15 processes of about a second) on a machine the other
    tests load (quiet, it takes 10 s)."""
    script = tmp_path / "dispatch_with_idna.py"
    shutil.copy(FIXTURES / "scripts" / script.name, script)
    answer = tmp_path / "answer.json"
    places = ["--results", str(tmp_path / "results"), "--out", str(tmp_path / "out")]
    done = nox_in_repo(
        *("-s", "triage", "--", "--script", str(script), "--with", "idna"),
        *("--from", "0.4.31", "--to", "0.4.33", "--metric", "json.dispatch_ms"),
        *("--processes", "5", "--max-processes", "10", "--why-budget", "200"),
        *("--why-kinds", "library"),
        *("--json", str(answer), *places),
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    assert "comes with jax 0.4.33 (idna 3.7" in " ".join(done.stdout.split())
    # Each kind's findings are printed as they settle, then the answer's screen says them once.
    assert "[triage] why 0.4.31 → 0.4.33: comes with jax 0.4.33 (idna 3.7" in done.stdout
    assert re.search(r"kinds asked, in order: library \d+ s\n", done.stdout), "only the one named"
    screen = done.stdout[done.stdout.index("Triage: ") :]
    assert screen.count("comes with jax") == 1, "said once for the step"
    [held] = json.loads(answer.read_text())["library"]
    # Every package that moved between the two releases' dates is held, the declared first (numpy
    # and jax's other dependencies may have moved too).
    assert next(iter(held["moved"])) == "idna" and held["moved"]["idna"] == ["3.7", "3.10"]
    assert held["held"]["idna"] == "3.7" and not {"jax", "jaxlib"} & set(held["moved"])
    assert held["middle"].startswith("jax 0.4.33+idna.3.7") and held["jax_of_middle"] == "0.4.33"
    parts = held["metrics"]["json.dispatch_ms"]
    # Settled on the screen (five processes a side: no rank guard passed): the libraries' part is
    # under half of the step's ×18, jax's holds it by its ratio.
    assert parts["comes_with"] == "jax" and parts["by_share"], parts
    assert parts["jax"]["ratio"] < 0.25 and parts["whole"]["verdict"] == "faster", parts
