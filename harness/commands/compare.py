"""``compare``: two result sets metric by metric, verdicts over processes; exit 1 if B got worse."""

from __future__ import annotations

from harness.analysis.set_comparison import ResultSet, compare_sets
from harness.cli.compare import CompareOptions
from harness.cli.options import undeclared
from harness.errors import UsageError
from harness.render.json_out import dumps, set_comparison_json
from harness.render.set_comparison import render_markdown, render_text
from harness.store.files import write_text


def execute(opts: CompareOptions) -> int:
    a = ResultSet("A", opts.a, opts.a_release, opts.a_profile)
    b = ResultSet("B", opts.b, opts.b_release, opts.b_profile)
    comparison = compare_sets(a, b, opts.cases, opts.thresholds)
    # A metric declared that neither set has is refused: a typo would change nothing.
    names = {
        key.metric_name
        for pair in comparison.pairs
        for key in [*(m.key for m in pair.metrics), *pair.only_a, *pair.only_b]
    }
    if found := undeclared(comparison.thresholds, names):
        flag, name, shown = found[0]
        raise UsageError(f"{flag} {name}: no metric of A or B has that name (theirs: {shown})")
    # The files first: one that cannot be written is exit 2 (bad input) before any verdict is
    # printed, so that "Worse in B" always comes with the exit 1 the help promises.
    if opts.markdown:
        write_text(opts.markdown, render_markdown(comparison))
    if opts.json:
        write_text(opts.json, dumps(set_comparison_json(comparison)))
    print(render_text(comparison, str(opts.markdown) if opts.markdown else None), end="")
    return 1 if comparison.worse() else 0
