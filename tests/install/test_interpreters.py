"""The interpreter a Python version names: pyenv's copy of it, else the bare version."""

from harness.install.interpreters import interpreter


def test_pyenv_s_copy_of_a_version_is_taken_the_latest_of_its_patches(tmp_path, monkeypatch):
    for patch in ("3.12.2", "3.12.4", "3.11.9"):
        python = tmp_path / "versions" / patch / "bin" / f"python{patch.rsplit('.', 1)[0]}"
        python.parent.mkdir(parents=True)
        python.touch()
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    assert interpreter("3.12") == str(tmp_path / "versions" / "3.12.4" / "bin" / "python3.12")


def test_a_version_pyenv_lacks_is_left_for_nox_to_find(tmp_path, monkeypatch):
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    assert interpreter("3.13") == "3.13"
