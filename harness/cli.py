"""``python -m harness``: a thin layer over the pipeline modules.

Every user mistake becomes one line on stderr and exit code 2; a traceback here
means a bug in the harness, not in the input.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.analysis.metric_names import MetricKey, parse_metric_name
from harness.analysis.power import detectable_in_records
from harness.arguments import (
    DEFAULT_MAX_PROCESSES,
    PROCESSES,
    SAMPLING,
    UNPINNED_PROFILE,
    build_parser,
    release_version,
    thresholds_from,
)
from harness.catalogue import discovery
from harness.catalogue.scripts import check_results_folder, read_script
from harness.catalogue.sizes import Budget, PlannedPoint
from harness.errors import HarnessError, UsageError
from harness.measure.affinity import check_affinity
from harness.measure.launch import default_isolation
from harness.measure.runner import CellRun, PlannedRun, Recorder, Settings, describe, release_label, run_all, this_side
from harness.measure.sides import Side, load_plan
from harness.names import name_problem
from harness.pins import (
    DEFAULT_PROFILE,
    DEFAULT_RELEASE,
    PROFILE_BY_NAME,
    RELEASE_BY_VERSION,
    RELEASES,
    Profile,
    Release,
)
from harness.releases.options import RangeOptions
from harness.store.schema import RunStatus
from harness.units import sizes_text, version_key

# Commands whose nox session pins a device profile (--profile) and, for search and issue, the
# release it installs (--jax).
PINNED_COMMANDS = ("search", "issue", "bisect", "sweep", "triage")
RANGE_COMMANDS = ("bisect", "sweep", "triage")

if TYPE_CHECKING:
    from harness.analysis.noise_floor import CalibrationPlan
    from harness.upstream.issue import IssueRequest


def target_case(args: argparse.Namespace) -> discovery.CaseInfo:
    """The case a command names (CASE), or the plain script it names instead (``--script FILE``)."""
    script = getattr(args, "script", None)
    if script is None:
        if not args.case:
            raise UsageError("name a case (`harness list` shows them) or --script FILE")
        [case] = discovery.select(discovery.discover(args.cases_dir), [args.case])
        return case
    if args.case:
        raise UsageError("give a case or --script FILE, not both")
    if getattr(args, "size", None):
        raise UsageError("--size: a script has no sizes; it runs as it is")
    case = read_script(script)
    if hasattr(args, "results"):
        check_results_folder(_results_folder(args.results), case)
    return case


def _script_case(args: argparse.Namespace) -> tuple[discovery.CaseInfo, dict[str, int], Settings]:
    from harness.upstream.export import script_sizes

    case = target_case(args)
    sizes = script_sizes(case, discovery.parse_sizes(args.size))
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


def _profile_label(args: argparse.Namespace) -> str:
    return args.profile or UNPINNED_PROFILE


def _check_installed_release(args: argparse.Namespace) -> None:
    """``--jax V`` names the release nox installed; run elsewhere, the one installed must be V."""
    installed = release_label()
    if args.jax and args.jax != installed:
        raise UsageError(
            f"--jax {args.jax} asks for a release that is not installed here (jax {installed}): "
            f"`nox -s {args.command} -- ... --jax {args.jax}` installs it"
        )


def run_sides(args: argparse.Namespace) -> list[Side]:
    """The sides a ``run`` measures: those of ``--sides``, or this interpreter under ``--profile``."""
    if args.sides is None:
        return [this_side(args.profile or "default")]
    if args.profile is not None:
        raise UsageError("--sides gives each side its profile; --profile is for a run without --sides")
    return load_plan(args.sides)


def checked_run_args(args: argparse.Namespace) -> tuple[list[discovery.CaseInfo], dict[str, int], Budget]:
    """Every check of ``run`` that needs neither JAX nor hypothesis (the noxfile calls it too)."""
    cases = [target_case(args)] if args.script else discovery.select(discovery.discover(args.cases_dir), args.case)
    overrides = discovery.parse_sizes(args.size)
    discovery.check_overrides(cases, overrides)
    _results_folder(args.results)
    if args.force and args.retry_failed:
        raise UsageError("--force and --retry-failed exclude each other")
    if args.affinity is not None:
        check_affinity(args.affinity)
    if args.sides is not None:
        for side in run_sides(args):
            discovery.check_overrides(cases, side.sizes)
    for option, given in (("--max-processes", args.max_processes is not None), ("--target-kind", args.target_kind)):
        if given and args.target_ratio is None:
            raise UsageError(f"{option} needs --target-ratio: without a target every cell runs --processes")
    if args.max_processes is not None and args.max_processes < (args.processes or PROCESSES[args.effort]):
        raise UsageError("--max-processes must be at least --processes")
    return cases, overrides, Budget.for_this_machine(args.budget)


def checked_search_args(args: argparse.Namespace) -> tuple[discovery.CaseInfo, Budget]:
    [case] = discovery.select(discovery.discover(args.cases_dir), [args.case])
    pinned = discovery.parse_sizes(args.size)
    discovery.check_overrides([case], pinned)
    _results_folder(args.results)
    if args.affinity is not None:
        check_affinity(args.affinity)
    return dataclasses.replace(case, space=case.space.fixed(pinned)), Budget.for_this_machine(args.budget)


def process_settings(args: argparse.Namespace, processes: int) -> dict[str, Any]:
    """The settings of how each cell is measured: processes, loop calibration, pinning, load."""
    return {
        "processes": processes,
        # With several processes the spread of cold compiles shows between them; one each is enough.
        "compile_repeats": 1 if processes >= 3 else Settings.compile_repeats,
        "min_sample_ns": round(
            (Settings.min_sample_ns / 1e9 if args.min_sample_time is None else args.min_sample_time) * 1e9
        ),
        "affinity": None if args.affinity is None else tuple(args.affinity),
        "max_load": args.max_load,
    }


def checked_range_args(args: argparse.Namespace) -> RangeOptions:
    """Every check of ``bisect`` and ``sweep`` that needs neither JAX nor the package index."""
    from harness.upstream.export import script_sizes

    case = target_case(args)
    sizes = script_sizes(case, discovery.parse_sizes(args.size))
    metric = parse_metric_name(args.metric) if args.metric else None
    first, last, fix = range_ends(args)
    if first == last:
        raise UsageError(f"the two ends of the range are the same release ({first})")
    if version_key(first) >= version_key(last):
        raise UsageError(f"the range must run from an older release to a newer one, not {first} to {last}")
    thresholds = thresholds_from(args)
    if args.processes < thresholds.min_processes:  # the claim is settled over as many (analysis.claims)
        raise UsageError(
            f"--processes {args.processes}: no verdict is possible with fewer than {thresholds.min_processes} "
            "processes a release"
        )
    return RangeOptions(
        command=args.command,
        case=case,
        first=first,
        last=last,
        metric=metric,
        claim=args.claim,
        sizes=sizes,
        profile=_profile_label(args),
        releases_plan=args.releases,
        results=_results_folder(args.results),
        out=args.out,
        repeats=args.repeats,
        processes=args.processes,
        warmup=args.warmup,
        max_seconds=args.max_seconds,
        timeout=args.timeout,
        thresholds=thresholds,
        fix=fix,
    )


def range_ends(args: argparse.Namespace) -> tuple[str, str, bool]:
    """The first and last release of a range command, and whether a bisect looks for a fix.

    A bisect takes --good/--bad (a regression) or --broken/--fixed (a fix), never a mix; a
    triage without --from/--to runs from the release table's oldest to its newest release.
    """
    fix = False
    first, last = args.first, args.last
    if args.command == "bisect":
        broken, fixed = args.broken, args.fixed
        if (broken or fixed) and (first or last):
            raise UsageError("--good/--bad name a regression's ends, --broken/--fixed a fix's: give one pair")
        fix = bool(broken or fixed)
        first, last = (broken, fixed) if fix else (first, last)
        if not (first and last):
            raise UsageError("bisect needs both ends: --good V --bad V (a regression) or --broken V --fixed V (a fix)")
    elif args.command == "triage":
        first, last = first or RELEASES[0].jax, last or RELEASES[-1].jax
    for end in (first, last):
        problem = name_problem(end)
        if problem:
            raise UsageError(f"jax release {problem}")
    return first, last, fix


def checked_report_args(args: argparse.Namespace) -> None:
    if not args.results.is_dir():
        raise UsageError(f"results folder not found: {args.results} (run a repro session first)")
    _output_folder(args.out)


def _output_folder(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise UsageError(f"output folder {path} is a file")


def checked_calibrate_args(args: argparse.Namespace) -> CalibrationPlan:
    """Every check of ``calibrate``, including ``run``'s checks of the options it passes on, before anything runs."""
    from harness.analysis.noise_floor import plan_calibration

    [case] = discovery.select(discovery.discover(args.cases_dir), [args.case])
    overrides = discovery.parse_sizes(args.size)
    _results_folder(args.results)
    plan = plan_calibration(
        case,
        overrides,
        args.raise_size,
        pairs=args.pairs,
        slowdowns=args.slowdowns,
        profile=args.profile,
        cases_dir=args.cases_dir,
        run_options=args.run_options,
    )
    for raised in (False, True):
        validate(["run", *plan.run_arguments(args.results, raised=raised)])
    return plan


def checked_compare_args(args: argparse.Namespace) -> None:
    for folder in (args.a, args.b or args.a):
        if not folder.is_dir():
            raise UsageError(f"results folder not found: {folder}")


def validate(argv: Sequence[str]) -> argparse.Namespace:
    """The parsed command line, or UsageError for one the harness would refuse, without running anything."""
    args = build_parser().parse_args(list(argv))
    if args.command == "run":
        checked_run_args(args)
    elif args.command == "search":
        checked_search_args(args)
    elif args.command == "export":
        _script_case(args)
    elif args.command == "issue":
        checked_issue_args(args)
    elif args.command in RANGE_COMMANDS:
        checked_range_args(args)
    elif args.command == "report":
        checked_report_args(args)
    elif args.command == "compare":
        checked_compare_args(args)
    elif args.command == "calibrate":
        checked_calibrate_args(args)
    return args


@dataclasses.dataclass(frozen=True)
class SessionRequest:
    """What a nox session installs and runs for one harness command, from the user's posargs."""

    release: Release | None  # installed in the session's venv; None: no JAX there (bisect and sweep install apart)
    profile: Profile | None  # device flags the harness runs under; None: the command runs no case
    harness_argv: list[str]  # for ``python -m harness``, command first, the profile always named
    span: tuple[str, str] | None = None  # the first and last release of a bisect, sweep or triage
    # Releases the noxfile finds on the package index before anything runs (issue, a one-off run), first
    # the one the command runs on.
    on_index: tuple[str, ...] = ()


def session_view(command: str, posargs: Sequence[str]) -> SessionRequest:
    """The nox session of ``command`` with ``posargs``, after every check that needs neither JAX nor the index.

    ``--jax`` (search, issue) picks the release from the release table, ``--profile`` the
    profile from the profile table; the default release and the ``cpu`` profile apply
    otherwise.  UsageError for anything the harness would refuse.
    """
    argv = [command, *posargs]
    args = validate(argv)
    if command not in PINNED_COMMANDS:
        return SessionRequest(None, None, argv)
    if args.profile is None:
        profile = DEFAULT_PROFILE
        argv.extend(["--profile", profile.name])
    elif args.profile in PROFILE_BY_NAME:
        profile = PROFILE_BY_NAME[args.profile]
    else:
        raise UsageError(f"unknown profile {args.profile}; profiles: {', '.join(PROFILE_BY_NAME)}")
    if command in RANGE_COMMANDS:
        span = range_ends(args)[:2]
        for end in span:
            if not profile.applies_to_version(end):
                raise UsageError(f"profile {profile.name} does not apply to jax {end}")
        return SessionRequest(None, profile, argv, span)
    if command == "issue":  # any release on the index, each in its cached venv: the noxfile looks them up
        versions = tuple(v for v in (args.jax or DEFAULT_RELEASE.jax, args.good, args.bad) if v is not None)
        for version in versions:
            if not profile.applies_to_version(version):
                raise UsageError(f"profile {profile.name} does not apply to jax {version}")
        return SessionRequest(None, profile, argv, on_index=versions)
    if args.jax is not None and args.jax not in RELEASE_BY_VERSION:
        raise UsageError(f"unknown release {args.jax}; the release table has {', '.join(RELEASE_BY_VERSION)}")
    release = RELEASE_BY_VERSION[args.jax] if args.jax else DEFAULT_RELEASE
    if not profile.applies_to(release):
        raise UsageError(f"profile {profile.name} does not apply to jax {release.jax}")
    return SessionRequest(release, profile, argv)


def release_run_view(posargs: Sequence[str]) -> SessionRequest:
    """``nox -s run -- CASE [--jax V] [--profile P] [run options]``: one case on one release of the package index.

    The rest goes to ``python -m harness run --case CASE``, checked as that command checks
    it; the release (default: the table's newest) is looked up on the index by the noxfile.
    """
    rest = list(posargs)
    if not rest or rest[0].startswith("-"):
        raise UsageError("name the case first: nox -s run -- CASE [--jax VERSION] [--profile P] [run options]")
    case = rest.pop(0)
    jax = DEFAULT_RELEASE.jax
    for index, arg in enumerate(rest):
        if arg == "--jax" or arg.startswith("--jax="):
            value = arg.partition("=")[2] if "=" in arg else (rest[index + 1] if index + 1 < len(rest) else "")
            del rest[index : index + (1 if "=" in arg else 2)]
            try:
                jax = release_version(value)
            except argparse.ArgumentTypeError as exc:
                raise UsageError(f"argument --jax: {exc}") from None
            break
    if any(arg == "--jax" or arg.startswith("--jax=") for arg in rest):
        raise UsageError("--jax is given more than once")
    if any(arg == "--sides" or arg.startswith("--sides=") for arg in rest):
        raise UsageError("--sides is for `nox -s matrix`; this session runs one release")
    request = session_view("run", ["--case", case, *rest])
    args = build_parser().parse_args(request.harness_argv)
    profile = PROFILE_BY_NAME.get(args.profile or DEFAULT_PROFILE.name)
    if profile is None:
        raise UsageError(f"unknown profile {args.profile}; profiles: {', '.join(PROFILE_BY_NAME)}")
    if not profile.applies_to_version(jax):
        raise UsageError(f"profile {profile.name} does not apply to jax {jax}")
    argv = request.harness_argv if args.profile else [*request.harness_argv, "--profile", profile.name]
    return SessionRequest(None, profile, argv, on_index=(jax,))


ALREADY_MEASURED = "already measured"  # a cell passed over on resume, counted apart from the statuses


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
        target_ratio=args.target_ratio,
        target_kinds=tuple(dict.fromkeys(args.target_kind)) or None,
        max_processes=None if args.target_ratio is None else args.max_processes or DEFAULT_MAX_PROCESSES,
        **process_settings(args, args.processes or PROCESSES[args.effort]),
    )
    resume = "force" if args.force else "retry-failed" if args.retry_failed else "skip"
    with Recorder(
        args.results,
        run_sides(args),
        settings,
        args.seed,
        budget,
        detectable=detectable_in_records,
    ) as recorder:
        outcomes = run_all(plan, recorder, resume=resume)
    counts: dict[str, int] = {}
    for _, run, _ in outcomes:
        status = ALREADY_MEASURED if run is None else run.status
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    stored = sum(1 for _, _, path in outcomes if path is not None)
    sides = len(recorder.sides)
    cells = f"{len(plan)} cells" + (f" on {sides} sides" if sides > 1 else "")
    print(f"{cells}, {stored} results stored under {args.results}: {summary}", file=sys.stderr)
    bad = sum(n for status, n in counts.items() if status not in (RunStatus.OK, RunStatus.SKIPPED, ALREADY_MEASURED))
    return 1 if args.strict and bad else 0


def claim_over_processes(run: CellRun, sizes_text: str) -> tuple[bool | None, str]:
    """The claim's verdict at a size point: the one every finished process agrees on; None if they differ."""
    claims = [p.claim for p in run.processes if p.status is RunStatus.OK and p.claim is not None]
    verdicts = {claim.holds for claim in claims}
    if run.status is not RunStatus.OK or len(verdicts) != 1:
        holding = sum(claim.holds for claim in claims)
        why = f"the claim held in {holding} of {len(claims)} processes" if run.status is RunStatus.OK else run.status
        return None, f"{sizes_text}: {why}"
    return verdicts.pop(), f"{sizes_text}: {claims[-1].evidence}"


def cmd_search(args: argparse.Namespace) -> int:
    from harness.catalogue import search

    case, budget = checked_search_args(args)
    _check_installed_release(args)
    profile = _profile_label(args)
    settings = Settings(
        timeout_s=args.timeout,
        repeats=args.repeats,
        min_repeats=min(5, args.repeats),
        max_seconds=args.max_seconds,
        **process_settings(args, args.processes or 1),
    )
    side = this_side(profile)

    def measure(point: dict[str, int]) -> tuple[bool | None, str]:
        [(_, run, _)] = recorder.run(PlannedRun(case, PlannedPoint(point, "search")))
        assert run is not None, "measured anew: resume is off"
        shown = sizes_text(point)
        print(f"[{side.label}] search {case.name} {shown} → {describe(run)}", file=sys.stderr, flush=True)
        return claim_over_processes(run, shown)

    with Recorder(args.results, [side], settings, args.seed, budget) as recorder:
        found = search.search(
            case,
            measure,
            budget=budget,
            want_holds=args.holds,
            max_examples=args.max_examples,
            confirm=args.confirm,
            seed=args.seed,
        )
    text = search.render(found, release=side.release, profile=profile)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"search-{case.name}-{'holds' if args.holds else 'fails'}.md"
    path.write_text(text)
    print(text)
    print(f"written: {path}", file=sys.stderr)
    return 0


def cmd_bisect(args: argparse.Namespace) -> int:
    from harness.releases.commands import run_bisect

    return run_bisect(checked_range_args(args))


def cmd_sweep(args: argparse.Namespace) -> int:
    from harness.releases.commands import run_sweep

    return run_sweep(checked_range_args(args))


def cmd_triage(args: argparse.Namespace) -> int:
    from harness.releases.commands import run_triage

    return run_triage(checked_range_args(args))


def cmd_export(args: argparse.Namespace) -> int:
    from harness.upstream.export import export_script

    case, sizes, settings = _script_case(args)
    script = export_script(case, sizes, settings.for_child())
    if args.out is None:
        print(script, end="")
    else:
        _write_text(args.out, script)
        print(f"written: {args.out}", file=sys.stderr)
    return 0


def _write_text(path: Path, text: str) -> None:
    """Write a file the user named; a folder there, a missing folder or no permission is one line, not a traceback."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder: name a file to write")
    try:
        path.write_text(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def checked_issue_args(args: argparse.Namespace) -> tuple[discovery.CaseInfo, dict[str, int], Settings]:
    """Every check of ``issue`` that needs neither JAX nor the package index (the noxfile runs them too)."""
    from harness.releases.venvs import read_plan

    case, sizes, settings = _script_case(args)
    if (args.good is None) != (args.bad is None):
        raise UsageError("--good and --bad name the two releases compared: give both or neither")
    if args.good is not None and version_key(args.good) >= version_key(args.bad):
        raise UsageError(f"--good must be older than --bad, not {args.good} and {args.bad}")
    if args.metric:
        parse_metric_name(args.metric)
    if args.releases is not None:
        read_plan(args.releases)
    _results_folder(args.results)
    _output_folder(args.out)
    return case, sizes, settings


def issue_request(args: argparse.Namespace) -> IssueRequest:
    from harness.releases.venvs import read_plan
    from harness.upstream.issue import IssueRequest

    case, sizes, settings = checked_issue_args(args)
    plan = read_plan(args.releases) if args.releases is not None else None
    if plan is None:
        _check_installed_release(args)
    metric = parse_metric_name(args.metric) if args.metric else None
    profile = PROFILE_BY_NAME.get(args.profile or "")
    return IssueRequest(
        case=case,
        sizes=sizes,
        settings=settings,
        profile=_profile_label(args),
        platform=profile.kind if profile else "cpu",
        results_dir=_results_folder(args.results),
        out_dir=args.out,
        jax=args.jax,
        good=args.good,
        bad=args.bad,
        metric=metric,
        plan=plan,
    )


def cmd_issue(args: argparse.Namespace) -> int:
    from harness.upstream.issue import write_issue

    request = issue_request(args)
    shown = sizes_text(request.sizes)
    print(f"[{request.profile}] {request.case.name} at {shown}: drafting an issue …", file=sys.stderr, flush=True)
    written = write_issue(request)
    for problem in written.problems:
        print(f"skipped unusable result {problem}", file=sys.stderr)
    print(written.run.stdout, end="")
    for short in written.short_runs:
        print(f"short script on jax {short.run.release} ({short.role}):\n{short.run.stdout}", end="")
    print(f"draft written: {written.draft} (scripts: {written.short}, {written.full})", file=sys.stderr)
    failed = [r for r in [written.run, *(s.run for s in written.short_runs)] if not r.ok]
    if failed:
        what = ", ".join(
            f"jax {r.release} " + ("timed out" if r.returncode is None else f"exited with code {r.returncode}")
            for r in failed
        )
        print(f"harness: a script run failed ({what}); the draft shows its output", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from harness.render.report import write_report

    checked_report_args(args)
    try:
        written, problems, plots = write_report(
            args.results, args.out, baseline=args.baseline, thresholds=thresholds_from(args)
        )
    except OSError as exc:
        raise HarnessError(f"cannot write the report under {args.out}: {exc.strerror or exc}") from None
    for problem in problems:
        print(f"skipped unusable result {problem}", file=sys.stderr)
    if plots.missing_reason:
        print(f"plots not drawn: {plots.missing_reason}", file=sys.stderr)
    print(f"report written: {len(written)} page(s) under {args.out}, start at {written[0]}", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.analysis.set_comparison import Side, compare_sets
    from harness.render.set_comparison import render_markdown, render_text

    a = Side("A", args.a, args.a_release, args.a_profile)
    b = Side("B", args.b or args.a, args.b_release, args.b_profile)
    comparison = compare_sets(a, b, args.case, thresholds_from(args))
    print(render_text(comparison), end="")
    if args.markdown:
        _write_text(args.markdown, render_markdown(comparison))
    return 1 if comparison.worse() else 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from harness.analysis.noise_floor import append_calibration, calibrate
    from harness.render.calibration import noise_floor_sentence

    calibration = calibrate(checked_calibrate_args(args), thresholds_from(args))
    path = append_calibration(args.results, calibration)
    print(noise_floor_sentence(calibration))
    print(f"written: {path}", file=sys.stderr)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from harness.store.merge import merge

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
    catalogue = discovery.discover(args.cases_dir)
    if args.case is not None:
        [case] = discovery.select(catalogue, [args.case])
        print(describe_case(case))
        return 0
    for case in catalogue.values():
        space = ", ".join(f"{name} in [{lo}, {hi}]" for name, (lo, hi) in case.space.ranges.items())
        anchors = "; ".join(sizes_text(a) for a in case.anchors)
        print(
            f"{case.name}\n    source: {case.source}\n    claim: {case.claim}\n    sizes: {space}\n"
            f"    anchors (quick): {anchors}"
        )
    for name, reason in catalogue.broken.items():
        print(f"{name}\n    cannot be read: {reason}")
    return 1 if catalogue.broken else 0


def cmd_new(args: argparse.Namespace) -> int:
    from harness.catalogue.scaffold import write_case

    path = write_case(args.name, args.cases_dir)
    print(f"written: {path}", file=sys.stderr)
    print(
        f"next: edit its TODO lines, then `python -m harness list {args.name}` and the checklist at the end of "
        "cases/README.md (one release, lint, tests)",
        file=sys.stderr,
    )
    return 0


def describe_case(case: discovery.CaseInfo) -> str:
    """One case in full, from its file alone: no JAX is started."""
    from harness.catalogue.outline import outline

    shape = outline(case.path)
    space = ", ".join(f"{name} in [{lo}, {hi}]" for name, (lo, hi) in case.space.ranges.items())
    anchors = "; ".join(sizes_text(a) for a in case.anchors) or "none"
    metrics = [
        *(MetricKey(p, kind).metric_name for p in shape.programs for kind in ("wall", "dispatch")),
        *(MetricKey(f, kind).metric_name for f in shape.compiled for kind in ("lower", "compile")),
    ]
    lines = [
        case.name,
        f"    file: {case.path}",
        f"    source: {case.source}",
        f"    claim: {case.claim}",
        f"    sizes: {space}",
        f"    anchors (quick): {anchors}",
    ]
    if case.space.cost:
        lines.append("    cost: " + ", ".join(f"{kind} {formula}" for kind, formula in case.space.cost.items()))
    if case.min_devices > 1:
        lines.append(f"    needs {case.min_devices} devices (run it under cpu8)")
    if case.devices_used is not None:
        used = f"{case.devices_used} device{'' if case.devices_used == 1 else 's'}"
        lines.append(f"    uses {used}: skipped under a profile that makes more CPU devices (cpu8)")
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


COMMANDS = {
    "run": cmd_run,
    "search": cmd_search,
    "export": cmd_export,
    "issue": cmd_issue,
    "report": cmd_report,
    "compare": cmd_compare,
    "bisect": cmd_bisect,
    "sweep": cmd_sweep,
    "triage": cmd_triage,
    "calibrate": cmd_calibrate,
    "merge": cmd_merge,
    "list": cmd_list,
    "new": cmd_new,
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
    except ModuleNotFoundError as exc:  # a command's extra is not installed here (tabulate, matplotlib, JAX)
        print(
            f"harness: error: {exc.name} is not installed in this environment: the nox session of the command "
            "installs what it needs, or `pip install -e '.[report]'` (JAX: the release to measure)",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt as exc:
        print(
            "harness: interrupted; every result stored so far is kept, run the same command to resume", file=sys.stderr
        )
        return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)
