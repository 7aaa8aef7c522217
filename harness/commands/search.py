"""``search``: the smallest size at which a case's claim fails (or holds), sizes from hypothesis."""

from __future__ import annotations

import sys

from harness.catalogue import search
from harness.catalogue.sizes import PlannedPoint
from harness.cli.search import SearchOptions
from harness.errors import UsageError
from harness.findings import nox_command
from harness.measure.cells import PlannedRun, describe, point_claim
from harness.measure.locks import stderr_line
from harness.measure.runner import Recorder
from harness.measure.sides import release_label, this_side
from harness.store.files import replace_file
from harness.units import sizes_text


def execute(opts: SearchOptions) -> int:
    check_installed_release(opts.jax, "search")
    side = this_side(opts.profile)

    def measure(point: dict[str, int]) -> tuple[bool | None, str]:
        [(_, cell_run, *_)] = recorder.run(PlannedRun(opts.case, PlannedPoint(point, "search")))
        assert cell_run is not None, "measured anew: resume is off"
        shown = sizes_text(point)
        stderr_line(f"[{side.label}] search {opts.case.name} {shown} → {describe(cell_run)}")
        return point_claim(cell_run, shown)

    with Recorder(opts.results, [side], opts.settings, opts.seed, opts.budget) as recorder:
        found = search.search(
            opts.case,
            measure,
            budget=opts.budget,
            want_holds=opts.holds,
            max_examples=opts.max_examples,
            confirm=opts.confirm,
            seed=opts.seed,
        )
    text = search.render(found, release=side.release, profile=opts.profile)
    opts.out.mkdir(parents=True, exist_ok=True)
    path = opts.out / f"search-{opts.case.name}-{'holds' if opts.holds else 'fails'}.md"
    # a link planted at this name in the reports folder is replaced, not followed
    replace_file(path, text)
    print(text)
    print(f"written: {path}", file=sys.stderr)
    return 0


def check_installed_release(jax: str | None, command: str) -> None:
    """``--jax V`` names the release nox installed; run elsewhere, the one installed must be V."""
    installed = release_label()
    if jax and jax != installed:
        raise UsageError(
            f"--jax {jax} asks for a release that is not installed here (jax {installed}): "
            f"`{nox_command(command, ['...'], ['--jax', jax], {}, '')}` installs it"
        )
