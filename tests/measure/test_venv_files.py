"""A venv's files against what their install recorded: a file a dying process names that no longer
holds what was installed is found, cheaply, and the venv marked to be installed again."""

import base64
import hashlib

from harness.measure import venv_files


def installed(tmp_path, content=b"def f():\n    return 1\n"):
    """A venv whose site-packages holds pkg/mod.py, recorded (RECORD) as installed."""
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.12" / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "mod.py").write_bytes(content)
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    (site / "pkg-1.0.dist-info").mkdir()
    record = f"pkg/mod.py,sha256={digest},{len(content)}\npkg-1.0.dist-info/RECORD,,\n"
    (site / "pkg-1.0.dist-info" / "RECORD").write_text(record)
    return venv, site


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "site-packages/pkg/mod.py", line 2\n'
    "    return\n"
    "SyntaxError: invalid syntax\n"
)


def test_a_truncated_module_a_dying_process_names_is_found_by_its_recorded_hash(tmp_path):
    """R8-19: a truncated module file in a script venv became a confirmed JAX step."""
    venv, site = installed(tmp_path)
    assert venv_files.damaged(venv, TRACEBACK) == [], "intact: what was installed"
    (site / "pkg" / "mod.py").write_bytes(b"def f():\n    return")
    assert venv_files.damaged(venv, TRACEBACK) == ["pkg/mod.py"]
    loader = "ImportError: /x/venv/lib/python3.12/site-packages/pkg/mod.py: file too short"
    assert venv_files.damaged(venv, loader) == ["pkg/mod.py"]
    (site / "pkg" / "mod.py").unlink()
    assert venv_files.damaged(venv, TRACEBACK) == ["pkg/mod.py"], "gone is damaged too"


def test_output_naming_no_recorded_file_finds_nothing(tmp_path):
    venv, _ = installed(tmp_path)
    (venv / "lib" / "python3.12" / "site-packages" / "pkg" / "mod.py").write_bytes(b"changed")
    assert venv_files.damaged(venv, "Authorization: Bearer x\nValueError: no") == []
    assert venv_files.damaged(venv, 'File "site-packages/other/x.py", line 1') == []
    assert venv_files.damaged(tmp_path / "no-venv", TRACEBACK) == []


def test_a_mark_says_the_venv_is_installed_again_until_cleared(tmp_path):
    venv, _ = installed(tmp_path)
    assert venv_files.marked(venv) == []
    venv_files.mark(venv, ["pkg/mod.py"])
    assert venv_files.marked(venv) == ["pkg/mod.py"]
    venv_files.clear(venv)
    assert venv_files.marked(venv) == []
