"""Run planned case runs, one subprocess each, and store every outcome.

Statuses: ``ok``, ``failed`` (the error's last lines), ``timeout``, ``crashed``
(killed by a signal: segfault, abort, the kernel's OOM killer) and ``skipped``
(with the reason).  Whatever one run does, the sweep goes on to the next.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.catalogue import CaseInfo
from harness.environment import host_facts, package_versions, scrub
from harness.results import new_record, write_result
from harness.sizes import Budget, PlannedPoint

STDERR_TAIL_LINES = 25


@dataclass(frozen=True)
class Settings:
    timeout_s: float = 300.0
    warmup: int = 2
    repeats: int = 30
    min_repeats: int = 5
    max_seconds: float = 10.0
    compile_repeats: int = 3
    effort: str = "quick"

    def for_child(self) -> dict[str, Any]:
        return {
            "warmup": self.warmup,
            "repeats": self.repeats,
            "min_repeats": self.min_repeats,
            "max_seconds": self.max_seconds,
            "compile_repeats": self.compile_repeats,
        }


@dataclass(frozen=True)
class PlannedRun:
    case: CaseInfo
    point: PlannedPoint

    @property
    def sizes(self) -> dict[str, int]:
        return self.point.sizes


@dataclass
class Outcome:
    status: str
    detail: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0


def tail(text: str, lines: int = STDERR_TAIL_LINES) -> str:
    return scrub("\n".join(text.strip().splitlines()[-lines:]))


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify(returncode: int, payload: dict[str, Any] | None, stderr: str) -> Outcome:
    if returncode < 0:
        name = signal_name(-returncode)
        hint = " (the kernel's OOM killer sends this when memory runs out)" if name == "SIGKILL" else ""
        return Outcome("crashed", f"killed by {name}{hint}\n{tail(stderr)}".strip())
    if returncode != 0:
        return Outcome("failed", f"exit code {returncode}\n{tail(stderr)}".strip())
    if payload is None:
        return Outcome("failed", f"the case process exited without a result\n{tail(stderr)}".strip())
    status = payload.pop("status", "failed")
    return Outcome(status, payload.pop("detail", ""), payload)


def run_in_child(case_file: Path, sizes: dict[str, int], settings: Settings) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="harness-") as scratch:
        out = Path(scratch) / "payload.json"
        command = [
            sys.executable,
            "-m",
            "harness.child",
            "--case-file",
            str(case_file),
            "--sizes",
            json.dumps(sizes),
            "--settings",
            json.dumps(settings.for_child()),
            "--out",
            str(out),
        ]
        started = time.monotonic()
        # A session of its own, so a timeout kills the case and any process it started.
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        try:
            _, stderr = proc.communicate(timeout=settings.timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, stderr = proc.communicate()
            outcome = Outcome("timeout", f"no result within {settings.timeout_s:g} s; killed\n{tail(stderr)}")
            outcome.duration_s = time.monotonic() - started
            return outcome
        payload = None
        if out.exists():
            try:
                payload = json.loads(out.read_text())
            except json.JSONDecodeError:
                payload = None
        outcome = classify(proc.returncode, payload, stderr)
        outcome.duration_s = time.monotonic() - started
        return outcome


def release_label() -> str:
    return package_versions().get("jax", "unknown")


@dataclass
class Recorder:
    """Runs one planned point in a child process and stores its result, whatever happened."""

    results_dir: Path
    profile: str
    settings: Settings
    seed: int
    budget: Budget
    release: str = field(default_factory=release_label)
    host: dict[str, Any] = field(default_factory=host_facts)

    def run(self, item: PlannedRun) -> tuple[Outcome, Path]:
        if item.point.refusal:
            outcome = Outcome("skipped", f"refused before allocation: {item.point.refusal}")
        else:
            outcome = run_in_child(item.case.path, item.sizes, self.settings)
        record = new_record(
            case=item.case.name,
            release=self.release,
            profile=self.profile,
            sizes=item.sizes,
            size_source=item.point.source,
            seed=self.seed,
            cost_estimate=item.case.space.cost_of(item.sizes),
            budget=self.budget.as_dict(),
            status=outcome.status,
            detail=outcome.detail,
            duration_s=round(outcome.duration_s, 3),
            settings={
                **self.settings.for_child(),
                "timeout_s": self.settings.timeout_s,
                "effort": self.settings.effort,
            },
            claim_statement=item.case.claim,
            discussion=item.case.discussion,
            host=self.host,
            **outcome.payload,
        )
        return outcome, write_result(self.results_dir, record)


def describe(outcome: Outcome) -> str:
    verdict = ""
    if "claim" in outcome.payload:
        verdict = " · claim holds" if outcome.payload["claim"]["holds"] else " · claim does NOT hold"
    return f"{outcome.status}{verdict} in {outcome.duration_s:.1f} s"


def run_all(
    plan: list[PlannedRun],
    recorder: Recorder,
    progress: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> list[tuple[Outcome, Path]]:
    stored = []
    for index, item in enumerate(plan, start=1):
        sizes_text = " ".join(f"{k}={v}" for k, v in item.sizes.items())
        prefix = f"[jax {recorder.release} · {recorder.profile}] ({index}/{len(plan)}) {item.case.name} {sizes_text}"
        progress(f"{prefix} …")
        outcome, path = recorder.run(item)
        progress(f"{prefix} → {describe(outcome)} ({len(plan) - index} left)")
        if outcome.status not in ("ok", "skipped") and outcome.detail:
            progress("    " + outcome.detail.splitlines()[-1][:200])
        stored.append((outcome, path))
    return stored
