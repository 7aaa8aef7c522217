"""XLA's dumps of a step's two releases, read and compared (real dumps of jax 0.4.31 and 0.4.33, and
copies edited into the changes a maintainer tells apart)."""

import shutil
from pathlib import Path

import pytest

from harness.analysis.significance import Thresholds
from harness.explain.dumps import (
    CompiledAnswer,
    CompiledPrograms,
    compare_dumps,
    diff_name,
    dump_flags,
    fusion_kinds,
    opcodes,
    read_dump,
    write_diffs,
)
from harness.measure.sides import Side
from harness.metric_names import Criterion, parse_metric_name
from harness.render.why import compiled_lines as compiled_lines_found
from harness.render.why import module_text
from harness.steps.evidence import Step
from tests.conftest import as_stored, real_result

EAGER = parse_metric_name("eager.wall_ns")


def compiled_lines(answer):
    """The findings' sentences (whether each leads is the why's tests')."""
    return [finding.text for finding in compiled_lines_found(answer)]


DUMPS = Path(__file__).parent.parent / "fixtures" / "dumps"
AFTER = "module_0005.jit_f.cpu_after_optimizations.txt"
BEFORE = "module_0005.jit_f.before_optimizations.txt"


def copied(tmp_path: Path, release: str) -> Path:
    return Path(shutil.copytree(DUMPS / release, tmp_path / release))


def edit(folder: Path, name: str, old: str, new: str) -> None:
    path = folder / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def add_copy(folder: Path, name: str = AFTER) -> None:
    """One more copy instruction in the optimised program, as a change of XLA's compiler would
    make."""
    edit(
        folder,
        name,
        "  dot.0 = ",
        "  extra.0 = f32[16,16]{1,0} copy(get-tuple-element.3)\n  dot.0 = ",
    )


def test_a_dump_is_read_as_its_modules_by_name_without_those_every_program_compiles():
    modules = read_dump(DUMPS / "0.4.31")
    assert set(modules) == {"jit_f"}, "convert_element_type and broadcast_in_dim only move data"
    f = modules["jit_f"]
    assert (f.after["while"], f.after["fusion"], f.after["dot"]) == (1, 1, 1)
    assert sum(f.before.values()) == 23
    assert f.temp_bytes is not None and f.temp_bytes > 0


def test_the_same_program_on_both_releases_points_at_what_runs_it():
    [change] = compare_dumps(read_dump(DUMPS / "0.4.31"), read_dump(DUMPS / "0.4.33"))
    assert change.same_before and change.same_after
    assert module_text(change) == (
        "before optimisation same; after: no count moved; "
        "the same program before and after optimisation: what runs it changed, not what was "
        "compiled"
    )


def test_a_program_changed_only_after_optimisation_points_at_xla_s_compiler(tmp_path):
    new = copied(tmp_path, "0.4.33")
    add_copy(new)
    [change] = compare_dumps(read_dump(DUMPS / "0.4.31"), read_dump(new))
    assert change.same_before and not change.same_after
    assert "after: copy 2 → 3;" in module_text(change)
    assert change.hint().endswith("XLA's compiler changed it")


def test_the_same_instructions_with_another_fusion_kind_or_other_buffers_are_not_the_same_program(
    tmp_path,
):
    """Counting opcodes cannot see a fusion that changed kind or backend, nor a buffer assignment
    that grew."""
    line = "fusion(dot.0), kind=kLoop, calls=fused_computation"
    new = copied(tmp_path, "0.4.33")
    custom = (
        "fusion(dot.0), kind=kCustom, calls=fused_computation, "
        'backend_config={"kind":"__xnn_fusion"}'
    )
    edit(new, AFTER, line, custom)
    [change] = compare_dumps(read_dump(DUMPS / "0.4.31"), read_dump(new))
    assert change.old.after == change.new.after, "the same opcodes"
    assert not change.same_after
    assert "kCustom(__xnn_fusion) fusions 0 → 1; kLoop fusions 1 → 0" in module_text(change)
    assert fusion_kinds(f"  f = f32[2] {line}") == {"kLoop": 1}
    grown = read_dump(DUMPS / "0.4.33")["jit_f"]
    grown.temp_bytes = (grown.temp_bytes or 0) * 6
    [bigger] = compare_dumps(read_dump(DUMPS / "0.4.31"), {"jit_f": grown})
    assert bigger.old.after == bigger.new.after and not bigger.same_after
    assert "temporary bytes" in module_text(bigger)


def test_a_text_diff_without_numbers_and_metadata_is_kept_beside_the_dumps(tmp_path):
    [change] = compare_dumps(read_dump(DUMPS / "0.4.31"), read_dump(DUMPS / "0.4.33"))
    assert change.same_after and not change.same_text, "0.4.33 annotates the loop's trip count"
    diff = change.diff()
    assert diff[:2] == ["--- before", "+++ after"]
    changed = [line for line in diff[2:] if line[:1] in "+-"]
    assert len(changed) == 2 and all("while(tuple)" in line for line in changed)
    assert not any("metadata=" in line or "dot.0" in line for line in diff), "normalised"
    (tmp_path / "stale.diff").write_text("old")
    write_diffs(tmp_path, [change])
    assert sorted(p.name for p in tmp_path.iterdir()) == [diff_name(change)] == ["jit_f.diff"]
    [head] = compiled_lines(CompiledAnswer("0.4.31", "0.4.33", [change], "s/"))
    assert "the same before and after optimisation (only the text of `jit_f.diff` differs)" in head


def test_a_program_changed_before_and_after_optimisation_points_at_jax_s_lowering(tmp_path):
    new = copied(tmp_path, "0.4.33")
    edit(
        new,
        BEFORE,
        "  constant.6 = ",
        "  negate.99 = f32[16,16]{1,0} negate(Arg_0.5)\n  constant.6 = ",
    )
    [change] = compare_dumps(read_dump(DUMPS / "0.4.31"), read_dump(new))
    assert not change.same_before and change.same_after
    assert "before optimisation 23 → 24 instructions" in module_text(change)
    assert change.hint().endswith("but the same after: what runs it changed, not what was compiled")
    add_copy(new)
    [change] = compare_dumps(read_dump(DUMPS / "0.4.31"), read_dump(new))
    assert change.hint().endswith("JAX's tracing and lowering changed it"), (
        "different before, and after"
    )


def test_a_name_compiled_twice_is_read_as_two_modules_in_the_order_compiled(tmp_path):
    """Every lambda is jit__lambda_: the first compiled on one release meets the first on the
    other."""
    folder = copied(tmp_path, "0.4.31")
    for path in list(folder.glob("module_0005.jit_f.*")):
        shutil.copy(path, folder / path.name.replace("module_0005", "module_0011"))
    add_copy(folder, AFTER.replace("0005", "0011"))
    modules = read_dump(folder)
    assert (modules["jit_f #1"].after["copy"], modules["jit_f #2"].after["copy"]) == (2, 3)
    assert "jit_f" not in modules


def test_modules_that_changed_come_first_and_only_they_are_said_with_where_the_dumps_are(tmp_path):
    old, new = copied(tmp_path, "0.4.31"), copied(tmp_path, "0.4.33")
    for folder in (old, new):  # a second module, unchanged, whose name sorts first
        for path in list(folder.glob("module_0005.jit_f.*")):
            shutil.copy(path, folder / path.name.replace("0005.jit_f", "0007.jit_a"))
    add_copy(new)
    changes = compare_dumps(read_dump(old), read_dump(new))
    assert [c.name for c in changes] == ["jit_f", "jit_a"]
    answer = CompiledAnswer("0.4.31", "0.4.33", changes, "s-compiled/")
    head, *modules = compiled_lines(answer)
    assert head == (
        "compiled programs of 0.4.31 and 0.4.33 (XLA's dumps in `s-compiled/<release>/`): 2 "
        "module(s) compared, 1 differ (text diffs in `s-compiled/<module>.diff`)"
    )
    assert [line.split(":")[0] for line in modules] == ["compiled jit_f"], (
        "only the modules that differ"
    )
    data = answer.data()
    assert [m["name"] for m in data["modules"]] == ["jit_f", "jit_a"]  # type: ignore[index]
    assert data["modules"][0]["opcodes_after"][1]["copy"] == 3  # type: ignore[index]


def test_modules_changed_alike_are_said_once(tmp_path):
    old, new = copied(tmp_path, "0.4.31"), copied(tmp_path, "0.4.33")
    for folder in (old, new):
        for path in list(folder.glob("module_0005.jit_f.*")):
            shutil.copy(path, folder / path.name.replace("module_0005", "module_0011"))
    add_copy(new)
    add_copy(new, AFTER.replace("0005", "0011"))
    head, line = compiled_lines(
        CompiledAnswer("0.4.31", "0.4.33", compare_dumps(read_dump(old), read_dump(new)), "s/")
    )
    assert head.endswith("2 module(s) compared, 2 differ (text diffs in `s/<module>.diff`)")
    assert line.startswith(
        "compiled jit_f #1, jit_f #2: before optimisation same; after: copy 2 → 3;"
    )


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            CompiledAnswer("0.4.31", "0.4.33", [], problem="0.4.33: XLA wrote no dump"),
            "not compared: 0.4.33",
        ),
        (
            CompiledAnswer("0.4.31", "0.4.33", []),
            "no module of 0.4.31 has a namesake in 0.4.33's dump",
        ),
    ],
)
def test_an_answer_without_a_comparison_says_why(answer, said):
    [line] = compiled_lines(answer)
    assert said in line


def test_gpu_dump_names_and_opcodes_with_tuple_shapes_are_read(tmp_path):
    folder = copied(tmp_path, "0.4.31")
    for path in list(folder.glob("*cpu_after*")):
        path.rename(folder / path.name.replace("cpu_after", "sm_9.0_gpu_after"))
    assert read_dump(folder)["jit_f"].after["while"] == 1
    assert opcodes("  w = (s32[], f32[2]{0}) while(t), condition=c, body=b\n")["while"] == 1
    assert dump_flags(Path("/d")) == ["--xla_dump_to=/d", "--xla_dump_hlo_as_text"]


class DumpingSides:
    """A step's sides whose one extra process dumps what ``dumps`` holds for its release into the
    folder its flags name, or, where ``replaced``, nothing: the script set XLA_FLAGS itself, as its
    result records."""

    def __init__(self, replaced: set[str]):
        self.replaced = replaced
        self.progress = lambda line: None

    def side(self, label):
        return Side(label, "cpu")

    def extra_process(self, side, flags=(), env=None):
        data = real_result("async_dispatch-0.12.0.1")
        if side.release in self.replaced:
            record = {"lost": ["--xla_dump_to", "--xla_dump_hlo_as_text"], "read": "--mine"}
            data["processes"] = [
                dict(p, script={**(p.get("script") or {}), "xla_flags": record})
                for p in data["processes"]
            ]
        else:
            folder = Path(flags[0].removeprefix("--xla_dump_to="))
            for path in (DUMPS / side.release).iterdir():
                shutil.copy(path, folder / path.name)
        return as_stored(data)


def test_a_script_that_replaced_the_dump_flags_makes_the_comparison_void_not_a_missing_dump(
    tmp_path,
):
    step = Step(
        "0.4.31", "0.4.33", (Criterion.of(EAGER),), "cpu", Thresholds(), tmp_path, "triage-x"
    )
    answer = CompiledPrograms().gather(step, DumpingSides({"0.4.33"}))
    assert answer.void == ("0.4.33",) and not answer.changes and not answer.problem
    [line] = compiled_lines(answer)
    assert line.startswith(
        "compiled programs not compared, void for this script: it sets XLA_FLAGS"
    )
    assert "on 0.4.33" in line and "XLA wrote no dump" not in line
    assert answer.data()["void"] == ["0.4.33"]
    both = CompiledPrograms().gather(step, DumpingSides(set()))
    assert both.void == () and both.changes, "dumped on both: compared as before"


def test_a_new_dump_replaces_an_earlier_one_s_files_and_leaves_a_user_s_other_files(tmp_path):
    step = Step(
        "0.4.31", "0.4.33", (Criterion.of(EAGER),), "cpu", Thresholds(), tmp_path, "triage-x"
    )
    kept = tmp_path / "triage-x-compiled"
    (kept / "0.4.31").mkdir(parents=True)
    stale = kept / "0.4.31" / "module_9999.jit_gone.before_optimizations.txt"
    stale.write_text("HloModule jit_gone")
    (kept / "0.4.31" / "notes.txt").write_text("mine")
    (kept / "mine.txt").write_text("mine")
    answer = CompiledPrograms().gather(step, DumpingSides(set()))
    assert answer.changes and not answer.problem
    assert not stale.exists(), "an earlier dump's module is no module of this one"
    assert (kept / "0.4.31" / AFTER).exists()
    assert (kept / "0.4.31" / "notes.txt").read_text() == "mine"
    assert (kept / "mine.txt").read_text() == "mine"


def test_a_program_of_other_shapes_is_not_the_same_program_compiled_again(tmp_path):
    # The script jitted the same function on 96×96 before and 192×192 after: every opcode count
    # alike.
    old, new = copied(tmp_path, "0.4.31"), copied(tmp_path, "0.4.33")
    for folder, size in ((old, "96,96"), (new, "192,192")):
        for name in (BEFORE, AFTER):
            path = folder / name
            path.write_text(path.read_text().replace("f32[16,16]", f"f32[{size}]"))
    [change] = compare_dumps(read_dump(old), read_dump(new))
    assert change.old.shapes == ("f32[96,96]", "f32[96,96]")
    assert change.new.shapes == ("f32[192,192]", "f32[192,192]")
    assert not change.same_before and not change.same_after
    assert change.hint().startswith(
        "a program of other shapes or types (f32[96,96], f32[96,96] against f32[192,192], "
        "f32[192,192])"
    ), change.hint()
