"""The published JSON Schema of a result file (``docs/result.schema.json``) against the records that
write and read it: every stored fixture and every written result validates, what the parser refuses
the schema refuses too, and the schema names exactly the fields the records have, so neither can
drift alone."""

import copy
import json
import re
from dataclasses import MISSING, Field, fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.store.migrations import upgrade
from harness.store.results import write_result
from harness.store.schema import (
    SCHEMA,
    SCHEMA_VERSION,
    SETTING_NAMES_IN_ORDER,
    CompiledFunction,
    EndKind,
    GpuFacts,
    HarnessRevision,
    HostFacts,
    JaxFacts,
    Libraries,
    MachineFacts,
    ProcessClaim,
    ProcessEnd,
    ProcessLoad,
    ProcessRun,
    Result,
    RunStatus,
    SchemaError,
    ScriptIdentity,
    Settings,
    StoredProgram,
    TimedSample,
    parse,
)
from tests.conftest import FIXTURES, REPO

jsonschema = pytest.importorskip("jsonschema")

PUBLISHED = json.loads((REPO / "docs" / "result.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(PUBLISHED)


# The fixtures the harness must refuse (each names its one bad field); every other result fixture
# loads.
REFUSING = ("unusable", "hostile")


def is_result(path: Path) -> bool:
    document = json.loads(path.read_text())
    return isinstance(document, dict) and document.get("schema") == SCHEMA


RESULT_FIXTURES = sorted(filter(is_result, FIXTURES.rglob("*.json")))
LOADED = [path for path in RESULT_FIXTURES if path.relative_to(FIXTURES).parts[0] not in REFUSING]
REFUSED = [path for path in RESULT_FIXTURES if path.relative_to(FIXTURES).parts[0] in REFUSING]


def errors_of(document: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in VALIDATOR.iter_errors(document)
    ]


def test_the_fixtures_hold_results_of_every_version_and_refused_ones():
    versions = {json.loads(path.read_text())["schema_version"] for path in LOADED}
    assert versions == set(range(1, SCHEMA_VERSION + 1)) and len(REFUSED) >= 10


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(PUBLISHED)
    assert PUBLISHED["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_schema_names_the_result_and_the_version_the_harness_writes():
    top = PUBLISHED["properties"]
    assert top["schema"]["const"] == SCHEMA and top["schema_version"]["const"] == SCHEMA_VERSION
    assert (
        PUBLISHED["$id"].endswith(f":{SCHEMA_VERSION}")
        and f"version {SCHEMA_VERSION}" in PUBLISHED["title"]
    )


@pytest.mark.parametrize("path", LOADED, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_stored_result_validates_once_migrated(path):
    """Files of older versions are migrated on load, so the schema describes the migrated
    document."""
    document = upgrade(json.loads(path.read_text()))
    parse(document)
    assert errors_of(document) == []


@pytest.mark.parametrize("path", REFUSED, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_what_the_parser_refuses_the_schema_refuses(path):
    document = upgrade(json.loads(path.read_text()))
    with pytest.raises(SchemaError):
        parse(document)
    assert errors_of(document), "the schema takes a document the parser refuses"


SAMPLE = TimedSample((3.0, 5.0), 8.0)
# Every field of every record away from its default, so that each one is written (sparse fields are
# left out at their default) and the walks below see every key a result can hold.
FULL = Result(
    id="r1",
    created_at="2026-12-01T12:00:00+00:00",
    case="steady",
    release="0.4.26",
    profile="cpu",
    sizes={"K": 4},
    status=RunStatus.FAILED,
    processes=(
        ProcessRun(
            index=1,
            status=RunStatus.OK,
            detail="note",
            duration_s=2.5,
            window_unix_ns=(1, 2),
            load=ProcessLoad(other_cpu_cores=0.2, loadavg_1m=1.5, loaded=True, attempts=2),
            affinity=(0, 1),
            programs={
                "p": StoredProgram(
                    steps=("a", "b"),
                    samples=(SAMPLE, SAMPLE),
                    first_call=TimedSample((30.0, 50.0), 80.0),
                    warmup=3,
                    loops=4,
                    stopped_by="time budget",
                    kinds=("wall",),
                    summary={"median_ns": 5},
                    printed=({"metric": "reg_ms", "value": 1.5},),
                )
            },
            compiled={
                "f": CompiledFunction(lower_ns=(1.0,), compile_ns=(2.0,), hlo={"fusions": 2})
            },
            facts={"count": 3},
            claim=ProcessClaim(holds=False, evidence="why", backend="cpu"),
            jax=JaxFacts(
                backend="gpu",
                device_count=1,
                device_kinds=("NVIDIA H200",),
                platforms=("cuda",),
                jax_version="0.4.26",
                environment_info="jax: 0.4.26",
                gpu=GpuFacts(
                    device_kinds=("NVIDIA H200",),
                    compute_capabilities=("9.0",),
                    driver_versions=("570.1",),
                    cuda_driver="12.8",
                    cuda_packages={"nvidia-cublas-cu12": "12.8.3"},
                    nvidia_smi=[{"name": "NVIDIA H200"}],
                ),
                error="none said",
                config={"jax_enable_x64": False},
            ),
            phases_s={"import": 0.5},
            peak_rss_bytes=1024,
            device_peak_bytes=4096,
            script={"sha256": "ab" * 32, "returncode": 0},
            figures={"process.trace_ns": 12.0, "json.sum": 12345678901234567},
            printed={"json.status": ('"converged"',), "json.loss": ("NaN",)},
            notes=("JSON line: x: inf is not a number a result can hold",),
            died=ProcessEnd(
                how=EndKind.SIGNAL,
                signal="SIGSEGV",
                exit_status=139,
                from_outside=True,
                timeout_s=60.0,
                last_lines="Fatal Python error: Segmentation fault",
                stack='  File "repro.py", line 3 in <module>',
            ),
        ),
    ),
    detail="one process failed",
    duration_s=3.5,
    window_unix_ns=(1, 3),
    size_source="explicit",
    seed=7,
    cost_estimate={"flops": 1e6},
    budget={"bytes": 1e9},
    settings=Settings(
        warmup=1,
        repeats=9,
        min_repeats=3,
        max_seconds=2.0,
        compile_repeats=1,
        timeout_s=60.0,
        effort="full",
        isolation="spawn",
        processes=2,
        min_sample_ns=5,
        affinity=(0,),
        max_load=0.5,
        target_ratio=1.2,
        target_kinds=("wall",),
        max_processes=6,
        decide="changes",
        decide_metrics=("wall_ns",),
        decide_budget_s=600.0,
        max_count_processes=200,
    ),
    claim_statement="it is steady",
    source="https://github.com/jax-ml/jax/issues/1",
    discussion="steady.txt",
    source_figure="f(1000) on a laptop: t = 0.1s",
    host=HostFacts(
        machine=MachineFacts(id="0123456789abcdef", basis="hardware only"),
        cpu_model="a CPU",
        cpu_count=2,
        usable_cores=2,
        memory_total_bytes=2**30,
        python="3.12.1",
        python_implementation="CPython",
        platform="Linux-x86_64",
        kernel="6.1",
        packages={"jax": "0.4.26"},
        variables={"JAX_PLATFORMS": "cuda"},
        gpus=({"name": "NVIDIA H200"},),
        harness=HarnessRevision(commit="abc", dirty=True),
    ),
    interleaved_with=("jax 0.4.30 · cpu",),
    script=ScriptIdentity(file="repro.py", sha256="ab" * 32, args=("--n", "3")),
    libraries=Libraries(
        policy="as-of",
        installed=("equinox==0.11.4", "jax==0.4.31", "jaxlib==0.4.31"),
        sha256="cd" * 32,
        cutoff="2024-08-06T00:25:58+00:00",
        declared=("equinox",),
        held=("equinox==0.11.4",),
    ),
    invocation="inv1",
    notes=("processes[0].facts.x: nan is not a number a result can hold; left out",),
)


def records(value: Any) -> list[Any]:
    """``value`` and every record inside it."""
    if isinstance(value, tuple | list):
        return [found for item in value for found in records(item)]
    if isinstance(value, dict):
        return [found for item in value.values() for found in records(item)]
    if not is_dataclass(value):
        return []
    return [
        value,
        *(found for spec in fields(value) for found in records(getattr(value, spec.name))),
    ]


def default_of(spec: Field[Any]) -> Any:
    if spec.default is not MISSING:
        return spec.default
    return spec.default_factory() if spec.default_factory is not MISSING else MISSING


def test_the_full_result_sets_every_field_of_every_record():
    """Else a field added later would be written by no test below, and could be missing from the
    schema."""
    at_default = [
        f"{type(record).__name__}.{spec.name}"
        for record in records(FULL)
        for spec in fields(record)
        if spec.name != "unrecorded" and getattr(record, spec.name) == default_of(spec)
    ]
    assert at_default == []
    kinds = {type(record) for record in records(FULL)}
    assert kinds == set(RECORD_SHAPES), "every record class has its place in the schema"


def written(tmp_path) -> dict[str, Any]:
    return json.loads(write_result(tmp_path, FULL).read_text())


def test_a_written_result_validates(tmp_path):
    assert errors_of(written(tmp_path)) == []
    least = Result(
        "r2", "2026-12-01T12:00:00+00:00", "steady", "0.4.26", "cpu", {}, RunStatus.SKIPPED
    )
    crashed = Result(
        "r3",
        "2026-12-01T12:00:00+00:00",
        "steady",
        "0.4.26",
        "cpu",
        {"K": 1},
        RunStatus.CRASHED,
        processes=(ProcessRun(0, RunStatus.CRASHED, detail="killed by SIGSEGV"),),
    )
    for result in (least, crashed):
        assert errors_of(json.loads(write_result(tmp_path, result).read_text())) == []


def resolved(node: dict[str, Any]) -> dict[str, Any]:
    """The schema node ``node`` stands for: its ``$ref`` followed, or the object among its
    alternatives."""
    if "$ref" in node:
        return resolved(PUBLISHED["$defs"][node["$ref"].removeprefix("#/$defs/")])
    for option in node.get("oneOf", ()):
        if "null" not in (shape := resolved(option)).get("type", ()):
            return shape
    return node


# Each record class and where the schema describes it.
RECORD_SHAPES = {
    Result: PUBLISHED,
    Settings: PUBLISHED["properties"]["settings"],
    HostFacts: PUBLISHED["properties"]["host"],
    MachineFacts: resolved(PUBLISHED["properties"]["host"])["properties"]["machine"],
    HarnessRevision: resolved(PUBLISHED["properties"]["host"])["properties"]["harness"],
    ScriptIdentity: PUBLISHED["properties"]["script"],
    Libraries: PUBLISHED["properties"]["libraries"],
    ProcessRun: PUBLISHED["properties"]["processes"]["items"],
    ProcessLoad: resolved(PUBLISHED["$defs"]["process"])["properties"]["load"],
    ProcessClaim: resolved(PUBLISHED["$defs"]["process"])["properties"]["claim"],
    ProcessEnd: resolved(PUBLISHED["$defs"]["process"])["properties"]["died"],
    StoredProgram: PUBLISHED["$defs"]["program"],
    TimedSample: PUBLISHED["$defs"]["sample"],
    CompiledFunction: PUBLISHED["$defs"]["compiled_function"],
    JaxFacts: PUBLISHED["$defs"]["jax"],
    GpuFacts: PUBLISHED["$defs"]["gpu"],
}


@pytest.mark.parametrize("record", RECORD_SHAPES, ids=lambda r: r.__name__)
def test_the_schema_names_exactly_the_fields_of_each_record(record):
    named = set(resolved(RECORD_SHAPES[record])["properties"])
    if record is Result:
        assert named == {"schema", "schema_version"} | {spec.name for spec in fields(Result)}
    elif record is Settings:
        assert named == set(SETTING_NAMES_IN_ORDER)
    else:
        assert named == {spec.name for spec in fields(record)}


def described_objects(document: Any, node: dict[str, Any], where: tuple[Any, ...] = ()):
    """Each object of ``document`` whose schema node names its properties: its path, that node and
    the object. Objects the schema leaves free (a case's facts, HLO counts) are not walked into."""
    node = resolved(node)
    if isinstance(document, list):
        for i, item in enumerate(document):
            yield from described_objects(item, node.get("items", {}), (*where, i))
    elif isinstance(document, dict):
        named, each = node.get("properties"), node.get("additionalProperties")
        if named is not None:
            yield where, node, document
        for key, value in document.items():
            if named is not None and key in named:
                yield from described_objects(value, named[key], (*where, key))
            elif isinstance(each, dict):
                yield from described_objects(value, each, (*where, key))


def dotted(where: tuple[Any, ...], key: str) -> str:
    return ".".join(map(str, (*where, key)))


def test_every_key_a_result_writes_is_named_where_it_is_written(tmp_path):
    described = list(described_objects(written(tmp_path), PUBLISHED))
    assert [
        dotted(where, key)
        for where, node, held in described
        for key in held
        if key not in node["properties"]
    ] == []
    assert len(described) == len(records(FULL)), (
        "each record written is described where it is written"
    )


def test_the_fields_the_schema_requires_are_those_the_parser_requires(tmp_path):
    document = written(tmp_path)
    disagreements = []
    for where, node, held in described_objects(document, PUBLISHED):
        for key in held:
            changed = copy.deepcopy(document)
            holder = changed
            for step in where:
                holder = holder[step]
            del holder[key]
            try:
                parse(changed)
                refused = False
            except SchemaError:
                refused = True
            if refused != (key in node.get("required", ())):
                disagreements.append(
                    f"{dotted(where, key)}: the parser {'refuses' if refused else 'takes'} it "
                    "missing"
                )
    assert disagreements == []


def test_the_snippet_in_the_docs_validates_a_stored_file(tmp_path, monkeypatch):
    page = (REPO / "docs" / "results.md").read_text()
    section = page.split("## The result file's schema\n", 1)[1].split("\n## ", 1)[0]
    [snippet] = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    [shown] = re.findall(r'"(results/[^"]+\.json)"', snippet)
    monkeypatch.chdir(REPO)  # the snippet names the schema as a clone's root holds it
    exec(snippet.replace(shown, str(write_result(tmp_path, FULL))), {})
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**FULL.to_json(), "processes": {}}))
    with pytest.raises(jsonschema.ValidationError):
        exec(snippet.replace(shown, str(broken)), {})
