"""``python -m harness``: a thin layer over the pipeline modules.

Every user mistake becomes one line on stderr and exit code 2; a traceback here
means a bug in the harness, not in the input.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
from pathlib import Path

from harness import catalogue
from harness.compare import Thresholds
from harness.errors import HarnessError, UsageError
from harness.launch import ISOLATIONS, default_isolation
from harness.metric_names import MetricKey, parse_metric_name
from harness.release_index import version_key
from harness.runner import PlannedRun, Recorder, Settings, describe, run_all
from harness.sizes import DEFAULT_SEED, Budget, PlannedPoint

DEFAULT_RESULTS = Path("results")
# Samples per program and the sampling time budget per program, by effort: "quick" is for
# CI and a first look (20 samples are plenty for the report's significance test, which
# needs at least 7 a side), "full" for numbers to quote.
SAMPLING = {"quick": (20, 3.0), "full": (30, 10.0)}
DEFAULT_REPORTS = Path("reports")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def _factor(text: str) -> float:
    value = _positive_float(text)
    if value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be above 1 (1.10 means a 10 % change)")
    return value


def _probability(text: str) -> float:
    value = _positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def _add_threshold_options(parser: argparse.ArgumentParser) -> None:
    defaults = Thresholds()
    parser.add_argument(
        "--factor",
        type=_factor,
        default=defaults.factor,
        help=f"smallest ratio of medians that counts as a change (default {defaults.factor})",
    )
    parser.add_argument(
        "--alpha",
        type=_probability,
        default=defaults.alpha,
        help=f"significance level of the Mann–Whitney U test (default {defaults.alpha})",
    )


def thresholds_from(args: argparse.Namespace) -> Thresholds:
    return Thresholds(factor=args.factor, alpha=args.alpha)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m harness", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("run", help="run cases on the JAX installed here and store the results")
    run.add_argument("--case", action="append", default=[], help="case to run (repeatable; default: all)")
    run.add_argument("--profile", default="default", help="label of the device profile (set by nox)")
    run.add_argument("--effort", choices=catalogue.EFFORTS, default="quick")
    run.add_argument("--size", action="append", default=[], help="NAME=INTEGER, overrides the effort's sizes")
    run.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the sizes drawn for --effort full")
    run.add_argument(
        "--budget",
        action="append",
        default=[],
        help="memory=SIZE or flops=N: refuse size points whose estimated cost exceeds it "
        "(default: half the available memory, 5e11 flops per call)",
    )
    run.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    run.add_argument("--cases-dir", type=Path, default=catalogue.DEFAULT_CASES_DIR)
    run.add_argument("--timeout", type=_positive_float, default=Settings.timeout_s, help="seconds per case run")
    run.add_argument(
        "--repeats",
        type=_positive_int,
        help="samples per program (default: " + ", ".join(f"{e} {r}" for e, (r, _) in SAMPLING.items()) + ")",
    )
    run.add_argument("--warmup", type=_positive_int, default=Settings.warmup)
    run.add_argument(
        "--max-seconds",
        type=_positive_float,
        help="stop sampling a program after this much measured time, with at least 5 samples (default: "
        + ", ".join(f"{e} {s:g} s" for e, (_, s) in SAMPLING.items())
        + ")",
    )
    run.add_argument("--strict", action="store_true", help="exit 1 when any case run is not ok or skipped")
    run.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        help="fork: each case in a fork of a server that imported JAX once (fast start); "
        "spawn: each case in a new interpreter (default: fork, spawn when JAX_PLATFORMS pins a GPU)",
    )
    run.add_argument("--force", action="store_true", help="re-measure cells already stored in the results folder")
    run.add_argument(
        "--retry-failed", action="store_true", help="re-measure stored cells whose run failed, timed out or crashed"
    )

    finder = commands.add_parser("search", help="find the smallest size at which a case's claim fails")
    finder.add_argument("case")
    finder.add_argument("--holds", action="store_true", help="look for the smallest size where the claim holds")
    finder.add_argument("--profile", default="default", help="label of the device profile (set by nox)")
    finder.add_argument("--size", action="append", default=[], help="NAME=INTEGER: pin a size, search the others")
    finder.add_argument("--max-examples", type=_positive_int, default=20, help="sizes hypothesis may try")
    finder.add_argument("--confirm", type=_positive_int, default=2, help="re-measurements that must agree")
    finder.add_argument("--seed", type=int, default=DEFAULT_SEED)
    finder.add_argument("--budget", action="append", default=[], help="as for run")
    finder.add_argument("--repeats", type=_positive_int, default=10)
    finder.add_argument("--timeout", type=_positive_float, default=Settings.timeout_s)
    finder.add_argument("--max-seconds", type=_positive_float, default=3.0)
    finder.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    finder.add_argument("--out", type=Path, default=DEFAULT_REPORTS)
    finder.add_argument("--cases-dir", type=Path, default=catalogue.DEFAULT_CASES_DIR)

    exporter = commands.add_parser("export", help="print a case's standalone script (jax, numpy, stdlib only)")
    _script_options(exporter)
    exporter.add_argument("--out", type=Path, help="write the script here instead of printing it")

    drafter = commands.add_parser("issue", help="draft an upstream issue: export, run the script here, render")
    _script_options(drafter)
    drafter.add_argument("--profile", default="default", help="label of the device profile (set by nox)")
    drafter.add_argument("--timeout", type=_positive_float, default=Settings.timeout_s, help="seconds for the script")
    drafter.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    drafter.add_argument("--out", type=Path, default=DEFAULT_REPORTS, help="reports folder: bisect-*.json, issues/")

    report = commands.add_parser("report", help="render stored results as markdown: an index and a page per case")
    report.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    report.add_argument("--out", type=Path, default=DEFAULT_REPORTS)
    report.add_argument("--baseline", metavar="VERSION", help="release to compare against (default: the oldest)")
    _add_threshold_options(report)

    compare = commands.add_parser(
        "compare",
        help="compare two result sets; exit 1 when something got significantly worse in B",
        description="Compare result set B against A, metric by metric. A and B are results folders (B defaults "
        "to A), narrowed by release, profile and case. Exit status: 0 nothing worse, 1 something significantly "
        "slower or broken in B, 2 bad input.",
    )
    compare.add_argument("a", type=Path, metavar="A", help="results folder of the baseline set")
    compare.add_argument("b", type=Path, metavar="B", nargs="?", help="results folder of the other set (default: A)")
    for side in ("a", "b"):
        name = side.upper()
        compare.add_argument(f"--{side}-release", metavar="VERSION", help=f"only results of this release in {name}")
        compare.add_argument(f"--{side}-profile", metavar="NAME", help=f"only results of this profile in {name}")
    compare.add_argument("--case", action="append", default=[], help="case to compare (repeatable; default: all)")
    compare.add_argument("--markdown", type=Path, metavar="FILE", help="also write the comparison as markdown")
    _add_threshold_options(compare)

    bisector = commands.add_parser(
        "bisect",
        help="find the first release where a metric (or the claim) changed (run through nox -s bisect)",
        description="Bisect the jax releases from --good to --bad: probe each release in its own cached venv, "
        "judge it good or bad by the statistics against both endpoints. Exit status: 0 a first bad release "
        "was found, 1 none could be named, 2 bad input.",
    )
    _release_range_options(bisector, "--good", "--bad", "release with the old behaviour", "release with the new one")
    sweeper = commands.add_parser(
        "sweep",
        help="measure every release in a range and report each significant step (run through nox -s sweep)",
        description="Measure a case on every jax release from --from to --to and report where a metric (default: "
        "every metric and the claim) changes significantly between consecutive releases.",
    )
    _release_range_options(sweeper, "--from", "--to", "first release of the range", "last release of the range")
    merger = commands.add_parser(
        "merge",
        help="copy results from many folders (CI artifacts, other machines) into one, each result once",
        description="Copy every result under the SOURCE folders into --into, where it would have been stored. "
        "A result already there with the same content counts once; one line per file that is left out. "
        "Exit status: 0 all usable, 1 a file was left out, 2 bad input.",
    )
    merger.add_argument("sources", type=Path, nargs="+", metavar="SOURCE", help="results folders to take from")
    merger.add_argument("--into", type=Path, required=True, metavar="DIR", help="results folder to merge into")

    listing = commands.add_parser("list", help="list the cases and their claims")
    listing.add_argument("--cases-dir", type=Path, default=catalogue.DEFAULT_CASES_DIR)
    return parser


def _release_range_options(
    parser: argparse.ArgumentParser, first: str, last: str, first_help: str, last_help: str
) -> None:
    parser.add_argument("case")
    parser.add_argument(first, dest="first", metavar="VERSION", required=True, help=first_help)
    parser.add_argument(last, dest="last", metavar="VERSION", required=True, help=last_help)
    criterion = parser.add_mutually_exclusive_group(required=parser.prog.endswith("bisect"))
    criterion.add_argument("--metric", help="PROGRAM.KIND, e.g. two_scans.dispatch_ns or scan.compile_ns")
    criterion.add_argument("--claim", action="store_true", help="judge by the case's claim verdict instead")
    parser.add_argument("--size", action="append", default=[], help="NAME=INTEGER (default: the case's first anchor)")
    parser.add_argument("--profile", default="default", help="label of the device profile (set by nox)")
    parser.add_argument("--releases", type=Path, help="the release plan nox writes: what each release installs")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results are reused and stored here")
    parser.add_argument("--out", type=Path, default=DEFAULT_REPORTS)
    parser.add_argument("--repeats", type=_positive_int, default=15)
    parser.add_argument("--warmup", type=_positive_int, default=Settings.warmup)
    parser.add_argument("--max-seconds", type=_positive_float, default=5.0)
    parser.add_argument("--timeout", type=_positive_float, default=Settings.timeout_s, help="seconds per case run")
    parser.add_argument("--cases-dir", type=Path, default=catalogue.DEFAULT_CASES_DIR)
    _add_threshold_options(parser)


def _script_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case")
    parser.add_argument("--size", action="append", default=[], help="NAME=INTEGER (default: the case's first anchor)")
    parser.add_argument("--repeats", type=_positive_int, default=Settings.repeats)
    parser.add_argument("--warmup", type=_positive_int, default=Settings.warmup)
    parser.add_argument("--max-seconds", type=_positive_float, default=Settings.max_seconds)
    parser.add_argument("--cases-dir", type=Path, default=catalogue.DEFAULT_CASES_DIR)


def _script_case(args: argparse.Namespace) -> tuple[catalogue.CaseInfo, dict[str, int], Settings]:
    from harness.export import script_sizes

    [case] = catalogue.select(catalogue.discover(args.cases_dir), [args.case])
    sizes = script_sizes(case, dict(catalogue.parse_size(text) for text in args.size))
    settings = Settings(
        timeout_s=getattr(args, "timeout", Settings.timeout_s),
        warmup=args.warmup,
        repeats=args.repeats,
        min_repeats=min(5, args.repeats),
        max_seconds=args.max_seconds,
    )
    return case, sizes, settings


def _results_folder(path: Path) -> Path:
    if path.exists() and not path.is_dir():
        raise UsageError(f"results folder {path} is a file")
    return path


def checked_run_args(args: argparse.Namespace) -> tuple[list[catalogue.CaseInfo], dict[str, int], Budget]:
    """Every check of ``run`` that needs neither JAX nor hypothesis (the noxfile calls it too)."""
    cases = catalogue.select(catalogue.discover(args.cases_dir), args.case)
    overrides = dict(catalogue.parse_size(text) for text in args.size)
    catalogue.check_overrides(cases, overrides)
    _results_folder(args.results)
    if args.force and args.retry_failed:
        raise UsageError("--force and --retry-failed exclude each other")
    return cases, overrides, Budget.for_this_machine(args.budget)


def checked_search_args(args: argparse.Namespace) -> tuple[catalogue.CaseInfo, Budget]:
    [case] = catalogue.select(catalogue.discover(args.cases_dir), [args.case])
    pinned = dict(catalogue.parse_size(text) for text in args.size)
    catalogue.check_overrides([case], pinned)
    _results_folder(args.results)
    return dataclasses.replace(case, space=case.space.fixed(pinned)), Budget.for_this_machine(args.budget)


def checked_range_args(args: argparse.Namespace) -> tuple[catalogue.CaseInfo, dict[str, int], MetricKey | None]:
    """Every check of ``bisect`` and ``sweep`` that needs neither JAX nor the package index."""
    from harness.export import script_sizes

    [case] = catalogue.select(catalogue.discover(args.cases_dir), [args.case])
    sizes = script_sizes(case, dict(catalogue.parse_size(text) for text in args.size))
    metric = parse_metric_name(args.metric) if args.metric else None
    if args.first == args.last:
        raise UsageError(f"the two ends of the range are the same release ({args.first})")
    if version_key(args.first) >= version_key(args.last):
        raise UsageError(f"the range must run from an older release to a newer one, not {args.first} to {args.last}")
    _results_folder(args.results)
    return case, sizes, metric


def release_range(argv: list[str]) -> tuple[str, str]:
    """The two ends of a ``bisect`` or ``sweep`` command line, after every check of it (UsageError)."""
    args = build_parser().parse_args(argv)
    checked_range_args(args)
    return args.first, args.last


def validate(argv: list[str]) -> None:
    """Raise UsageError for a command line the harness would refuse, without running anything."""
    args = build_parser().parse_args(argv)
    if args.command == "run":
        checked_run_args(args)
    elif args.command == "search":
        checked_search_args(args)
    elif args.command in ("export", "issue"):
        _script_case(args)
    elif args.command in ("bisect", "sweep"):
        checked_range_args(args)


def cmd_run(args: argparse.Namespace) -> int:
    cases, overrides, budget = checked_run_args(args)
    plan = [
        PlannedRun(case, point)
        for case in cases
        for point in case.plan(args.effort, overrides, seed=args.seed, budget=budget)
    ]
    if not plan:
        raise UsageError(f"nothing to run: no size points for effort {args.effort!r}")
    default_repeats, default_seconds = SAMPLING[args.effort]
    repeats = args.repeats or default_repeats
    settings = Settings(
        timeout_s=args.timeout,
        warmup=args.warmup,
        repeats=repeats,
        min_repeats=min(5, repeats),
        max_seconds=args.max_seconds or default_seconds,
        effort=args.effort,
        isolation=args.isolation or default_isolation(),
    )
    recorder = Recorder(args.results, args.profile, settings, args.seed, budget)
    resume = "force" if args.force else "retry-failed" if args.retry_failed else "skip"
    outcomes = run_all(plan, recorder, resume=resume)
    counts: dict[str, int] = {}
    for outcome, _ in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    stored = sum(1 for _, path in outcomes if path is not None)
    print(f"{len(outcomes)} cells, {stored} results stored under {args.results}: {summary}", file=sys.stderr)
    bad = sum(n for status, n in counts.items() if status not in ("ok", "skipped", "already measured"))
    return 1 if args.strict and bad else 0


def cmd_search(args: argparse.Namespace) -> int:
    from harness import search

    case, budget = checked_search_args(args)
    settings = Settings(
        timeout_s=args.timeout, repeats=args.repeats, min_repeats=min(5, args.repeats), max_seconds=args.max_seconds
    )
    recorder = Recorder(args.results, args.profile, settings, args.seed, budget)

    def measure(point: dict[str, int]) -> tuple[bool | None, str]:
        outcome, _ = recorder.run(PlannedRun(case, PlannedPoint(point, "search")))
        sizes_text = " ".join(f"{k}={v}" for k, v in sorted(point.items()))
        print(
            f"[jax {recorder.release} · {args.profile}] search {case.name} {sizes_text} → {describe(outcome)}",
            file=sys.stderr,
            flush=True,
        )
        claim = outcome.payload.get("claim")
        if outcome.status != "ok" or not claim:
            return None, f"{sizes_text}: {outcome.status}"
        return bool(claim["holds"]), f"{sizes_text}: {claim['evidence']}"

    found = search.search(
        case,
        measure,
        budget=budget,
        want_holds=args.holds,
        max_examples=args.max_examples,
        confirm=args.confirm,
        seed=args.seed,
    )
    text = search.render(found, release=recorder.release, profile=args.profile)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"search-{case.name}-{'holds' if args.holds else 'fails'}.md"
    path.write_text(text)
    print(text)
    print(f"written: {path}", file=sys.stderr)
    return 0


def cmd_bisect(args: argparse.Namespace) -> int:
    from harness.release_search import run_bisect

    return run_bisect(args, *checked_range_args(args), thresholds_from(args))


def cmd_sweep(args: argparse.Namespace) -> int:
    from harness.release_search import run_sweep

    return run_sweep(args, *checked_range_args(args), thresholds_from(args))


def cmd_export(args: argparse.Namespace) -> int:
    from harness.export import export_script

    case, sizes, settings = _script_case(args)
    script = export_script(case, sizes, settings.for_child())
    if args.out is None:
        print(script, end="")
    else:
        args.out.write_text(script)
        print(f"written: {args.out}", file=sys.stderr)
    return 0


def cmd_issue(args: argparse.Namespace) -> int:
    from harness.issue import write_issue

    case, sizes, settings = _script_case(args)
    shown = " ".join(f"{k}={v}" for k, v in sizes.items())
    print(f"[{args.profile}] running the exported {case.name} script at {shown} …", file=sys.stderr, flush=True)
    written = write_issue(case, sizes, settings, profile=args.profile, results_dir=args.results, out_dir=args.out)
    for problem in written.problems:
        print(f"skipped unusable result {problem}", file=sys.stderr)
    print(written.run.stdout, end="")
    print(f"draft written: {written.draft} (script: {written.script})", file=sys.stderr)
    if not written.run.ok:
        failure = "timed out" if written.run.returncode is None else f"exited with code {written.run.returncode}"
        print(f"harness: the exported script {failure}; the draft shows its output", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from harness.report import write_report

    if not args.results.is_dir():
        raise UsageError(f"results folder not found: {args.results} (run a repro session first)")
    written, problems, plots = write_report(
        args.results, args.out, baseline=args.baseline, thresholds=thresholds_from(args)
    )
    for problem in problems:
        print(f"skipped unusable result {problem}", file=sys.stderr)
    if plots.missing_reason:
        print(f"plots not drawn: {plots.missing_reason}", file=sys.stderr)
    print(f"report written: {len(written)} page(s) under {args.out}, start at {written[0]}", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.compare_sets import Side, compare_sets, render_markdown, render_text

    a = Side("A", args.a, args.a_release, args.a_profile)
    b = Side("B", args.b or args.a, args.b_release, args.b_profile)
    comparison = compare_sets(a, b, args.case, thresholds_from(args))
    print(render_text(comparison), end="")
    if args.markdown:
        try:
            args.markdown.write_text(render_markdown(comparison))
        except OSError as exc:
            raise UsageError(f"cannot write {args.markdown}: {exc.strerror}") from None
    return 1 if comparison.worse() else 0


def cmd_merge(args: argparse.Namespace) -> int:
    from harness.merge import merge

    merged = merge(args.sources, args.into)
    for problem in merged.problems:
        print(f"left out {problem}", file=sys.stderr)
    print(
        f"merged into {args.into}: {len(merged.copied)} copied, {merged.duplicates} already there, "
        f"{len(merged.problems)} left out",
        file=sys.stderr,
    )
    return 1 if merged.problems else 0


def cmd_list(args: argparse.Namespace) -> int:
    for case in catalogue.discover(args.cases_dir).values():
        space = ", ".join(f"{name} in [{lo}, {hi}]" for name, (lo, hi) in case.space.ranges.items())
        anchors = "; ".join(" ".join(f"{k}={v}" for k, v in a.items()) for a in case.anchors)
        print(f"{case.name}\n    claim: {case.claim}\n    sizes: {space}\n    anchors (quick): {anchors}")
    return 0


COMMANDS = {
    "run": cmd_run,
    "search": cmd_search,
    "export": cmd_export,
    "issue": cmd_issue,
    "report": cmd_report,
    "compare": cmd_compare,
    "bisect": cmd_bisect,
    "sweep": cmd_sweep,
    "merge": cmd_merge,
    "list": cmd_list,
}


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C so the running case is killed and nothing is half-written."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except HarnessError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        print(
            "harness: interrupted; every result stored so far is kept, run the same command to resume", file=sys.stderr
        )
        return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)
