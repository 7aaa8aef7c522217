"""What a script needs besides JAX: its PEP 723 block, --with and --requirements, checked into one
Declared."""

import pytest

from harness.catalogue.script_deps import (
    Declared,
    canonical,
    check_requires_python,
    collect,
    is_jax_package,
    parse_with,
    read_inline,
    read_requirements,
)
from harness.errors import UsageError
from tests.conftest import FIXTURES

DEPS = FIXTURES / "deps"


def script(name: str) -> str:
    return (DEPS / name).read_text()


def test_a_block_gives_its_dependencies_in_canonical_form_and_its_requires_python():
    requirements, requires_python, notes = read_inline(
        script("equinox_repro.py"), "equinox_repro.py"
    )
    assert notes == []
    assert requirements == ["equinox", 'optax>=0.2; python_version >= "3.10"']
    assert requires_python == ">=3.10"


def test_a_script_without_a_block_declares_nothing():
    assert read_inline((FIXTURES / "scripts" / "cumsum_loop.py").read_text(), "cumsum_loop.py") == (
        [],
        None,
        [],
    )
    assert not collect(None).requirements


def test_a_block_of_another_type_is_not_the_script_block():
    text = '# /// pyproject\n# dependencies = ["x"]\n# ///\n'
    assert read_inline(text, "other.py") == ([], None, [])


def test_a_block_in_a_crlf_file_is_read_as_python_reads_the_file():
    text = script("equinox_repro.py").replace("\n", "\r\n")
    assert read_inline(text, "crlf.py")[0] == ["equinox", 'optax>=0.2; python_version >= "3.10"']


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("two_blocks.py", r"script two_blocks.py: 2 `# /// script` blocks; PEP 723 allows one"),
        ("unclosed_block.py", r"script unclosed_block.py: its `# /// script` block never closes"),
        ("bad_toml.py", r"script bad_toml.py, `# /// script` block: not valid TOML"),
        (
            "asks_for_jax.py",
            r"'jax\[cuda12\]>=0.4.31' asks for jax, but the release under test is the harness's",
        ),
    ],
)
def test_a_malformed_block_is_one_line_naming_the_script(name, message):
    with pytest.raises(UsageError, match=message) as raised:
        read_inline(script(name), name)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('dependencies = "equinox"', "`dependencies` must be a list of requirement strings"),
        ("dependencies = [1]", "`dependencies` must be a list of requirement strings"),
        ('dependancies = ["equinox"]', "unknown key 'dependancies'"),
        ('requires-python = "3.11+"', "`requires-python` '3.11\\+' is not a version specifier"),
        ("requires-python = 3.11", "`requires-python` must be a version specifier string"),
        ('dependencies = ["equinox >>= 1"]', "'equinox >>= 1' is not a requirement \\(PEP 508\\)"),
    ],
)
def test_a_block_with_a_bad_field_is_refused(toml, message):
    with pytest.raises(UsageError, match=message):
        read_inline(f"# /// script\n# {toml}\n# ///\n", "repro.py")


def test_a_tool_table_is_not_applied_and_a_tool_uv_table_says_so():
    text = (
        '# /// script\n# dependencies = ["optax"]\n# [tool.uv]\n# exclude-newer = '
        '"2024-01-01T00:00:00Z"\n# ///\n'
    )
    requirements, requires_python, [note] = read_inline(text, "repro.py")
    assert (requirements, requires_python) == (["optax"], None)
    assert note.startswith(
        "script repro.py: its [tool.uv] settings (exclude-newer) are not applied"
    )
    other = '# /// script\n# dependencies = ["optax"]\n# [tool.ruff]\n# line-length = 100\n# ///\n'
    assert read_inline(other, "repro.py") == (["optax"], None, []), (
        "another tool's table is not uv's"
    )
    assert collect(text, "repro.py").notes == (note,)


def test_a_block_in_a_cr_only_file_is_read_as_python_reads_the_file():
    text = script("equinox_repro.py").replace("\n", "\r")
    assert read_inline(text, "cr.py")[0] == ["equinox", 'optax>=0.2; python_version >= "3.10"']


def test_an_empty_block_declares_nothing_and_is_no_unclosed_block():
    assert read_inline("# /// script\n# ///\nimport jax\n", "empty.py") == ([], None, [])


def test_a_requirements_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "reqs.txt"
    path.write_bytes(b"\xef\xbb\xbfequinox\r\noptax\n")
    assert [requirement for requirement, _ in read_requirements(path)] == ["equinox", "optax"]


def test_more_requirements_than_any_script_needs_are_one_line(tmp_path):
    path = tmp_path / "reqs.txt"
    path.write_text("".join(f"p{n}\n" for n in range(20_000)))
    with pytest.raises(
        UsageError, match=r"^20000 requirements declared \(p0, p1, p2, \.\.\.\).*at most 500$"
    ):
        collect(None, "", (), path)


@pytest.mark.parametrize(
    "name",
    [
        "jax",
        "JAX",
        "jaxlib",
        "jax-cuda12-plugin",
        "jax_cuda12_pjrt",
        "jax-rocm60-plugin",
        "jax-rocm7-pjrt",
        "libtpu",
        "libtpu-nightly",
        "jax-metal",
        "jax-tpu",
        "JAXLib",
    ],
)
def test_jax_its_plugins_and_builds_are_the_harness_s_to_choose(name):
    assert is_jax_package(name)
    with pytest.raises(
        UsageError,
        match=r"--jax for one release, --good/--bad for a bisect, --from/--to for a range",
    ):
        canonical(f"{name}==0.4.31", "--with")


@pytest.mark.parametrize(
    "name", ["jaxtyping", "jax-dataclasses", "flax", "equinox", "jax-tpu-embedding"]
)
def test_libraries_that_merely_use_jax_are_taken(name):
    assert not is_jax_package(name)


def test_with_values_are_canonical_and_bad_ones_refused_in_one_line():
    assert parse_with(["Optax >= 0.2", "chex[Test,Dev]==0.1.86"]) == [
        "optax>=0.2",
        "chex[dev,test]==0.1.86",
    ]
    for bad, message in [
        ("-e .", "is an installer option"),
        ("./wheels/x.whl", "is a URL or path"),
        ("https://example.invalid/x.tar.gz", "is a URL or path"),
        ("x @ https://example.invalid/x.tar.gz", "is a direct reference"),
        ("x===", "is not a requirement"),
    ]:
        with pytest.raises(UsageError, match=f"--with: .*{message}"):
            parse_with([bad])


def test_a_requirements_file_gives_each_line_s_requirement_and_where_it_was():
    assert read_requirements(DEPS / "requirements.txt") == [
        ("optax>=0.2", "requirements.txt:2"),
        ("equinox", "requirements.txt:3"),
        ("chex==0.1.86", "requirements.txt:5"),
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "requirements-options.txt",
            r"requirements-options.txt:2: '--index-url https://.*' is an installer option",
        ),
        (
            "requirements-nested.txt",
            r"requirements-nested.txt:1: '-r other-requirements.txt' is an installer option",
        ),
        (
            "requirements-path.txt",
            r"requirements-path.txt:2: '../wheels/evil-1.0-py3-none-any.whl' is a URL or path",
        ),
        ("requirements-url.txt", r"requirements-url.txt:1: .* is a direct reference"),
        ("requirements-jaxlib.txt", r"requirements-jaxlib.txt:2: 'jaxlib==0.4.31' asks for jaxlib"),
    ],
)
def test_a_requirements_line_that_is_no_plain_requirement_is_refused_naming_file_and_line(
    name, message
):
    with pytest.raises(UsageError, match=message):
        read_requirements(DEPS / name)


def test_a_continued_line_a_missing_file_a_folder_a_huge_file_and_binary_text_are_refused(tmp_path):
    (tmp_path / "continued.txt").write_text("optax \\\n  >=0.2\n")
    with pytest.raises(
        UsageError, match=r"continued.txt:1: a line continued with `\\` is not taken"
    ):
        read_requirements(tmp_path / "continued.txt")
    with pytest.raises(UsageError, match="not found"):
        read_requirements(tmp_path / "missing.txt")
    with pytest.raises(UsageError, match="is not a regular file"):
        read_requirements(tmp_path)
    with (tmp_path / "huge.txt").open("wb") as huge:
        huge.truncate(4 * 1024**3)  # sparse: no disk used, and never read
    with pytest.raises(UsageError, match=r"is too large \(4,294,967,296 bytes"):
        read_requirements(tmp_path / "huge.txt")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not UTF-8"):
        read_requirements(tmp_path / "binary.txt")
    with pytest.raises(UsageError, match="NUL"):
        read_requirements(tmp_path / "a\x00b")


def test_collect_orders_block_then_with_then_file_keeping_each_requirement_where_it_first_came():
    declared = collect(
        script("equinox_repro.py"),
        "equinox_repro.py",
        ["chex==0.1.86", "EQUINOX"],
        DEPS / "requirements.txt",
    )
    assert declared.requirements == (
        "equinox",
        'optax>=0.2; python_version >= "3.10"',
        "chex==0.1.86",
        "optax>=0.2",
    )
    assert declared.sources == (
        "equinox_repro.py (inline metadata)",
        "equinox_repro.py (inline metadata)",
        "--with",
        "requirements.txt:2",
    )
    assert declared.sources[declared.requirements.index("chex==0.1.86")] == "--with"
    assert declared.requires_python == ">=3.10" and declared.script == "equinox_repro.py"
    assert declared.requirements


def test_the_key_is_the_canonical_list_s_whatever_the_sources():
    from_block = collect('# /// script\n# dependencies = ["Optax>=0.2"]\n# ///\n', "a.py")
    from_with = collect(None, "", ["optax >= 0.2"])
    assert from_block.key() == from_with.key() and len(from_block.key()) == 64
    assert collect(None, "", ["optax>=0.3"]).key() != from_with.key()
    assert Declared().key() == collect(None).key()


@pytest.mark.parametrize(
    ("requires", "version", "ok"),
    [
        (">=3.10", "3.12.4", True),
        (">=3.10", "3.12", True),
        (">=3.13", "3.12.4", False),
        (">=3.13", "3.12", False),
        (">=3.12.2", "3.12", True),  # some 3.12 does; the exact interpreter is checked once known
        (">=3.12.2", "3.12.1", False),
        ("<3.12", "3.12.0rc1", False),
        ("==3.12.*", "3.12.0rc1", True),
    ],
)
def test_requires_python_is_checked_against_the_interpreter(requires, version, ok):
    declared = Declared(requires_python=requires, script="repro.py")
    if ok:
        check_requires_python(declared, version)
    else:
        with pytest.raises(
            UsageError,
            match=f"script repro.py requires Python .* the interpreter is Python {version}",
        ):
            check_requires_python(declared, version)


def test_requires_python_of_a_script_is_refused_before_anything_is_installed():
    declared = collect(script("needs_python_99.py"), "needs_python_99.py")
    with pytest.raises(UsageError, match="requires Python >=99"):
        check_requires_python(declared, "3.12.1")
    check_requires_python(Declared(), "3.12.1")
    with pytest.raises(UsageError, match="is not a Python version"):
        check_requires_python(declared, "three")
