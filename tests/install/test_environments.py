"""Where each release runs: a case in its release venv, a plain script in a venv of its own with
what it declares."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.catalogue import discovery
from harness.catalogue.scripts import read_script
from harness.errors import UsageError
from harness.install import environments, script_envs, venvs
from harness.install.environments import Environments, Failed, Prepared, Unavailable
from harness.install.script_envs import NotInstallable, ScriptEnv
from harness.install.venvs import ReleaseEnv
from harness.store.schema import Libraries
from tests.conftest import FIXTURES, REPO

EQUINOX = FIXTURES / "deps" / "equinox_mlp.py"
CUTOFF = datetime(2024, 8, 6, 0, 25, 58, tzinfo=UTC)


def release(tmp_path: Path, jax: str = "0.4.31") -> ReleaseEnv:
    install = ("-e", ".", f"jax=={jax}", f"jaxlib=={jax}")
    return ReleaseEnv(jax, jax, "python3.12", install, tmp_path / f"release-jax-{jax}")


@pytest.fixture
def asked(monkeypatch, tmp_path):
    """script_envs.ensure stands in: the requests it got; it answers a venv holding equinox
    0.11.4."""
    requests = []

    def ensure(request, folder, times):
        requests.append(request)
        if "equinox==9.9" in request.hold:
            return NotInstallable(
                "Because equinox==9.9 has no wheels and you require equinox==9.9 ...", CUTOFF
            )
        pins = (
            "equinox==0.11.4",
            f"jax=={request.release.jax}",
            f"jaxlib=={request.release.jaxlib}",
        )
        return ScriptEnv(
            tmp_path / "script-env-1",
            request.python,
            "3.12.4",
            script_envs.libraries(request, pins, CUTOFF),
        )

    monkeypatch.setattr(script_envs, "ensure", ensure)
    return requests


def test_a_case_runs_in_its_release_venv(tmp_path, monkeypatch):
    monkeypatch.setattr(venvs, "ensure", lambda env: None)
    case = discovery.discover(REPO / "cases")["scan_sync"]
    prepared = Environments(case, None, progress=print).prepare("0.4.31", release(tmp_path))
    assert prepared == Prepared(tmp_path / "release-jax-0.4.31" / "bin" / "python", None)
    monkeypatch.setattr(venvs, "ensure", lambda env: "no wheel")
    assert Environments(case, None).prepare("0.4.31", release(tmp_path)) == Failed(
        "could not be installed: no wheel"
    )


def test_a_script_runs_in_a_venv_of_its_own_and_its_results_record_what_it_holds(tmp_path, asked):
    case = read_script(EQUINOX, with_specs=["optax"])
    found = Environments(case, None, "newest", ("equinox==0.11.4",)).prepare(
        "0.4.31", release(tmp_path)
    )
    [request] = asked
    assert (request.release.jax, request.release.jaxlib, request.policy) == (
        "0.4.31",
        "0.4.31",
        "newest",
    )
    assert request.declared.requirements == ("equinox", "optax") and request.hold == (
        "equinox==0.11.4",
    )
    assert request.python == "python3.12", "the interpreter the release plan chose"
    assert found.interpreter == tmp_path / "script-env-1" / "bin" / "python"
    assert found.libraries == Libraries(
        "newest",
        ("equinox==0.11.4", "jax==0.4.31", "jaxlib==0.4.31"),
        found.libraries.sha256,
        CUTOFF.isoformat(),
        ("equinox", "optax"),
        ("equinox==0.11.4",),
    )


def test_a_varied_library_is_held_on_its_label_only(tmp_path, asked):
    case = read_script(EQUINOX)
    label = "0.4.31+equinox.0.11.4"
    chosen = Environments(case, None, extra={label: ("equinox==0.11.4",)})
    chosen.prepare(label, release(tmp_path))
    chosen.prepare("0.4.31", release(tmp_path))
    assert [request.hold for request in asked] == [("equinox==0.11.4",), ()]


def test_a_set_that_cannot_be_had_is_not_installable_in_one_line_with_the_resolvers_reason(
    tmp_path, asked
):
    case = read_script(EQUINOX)
    said = Environments(case, None, hold=("equinox==9.9",)).prepare("0.4.31", release(tmp_path))
    reason = "Because equinox==9.9 has no wheels and you require equinox==9.9 ..."
    assert isinstance(said, Unavailable)
    assert said.line == f"not installable (as of 2024-08-06): {reason}"
    # What was asked, holding nothing: a later probe finds the stored answer instead of storing it
    # again.
    assert said.libraries.installed == () and said.libraries.held == ("equinox==9.9",)
    assert Environments(case, None, hold=("equinox==9.9",)).matches("0.4.31", said.libraries)


def test_a_script_whose_requires_python_the_interpreter_misses_is_refused_in_one_line(
    tmp_path, asked
):
    script = tmp_path / "old.py"
    script.write_text(
        '# /// script\n# requires-python = "<3.12"\n# dependencies = ["equinox"]\n# ///\n'
    )
    with pytest.raises(
        UsageError,
        match=r"requires Python <3.12 \(requires-python\), but the interpreter is Python 3",
    ):
        read_script(script)


def test_a_stored_result_counts_only_when_resolved_as_its_release_would_be_now(tmp_path):
    case = read_script(EQUINOX)
    chosen = Environments(case, None, "as-of", ("equinox==0.11.4",))
    same = Libraries(
        "as-of", ("equinox==0.11.4",), "ab" * 32, None, ("equinox",), ("equinox==0.11.4",)
    )
    assert chosen.matches("0.4.31", same)
    assert not chosen.matches("0.4.31", None), "measured before scripts had venvs of their own"
    assert not chosen.matches(
        "0.4.31", Libraries("newest", (), "ab" * 32, None, ("equinox",), ("equinox==0.11.4",))
    )
    assert not chosen.matches("0.4.31", Libraries("as-of", (), "ab" * 32, None, ("equinox",), ()))
    scan_sync = discovery.discover(REPO / "cases")["scan_sync"]
    assert Environments(scan_sync, None).matches("0.4.31", None)
    assert not Environments(scan_sync, None).matches("0.4.31", same)
    chosen.use_commit("git-abc-jaxlib-0.4.31", Path("commit/bin/python"), same)
    commit = Prepared(Path("commit/bin/python"), same)
    assert chosen.prepare("git-abc-jaxlib-0.4.31", release(tmp_path)) == commit
    assert chosen.matches("git-abc-jaxlib-0.4.31", same)


def test_what_a_script_declares_reaches_the_resolver_as_it_was_read():
    declared = read_script(EQUINOX, with_specs=["optax==0.2.3"]).subject.declared
    assert declared.sources == ("equinox_mlp.py (inline metadata)", "--with"), (
        "nothing blanked on the way"
    )
    assert (
        declared.requirements == ("equinox", "optax==0.2.3") and declared.script == "equinox_mlp.py"
    )
    assert json.loads(json.dumps(list(declared.requirements))) == ["equinox", "optax==0.2.3"]
    assert environments.INDEX_TIMES == "index-times"


def test_a_tool_uv_note_is_said_once_and_a_long_declaration_stays_one_short_line(tmp_path, asked):
    script = tmp_path / "repro.py"
    script.write_text(
        '# /// script\n# dependencies = ["equinox"]\n# [tool.uv]\n# index-url = "x"\n# ///\n'
    )
    lines = []
    chosen = Environments(
        read_script(script, with_specs=[f"lib{n}" for n in range(40)]), None, progress=lines.append
    )
    chosen.prepare("0.4.31", release(tmp_path))
    chosen.prepare("0.4.33", release(tmp_path, "0.4.33"))
    notes = [line for line in lines if "[tool.uv]" in line]
    assert len(notes) == 1 and "(index-url) are not applied" in notes[0]
    venv_lines = [line for line in lines if "a venv for" in line]
    assert len(venv_lines) == 2 and all("and 36 more besides jax" in line for line in venv_lines)
    assert max(len(line) for line in venv_lines) < 300
