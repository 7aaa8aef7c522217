"""The command line of ``python -m harness``: every subcommand, its options and their types.

A malformed command line raises UsageError, which the CLI prints as one line with
exit code 2, instead of argparse printing its usage text.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from harness.analysis.metric_names import KIND_LABELS
from harness.analysis.power import DETECTION_POWER
from harness.analysis.significance import Thresholds
from harness.catalogue import discovery
from harness.catalogue.sizes import DEFAULT_SEED
from harness.errors import UsageError
from harness.measure.affinity import parse_cpu_list
from harness.measure.launch import ISOLATIONS
from harness.measure.load import DEFAULT_FLAG_CORES
from harness.measure.runner import Settings
from harness.names import name_problem, path_problem

DEFAULT_RESULTS = Path("results")
# Samples per program and the sampling time budget per program in each case process, by
# effort: "quick" is for CI and a first look, "full" for numbers to quote.  Each cell runs
# in PROCESSES case processes (a side), since the level a process sets varies more than
# its samples do: the spread between processes is what a comparison must see.
SAMPLING = {"quick": (10, 0.5), "full": (20, 2.0)}
PROCESSES = {"quick": 5, "full": 10}
DEFAULT_MAX_PROCESSES = 20
DEFAULT_REPORTS = Path("reports")
# The profile label of a search, issue, bisect or sweep run outside nox without --profile.
UNPINNED_PROFILE = "default"
CALIBRATION_CASE = "scan_sync"
SCRIPT_HELP = (
    "a plain repro script, run as `python FILE` once per process and judged on the `metric ...` lines it "
    "prints, else on its whole-process wall time (process.wall_ns); see README 'A plain script'"
)  # a claim every release has, with a wall time that a 10 % larger size raises


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _positive_int(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,9}", text.strip()):  # ASCII digits: int() also takes "１２" and "1_000"
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number of at most 9 digits")
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be a finite positive number")
    return value


def _path(text: str) -> Path:
    """A folder or file named on the command line; an empty name would quietly mean the current folder."""
    if problem := path_problem(text):
        raise argparse.ArgumentTypeError(problem)
    return Path(text)


def release_version(text: str) -> str:
    """A jax release number as the package index spells it, e.g. 0.4.31 or 0.12.0.1."""
    if not re.fullmatch(r"[0-9]{1,4}(\.[0-9]{1,4}){1,3}((a|b|rc|\.post|\.dev)[0-9]{1,4})?", text):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a jax release number such as 0.4.31")
    return text


def _label(text: str) -> str:
    """A profile label: it becomes part of the results folder's paths."""
    problem = name_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"profile label {problem}")
    return text


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be zero or more")
    return value


def _cpu_list(text: str) -> list[int]:
    try:
        return parse_cpu_list(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_process_options(parser: argparse.ArgumentParser, processes_help: str) -> None:
    """How each cell is measured: in how many case processes, pinned where, on how loaded a machine."""
    parser.add_argument("--processes", type=_positive_int, metavar="K", help=processes_help)
    parser.add_argument(
        "--min-sample-time",
        type=_non_negative_float,
        metavar="SECONDS",
        help="a program shorter than this is repeated within one sample, which stores the mean per iteration "
        f"(default {Settings.min_sample_ns / 1e9:g}; 0: one iteration per sample)",
    )
    parser.add_argument(
        "--affinity",
        type=_cpu_list,
        metavar="CPUS",
        help="pin every case process to these CPUs before JAX starts, e.g. 0 or 0,1 or 0-3 (default: not pinned)",
    )
    parser.add_argument(
        "--max-load",
        type=_non_negative_float,
        metavar="CORES",
        help="measure a case process again (up to 3 attempts, a second apart) when other processes kept more than "
        f"this many cores busy while it ran (default: flag a process over {DEFAULT_FLAG_CORES:g} cores, never "
        "measure again)",
    )


def _factor(text: str) -> float:
    value = _positive_float(text)
    if value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be above 1 (1.10 means a 10 % change)")
    return value


def _target_ratio(text: str) -> float:
    value = _factor(text)
    least = Thresholds().factor
    if value < least:
        raise argparse.ArgumentTypeError(
            f"{text!r} is below ×{least}: the rule flags no change smaller than its factor, so no number of "
            "processes could reach it"
        )
    return value


def _spread(text: str) -> float:
    value = _non_negative_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be below 1 (0.05: about 5 %)")
    return value


def _probability(text: str) -> float:
    value = _positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def _session_options(parser: argparse.ArgumentParser, *, release: bool) -> None:
    """``--profile`` (and ``--jax``) of a command whose nox session pins them (``cli.session_view``)."""
    parser.add_argument(
        "--profile",
        type=_label,
        help="device profile: under nox one of the profile table, whose flags it sets (default cpu); "
        f"run directly, a label (default {UNPINNED_PROFILE!r})",
    )
    if release:
        parser.add_argument(
            "--jax",
            metavar="VERSION",
            type=release_version,
            help="release that nox installs (search: of the release table; issue: any on the package index; "
            "default: the table's newest); run directly without a release plan, the jax installed here must be it",
        )


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
        help=f"significance level of the verdict's test (default {defaults.alpha})",
    )
    parser.add_argument(
        "--invocation-spread",
        type=_spread,
        default=defaults.invocation_spread,
        metavar="SD",
        help="how far a whole run's level moves between separate invocations (log standard deviation; "
        "`calibrate` measures this machine's), allowed for when compared results come from separate runs "
        f"(default {defaults.invocation_spread})",
    )


def thresholds_from(args: argparse.Namespace) -> Thresholds:
    return Thresholds(factor=args.factor, alpha=args.alpha, invocation_spread=args.invocation_spread)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m harness", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("run", help="run cases on the JAX installed here and store the results")
    run.add_argument("--case", action="append", default=[], help="case to run (repeatable; default: all)")
    run.add_argument("--script", type=_path, metavar="FILE", help=SCRIPT_HELP + " instead of cases")
    run.add_argument("--profile", type=_label, help="label of the device profile (set by nox; default: default)")
    run.add_argument(
        "--sides",
        type=_path,
        metavar="PLAN.json",
        help="measure on each side this plan lists (release venv, environment, release and profile labels), "
        "one case process per side in turn; see README 'Sides' (default: this interpreter, --profile)",
    )
    run.add_argument("--effort", choices=discovery.EFFORTS, default="quick")
    run.add_argument("--size", action="append", default=[], help="NAME=INTEGER, overrides the effort's sizes")
    run.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the sizes drawn for --effort full")
    run.add_argument(
        "--budget",
        action="append",
        default=[],
        help="memory=SIZE or flops=N: refuse size points whose estimated cost exceeds it "
        "(default: half the available memory, 5e11 flops per call)",
    )
    run.add_argument("--results", type=_path, default=DEFAULT_RESULTS)
    run.add_argument("--cases-dir", type=_path, default=discovery.DEFAULT_CASES_DIR)
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
    _add_process_options(
        run,
        "case processes per cell and side, each with its own warm-up (default: "
        + ", ".join(f"{e} {k}" for e, k in PROCESSES.items())
        + ")",
    )
    run.add_argument(
        "--target-ratio",
        type=_target_ratio,
        metavar="R",
        help="after --processes rounds, add rounds of processes to a cell until its sides' processes could detect "
        f"a change of ×R (median over its metrics, in {DETECTION_POWER:.0%} of comparisons, read from the spread "
        "within each side, never from the difference between them), or until --max-processes",
    )
    run.add_argument(
        "--target-kind",
        action="append",
        choices=list(KIND_LABELS),
        default=[],
        help="with --target-ratio: judge only metrics of this kind (repeatable; default: every metric), e.g. wall "
        "when execution time is what matters and cold compiles scatter too much to ever reach the target",
    )
    run.add_argument(
        "--max-processes",
        type=_positive_int,
        metavar="K",
        help=f"with --target-ratio: the most processes per cell and side (default {DEFAULT_MAX_PROCESSES}, as "
        "pyperf's default count of processes)",
    )
    run.add_argument("--strict", action="store_true", help="exit 1 when any case run is not ok or skipped")
    run.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        help="fork: each case process a fork of a worker that imported JAX once (fast start); "
        "spawn: each case process a new interpreter (default: fork, spawn when JAX_PLATFORMS pins a GPU)",
    )
    run.add_argument("--force", action="store_true", help="re-measure cells already stored in the results folder")
    run.add_argument(
        "--retry-failed", action="store_true", help="re-measure stored cells whose run failed, timed out or crashed"
    )

    finder = commands.add_parser("search", help="find the smallest size at which a case's claim fails")
    finder.add_argument("case")
    finder.add_argument("--holds", action="store_true", help="look for the smallest size where the claim holds")
    _session_options(finder, release=True)
    finder.add_argument("--size", action="append", default=[], help="NAME=INTEGER: pin a size, search the others")
    finder.add_argument("--max-examples", type=_positive_int, default=20, help="sizes hypothesis may try")
    finder.add_argument("--confirm", type=_positive_int, default=2, help="re-measurements that must agree")
    finder.add_argument("--seed", type=int, default=DEFAULT_SEED)
    finder.add_argument("--budget", action="append", default=[], help="as for run")
    finder.add_argument("--repeats", type=_positive_int, default=10)
    finder.add_argument("--timeout", type=_positive_float, default=Settings.timeout_s)
    finder.add_argument("--max-seconds", type=_positive_float, default=3.0)
    _add_process_options(
        finder, "case processes per size point; the claim must agree in every one that finishes (default 1)"
    )
    finder.add_argument("--results", type=_path, default=DEFAULT_RESULTS)
    finder.add_argument("--out", type=_path, default=DEFAULT_REPORTS)
    finder.add_argument("--cases-dir", type=_path, default=discovery.DEFAULT_CASES_DIR)

    exporter = commands.add_parser("export", help="print a case's standalone script (jax, numpy, stdlib only)")
    _script_options(exporter)
    exporter.add_argument("--out", type=_path, help="write the script here instead of printing it")

    drafter = commands.add_parser("issue", help="draft an upstream issue: export, run the script here, render")
    _script_options(drafter, script=True)
    _session_options(drafter, release=True)
    drafter.add_argument("--timeout", type=_positive_float, default=Settings.timeout_s, help="seconds for the script")
    drafter.add_argument("--results", type=_path, default=DEFAULT_RESULTS)
    drafter.add_argument("--out", type=_path, default=DEFAULT_REPORTS, help="reports folder: bisect-*.json, issues/")
    drafter.add_argument(
        "--good", type=release_version, metavar="VERSION", help="last release with the old behaviour (default: "
        "the stored bisect answer's last good release); with --bad"
    )  # fmt: skip
    drafter.add_argument(
        "--bad", type=release_version, metavar="VERSION", help="first release with the new behaviour (default: "
        "the stored bisect answer's first bad release); with --good"
    )  # fmt: skip
    drafter.add_argument(
        "--metric", help="PROGRAM.KIND_ns the title quotes (default: the bisect's, else the one that changed most)"
    )
    drafter.add_argument(
        "--releases", type=_path, metavar="PLAN", help="the release plan nox writes: every release on the index and "
        "what it installs; the scripts then run in those releases' venvs"
    )  # fmt: skip

    report = commands.add_parser("report", help="render stored results as markdown: an index and a page per case")
    report.add_argument("--results", type=_path, default=DEFAULT_RESULTS)
    report.add_argument("--out", type=_path, default=DEFAULT_REPORTS)
    report.add_argument("--baseline", metavar="VERSION", help="release to compare against (default: the oldest)")
    _add_threshold_options(report)

    compare = commands.add_parser(
        "compare",
        help="compare two result sets; exit 1 when something got significantly worse in B",
        description="Compare result set B against A, metric by metric. A and B are results folders (B defaults "
        "to A), narrowed by release, profile and case. Exit status: 0 nothing worse, 1 something significantly "
        "slower or broken in B, 2 bad input.",
    )
    compare.add_argument("a", type=_path, metavar="A", help="results folder of the baseline set")
    compare.add_argument("b", type=_path, metavar="B", nargs="?", help="results folder of the other set (default: A)")
    for side in ("a", "b"):
        name = side.upper()
        compare.add_argument(f"--{side}-release", metavar="VERSION", help=f"only results of this release in {name}")
        compare.add_argument(f"--{side}-profile", metavar="NAME", help=f"only results of this profile in {name}")
    compare.add_argument("--case", action="append", default=[], help="case to compare (repeatable; default: all)")
    compare.add_argument("--markdown", type=_path, metavar="FILE", help="also write the comparison as markdown")
    _add_threshold_options(compare)

    bisector = commands.add_parser(
        "bisect",
        help="find the first release where a metric (or the claim) changed (run through nox -s bisect)",
        description="Bisect the jax releases from --good to --bad: probe each release in its own cached venv, "
        "judge it good or bad by the statistics against both endpoints. Exit status: 0 a first bad release "
        "was found, 1 none could be named, 2 bad input.",
    )
    _release_range_options(
        bisector, "--good", "--bad", "release with the old behaviour", "release with the new one", required=False
    )
    bisector.add_argument(
        "--broken", metavar="VERSION", help="instead of --good: a release with the problem, to find the fix"
    )
    bisector.add_argument(
        "--fixed", metavar="VERSION", help="instead of --bad: a newer release without it (the answer: fixed in W)"
    )
    sweeper = commands.add_parser(
        "sweep",
        help="measure every release in a range and report each significant step (run through nox -s sweep)",
        description="Measure a case on every jax release from --from to --to and report where a metric (default: "
        "every metric and the claim) changes significantly between consecutive releases.",
    )
    _release_range_options(sweeper, "--from", "--to", "first release of the range", "last release of the range")
    triager = commands.add_parser(
        "triage",
        help="measure every release in a range, confirm each step by measuring again, answer per change "
        "(run through nox -s triage)",
        description="Measure a case on every jax release from --from to --to (default: the release table's oldest "
        "to newest) in one interleaved run, find every step between consecutive releases (regressions and fixes), "
        "measure the two releases around each step again together in twice the processes, and answer once per "
        "step that holds. Exit status: 0 a change was confirmed, 1 none, 2 bad input.",
    )
    _release_range_options(
        triager, "--from", "--to", "first release (default: the table's oldest)",
        "last release (default: the table's newest)", required=False,
    )  # fmt: skip
    merger = commands.add_parser(
        "merge",
        help="copy results from many folders (CI artifacts, other machines) into one, each result once",
        description="Copy every result under the SOURCE folders into --into, where it would have been stored. "
        "A result already there with the same content counts once; one line per file that is left out. "
        "Exit status: 0 all usable, 1 a file was left out, 2 bad input.",
    )
    merger.add_argument("sources", type=_path, nargs="+", metavar="SOURCE", help="results folders to take from")
    merger.add_argument("--into", type=_path, required=True, metavar="DIR", help="results folder to merge into")

    calibrator = commands.add_parser(
        "calibrate",
        help="measure this machine's noise floor: verdicts between separate runs of one release, and a real slowdown",
        description="Run a case PAIRS times as an A/A pair (two separate `harness run` invocations of the installed "
        "release, into temporary folders), compare each pair by the verdict over processes, then SLOWDOWNS times "
        "unchanged and with one size raised by 10 %, the two interleaved in one run, and compare those. "
        "Appends the false-positive rate "
        "and the ratios flagged to RESULTS/calibration/<machine-id>.json and prints them in one sentence. Options "
        "after -- go to every run, e.g. -- --effort full --timeout 60.",
    )
    _calibrate_options(calibrator)

    listing = commands.add_parser(
        "list",
        help="list the cases and their claims; with CASE, its sizes, programs and metric names",
        description="Without CASE: every case, its claim, sizes and anchors, and each case file that cannot be "
        "read, with the reason (exit 1 then). With CASE: its source, claim, sizes, anchors, programs, jitted "
        "functions and the metric names bisect and sweep accept, read from the case file without running it.",
    )
    listing.add_argument("case", nargs="?", help="a case to show in full")
    listing.add_argument("--cases-dir", type=_path, default=discovery.DEFAULT_CASES_DIR)

    scaffold = commands.add_parser(
        "new",
        help="write a working template case to cases/NAME.py, to edit from there",
        description="Write cases/NAME.py from the template: a case that runs, passes the linters and the tests, "
        "and exports; its TODO lines say what to replace (cases/README.md has the checklist). Refuses a name "
        "that is taken or a file that exists.",
    )
    scaffold.add_argument("name", help="the new case's name: lower case letters, digits and _, a letter first")
    scaffold.add_argument("--cases-dir", type=_path, default=discovery.DEFAULT_CASES_DIR)
    return parser


def add_target(parser: argparse.ArgumentParser) -> None:
    """CASE, or ``--script FILE`` in its place (``cli.target_case`` reads them)."""
    parser.add_argument("case", nargs="?", help="a case of the catalogue (harness list), or --script FILE instead")
    parser.add_argument("--script", type=_path, metavar="FILE", help=SCRIPT_HELP + " in place of CASE")


def _release_range_options(
    parser: argparse.ArgumentParser, first: str, last: str, first_help: str, last_help: str, *, required: bool = True
) -> None:
    add_target(parser)
    parser.add_argument(first, dest="first", metavar="VERSION", required=required, help=first_help)
    parser.add_argument(last, dest="last", metavar="VERSION", required=required, help=last_help)
    criterion = parser.add_mutually_exclusive_group(required=parser.prog.endswith("bisect"))
    criterion.add_argument("--metric", help="PROGRAM.KIND, e.g. two_scans.dispatch_ns or scan.compile_ns")
    criterion.add_argument("--claim", action="store_true", help="judge by the case's claim verdict instead")
    parser.add_argument("--size", action="append", default=[], help="NAME=INTEGER (default: the case's first anchor)")
    _session_options(parser, release=False)
    parser.add_argument("--releases", type=_path, help="the release plan nox writes: what each release installs")
    parser.add_argument("--results", type=_path, default=DEFAULT_RESULTS, help="results are reused and stored here")
    parser.add_argument("--out", type=_path, default=DEFAULT_REPORTS)
    parser.add_argument("--repeats", type=_positive_int, default=15)
    parser.add_argument(
        "--processes",
        type=_positive_int,
        default=PROCESSES["quick"],
        metavar="K",
        help=f"case processes per release, the unit of the statistics and the claim (default {PROCESSES['quick']})",
    )
    parser.add_argument("--warmup", type=_positive_int, default=Settings.warmup)
    parser.add_argument("--max-seconds", type=_positive_float, default=5.0)
    parser.add_argument("--timeout", type=_positive_float, default=Settings.timeout_s, help="seconds per case run")
    parser.add_argument("--cases-dir", type=_path, default=discovery.DEFAULT_CASES_DIR)
    _add_threshold_options(parser)


def _calibrate_options(calibrator: argparse.ArgumentParser) -> None:
    calibrator.add_argument("--case", default=CALIBRATION_CASE, help=f"case to run (default {CALIBRATION_CASE})")
    calibrator.add_argument("--size", action="append", default=[], help="NAME=INTEGER (default: its first anchor)")
    calibrator.add_argument(
        "--raise",
        dest="raise_size",
        metavar="NAME[=VALUE]",
        help="size raised for the real slowdown, by 10 %% or to VALUE (default: the first a 10 %% rise changes)",
    )
    calibrator.add_argument("--pairs", type=_positive_int, default=3, help="A/A pairs to run (default 3)")
    calibrator.add_argument(
        "--slowdowns",
        type=_positive_int,
        default=3,
        help="runs of the unchanged and the raised case, interleaved, to compare (default 3)",
    )
    calibrator.add_argument(
        "--profile", type=_label, default="default", help="label of the device profile (set by nox)"
    )
    calibrator.add_argument("--results", type=_path, default=DEFAULT_RESULTS, help="stores under RESULTS/calibration/")
    calibrator.add_argument("--cases-dir", type=_path, default=discovery.DEFAULT_CASES_DIR)
    calibrator.add_argument("run_options", nargs="*", metavar="-- RUN_OPTION", help="options for every harness run")
    _add_threshold_options(calibrator)


def _script_options(parser: argparse.ArgumentParser, *, script: bool = False) -> None:
    if script:
        add_target(parser)
    else:
        parser.add_argument("case")
    parser.add_argument("--size", action="append", default=[], help="NAME=INTEGER (default: the case's first anchor)")
    parser.add_argument("--repeats", type=_positive_int, default=Settings.repeats)
    parser.add_argument("--warmup", type=_positive_int, default=Settings.warmup)
    parser.add_argument("--max-seconds", type=_positive_float, default=Settings.max_seconds)
    parser.add_argument("--cases-dir", type=_path, default=discovery.DEFAULT_CASES_DIR)
