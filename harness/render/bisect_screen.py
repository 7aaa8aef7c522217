"""A bisect's first screen, of one metric or every metric that moved: the range, the probes, a block
per step found (its metrics, the why, what to run next), what found nothing, the reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.significance import Comparison
from harness.findings import Finding, FollowUp
from harness.render import screen
from harness.render.range_screen import Block, Row, claim_text, frame, head_line, metric_row
from harness.render.why import issue_follow_up, libraries_line, next_steps, why_lines
from harness.steps.answers import Setting
from harness.steps.bisection import BisectOutcome, expected_probes
from harness.steps.judge import FIX, REGRESSION, Judgement


@dataclass(frozen=True)
class Bisected:
    found: BisectOutcome
    setting: Setting
    hint: Finding | None = None


def _step(found: BisectOutcome) -> Comparison | None:
    """The first bad probe against the good end: the step's direction."""
    judged = _probe(found, str(found.first_bad))
    return None if judged is None else judged.vs_good


def bisect_why(found: BisectOutcome, setting: Setting) -> list[Finding]:
    if not found.found or found.last_good is None or found.first_bad is None:
        return []
    good, bad, criterion = found.last_good, found.first_bad, setting.criterion
    libraries = libraries_line(setting, good, bad)
    said = [libraries] if libraries else []
    # A bisect's "bad" release is the one its user does not want, whichever way the number moved.
    unwanted = setting.terms is REGRESSION
    if criterion.explained:
        said += why_lines(setting, good, bad, _step(found), criterion, unwanted=unwanted)
    return said


def _probe(found: BisectOutcome, release: str) -> Judgement | None:
    return next((j for j in found.probes if j.release == release), None)


def _bisect_row(each: Bisected) -> Row:
    found, criterion = each.found, each.setting.criterion
    bad = _probe(found, found.first_bad or "")
    if bad is None or bad.vs_good is None:  # the claim's
        claims = f"{claim_text(_probe(found, found.last_good or ''))} → {claim_text(bad)}"
        return Row(criterion, claims, "", "flips", "")
    return metric_row(criterion, bad.vs_good)


def bisect_follow_ups(each: Bisected) -> list[FollowUp]:
    setting, found = each.setting, each.found
    good, bad, criterion = str(found.last_good), str(found.first_bad), setting.criterion
    unwanted = setting.terms is REGRESSION
    return [
        *next_steps(setting, good, bad, criterion, _step(found), setting.terms, unwanted=unwanted),
        issue_follow_up(setting, good, bad, criterion, "the upstream issue, drafted"),
    ]


def bisect_blocks(answers: Sequence[Bisected]) -> tuple[list[Block], list[str]]:
    """A block per step found (the metrics that moved in it together); lines for those without."""
    steps: dict[tuple[str, str], list[Bisected]] = {}
    missing = []
    for each in answers:
        found = each.found
        if found.found and found.last_good and found.first_bad:
            steps.setdefault((found.last_good, found.first_bad), []).append(each)
            continue
        missing += screen.wrap(f"{each.setting.criterion.name}: {found.answer()}")
        if each.hint is not None:
            missing += screen.finding_lines(each.hint)
    blocks = []
    for (good, bad), group in steps.items():
        group = sorted(group, key=lambda b: b.setting.criterion.rank())
        lead, terms = group[0], group[0].setting.terms
        between = lead.found.between()
        skipped = f"; {', '.join(between)} between could not be judged" if between else ""
        first = f"Fixed in: jax {bad}" if terms == FIX else f"First {terms.new}: jax {bad}"
        head = f"{first} · last {terms.old}: jax {good}{skipped}"
        rows = [_bisect_row(each) for each in group]
        why = bisect_why(lead.found, lead.setting)
        blocks.append(Block(head, f"{good} → {bad}", rows, why, bisect_follow_ups(lead)))
    return blocks, missing


def _probed(judged: Judgement, setting: Setting) -> str:
    """``0.4.31 good``; by status, how its processes ended (``0.10.1 SIGSEGV (exit 139)``): an
    endpoint is good or bad by the range's terms, whether or not it ran ok."""
    side = judged.ends
    if not setting.criterion.ending or side is None:
        return f"{judged.release} {setting.terms.word(judged.verdict)}"
    return f"{judged.release} {side.alike or side.words()}"


def bisect_screen(answers: Sequence[Bisected], setting: Setting, reports: Sequence[str]) -> str:
    releases = answers[0].found.releases
    probes = sum(len(a.found.probes) for a in answers)
    n = len(releases)
    expected = f"⌈log2 {n}⌉ + 2 = {expected_probes(n)} expected for one change"
    wall = f"wall time {setting.wall_s:.0f} s, installs included"
    count = f"{n} releases in the range; {probes} probes ({expected}); {wall}"
    if len(answers) > 1:
        count = (
            f"{n} releases in the range; {len(answers)} metrics moved between the endpoints, each "
            f"bisected: {probes} probes, stored results reused; {wall}"
        )
    head = [head_line("Bisect", setting, releases[0], releases[-1]), *screen.wrap(count)]
    if len(answers) == 1:
        probed = ", ".join(_probed(j, answers[0].setting) for j in answers[0].found.probes)
        head += screen.wrap(f"probed: {probed}", indent="  ")
    blocks, missing = bisect_blocks(answers)
    more = screen.budgeted([f"  {r}" for r in reports], 4, "  … and {n} more beside them")
    shown = [f"Report: {reports[0]}"] if len(reports) == 1 else ["Reports, one per metric:", *more]
    return frame(head, blocks, missing, setting, shown)


def nothing_to_bisect_screen(
    setting: Setting, first: str, last: str, said: Sequence[Finding]
) -> str:
    lines = screen.wrap(head_line("Bisect", setting, first, last), indent="  ")
    for finding in said:
        lines += screen.finding_lines(finding)
    return "\n".join(screen.budgeted(lines, screen.LINES, "… and {n} more lines")) + "\n"
