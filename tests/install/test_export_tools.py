"""The folder of what jax.export needs besides jax: installed once, named so that a process started
anywhere finds it."""

from harness.install.export_tools import DONE, export_tools


def test_a_relative_cache_gives_an_absolute_folder_a_process_elsewhere_can_use(
    tmp_path, monkeypatch
):
    (tmp_path / ".nox" / "export-tools").mkdir(parents=True)
    (tmp_path / ".nox" / "export-tools" / DONE).write_text("flatbuffers\nabsl-py\n")
    monkeypatch.chdir(tmp_path)
    found = export_tools(tmp_path.joinpath(".nox").relative_to(tmp_path), tmp_path / "python")
    assert found == tmp_path / ".nox" / "export-tools"
    assert not isinstance(found, str) and found.is_absolute()
