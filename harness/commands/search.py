"""``search``: the smallest size at which a case's claim fails (or holds), sizes proposed by hypothesis."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from harness.catalogue import discovery
from harness.catalogue.sizes import Budget, PlannedPoint
from harness.claim_rule import MIN_CLAIM_PROCESSES
from harness.commands import Command, options
from harness.errors import UsageError
from harness.measure.runner import PlannedRun, Recorder, describe, point_claim, release_label, this_side
from harness.store.files import replace_file
from harness.store.schema import Settings
from harness.units import sizes_text


@dataclass(frozen=True)
class SearchOptions:
    case: discovery.CaseInfo  # its size space with the pinned sizes fixed
    budget: Budget
    holds: bool
    max_examples: int
    confirm: int
    seed: int
    results: Path
    out: Path
    profile: str
    jax: str | None
    settings: Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_case(parser)
    parser.add_argument("--holds", action="store_true", help="look for the smallest size where the claim holds")
    options.add_session(parser, release=True)
    options.add_sizes(parser, "pin a size, search the others")
    parser.add_argument("--max-examples", type=options.positive_int, default=20, help="sizes hypothesis may try")
    parser.add_argument("--confirm", type=options.positive_int, default=2, help="re-measurements that must agree")
    options.add_draws(parser)
    options.add_sampling(parser)
    options.add_processes(parser)
    options.add_results(parser)
    options.add_out(parser)


def check(args: argparse.Namespace) -> SearchOptions:
    case = options.case_from(args)
    pinned = discovery.parse_sizes(args.size)
    discovery.check_overrides([case], pinned)
    processes = options.processes_from(args)
    if processes < MIN_CLAIM_PROCESSES:
        raise UsageError(
            f"--processes {processes}: a claim is settled over at least {MIN_CLAIM_PROCESSES} processes a size"
        )
    return SearchOptions(
        case=replace(case, space=case.space.fixed(pinned)),
        budget=Budget.for_this_machine(args.budget),
        holds=args.holds,
        max_examples=args.max_examples,
        confirm=args.confirm,
        seed=args.seed,
        results=options.results_folder(args.results),
        out=options.output_folder(args.out),
        profile=options.profile_label(args),
        jax=args.jax,
        settings=options.sampling_from(args, **options.process_settings(args)),
    )


def execute(opts: SearchOptions) -> int:
    from harness.catalogue import search

    check_installed_release(opts.jax, "search")
    side = this_side(opts.profile)

    def measure(point: dict[str, int]) -> tuple[bool | None, str]:
        [(_, cell_run, _)] = recorder.run(PlannedRun(opts.case, PlannedPoint(point, "search")))
        assert cell_run is not None, "measured anew: resume is off"
        shown = sizes_text(point)
        print(f"[{side.label}] search {opts.case.name} {shown} → {describe(cell_run)}", file=sys.stderr, flush=True)
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
    replace_file(path, text)  # a link planted at this name in the reports folder is replaced, not followed
    print(text)
    print(f"written: {path}", file=sys.stderr)
    return 0


def check_installed_release(jax: str | None, command: str) -> None:
    """``--jax V`` names the release nox installed; run elsewhere, the one installed must be V."""
    installed = release_label()
    if jax and jax != installed:
        raise UsageError(
            f"--jax {jax} asks for a release that is not installed here (jax {installed}): "
            f"`nox -s {command} -- ... --jax {jax}` installs it"
        )


COMMAND = Command(
    name="search",
    summary="find the smallest size at which a case's claim fails (or, --holds, holds)",
    description="Let hypothesis propose sizes of the case's space, measure each in several processes, settle the "
    "claim over them, and shrink to the smallest size where it fails (or holds), confirmed by measuring again.",
    exit_codes="0 searched (the page says what was found), 2 bad input",
    add_arguments=add_arguments,
    check=check,
    execute=execute,
)
