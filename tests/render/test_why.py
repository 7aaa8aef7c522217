"""The why's sentences: a plain script's libraries on a step (the library or JAX?)."""

from harness.render.why import libraries_line


def script_setting(**libraries):
    from harness.analysis.significance import Thresholds
    from harness.steps.answers import Libraries, Setting

    versions = {
        "0.4.31": {"equinox": "0.11.4"},
        "0.4.33": {"equinox": "0.11.6"},
        "0.4.34": {"equinox": "0.11.6"},
    }
    return Setting(
        "script-repro",
        {},
        "cpu",
        None,
        {},
        Thresholds(),
        1.0,
        target=("--script", "repro.py"),
        libraries=Libraries(**({"versions": versions, "policy": "as-of"} | libraries)),
    )


def test_a_step_where_a_library_moved_with_jax_offers_the_commands_that_tell_them_apart():
    said = libraries_line(script_setting(), "0.4.31", "0.4.33")
    assert said.startswith(
        "the script's libraries changed along with jax (equinox 0.11.4 → 0.11.6): the library or"
    )
    triage = "`nox -s triage -- --script repro.py"
    assert f"{triage} --from 0.4.31 --to 0.4.33 --hold equinox==0.11.4 --profile cpu`" in said
    assert f"{triage} --vary equinox --jax 0.4.33 --from 0.11.4 --to 0.11.6 --profile cpu`" in said


def test_a_step_the_libraries_did_not_move_with_comes_with_jax_and_a_varied_one_with_the_library():
    assert (
        libraries_line(script_setting(), "0.4.33", "0.4.34")
        == "comes with jax 0.4.34 (equinox 0.11.6 on both)"
    )
    held = libraries_line(script_setting(held=("equinox==0.11.6",)), "0.4.33", "0.4.34")
    assert held == "comes with jax 0.4.34 (equinox 0.11.6 held)"
    varied = script_setting(vary="equinox", jax="0.4.33", versions={})
    assert libraries_line(varied, "0.4.33+equinox.0.11.4", "0.4.33+equinox.0.11.5") == (
        "comes with equinox 0.11.5 (jax 0.4.33 held)"
    )
    assert libraries_line(script_setting(versions={}), "0.4.31", "0.4.33") == "", (
        "a case's step says nothing of them"
    )
