"""A script's export folder read as data (issue 74, items 4 and 7): every field of its listing
checked by type and allow-list, links and special files refused before anything is copied (the
folder then emptied), a kept input that reads as a credential dropped and generated, said in the
note; and, on the jax installed here, a hostile script's capture refused or made safe end to end."""

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from harness.explain.export_listing import SECRET_MODULE, read_export, reads_as_secret
from tests.conftest import REPO

TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0"
CODE = '0.4.30"); import os; os.system("touch PWNED") #'
DOCSTRING_END = '0.4.30"""\nimport os; os.system("touch PWNED")\n"""'


def listing(**changes):
    program = {
        "file": "program_01",
        "name": "step",
        "calls": 3,
        "inputs": [
            {"shape": [4], "dtype": "float32", "saved": True, "weak_type": True},
            {"shape": [2, 3], "dtype": "int32", "saved": True},
        ],
        "config": {"jax_enable_x64": True, "jax_default_matmul_precision": "highest"},
        "static": {"2": "'sum'"},
        "donated": [0],
    }
    left_out = {"file": "program_02", "name": "<lambda>", "calls": 1, "problem": "KeyError: x"}
    return {"jax": "0.4.31", "programs": [program, left_out], "note": "", **changes}


def export(folder, document=None, inputs=None):
    """A folder as the capture writes one: the listing, a module, the kept values as raw bytes."""
    folder.mkdir(exist_ok=True)
    (folder / "programs.json").write_text(json.dumps(listing() if document is None else document))
    (folder / "program_01.jaxexport").write_bytes(b"ML\xefR a module's bytecode")
    if inputs is None:
        inputs = {"a0": np.ones(4, np.float32), "a1": np.arange(6, dtype=np.int32)}
    raw = {name: np.frombuffer(value.tobytes(), np.uint8) for name, value in inputs.items()}
    np.savez(folder / "program_01.npz", **raw)
    return folder


def test_a_listing_as_the_capture_writes_it_is_read_whole(tmp_path):
    found = read_export(export(tmp_path / "x"), "0.4.31")
    assert found == listing(), "every field kept as written"
    unexported = {"jax": "", "programs": [], "note": "this jax has no jax.export"}
    assert read_export(export(tmp_path / "old", unexported), "0.4.6") == unexported
    (tmp_path / "empty").mkdir()
    assert read_export(tmp_path / "empty", "0.4.31") is None, "nothing listed: no export"


def program(**changes):
    return {**listing()["programs"][0], **changes}


def one_input(**changes):
    return program(
        inputs=[
            {**listing()["programs"][0]["inputs"][0], **changes},
            {"shape": [2, 3], "dtype": "int32", "saved": True},
        ]
    )


# Each hostile field, and the words the refusal names it by.
HOSTILE_LISTINGS = {
    "jax as code": (listing(jax=CODE), "jax: not a version"),
    "jax ending the docstring": (listing(jax=DOCSTRING_END), "jax: not a version"),
    "jax a number": (listing(jax=0.4), "jax: expected str, got float"),
    "jax unnamed, programs listed": (listing(jax=""), "jax: not a version"),
    "jax with a newline": (listing(jax="0.4.31\n"), "jax: not a version"),
    "a field no capture writes": (
        listing(by_release={"0.4.31": []}),
        "programs.json: a field no capture writes",
    ),
    "not an object": ([1, 2], "programs.json: expected object, got list"),
    "programs not a list": (listing(programs={"a": 1}), "programs: expected list, got object"),
    "nine programs": (listing(programs=[program()] * 9), "programs: more than 8"),
    "a file outside": (listing(programs=[program(file="../../etc/passwd")]), "programs[0].file"),
    "a file as code": (listing(programs=[program(file="program_01'); x('")]), "programs[0].file"),
    "a name as code": (listing(programs=[program(name='f"); os.system("x')]), "programs[0].name"),
    "a name with a newline": (listing(programs=[program(name="f\ng")]), "programs[0].name"),
    "calls a string": (listing(programs=[program(calls="3; import os")]), "programs[0].calls"),
    "calls true": (listing(programs=[program(calls=True)]), "programs[0].calls"),
    "calls negative": (listing(programs=[program(calls=-1)]), "programs[0].calls"),
    "calls huge": (listing(programs=[program(calls=10**15)]), "programs[0].calls"),
    "a flag unknown": (
        listing(programs=[program(config={"jax_compilation_cache_dir": "/tmp"})]),
        "config: a field no capture writes",
    ),
    "a flag's value as code": (
        listing(programs=[program(config={"jax_default_matmul_precision": "x'); import os #"})]),
        "jax_default_matmul_precision: not a flag's value",
    ),
    "a flag's value a list": (
        listing(programs=[program(config={"jax_enable_x64": [1]})]),
        "jax_enable_x64: not a flag's value",
    ),
    "a dtype as code": (listing(programs=[one_input(dtype="float32'); import os #")]), "dtype"),
    "a shape of text": (listing(programs=[one_input(shape=["4"])]), "shape: expected int, got str"),
    "a shape too deep": (listing(programs=[one_input(shape=[1] * 65)]), "shape: more than 64"),
    "saved a string": (listing(programs=[one_input(saved="yes")]), "saved: expected bool, got str"),
    "a key as code": (
        listing(programs=[one_input(key="fry'); import os #")]),
        "inputs[0].key: not a key's",
    ),
    "an input's field unknown": (listing(programs=[one_input(path="/etc")]), "no capture writes"),
    "donated out of range": (
        listing(programs=[program(donated=[7])]),
        "donated: not a count from 0 to 1",
    ),
    "a static name as code": (
        listing(programs=[program(static={"x'): pass\nimport os #": "1"})]),
        "programs[0].static: not a name",
    ),
    "a note too long": (listing(note="x" * 2000), "note: longer than 1000 characters"),
    "a file listed twice": (
        listing(programs=[program(), program()]),
        "programs: a file listed twice",
    ),
    "a file listed missing": (
        listing(programs=[program(file="program_07")]),
        "program_07: listed without its two files",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_LISTINGS))
def test_a_hostile_listing_is_refused_in_one_line_naming_its_field_and_never_used(name, tmp_path):
    document, named = HOSTILE_LISTINGS[name]
    folder = export(tmp_path / "captured", document)
    said = read_export(folder, "0.4.31")
    assert isinstance(said, str) and said.startswith("jax 0.4.31's export refused: "), said
    assert named in said and "\n" not in said, said
    assert not folder.exists(), "nothing the script wrote is left"
    assert not (tmp_path / "PWNED").exists()


def test_free_text_is_scrubbed_and_a_name_like_a_token_redacted(tmp_path):
    home = os.path.expanduser("~")
    document = listing(note=f"from {home}/secret/x with {TOKEN}")
    document["programs"][0] = program(name=TOKEN, static={"1": f"'{JWT}'"})
    document["programs"][1]["problem"] = f"OSError: {home}/.netrc"
    found = read_export(export(tmp_path / "x", document), "0.4.31")
    assert isinstance(found, dict)
    text = json.dumps(found)
    assert TOKEN not in text and JWT not in text and home not in text, text
    assert json.loads((tmp_path / "x" / "programs.json").read_text()) == found, "kept as checked"


def plant(folder, how):
    target = folder / "program_01.jaxexport"
    target.unlink()
    if how == "a link to a system file":
        target.symlink_to("/etc/passwd")
    elif how == "a link to a folder":
        target.symlink_to("/etc")
    elif how == "a dangling link":
        target.symlink_to(folder / "nowhere")
    elif how == "a FIFO":
        os.mkfifo(target)
    elif how == "a hard link":
        outside = folder.parent / "outside.txt"
        outside.write_text("the user's own file")
        os.link(outside, target)
    elif how == "a folder":
        target.mkdir()
    elif how == "a file of another name":
        target.write_bytes(b"x")
        (folder / "run_me.py").write_text("import os")
    elif how == "the listing a link":
        target.write_bytes(b"x")
        listed = folder / "programs.json"
        (folder.parent / "elsewhere.json").write_text(listed.read_text())
        listed.unlink()
        listed.symlink_to(folder.parent / "elsewhere.json")


PLANTED = [
    "a link to a system file",
    "a link to a folder",
    "a dangling link",
    "a FIFO",
    "a hard link",
    "a folder",
    "a file of another name",
    "the listing a link",
]


@pytest.mark.parametrize("how", PLANTED)
def test_a_link_or_special_file_in_the_folder_is_refused_before_any_copy_and_removed(how, tmp_path):
    folder = export(tmp_path / "captured")
    plant(folder, how)
    said = read_export(folder, "0.4.31")
    assert isinstance(said, str) and "export refused" in said, said
    assert not folder.exists() and not folder.is_symlink(), "nothing planted is left"
    assert os.path.exists("/etc/passwd") and (tmp_path / "outside.txt").exists() == (
        how == "a hard link"
    ), "only what was planted goes, never what a link points to"


def test_the_export_folder_itself_a_link_is_refused_and_the_link_removed(tmp_path):
    (tmp_path / "captured").symlink_to("/etc")
    said = read_export(tmp_path / "captured", "0.4.31")
    assert said == "jax 0.4.31's export refused: its folder: a link or no folder"
    assert not (tmp_path / "captured").is_symlink() and os.path.isdir("/etc")


def write_npz(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def npy(value):
    import io

    buffer = io.BytesIO()
    np.save(buffer, value, allow_pickle=True)
    return buffer.getvalue()


HOSTILE_NPZ = {
    "a pickled object": ({"a0.npy": npy(np.array([{"x": 1}], dtype=object))}, "not an array"),
    "a float array": ({"a0.npy": npy(np.ones(4, np.float32))}, "not an array of bytes"),
    "a member outside": ({"../a0.npy": npy(np.ones(4, np.uint8))}, "no input's values"),
    "an input it does not take": ({"a9.npy": npy(np.ones(4, np.uint8))}, "does not take"),
    "no archive": (None, "program_01.npz: no archive of kept values"),
    "a header of code": (
        {"a0.npy": b"\x93NUMPY\x01\x00\x20\x00{'descr': __import__('os')}      \n"},
        "not an array of bytes",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_NPZ))
def test_kept_values_that_are_not_bytes_of_its_inputs_are_refused(name, tmp_path):
    members, named = HOSTILE_NPZ[name]
    folder = export(tmp_path / "captured")
    if members is None:
        (folder / "program_01.npz").write_bytes(b"PK not a zip")
    else:
        write_npz(folder / "program_01.npz", members)
    said = read_export(folder, "0.4.31")
    assert isinstance(said, str) and named in said, said
    assert not folder.exists()


def codepoints(text, dtype):
    return np.array([ord(c) for c in text], dtype)


SECRET_INPUTS = {
    "a token as bytes": np.frombuffer(TOKEN.encode(), np.uint8),
    "a JWT as int8": np.frombuffer(JWT.encode(), np.int8),
    "a private key as bytes": np.frombuffer(
        b"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        np.uint8,
    ),
    "an AWS key as int32 code points": codepoints("AKIAIOSFODNN7EXAMPLE", np.int32),
    "a token as int16 code points": codepoints(TOKEN, np.int16),
    "a token as big-endian int64": codepoints(TOKEN, ">i8"),
    "a token inside other bytes": np.frombuffer(b"\x01\x02 " + TOKEN.encode() + b" \xff", np.uint8),
}


@pytest.mark.parametrize("name", sorted(SECRET_INPUTS))
def test_a_kept_input_that_reads_as_a_credential_is_dropped_and_generated_said_once(name, tmp_path):
    value = SECRET_INPUTS[name]
    document = listing()
    dtype = value.dtype.newbyteorder("=").name  # as jax names it; the bytes as the script wrote
    document["programs"][0]["inputs"][1] = {"shape": [len(value)], "dtype": dtype, "saved": True}
    folder = export(tmp_path / "captured", document, {"a0": np.ones(4, np.float32), "a1": value})
    found = read_export(folder, "0.4.31")
    assert isinstance(found, dict), found
    assert [i["saved"] for i in found["programs"][0]["inputs"]] == [True, False]
    assert found["note"] == (
        "the kept values of program_01's input 1 read as a credential: left out, generated instead"
    )
    kept = np.load(folder / "program_01.npz")
    assert list(kept) == ["a0"] and kept["a0"].tobytes() == np.ones(4, np.float32).tobytes()
    assert not reads_as_secret((folder / "program_01.npz").read_bytes())


def test_a_secret_of_this_environment_is_found_in_a_kept_input(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "Tr0ub4dor&3-horse")
    assert reads_as_secret(codepoints("xx Tr0ub4dor&3-horse xx", np.uint32).tobytes())


def test_ordinary_inputs_are_kept_as_they_are():
    rng = np.random.default_rng(0)
    for value in (
        rng.standard_normal(4096).astype(np.float32),
        np.arange(100_000, dtype=np.int32),
        rng.integers(0, 256, 65536).astype(np.uint8),
        np.frombuffer(b"the quick brown fox; key=k; token count 12", np.uint8),
    ):
        assert not reads_as_secret(value.tobytes()), value.dtype


def test_a_program_whose_module_holds_a_credential_is_left_out(tmp_path):
    folder = export(tmp_path / "captured")
    # as MLIR's bytecode keeps a constant of bytes: after a letter, no word boundary before it
    (folder / "program_01.jaxexport").write_bytes(b"\x0f\x0fQ" + TOKEN.encode() + b"\x1f\x11")
    found = read_export(folder, "0.4.31")
    assert isinstance(found, dict)
    assert found["programs"][0] == {
        "file": "program_01", "name": "step", "calls": 3, "problem": SECRET_MODULE
    }  # fmt: skip
    assert not list(folder.glob("program_01.*"))


# End to end, on the jax installed here: a script's own process writes its capture.

HOSTILE_SCRIPT = """
import atexit, os, sys
import jax, jax.numpy as jnp, numpy as np
how = sys.argv[1]
if how == "version":
    jax.__version__ = {code!r}
if how == "link":  # after the capture's own export, as the process ends
    planted = os.path.join(os.environ["HARNESS_EXPORT_DIR"], "program_09.npz")
    atexit.register(lambda: os.symlink("/etc/passwd", planted))
token = np.frombuffer({token!r}.encode(), np.uint8)
print(int(jax.jit(lambda t, x: t.sum() + x.sum())(token, jnp.ones(3)).block_until_ready()))
"""


@pytest.fixture(scope="module")
def tools():
    from harness.install.venvs import export_tools

    found = export_tools(REPO / ".nox", sys.executable)
    assert not isinstance(found, str), found
    return found


def captured(tmp_path, tools, how):
    from harness.measure.script_hook import EXPORT_DIR, EXPORT_TOOLS
    from harness.measure.script_process import HOOK

    script, folder = tmp_path / "hostile.py", tmp_path / "captured"
    tmp_path.mkdir(exist_ok=True)
    script.write_text(HOSTILE_SCRIPT.format(code=DOCSTRING_END, token=TOKEN))
    folder.mkdir()
    environ = {**os.environ, EXPORT_DIR: str(folder), EXPORT_TOOLS: str(tools)}
    environ["JAX_PLATFORMS"] = "cpu"
    run = [sys.executable, str(HOOK), str(tmp_path / "report.json"), str(script), how]
    done = subprocess.run(run, cwd=tmp_path, env=environ, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return folder


def test_a_script_that_names_its_jax_as_code_or_plants_a_link_is_refused(tmp_path, tools):
    for how, said in (("version", "jax: not a version"), ("link", "program_09.npz: a link")):
        folder = captured(tmp_path / how, tools, how)
        found = read_export(folder, "here")
        assert isinstance(found, str) and said in found, found
        assert not folder.exists()


def test_a_token_a_script_passes_to_its_program_is_generated_by_the_reproducer(tmp_path, tools):
    """The reproducer written from the capture runs with jax alone: the token's input generated
    (zeros of its shape and dtype), the other kept, the note saying so."""
    import dataclasses

    from harness.explain.reproducer import write_reproducer
    from tests.explain.test_held_library import step as a_step

    folder = captured(tmp_path, tools, "token")
    found = read_export(folder, "here")
    assert isinstance(found, dict), found
    assert [i["saved"] for i in found["programs"][0]["inputs"]] == [False, True]
    assert "program_01's input 0 read as a credential" in found["note"]
    step = dataclasses.replace(a_step(), out=tmp_path)
    script = write_reproducer(step.folder("reproducer"), folder, step, found)
    for path in script.parent.iterdir():
        assert TOKEN.encode() not in (path.read_bytes() if path.is_file() else b""), path
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    ran = subprocess.run(
        [sys.executable, script.name], cwd=script.parent, capture_output=True, text=True,
        env={**environ, "PYTHONPATH": str(tools), "JAX_PLATFORMS": "cpu"}, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads(ran.stdout.strip().splitlines()[-1])["p1_call_ms"] > 0


class ScriptSides:
    """The sides of a step whose script's one more process writes ``plants`` into its export."""

    def __init__(self, tmp_path, plants):
        from types import SimpleNamespace

        self.plants = plants
        venv = SimpleNamespace(venv=str(tmp_path / "venvs" / "0.4.31" / "venv"))
        self.prober = SimpleNamespace(envs={"0.4.31": venv})

    def side(self, label):
        from harness.measure.sides import Side

        return Side(label, "cpu")

    def progress(self, line):
        pass

    def one_more_process(self, side, env):
        from pathlib import Path

        from harness.measure.script_hook import EXPORT_DIR

        self.plants(export(Path(env[EXPORT_DIR])))
        return "ok"


def test_the_why_s_capture_reads_the_export_as_data_and_leaves_nothing_planted(
    monkeypatch, tmp_path
):
    from harness.explain import reproducer

    monkeypatch.setattr(reproducer, "export_tools", lambda *_: tmp_path / "tools")
    folder = tmp_path / "captured"
    linked = ScriptSides(tmp_path, lambda at: plant(at, "a link to a system file"))
    said = reproducer.capture(linked, "0.4.31", folder)
    assert said == (
        "jax 0.4.31's export refused: program_01.jaxexport: a link or a special file, not a file"
    )
    assert not folder.exists()
    coded = ScriptSides(
        tmp_path, lambda at: (at / "programs.json").write_text(json.dumps(listing(jax=CODE)))
    )
    assert reproducer.capture(coded, "0.4.31", folder).endswith("refused: jax: not a version")
    clean = reproducer.capture(ScriptSides(tmp_path, lambda at: None), "0.4.31", folder)
    assert clean == listing()
