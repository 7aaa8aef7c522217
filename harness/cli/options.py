"""Options shared by several commands, each declared once (``add_case``, ``add_sampling``, …) and
read back once (``case_from``, ``sampling_from``, ``thresholds_from``): one default and one check
each.  Types raise ``argparse.ArgumentTypeError``: one line, exit code 2.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from harness.analysis.significance import DETECTION_POWER, Thresholds
from harness.analysis.spending import CHANGES, MODES
from harness.catalogue import discovery
from harness.catalogue.scripts import read_script
from harness.catalogue.sizes import DEFAULT_SEED
from harness.errors import UsageError, cannot_write
from harness.install.script_envs import AS_OF, POLICIES
from harness.measure.isolation import check_affinity, parse_cpu_list
from harness.measure.load import DEFAULT_FLAG_CORES
from harness.metric_names import JSON, KIND_LABELS, parse_metric_name
from harness.names import listed, name_problem, path_problem
from harness.store.schema import COUNT_CEILING, COUNT_SECONDS, Settings
from harness.units import normal_version

DEFAULT_RESULTS = Path("results")
DEFAULT_REPORTS = Path("reports")
# Samples per program and the sampling time budget per program in each case process, by
# effort: "quick" is for CI and a first look, "full" for numbers to quote.  Each cell runs
# in PROCESSES case processes (a side), since the level a process sets varies more than
# its samples do: the spread between processes is what a comparison must see.
SAMPLING = {"quick": (10, 0.5), "full": (20, 2.0)}
PROCESSES = {"quick": 5, "full": 10}
DEFAULT_MAX_PROCESSES = 20
# Measuring sides until decided goes up to this many times --processes a side by default (looks at
# 5, 10, 20).
LOOKS = 4
# A sample series needs this many samples for its median, however slow the program.
MIN_REPEATS = 5
# The profile label of a command run outside nox without --profile.
UNPINNED_PROFILE = "default"
SCRIPT_HELP = (
    "a plain repro script in place of a case, run unmodified as `python FILE` once per process, in "
    "a venv of its own per release holding that jax and jaxlib and what the script declares (its "
    "`# /// script` block, --with, --requirements); judged on its phases (process.*), the numbers "
    "it prints as JSON lines (json.*) and its `metric ...` lines"
)


# --- types


def positive_int(text: str) -> int:
    # ASCII digits: int() also takes "１２" and "1_000"
    if not re.fullmatch(r"[0-9]{1,9}", text.strip()):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number of at most 9 digits")
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def seed(text: str) -> int:
    """A seed for hypothesis's draws: ASCII digits (int() takes "１２"), an optional minus sign."""
    if not re.fullmatch(r"-?[0-9]{1,18}", text.strip()):
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a whole number of at most 18 digits"
        )
    return int(text)


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be a finite number")
    return value


def _within(
    read: Callable[[str], float], refused: Callable[[float], bool], why: str
) -> Callable[[str], float]:
    def checked(text: str) -> float:
        value = read(text)
        if refused(value):
            raise argparse.ArgumentTypeError(f"{text[:40]!r} {why}")
        return value

    return checked


positive_float = _within(_number, lambda v: not v > 0, "must be a finite positive number")
non_negative_float = _within(_number, lambda v: v < 0, "must be zero or more")
# at most a week: a larger duration overflows the clocks' arithmetic
seconds = _within(positive_float, lambda v: v > 7 * 24 * 3600, "seconds is more than a week")
sample_time = _within(
    non_negative_float, lambda v: v > 3600, "seconds is more than an hour for one sample"
)
factor = _within(positive_float, lambda v: v <= 1, "must be above 1 (1.10 means a 10 % change)")
spread = _within(non_negative_float, lambda v: v >= 1, "must be below 1 (0.05: about 5 %)")
probability = _within(positive_float, lambda v: v >= 1, "must be between 0 and 1")


def max_load(text: str) -> float | None:
    """``--max-load``: cores, or "off" (None: flagged, never measured again)."""
    return None if text.strip().lower() == "off" else non_negative_float(text)


def path(text: str) -> Path:
    """A folder or file named on the command line; an empty name would quietly mean "here"."""
    if problem := path_problem(text):
        raise argparse.ArgumentTypeError(problem)
    return Path(text)


def release_version(text: str) -> str:
    """A jax release number as the package index spells it, e.g. 0.4.31 or 0.12.0.1."""
    if not re.fullmatch(r"[0-9]{1,4}(\.[0-9]{1,4}){1,3}((a|b|rc|\.post|\.dev)[0-9]{1,4})?", text):
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a jax release number such as 0.4.31"
        )
    # the index spells 0.4.026 as 0.4.26: said, not guessed silently
    if (normal := normal_version(text)) != text:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not how the package index spells it: did you mean {normal}?"
        )
    return text


def label(text: str) -> str:
    """A profile label: it becomes part of the results folder's paths."""
    if problem := name_problem(text):
        raise argparse.ArgumentTypeError(f"profile label {problem}")
    return text


def cpu_list(text: str) -> list[int]:
    try:
        return parse_cpu_list(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


target_ratio = _within(
    factor,
    lambda v: v < Thresholds().factor,
    f"is below ×{Thresholds().factor}: the rule flags no change smaller than its factor, so no "
    "number of processes could reach it",
)


def repeatable(
    parser: argparse.ArgumentParser, flag: str, metavar: str | None, what: str, **more: Any
) -> None:
    """An option given once per value, in order; an empty list where none is."""
    parser.add_argument(flag, action="append", default=[], metavar=metavar, help=what, **more)


# --- the case a command acts on


def add_case(
    parser: argparse.ArgumentParser,
    *,
    many: bool = False,
    script: bool = False,
    default: str = "",
    positional: bool = True,
) -> None:
    """``--case NAME`` (repeatable where ``many``), ``--script FILE`` in its place where ``script``;
    a single-case command also takes the case positionally, the older spelling."""
    if many:
        repeatable(parser, "--case", "CASE", "case to run (repeatable; default: all)")
    else:
        if positional:
            parser.add_argument(
                "old_case",
                nargs="?",
                metavar="CASE",
                help="the same as --case CASE (older spelling)",
            )
        parser.add_argument(
            "--case",
            default=default or None,
            help="a case of the catalogue (`jax-repro list` shows them)",
        )
    if script:
        parser.add_argument("--script", type=path, metavar="FILE", help=SCRIPT_HELP)
        repeatable(
            parser,
            "--script-arg",
            "VALUE",
            "an argument for the script, as `python FILE VALUE...` takes it (repeatable, in order; "
            "a value starting with - as --script-arg=-n)",
        )
        add_libraries(parser)
    # Every command's namespace then has them all, whichever of them it declares.
    parser.set_defaults(
        old_case=None,
        script=None,
        script_arg=[],
        takes_script=script,
        with_=[],
        requirements=None,
        deps=None,
    )
    add_cases_dir(parser)


def add_libraries(parser: argparse.ArgumentParser) -> None:
    repeatable(
        parser,
        "--with",
        "SPEC",
        "a library the script needs besides JAX, as pip takes it (repeatable: --with equinox "
        "--with 'flax==0.10.4'), added to its own `# /// script` block's dependencies",
        dest="with_",
    )
    parser.add_argument(
        "--requirements",
        type=path,
        metavar="FILE",
        help="a requirements file of libraries the script needs",
    )
    parser.add_argument(
        "--deps",
        choices=POLICIES,
        help=(
            "how each release's set of them is resolved, jax and jaxlib held: as-of: as the "
            "package index stood a week after that jax release came out (what its users had); "
            f"newest: the newest versions that accept it today (default: {AS_OF})"
        ),
    )


def deps_policy(args: argparse.Namespace) -> str:
    return str(args.deps or AS_OF)


def add_cases_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cases-dir",
        type=path,
        default=discovery.DEFAULT_CASES_DIR,
        help="where the cases live (default: the project's cases/ folder)",
    )


def case_name(args: argparse.Namespace) -> str | None:
    """The one case a single-case command names, by ``--case`` or the older positional spelling."""
    old, new = args.old_case, args.case
    if old is not None and new is not None and old != new:
        raise UsageError(f"two cases named ({old} and --case {new}): give one")
    return new or old


def refuse_script_options(args: argparse.Namespace) -> None:
    """Refuse a plain script's option without ``--script``: with cases it would be ignored."""
    if args.script_arg:
        raise UsageError("--script-arg is for --script FILE: a case takes --size")
    for option, given in (
        ("--with", args.with_),
        ("--requirements", args.requirements),
        ("--deps", args.deps),
    ):
        if given:
            raise UsageError(f"{option} is for --script FILE: a case needs nothing but JAX")


def case_from(args: argparse.Namespace) -> discovery.CaseInfo:
    """The case a command names, or its plain script (``--script FILE``): past this, callers ask the
    subject (``harness.catalogue.subjects``)."""
    name = case_name(args)
    script = args.script
    if not script:
        refuse_script_options(args)
        if not name:
            what = "a case with --case NAME (`jax-repro list` shows them)"
            raise UsageError(f"name {what}" + (" or --script FILE" if args.takes_script else ""))
        [case] = discovery.select(discovery.discover(args.cases_dir), [name])
        return case
    if name:
        raise UsageError("give a case or --script FILE, not both")
    if args.size:
        raise UsageError("--size: a script has no sizes; it runs as it is")
    return read_script(
        script, tuple(args.script_arg), with_specs=args.with_, requirements=args.requirements
    )


def add_sizes(parser: argparse.ArgumentParser, what: str = "overrides the effort's sizes") -> None:
    repeatable(parser, "--size", "NAME=INTEGER", what)


def add_draws(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed", type=seed, default=DEFAULT_SEED, help="seed of the sizes hypothesis draws"
    )
    repeatable(
        parser,
        "--budget",
        "KIND=AMOUNT",
        "memory=SIZE or flops=N: refuse size points whose estimated cost exceeds it (default: half "
        "the available memory, 5e11 flops per call)",
    )


# --- how a case process samples


def add_sampling(
    parser: argparse.ArgumentParser,
    *,
    effort: str = "quick",
    timeout: str = "seconds per case process",
) -> None:
    parser.add_argument(
        "--effort",
        choices=discovery.EFFORTS,
        default=effort,
        help="quick: first look, CI; full: numbers to quote (run: also sizes drawn by hypothesis)",
    )
    parser.add_argument(
        "--repeats",
        type=positive_int,
        help="samples per program (default by effort: "
        + ", ".join(f"{e} {r}" for e, (r, _) in SAMPLING.items())
        + ")",
    )
    parser.add_argument(
        "--max-seconds",
        type=seconds,
        metavar="SECONDS",
        help="stop sampling a program after this much measured time, "
        f"with at least {MIN_REPEATS} samples "
        "(default by effort: " + ", ".join(f"{e} {s:g} s" for e, (_, s) in SAMPLING.items()) + ")",
    )
    parser.add_argument(
        "--warmup", type=positive_int, default=Settings.warmup, help="calls before sampling"
    )
    parser.add_argument("--timeout", type=seconds, default=Settings.timeout_s, help=timeout)


def sampling_from(args: argparse.Namespace, **more: Any) -> Settings:
    """The one place a command line becomes ``Settings``."""
    default_repeats, default_seconds = SAMPLING[args.effort]
    repeats = args.repeats or default_repeats
    return Settings(
        timeout_s=args.timeout,
        warmup=args.warmup,
        repeats=repeats,
        min_repeats=min(MIN_REPEATS, repeats),
        max_seconds=args.max_seconds or default_seconds,
        effort=args.effort,
        **more,
    )


def add_process_count(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--processes",
        type=positive_int,
        metavar="K",
        help="case processes per cell and side, each with its own warm-up, "
        "the unit of the statistics and the "
        "claim (default by effort: " + ", ".join(f"{e} {k}" for e, k in PROCESSES.items()) + ")",
    )


def add_max_processes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-processes",
        type=positive_int,
        metavar="K",
        help=(
            "the most processes per cell and side: sides measured together (a range command's "
            "endpoints, probes and confirmations; a run of several sides) get looks of --processes "
            f"rounds while a comparison is open, up to this many (default {LOOKS} × --processes); "
            "counts still open then (a new ending, a number gone in some processes) get more, up "
            f"to {COUNT_CEILING} a side while a side's processes have taken under --time-budget "
            f"(else {COUNT_SECONDS:g} s); "
            "with --target-ratio, rounds until the target is detectable, up to this many (default "
            f"{DEFAULT_MAX_PROCESSES}, as pyperf's default count of processes)"
        ),
    )


def max_processes_from(args: argparse.Namespace, processes: int, default: int) -> int:
    if args.max_processes is not None and args.max_processes < processes:
        raise UsageError("--max-processes must be at least --processes")
    return int(args.max_processes or default)


def verdict_processes(processes: int, least: int, each: str = "a release") -> int:
    """``processes``, refused below ``least``: a verdict is settled over as many."""
    if processes < least:
        raise UsageError(
            f"--processes {processes}: no verdict is possible with fewer than {least} processes "
            f"{each}"
        )
    return processes


def add_processes(parser: argparse.ArgumentParser) -> None:
    add_process_count(parser)
    parser.add_argument(
        "--min-sample-time",
        type=sample_time,
        metavar="SECONDS",
        help=(
            "a program shorter than this is repeated within one sample, which stores the mean per "
            f"iteration (default {Settings.min_sample_ns / 1e9:g}; 0: one iteration per sample)"
        ),
    )
    parser.add_argument(
        "--affinity",
        type=cpu_list,
        metavar="CPUS",
        help=(
            "pin every case process to these CPUs before JAX starts, e.g. 0 or 0,1 or 0-3 "
            "(default: not pinned)"
        ),
    )
    add_max_load(parser)


def add_max_load(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-load",
        type=max_load,
        default=DEFAULT_FLAG_CORES,
        metavar="CORES|off",
        help=(
            "measure a case process again (up to 3 attempts, a second apart) when other processes "
            "kept more than this many cores busy while it ran; once a side's process was still "
            "loaded on its last attempt the load is steady and the side's later processes are "
            "measured once each (every attempt is recorded); 'off': flag a process over "
            f"{DEFAULT_FLAG_CORES:g} cores, never measure again"
        ),
    )


def processes_from(args: argparse.Namespace) -> int:
    return int(args.processes or PROCESSES[args.effort])


def compile_repeats(processes: int) -> int:
    """With several processes the spread of cold compiles shows between them; one each is enough."""
    return 1 if processes >= 3 else Settings.compile_repeats


def process_settings(args: argparse.Namespace) -> dict[str, Any]:
    if args.affinity is not None:
        check_affinity(args.affinity)
    processes = processes_from(args)
    return {
        "processes": processes,
        "compile_repeats": compile_repeats(processes),
        "min_sample_ns": Settings.min_sample_ns
        if args.min_sample_time is None
        else round(args.min_sample_time * 1e9),
        "affinity": None if args.affinity is None else tuple(args.affinity),
        "max_load": args.max_load,
    }


def add_target(parser: argparse.ArgumentParser) -> None:
    """What ``target_from`` reads: ``--target-ratio``, or ``--decide`` and its budget."""
    parser.add_argument(
        "--target-ratio",
        type=target_ratio,
        metavar="R",
        help=(
            "after --processes rounds, add rounds of processes to a cell until its sides' "
            "processes could detect a change of ×R (median over its metrics, in "
            f"{DETECTION_POWER:.0%} of comparisons, read from the spread within each side, never "
            "from the difference between them), or until --max-processes"
        ),
    )
    repeatable(
        parser,
        "--target-kind",
        None,
        "with --target-ratio: judge only metrics of this kind (repeatable; default: every metric), "
        "e.g. wall when execution time is what matters and cold compiles scatter too much to ever "
        "reach the target",
        choices=list(KIND_LABELS),
    )
    add_max_processes(parser)
    parser.add_argument(
        "--decide",
        choices=[*MODES, "off"],
        default=CHANGES,
        help=(
            "with several sides: after --processes rounds, look again at twice as many processes "
            "each time (up to --max-processes) while a comparison of neighbouring sides is open: "
            "'changes': undecided, and the last look could still decide it; 'all': any comparison "
            "neither changed nor unchanged; 'off': --processes only. The test's level is spent "
            "over the looks, so false alarms stay at the level"
        ),
    )
    repeatable(
        parser,
        "--decide-metric",
        "METRIC",
        "with --decide: judge only this metric (repeatable; default: every metric)",
    )
    add_time_budget(parser, "with --decide: a cell's")


def add_time_budget(parser: argparse.ArgumentParser, whose: str) -> None:
    parser.add_argument(
        "--time-budget",
        type=seconds,
        metavar="SECONDS",
        help=(
            f"{whose} processes get no further look once they have taken this long (default: no "
            "limit but --max-processes; counts open past it stop at "
            f"{COUNT_SECONDS:g} s a side)"
        ),
    )


def target_from(args: argparse.Namespace, sides: int = 1) -> dict[str, Any]:
    """``add_target``'s settings; measuring until decided only with ``sides`` to compare."""
    if args.target_kind and args.target_ratio is None:
        raise UsageError(
            "--target-kind needs --target-ratio: without a target every cell runs --processes"
        )
    processes = processes_from(args)
    off = args.decide == "off" or args.target_ratio is not None or sides < 2
    decide = None if off else args.decide
    for option, given in (
        ("--decide-metric", args.decide_metric),
        ("--time-budget", args.time_budget is not None),
    ):
        if given and decide is None:
            raise UsageError(
                f"{option} goes with --decide, on a run of several sides (--sides) without "
                "--target-ratio"
            )
    unbounded = decide is None and args.target_ratio is None
    if args.max_processes is not None and unbounded:
        raise UsageError(
            "--max-processes needs --target-ratio, or a run of several sides (--sides) measured "
            "until decided: without either every cell runs --processes"
        )
    default = LOOKS * processes if args.target_ratio is None else DEFAULT_MAX_PROCESSES
    most = None if unbounded else max_processes_from(args, processes, default)
    return {
        "target_ratio": args.target_ratio,
        "target_kinds": tuple(dict.fromkeys(args.target_kind)) or None,
        "max_processes": most,
        "decide": decide,
        "decide_metrics": _names(args.decide_metric) or None,
        "decide_budget_s": None if decide is None else args.time_budget,
        "max_count_processes": None if decide is None else COUNT_CEILING,
    }


def add_why(parser: argparse.ArgumentParser, leaves_out: str, budget: str) -> None:
    parser.add_argument(
        "--no-why", dest="explain", action="store_false", help=f"leave out asking why {leaves_out}"
    )
    parser.add_argument(
        "--why-budget",
        type=seconds,
        metavar="SECONDS",
        help=f"at most this long asking why, {budget}",
    )
    parser.add_argument(
        "--why-kinds",
        type=kind_names,
        default=(),
        metavar="KIND[,KIND...]",
        help="ask only these kinds of why, in the order the step's shape asks them (the names "
        "the answer's 'kinds asked' line gives: library, defaults, compiled, ...; default: "
        "every kind)",
    )


def kind_names(text: str) -> tuple[str, ...]:
    """``library,defaults`` → its names, each once (checked against the kinds when the run starts:
    the registry sits above this stage)."""
    names = tuple(listed(text))
    if not names or any(len(name) > 40 for name in names):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} names no kind of why")
    return names


# --- where results and pages go


def add_results(
    parser: argparse.ArgumentParser, what: str = "results are stored (and reused) here"
) -> None:
    parser.add_argument("--results", type=path, default=DEFAULT_RESULTS, metavar="DIR", help=what)


def add_out(parser: argparse.ArgumentParser, what: str = "pages are written here") -> None:
    parser.add_argument("--out", type=path, default=DEFAULT_REPORTS, metavar="DIR", help=what)


def add_json(parser: argparse.ArgumentParser, what: str) -> None:
    """``--json FILE``: the answer as data (``harness.render.json_out``; docs/results.md)."""
    parser.add_argument(
        "--json", type=path, metavar="FILE", help=f"also write {what} as JSON to FILE"
    )


def folder_to_write(folder: Path, what: str = "results") -> Path:
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{what} folder {folder} is a file")
    return folder


def prove_writable(folder: Path, what: str = "results") -> None:
    """Create ``folder`` and write a file there before anything is measured: a read-only or full
    disk is one line now (full: ``WRITE_FAILED``), not a measured cell lost at storing."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"cannot write {what} under {folder}: it is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # never through a planted link
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=folder)
        try:
            os.write(fd, b"\0" * 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise cannot_write(f"cannot write {what} under {folder}", exc) from None


# --- a nox session's pins


def add_session(parser: argparse.ArgumentParser, *, release: bool) -> None:
    """``--profile`` (and ``--jax``), which a nox session may pin (``harness.cli.sessions``)."""
    parser.add_argument(
        "--profile",
        type=label,
        help=(
            "device profile: under nox one of the profile table, whose flags it sets (default "
            f"cpu); run directly, a label (default {UNPINNED_PROFILE!r})"
        ),
    )
    if release:
        parser.add_argument(
            "--jax",
            metavar="VERSION",
            type=release_version,
            help=(
                "release that nox installs (search: of the release table; issue: any on the "
                "package index; default: the table's newest); run directly without a release plan, "
                "the jax installed here must be it"
            ),
        )


def profile_label(args: argparse.Namespace) -> str:
    return str(args.profile or UNPINNED_PROFILE)


# --- the statistics' rule


def add_thresholds(parser: argparse.ArgumentParser) -> None:
    for flag, kind, metavar, what in (
        ("--factor", factor, None, "smallest ratio of medians that counts as a change"),
        ("--alpha", probability, None, "significance level of the verdict's test"),
        (
            "--invocation-spread",
            spread,
            "SD",
            "how far a whole run's level moves between separate invocations (log standard "
            "deviation; `calibrate` measures this machine's), allowed for when compared results "
            "come from separate runs",
        ),
    ):
        default = getattr(Thresholds(), flag[2:].replace("-", "_"))
        parser.add_argument(flag, type=kind, default=default, metavar=metavar, help=what)
    repeatable(
        parser,
        "--higher-is-better",
        "METRIC",
        "a metric whose higher figure is the better one, e.g. json.items_per_s a script prints "
        "(repeatable; default: lower is better for every metric)",
    )
    for flag, what in (
        ("--value", "a value: judged by equality per process, never by a ratio (a loss, a draw)"),
        ("--cost", "a cost: judged by its ratio, though constant within each side"),
    ):
        inferred = "repeatable; default: inferred (docs/scripts.md, Shapes)"
        repeatable(parser, flag, "METRIC", f"a metric the script prints that is {what}; {inferred}")


def _names(given: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(parse_metric_name(name).metric_name for name in given))


def undeclared(thresholds: Thresholds, names: Collection[str]) -> list[tuple[str, str, str]]:
    """Each metric an option declared that no metric of ``names`` is, with the option and a few of
    ``names``: said, since a typo would change no verdict and pass unseen."""
    shown = ", ".join(sorted(names)[:8]) + (", …" if len(names) > 8 else "")
    return [
        (flag, name, shown)
        for flag, declared in (
            ("--higher-is-better", thresholds.higher_is_better),
            ("--value", thresholds.values),
            ("--cost", thresholds.costs),
        )
        for name in declared
        if names and name not in names
    ]


def thresholds_from(args: argparse.Namespace) -> Thresholds:
    values, costs = _names(args.value), _names(args.cost)
    higher = _names(args.higher_is_better)
    # A metric with a better direction is a cost, and so is every figure the harness measures.
    measured = [name for name in values if not name.startswith(f"{JSON}.")]
    if measured:
        raise UsageError(f"{', '.join(measured)}: measured by the harness, a cost, never a value")
    for shown, others in (("a cost", costs), ("higher-is-better", higher)):
        if set(values) & set(others):
            both = ", ".join(sorted(set(values) & set(others)))
            raise UsageError(f"declared both a value and {shown}: {both}")
    return Thresholds(
        factor=args.factor,
        alpha=args.alpha,
        invocation_spread=args.invocation_spread,
        higher_is_better=higher,
        values=values,
        costs=costs,
    )
