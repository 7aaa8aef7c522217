"""A side's run of a cell as a stored result: the record, written once, read back as every reader
reads it; and the check, under the results folder's lock, that a plain script's results never mix
with another version's; and the status a cell measured before was stored with, which a resumed run
passes over."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.catalogue.discovery import CaseInfo
from harness.catalogue.sizes import Budget
from harness.errors import HarnessError, UsageError, WriteRefused
from harness.measure.cells import CellRun, PlannedRun
from harness.measure.sides import CLAIM_MARK, Side
from harness.names import inside
from harness.store.results import (
    INTERRUPTED,
    StoredResult,
    UnreadableResult,
    cut_short,
    load_results,
    new_identity,
    newest_result,
    read_result,
    readable,
    write_result,
)
from harness.store.schema import HostFacts, Result, RunStatus, ScriptIdentity, Settings


@dataclass(frozen=True)
class RunContext:
    """What every result of one measurement records beside its own processes."""

    results_dir: Path
    settings: Settings
    seed: int
    budget: Budget
    invocation: str  # comparisons tell sides that shared this run's level from separate runs


def result_of(
    context: RunContext, item: PlannedRun, run: CellRun, others: list[str], host: HostFacts
) -> Result:
    sizes = run.side.cell_sizes(item.sizes)
    identity = new_identity()
    return Result(
        id=identity.id,
        created_at=identity.created_at,
        case=item.case.name,
        release=run.side.release,
        profile=run.side.profile,
        sizes=sizes,
        size_source=item.point.source if sizes == item.sizes else "explicit",
        seed=context.seed,
        cost_estimate=item.case.space.cost_of(sizes),
        budget=context.budget.as_dict(),
        status=run.status,
        detail=run.detail,
        duration_s=round(run.duration_s, 3),
        window_unix_ns=run.window_unix_ns,
        settings=context.settings,
        claim_statement=item.case.claim,
        source=item.case.source,
        source_figure=item.case.source_figure(sizes),
        host=host,
        interleaved_with=tuple(others),
        invocation=context.invocation,
        processes=tuple(run.processes),
        script=item.case.subject.identity(),
        libraries=run.side.libraries,
    )


def not_installable_result(
    context: RunContext, item: PlannedRun, side: Side, reason: str, host: HostFacts
) -> Result:
    """The result of a cell whose side cannot be had: what the script declares cannot be installed
    beside its release.  No process ran: the resolver's reason is its detail."""
    run = CellRun(side, 0)
    return dataclasses.replace(
        result_of(context, item, run, [], host), status=RunStatus.NOT_INSTALLABLE, detail=reason
    )


def store(folder: Path, result: Result) -> StoredResult:
    """Store ``result`` (what no reader reads left out) and read it back; HarnessError if not."""
    try:
        return read_result(write_result(folder, readable(result)))
    except UnreadableResult as exc:
        raise HarnessError(f"{exc}; results stored so far are kept") from None
    except OSError as exc:
        why = exc.strerror or exc
        kept = "results stored so far are kept"
        raise WriteRefused(f"cannot store results in {folder}: {why}; {kept}") from None


def same_script(stored: StoredResult, case: CaseInfo) -> bool:
    """Whether ``stored`` measured what ``case`` is now (a script's content and arguments): another
    run may have stored another version meanwhile (``check_results_folder`` holds the lock)."""
    return case.subject.measured_by(stored.result.script)


def stored_status(results_dir: Path, machine: str, item: PlannedRun, side: Side) -> str | None:
    """Status of this cell's newest result on ``side`` and ``machine``, if measured before (a skip
    by ``Side.claim_skip`` is not, for a side that measures every case)."""

    # Only a result of this script's content and arguments was measured before
    # (``check_results_folder`` refused a folder of others, under the same lock).
    def counts(stored: StoredResult) -> bool:
        result = stored.result
        claim_skip = result.status == RunStatus.SKIPPED and any(
            CLAIM_MARK in process.detail for process in result.processes
        )
        return same_script(stored, item.case) and (side.claims_only or not claim_skip)

    cell = (item.case.name, side.release, side.profile, side.cell_sizes(item.sizes))
    found = newest_result(results_dir, *cell, machine, counts)
    if found is None:
        return None
    return INTERRUPTED if cut_short(found) else found.result.status


def check_results_folder(results_dir: Path, case: CaseInfo) -> None:
    """Refuse a results folder whose results of the script's name are of other content."""

    def recorded() -> Iterator[ScriptIdentity | None]:  # read only where the subject asks
        folder = inside(results_dir, case.name)
        if folder.is_dir():
            for stored in load_results(folder)[0]:
                yield stored.result.script

    problem = case.subject.mixing_problem(str(results_dir / case.name), recorded())
    if problem:
        raise UsageError(problem)
