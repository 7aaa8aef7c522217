"""A crash report draft in JAX's bug form: the description with a standalone reproducer, what
happened (the release that runs, the one that crashes, the signal or exit status, faulthandler's
stack or the last lines), the workaround where one was found, and the system info with
``jax.print_environment_info()`` and the CPU model.  Pure: a model in, markdown out; every text in
it was scrubbed where it was captured or stored, and is redacted again here (a stored result merged
from another machine, or edited, is input too), all but the reproducer: the script's own text,
whose ``key=...`` a redaction would garble."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from harness.host.environment import redact
from harness.measure.deaths import from_site_packages
from harness.render.text import code_span, fenced, inline
from harness.store.schema import EndKind
from harness.upstream.change import PLATFORMS
from harness.upstream.crash import Crash

FORM = "https://github.com/jax-ml/jax/issues/new?template=bug-report.yml"
SHOWN_LINES = 40  # of the stack and of the last lines: the end, where the fault is
SCRIPT_LINES = 300  # a longer script is named, not pasted
HARNESS_FRAME = re.compile(r'File "[^"]*harness/measure/script_hook\.py"')


@dataclass(frozen=True)
class CrashDraft:
    """What the crash report says."""

    name: str  # the script's file name (or the case's)
    platform: str  # "cpu" or "gpu": the profile's kind
    crash: Crash
    script: str  # the reproducer's text, "" where none can be shown
    script_name: str  # its file name, as the command runs it
    # what it is: "the script itself (plain JAX)", "the reproducer with jax alone, …"
    script_words: str
    args: tuple[str, ...] = ()  # the script's own arguments
    missing_script: str = ""  # where no reproducer is shown: why, and the command that adds one
    # release → what ``pip install`` takes to install it (its jaxlib may differ); absent: jax and
    # jaxlib at it
    installs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = ""  # where the two releases come from, in words
    workaround: str = ""  # a setting that makes the crashing release run, as a stored why found it
    newest: str = ""  # whether the newest release on the index still crashes, measured
    not_measured: tuple[str, ...] = ()  # what the draft could not measure, each with its command


def title(d: CrashDraft) -> str:
    """``repro.py crashes since jax 0.10.2 on CPU: SIGSEGV (exit 139)``, or how it runs again."""
    crash, where = d.crash, PLATFORMS.get(d.platform, d.platform.upper())
    if crash.regression:
        return f"{d.name} {crash.verb} since jax {crash.crashes} on {where}: {crash.how}"
    return (
        f"{d.name} {crash.verb} on jax {crash.crashes} on {where}, runs again since {crash.runs}: "
        f"{crash.how}"
    )


def render_crash(d: CrashDraft) -> str:
    sections = [
        f"<!-- Crash report draft by jax-repro-harness for {inline(d.name)}. Paste the sections "
        f"below into the fields of the same name in JAX's bug-report form ({FORM}). -->",
        redact(f"**Title:** {inline(title(d))}"),
        "### Description",
        redact(description(d)),
        reproducer(d),
        redact(what_happened(d)),
        redact(system_info(d)),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def description(d: CrashDraft) -> str:
    crash = d.crash
    lines = [
        f"This script runs ok on jax {crash.runs} ({crash.ok_words}) and {crash.verb} on jax "
        f"{crash.crashes} ({crash.dead_words}): the same in every process of each release, each a "
        "fresh Python process."
    ]
    if d.source:
        lines.append(f"The two releases come from {d.source}.")
    if d.newest:
        lines.append(f"Newest release on the index: {d.newest}.")
    if d.workaround:
        lines.append(f"Workaround: on jax {crash.crashes} it runs with {code_span(d.workaround)}.")
    lines += [f"{line}." for line in d.not_measured]
    return "\n\n".join(lines)


def reproducer(d: CrashDraft) -> str:
    """The standalone reproducer, pasted, with the two install lines and how to run it."""
    if not d.script.strip():
        return "#### Reproducer\n\n" + (d.missing_script or "No reproducer with jax alone to show.")
    lines = d.script.rstrip().splitlines()
    shown = (
        fenced("\n".join(lines), "python")
        if len(lines) <= SCRIPT_LINES
        else f"({len(lines)} lines: attach {code_span(d.script_name)})"
    )
    run = " ".join(["python", d.script_name, *d.args])
    installs = [
        shlex.join(["pip", "install", *(d.installs.get(v) or (f"jax=={v}", f"jaxlib=={v}"))])
        for v in (d.crash.runs, d.crash.crashes)
    ]
    return "\n".join(
        [
            f"#### Reproducer: {code_span(d.script_name)}, {d.script_words}",
            "",
            shown,
            "",
            "Run on each release in a fresh environment:",
            "",
            fenced("\n".join([*installs[:1], run, *installs[1:], run]), "sh"),
        ]
    )


def what_happened(d: CrashDraft) -> str:
    """How every process of the crashing release ended, and where its first one died."""
    crash, end = d.crash, d.crash.end
    lines = [
        "#### What happened",
        "",
        f"On jax {crash.crashes} every process ended {crash.how}; on jax {crash.runs} every one "
        "ran ok.",
    ]
    if end is not None and end.stack.strip():
        when = "its time-out" if end.how is EndKind.TIMEOUT else "the fault"
        lines += ["", f"Python's stack at {when} (faulthandler), the first process:", ""]
        lines.append(fenced(_end_of(script_frames(end.stack)), "text"))
    if end is not None and end.last_lines.strip():
        lines += ["", "The last lines it wrote:", ""]
        lines.append(fenced(_end_of(end.last_lines), "text"))
    return "\n".join(lines)


def script_frames(stack: str) -> str:
    """faulthandler's stack without the frames of what started the script (runpy, the harness's
    start-up hook): a maintainer runs ``python script.py``, whose stack ends at the script's
    ``<module>``."""
    return "\n".join(
        from_site_packages(line)  # a result stored before they were shown so
        for line in stack.splitlines()
        if not HARNESS_FRAME.search(line) and '"<frozen runpy>"' not in line
    )


def _end_of(text: str) -> str:
    lines = text.strip().splitlines()
    kept = lines[-SHOWN_LINES:]
    return "\n".join(
        ([f"… ({len(lines) - len(kept)} lines before)"] if len(lines) > len(kept) else []) + kept
    )


def system_info(d: CrashDraft) -> str:
    crash = d.crash
    machine = ", ".join(filter(None, (crash.cpu_model, crash.platform))) or "not recorded"
    info = crash.environment_info.strip() or "(unavailable)"
    return "\n".join(
        [
            "### System info (python version, jaxlib version, accelerator, etc.)",
            "",
            f"CPU: {inline(machine)} (crashes in XLA:CPU often depend on it).",
            "",
            "<details><summary>Output of <code>jax.print_environment_info()</code> (jax "
            f"{crash.crashes})</summary>",
            "",
            fenced(info, "text"),
            "",
            "</details>",
        ]
    )
