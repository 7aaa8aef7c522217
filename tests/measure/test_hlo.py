"""Structure from optimized HLO, on real texts from the oldest and newest release."""

from harness.measure import hlo
from tests.conftest import FIXTURES

OLD = (FIXTURES / "hlo" / "scan-jax-0.4.26.txt").read_text()
NEW = (FIXTURES / "hlo" / "scan-jax-0.12.0.1.txt").read_text()


def test_scan_is_one_while_loop_on_both_releases():
    assert hlo.structure(OLD)["while_loops"] == 1
    assert hlo.structure(NEW)["while_loops"] == 1


def test_trip_count_is_known_only_on_the_newer_release():
    # 0.4.33 started annotating scan's loop with known_trip_count; 0.4.26 does not have it.
    assert hlo.structure(OLD)["known_trip_counts"] == [None]
    assert hlo.structure(NEW)["known_trip_counts"] == [3]


def test_fusions_and_instructions_are_counted():
    for text in (OLD, NEW):
        facts = hlo.structure(text)
        assert facts["fusions"] >= 1
        assert facts["instructions"] > facts["fusions"]
        assert facts["conditionals"] == 0 and facts["collectives"] == 0


def test_tuple_shapes_and_operand_types_do_not_hide_the_opcode():
    text = "\n".join(
        [
            "  %w = (s32[], (f32[2]{0}, f32[3]{0})) while((s32[], f32[2]{0}) %t), condition=%c, "
            "body=%b, "
            'backend_config={"known_trip_count":{"n":"12"}}',
            "  ROOT %f = f32[2]{0} fusion(f32[2]{0} %p), kind=kLoop, calls=%fused",
            "  %s = f32[2]{0} select(pred[2]{0} %a, f32[2]{0} %x, f32[2]{0} %y), "
            'metadata={op_name="while/fake"}',
            "  %c = f32[] conditional(s32[] %i, f32[] %x, f32[] %y), branch_computations={%a, %b}",
        ]
    )
    facts = hlo.structure(text)
    assert (facts["while_loops"], facts["known_trip_counts"]) == (1, [12])
    assert (facts["fusions"], facts["selects"], facts["conditionals"]) == (1, 1, 1)


def test_op_name_metadata_is_not_counted():
    text = '  %a = f32[] add(f32[] %x, f32[] %y), metadata={op_name="jit(f)/while/body/fusion"}'
    assert hlo.structure(text)["while_loops"] == 0 and hlo.structure(text)["fusions"] == 0


class FakeCompiled:
    def __init__(self, analysis):
        self.analysis = analysis

    def cost_analysis(self):
        return self.analysis

    def as_text(self):
        return NEW


def test_cost_analysis_list_and_dict_forms():
    assert hlo.cost(FakeCompiled([{"flops": 10.0, "bytes accessed": 4.0}])) == {
        "flops": 10.0,
        "bytes_accessed": 4.0,
    }
    assert hlo.cost(FakeCompiled({"flops": 3.0})) == {"flops": 3.0, "bytes_accessed": None}
    assert hlo.cost(FakeCompiled(None)) == {"flops": None, "bytes_accessed": None}
    assert hlo.facts(FakeCompiled({"flops": 1.0}))["while_loops"] == 1


def test_a_figure_cost_analysis_does_not_know_is_unknown_not_a_number():
    # XLA counts each custom call it cannot cost (a cuBLAS matmul on GPU) as -1 and adds them up.
    assert hlo.cost(FakeCompiled({"flops": -4.0, "bytes accessed": -4.0})) == {
        "flops": None,
        "bytes_accessed": None,
    }
    assert hlo.cost(FakeCompiled({"flops": "many", "bytes accessed": 0})) == {
        "flops": None,
        "bytes_accessed": 0.0,
    }


class Planned:
    temp_size_in_bytes = 4096
    argument_size_in_bytes = 1024
    output_size_in_bytes = 1024
    generated_code_size_in_bytes = -1  # an unknown size: left out


class WithMemory(FakeCompiled):
    def memory_analysis(self):
        return Planned()


class MemoryFails(FakeCompiled):
    def memory_analysis(self):
        raise NotImplementedError("not on this backend")


def test_memory_analysis_sizes_are_facts_where_the_release_gives_them():
    assert hlo.memory(WithMemory(None)) == {
        "temp_bytes": 4096,
        "argument_bytes": 1024,
        "output_bytes": 1024,
    }
    assert hlo.facts(WithMemory(None))["temp_bytes"] == 4096
    assert hlo.memory(MemoryFails(None)) == {} and hlo.memory(FakeCompiled(None)) == {}
