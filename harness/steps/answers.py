"""What a bisect's, sweep's or triage's answer is about (``Setting``), and where it is written: one
file per case, range, criterion, sizes and profile.

``bisect-<case>-<good>-<bad>-<criterion>-<sizes>-<profile>.md`` (and ``.json``), likewise
``triage-…``: a bisect of another range, metric, size point or profile never replaces this
one's answer.  The criterion is ``Criterion.name``: the metric's name, ``claim``, ``status``, or
``all`` (every metric and the claim); sizes read ``N.100+M.500``.  Every part must be a name
(``harness.names``), and a stem too long for one is shortened by a digest of its tail, never cut.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.analysis.significance import Thresholds
from harness.errors import UsageError
from harness.metric_names import Criterion, MetricKey
from harness.names import name_problem
from harness.steps.evidence import Found
from harness.steps.judge import REGRESSION, Terms
from harness.units import sizes_text

NO_SIZES = "nosizes"
# the name pattern allows 128 characters, with room for ".json" and the plot's suffix
LONGEST_STEM = 110


def answer_stem(
    command: str,
    case: str,
    first: str,
    last: str,
    *,
    criterion: Criterion,
    sizes: Mapping[str, int],
    profile: str,
) -> str:
    """The file name, without suffix, of ``command``'s answer for this case, range and setting."""
    sized = "+".join(f"{name}.{value}" for name, value in sorted(sizes.items())) or NO_SIZES
    parts = [command, case, first, last, criterion.name, sized, profile]
    # sizes: names and whole numbers, checked when parsed, of any length
    for part in parts[:5] + parts[6:]:
        if problem := name_problem(part):
            raise UsageError(f"cannot name the {command} answer after it: {problem}")
    stem = "-".join(parts)
    if len(stem) > LONGEST_STEM:
        digest = hashlib.sha256("-".join(parts[4:]).encode()).hexdigest()[:12]
        stem = "-".join([*parts[:4], digest])
    if len(stem) > LONGEST_STEM:  # a case and releases alone this long cannot be named
        raise UsageError(
            f"cannot name the {command} answer: {stem[:40]}… is {len(stem)} characters with the "
            f"case and its releases, over the {LONGEST_STEM} a page's name may have: give the "
            "script a shorter name"
        )
    if problem := name_problem(stem):
        raise UsageError(f"cannot name the {command} answer: {problem}")
    return stem


# jax's own distributions: they are the release, never held apart from it (a CUDA plugin, the CUDA
# wheels its jaxlib was built against, a TPU runtime).
JAX_OWN = re.compile(r"jax|jaxlib|jax-(cuda|rocm)\d*-(plugin|pjrt)|libtpu(-nightly)?|nvidia-.+")


@dataclass(frozen=True)
class RangeLibraries:
    """A plain script's own libraries over a range: versions per release, what was held, varied."""

    # release → declared library → version
    versions: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    held: tuple[str, ...] = ()  # --hold pins
    vary: str | None = None  # --vary: the library whose releases make the range
    jax: str | None = None  # with --vary: the jax release held
    policy: str = ""
    # release → every distribution its script venv installed besides jax's own (``JAX_OWN``) →
    # version: declared libraries, their dependencies and jax's (numpy), as the stored result says.
    installed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def moved_with_jax(self, before: str, after: str) -> dict[str, tuple[str, str]]:
        """Every package whose installed version differs between two releases, declared or not (a
        library's own dependency, jax's such as numpy), declared first: name → (before, after)."""
        installed = _differing(self.installed.get(before, {}), self.installed.get(after, {}))
        undeclared = {name: pair for name, pair in installed.items() if not JAX_OWN.fullmatch(name)}
        return {**self.moved(before, after), **undeclared}

    def moved(self, before: str, after: str) -> dict[str, tuple[str, str]]:
        """The declared libraries whose versions differ between two releases."""
        return _differing(self.versions.get(before, {}), self.versions.get(after, {}))


def _differing(old: Mapping[str, str], new: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """The names in both whose versions differ, sorted: name → (old's, new's)."""
    both = sorted(set(old) & set(new))
    return {name: (old[name], new[name]) for name in both if old[name] != new[name]}


def varied_version(label: str, library: str) -> str:
    """With --vary: a release label's library version (``0.4.33+equinox.0.11.4`` → ``0.11.4``)."""
    return label.partition("+")[2].removeprefix(f"{library}.")


@dataclass(frozen=True)
class Setting:
    """What was searched: the same for every release probed."""

    case: str
    sizes: dict[str, int]
    profile: str
    # a metric, the claim, how the processes end, or every metric and the claim
    criterion: Criterion
    jaxlib: Mapping[str, str]  # jax release → the jaxlib it was installed with
    thresholds: Thresholds
    wall_s: float
    terms: Terms = REGRESSION  # a bisect's names for the old and the new behaviour
    # how a command line names what was measured: --case C, or --script F --script-arg A
    target: tuple[str, ...] = ()
    libraries: RangeLibraries = field(default_factory=lambda: RangeLibraries())
    # Per step (older, newer side): what each kind of evidence found (``harness.steps.evidence``).
    evidence: Mapping[tuple[str, str], tuple[Found, ...]] = field(default_factory=dict)

    def target_words(self) -> list[str]:
        return list(self.target) or ["--case", self.case]

    @property
    def metric(self) -> MetricKey | None:
        """The one metric of figures judged, if one is; not how processes end (``process.end``)."""
        return self.criterion.figures

    def header(self) -> str:
        sizes = sizes_text(self.sizes)
        return f"{self.case} at {sizes} · profile {self.profile} · by {self.criterion.said()}"
