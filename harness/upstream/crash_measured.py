"""What ``issue --status`` measures itself where no stored answer says it: the status step confirmed
(every process of one release ok, every one of the other dead alike, ``analysis.statuses``) and
whether the newest release on the index still crashes.

The step's two releases and the newest are measured together at ``--processes`` a side, as a
metric's step is (``step_measured``), with the same sides and stored results, so a later bisect or
triage reuses them; a status needs no looks of more processes: one process that runs where the
others crashed already breaks the step.
"""

from __future__ import annotations

import dataclasses

from harness.analysis.statuses import ran, summarise
from harness.findings import nox_command
from harness.steps.probes import ReleaseProber
from harness.upstream.crash import Crash
from harness.upstream.step_measured import StepRequest, measuring_prober


def measure_status(request: StepRequest) -> ReleaseProber:
    """The step's two releases and the newest on the index measured together (stored results
    reused)."""
    planned = dataclasses.replace(request, max_processes=request.processes)
    prober = measuring_prober(planned, None)
    releases = list(prober.envs)
    request.progress(
        f"[issue {request.case.name}] jax {', '.join(releases)} measured together: to confirm the "
        "crash" + (" and ask the newest release on the index" if len(releases) > 2 else "")
    )
    prober.measure_together([request.bad, request.good, *releases[2:]])
    return prober


def newest_status_line(
    prober: ReleaseProber, request: StepRequest, crash: Crash, target: list[str]
) -> tuple[str, str]:
    """Whether the newest release on the index still crashes, measured: "still crashes on V", "runs
    again on V", or how its processes ended ("" where it is an end of the step); and where it runs
    again, the bisect that finds since which release (``target``: the script's words), for the
    screen."""
    newest = request.newest
    if newest in (request.good, request.bad):
        return "", ""
    probe = prober(newest)
    if probe.result is None or not ran(probe.result):
        return (
            f"jax {newest}, the newest release on the index, could not be measured: {probe.note}",
            "",
        )
    side = summarise(probe.result)
    if side.all_dead_alike == crash.how:
        return f"still {crash.verb} on {newest} ({side.words()})", ""
    if side.all_ok and crash.regression:
        words = ["--status", "--broken", crash.crashes, "--fixed", newest]
        bisect = nox_command("bisect", target, words, request.sizes, request.profile)
        return (
            f"runs again on {newest} ({side.words()})",
            f"since which release it runs again: `{bisect}`",
        )
    if side.all_ok:
        return f"still runs on {newest} ({side.words()})", ""
    return f"on {newest}: {side.words()}", ""
