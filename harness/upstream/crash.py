"""What a crash report draft is about: the release on which every process of the script ran ok, the
one on which every process died alike, how, where, and a workaround where a why found one.  Pure.

The two releases come from ``--good``/``--bad``, else from the newest stored answer with a status
step: a ``bisect --status`` answer (``criterion`` "status", or its file named so) or a triage
answer's confirmed ``status`` change.  How each side ended comes from the two releases' stored
results (``analysis.statuses``), whose ``died`` records keep the signal or exit status, the last
lines and faulthandler's stack, bounded and scrubbed when stored.  A workaround is read from the
answer defensively: the ``crash`` why's entry of the step (its ``workaround``'s ``setting``, one
that ran ok), a ``workaround`` entry, or a follow-up that is a setting to make (``shell`` false)
named a workaround; absent, the draft has no such line.  A reproducer with jax alone is taken only
where its ``status`` says it ``reproduces`` the crash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis.statuses import OK, ran, status_change, stops_running, summarise, verb
from harness.metric_names import Judged
from harness.store.results import StoredResult
from harness.store.schema import ProcessEnd
from harness.units import version_key
from harness.upstream.change import (
    BisectAnswer,
    Reproduced,
    answer_about,
    answer_ends,
    reproducer_named,
)

STATUS_CRITERION = Judged.STATUS.stem  # as a bisect answer's file and data name its criterion
MAX_WORKAROUND_CHARS = 300


@dataclass(frozen=True)
class StatusAnswer:
    """A stored answer's status step: its two releases (older first), the answer's name, what it
    found."""

    before: str
    after: str
    source: str
    workaround: str = ""
    reproducer: Reproduced | None = None


@dataclass(frozen=True)
class Crash:
    """A status step as the draft says it: ``runs`` ok in every process, ``crashes`` dead alike in
    every one."""

    runs: str
    crashes: str
    ok_words: str  # "ok in 5 of 5 processes"
    dead_words: str  # "SIGSEGV (exit 139) in 5 of 5 processes"
    how: str  # "SIGSEGV (exit 139)": how every process of the crashing release ended
    end: ProcessEnd | None  # its first process's end: last lines, stack
    cpu_model: str = ""  # of the machine the crashing release ran on
    platform: str = ""
    # ``jax.print_environment_info()`` as the crashing release's process said it
    environment_info: str = ""

    @property
    def regression(self) -> bool:
        """Whether it stopped running ok (else it runs again since ``runs``)."""
        return version_key(self.crashes) > version_key(self.runs)

    @property
    def verb(self) -> str:
        """``crashes``, ``hangs``, ``fails``, ``is killed``."""
        return verb(f"{OK} → {self.how}")


def crash_between(before: StoredResult | None, after: StoredResult | None) -> Crash | None:
    """The status step between two releases' stored results (``before`` the older), or None where
    there is none: every process of one ok, every one of the other dead alike."""
    if before is None or after is None or not (ran(before) and ran(after)):
        return None
    change = status_change(before, after)
    if change is None:
        return None
    ok, dead = (before, after) if stops_running(change) else (after, before)
    dead_summary = summarise(dead)
    host, jax = dead.result.host, dead.result.jax
    return Crash(
        runs=ok.release,
        crashes=dead.release,
        ok_words=summarise(ok).words(),
        dead_words=dead_summary.words(),
        how=str(dead_summary.all_dead_alike),
        end=dead_summary.first,
        cpu_model=(host.cpu_model or "") if host is not None else "",
        platform=(host.platform or "") if host is not None else "",
        environment_info=(jax.environment_info if jax is not None else "") or "",
    )


def sides_words(before: StoredResult | None, after: StoredResult | None) -> str:
    """How each of two releases' processes ended, where they make no status step."""
    return "; ".join(
        f"jax {r.release} {summarise(r).words()}"
        if r is not None and ran(r)
        else "one not measured"
        for r in (before, after)
    )


def newest_stored(
    results: Sequence[StoredResult], release: str, sizes: dict[str, int], profile: str
) -> StoredResult | None:
    """The newest stored result of ``release`` whose processes ran, whatever their status (a crash's
    is not ok)."""
    found = [
        r
        for r in results
        if r.release == release and r.sizes == sizes and r.profile == profile and ran(r)
    ]
    return max(found, key=lambda r: r.created_at) if found else None


def status_answer(
    bisects: Sequence[BisectAnswer],
    triages: Sequence[BisectAnswer],
    *,
    case: str,
    sizes: dict[str, int],
    profile: str,
) -> StatusAnswer | None:
    """The newest stored answer's status step for this case, sizes and profile; None where none has
    one."""
    found: list[tuple[str, StatusAnswer]] = []
    for answer in bisects:
        data = answer.data
        if not answer_about(data, case, sizes, profile) or not _by_status(answer):
            continue
        ends = answer_ends(data)
        if ends is not None:
            said = StatusAnswer(
                *ends,
                f"a bisect of jax releases by how the script's processes end (`{answer.name}`)",
                workaround_of(data, ends),
                reproducer_named(_reproducing(data.get("reproducer")), ends),
            )
            found.append((str(data.get("created_at", "")), said))
    for answer in triages:
        data = answer.data
        first = data.get("first_round") if isinstance(data, dict) else None
        if not answer_about(first, case, sizes, profile):
            continue
        for each in data.get("confirmations") or []:
            if not isinstance(each, dict) or each.get("metric") != STATUS_CRITERION:
                continue
            before, after = each.get("before"), each.get("after")
            if (
                each.get("outcome") == "confirmed"
                and isinstance(before, str)
                and isinstance(after, str)
            ):
                said = StatusAnswer(
                    before,
                    after,
                    f"a triage of jax releases, its step measured again (`{answer.name}`)",
                    workaround_of(each) or workaround_of(data, (before, after)),
                    reproducer_named(_reproducing(data.get("reproducer")), (before, after)),
                )
                found.append((str(data.get("created_at", "")), said))
    return max(found, key=lambda f: f[0])[1] if found else None


def _by_status(answer: BisectAnswer) -> bool:
    data = answer.data
    return data.get("criterion") == STATUS_CRITERION or f"-{STATUS_CRITERION}-" in answer.name


def _reproducing(found: Any) -> list[Any]:
    """The reproducer entries whose run on both releases died where the script did
    (``status.reproduces``)."""
    return [
        entry
        for entry in (found if isinstance(found, list) else [])
        if isinstance(entry, dict)
        and isinstance(entry.get("status"), dict)
        and entry["status"].get("reproduces") is True
    ]


def workaround_of(data: Any, ends: tuple[str, str] | None = None) -> str:
    """The workaround a stored why found (a setting that makes the crashing release run), in one
    line; "" where it found none or the answer does not say.  ``ends``: the step whose ``crash`` why
    is read."""
    if not isinstance(data, dict):
        return ""
    steps = data.get("crash")
    for entry in steps if isinstance(steps, list) else []:
        if not isinstance(entry, dict) or (entry.get("before"), entry.get("after")) != ends:
            continue
        found = entry.get("workaround")
        if isinstance(found, dict) and found.get("runs") is not False:
            setting = found.get("setting")
            if isinstance(setting, str) and setting.strip():
                return _bounded(setting)
    said = data.get("workaround")
    if isinstance(said, dict):
        said = next(
            (said[k] for k in ("setting", "command", "words") if isinstance(said.get(k), str)), ""
        )
    if isinstance(said, str) and said.strip():
        return _bounded(said)
    offered = list(data.get("next") or []) if isinstance(data.get("next"), list) else []
    for finding in data.get("findings") or [] if isinstance(data.get("findings"), list) else []:
        if isinstance(finding, dict) and isinstance(finding.get("follow_ups"), list):
            offered += finding["follow_ups"]
    for each in offered:
        if (
            isinstance(each, dict)
            and each.get("shell") is False
            and "workaround" in str(each.get("purpose", ""))
            and isinstance(each.get("command"), str)
        ):
            return _bounded(each["command"])
    return ""


def _bounded(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_WORKAROUND_CHARS else line[: MAX_WORKAROUND_CHARS - 1] + "…"
