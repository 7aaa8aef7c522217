"""``flags``: two sets of device flags on the JAX installed here, measured interleaved as the two
sides of one run, then judged as ``compare`` judges two result sets; exit 1 when B got worse.
"""

from __future__ import annotations

from harness.analysis.set_comparison import ResultSet, SetComparison, compare_sets
from harness.cli import options
from harness.cli.flags import FlagsOptions
from harness.commands.progress import Progress
from harness.commands.run import measure_run
from harness.render.json_out import dumps, set_comparison_json
from harness.render.set_comparison import render_markdown, render_text
from harness.store.files import child, output_folder, replace_file, write_text
from harness.store.results import StoredResult

UNSET = "not set"  # how a case process records a jax option it could not set (script_hook)


def unset_options(stored: StoredResult) -> list[str]:
    """The jax options a side's processes could not set, each once, with why."""
    found = {
        f"{name.removeprefix('jax_config.')} {value}"
        for process in stored.result.processes
        for name, value in process.facts.items()
        if name.startswith("jax_config.") and str(value).startswith(UNSET)
    }
    return sorted(found)


def note_unset(comparison: SetComparison) -> None:
    """A jax option that did not take, said beside its pair: that side ran the default."""
    for pair in comparison.pairs:
        pair.notes[:0] = [
            f"{letter}: jax option {why}"
            for letter, stored in (("A", pair.a), ("B", pair.b))
            for why in unset_options(stored)
        ]


def execute(opts: FlagsOptions) -> int:
    options.prove_writable(opts.out, "the page")  # now, not once measured
    progress = Progress()
    try:
        measure_run(opts.run, progress)
    finally:
        progress.done()
    a_side, b_side = opts.run.sides
    a, b = (
        ResultSet(flags.letter, opts.run.results, side.release, side.profile, flags.text())
        for flags, side in ((opts.a, a_side), (opts.b, b_side))
    )
    comparison = compare_sets(a, b, [case.name for case in opts.run.cases], opts.thresholds)
    note_unset(comparison)
    # named by both flag sets: another pair's page never replaces this one
    page = child(output_folder(opts.out), f"flags-{a_side.profile}-{opts.b.digest()}.md")
    replace_file(page, render_markdown(comparison))
    if opts.json:
        write_text(opts.json, dumps(set_comparison_json(comparison)))
    print(render_text(comparison, str(page)), end="")
    return 1 if comparison.worse() else 0
