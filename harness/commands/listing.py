"""``list``: the catalogue's cases and claims; with a case, its sizes, programs and metric names."""

from __future__ import annotations

from harness.catalogue import discovery
from harness.catalogue.discovery import outline
from harness.cli.listing import ListOptions
from harness.metric_names import MetricKey
from harness.units import sizes_text


def execute(opts: ListOptions) -> int:
    catalogue = discovery.discover(opts.cases_dir)
    if opts.case is not None:
        [case] = discovery.select(catalogue, [opts.case])
        print(describe_case(case))
        return 0
    for case in catalogue.values():
        print("\n".join([case.name, *_outline(case)]))
    for name, reason in catalogue.broken.items():
        print(f"{name}\n    cannot be read: {reason}")
    return 1 if catalogue.broken else 0


def _outline(case: discovery.CaseInfo) -> list[str]:
    """What the list says of every case: where it comes from, its claim, sizes and anchors."""
    space = ", ".join(f"{name} in [{lo}, {hi}]" for name, (lo, hi) in case.space.ranges.items())
    anchors = "; ".join(sizes_text(anchor) for anchor in case.anchors) or "none"
    if case.accelerator_anchors is not None:
        on_accelerator = "; ".join(sizes_text(a) for a in case.accelerator_anchors) or "none"
        anchors = f"{anchors} on a CPU profile; {on_accelerator} on a GPU or TPU profile"
    return [
        f"    source: {case.source}",
        f"    claim: {case.claim}",
        f"    sizes: {space}",
        f"    anchors (quick): {anchors}",
    ]


def describe_case(case: discovery.CaseInfo) -> str:
    """One case in full, from its file alone: no JAX is started."""
    shape = outline(case.path)
    metrics = [
        *(MetricKey(p, kind).metric_name for p in shape.programs for kind in ("wall", "dispatch")),
        *(MetricKey(f, kind).metric_name for f in shape.compiled for kind in ("lower", "compile")),
    ]
    lines = [
        case.name,
        f"    file: {case.path}",
        *_outline(case),
        *(
            f"    the discussion's own run at {sizes_text(run.sizes)}: {run.said()}"
            for run in case.source_runs
        ),
    ]
    if case.space.cost:
        lines.append(
            "    cost: "
            + ", ".join(f"{kind} {formula}" for kind, formula in case.space.cost.items())
        )
    if case.min_devices > 1:
        lines.append(f"    needs {case.min_devices} devices (run it under cpu8)")
    if case.devices_used is not None:
        used = f"{case.devices_used} device{'' if case.devices_used == 1 else 's'}"
        lines.append(f"    uses {used}: skipped under a profile that makes more CPU devices (cpu8)")
    if case.claim_devices is not None:
        about = f"{case.claim_devices} device{'' if case.claim_devices == 1 else 's'}"
        lines.append(
            f"    its claim is about {about}: plain nox measures it only under a profile that "
            f"makes {about}"
        )
    lines += [
        f"    programs: {', '.join(shape.programs) or 'none found'}",
        f"    jitted functions (compiled): {', '.join(shape.compiled) or 'none'}",
        f"    verdict: verdict(medians{', **sizes' if shape.verdict_takes_sizes else ''})"
        + ("; facts(**sizes) recorded" if shape.has_facts else ""),
        "    metric names (bisect/sweep --metric):",
        *(f"        {name}" for name in metrics),
    ]
    if shape.patterned:
        lines.append("    <...> stands for a part of the name the case computes when it runs")
    return "\n".join(lines)
