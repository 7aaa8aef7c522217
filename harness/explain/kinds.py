"""The registry of evidence kinds: every kind a step's why asks, in the order it is asked (a status
step's: ``kinds_for``).

A new kind is a module of ``harness.explain`` implementing ``harness.steps.evidence.Evidence`` (its
``Found`` judged when gathered), one entry here, and its lines function in
``harness.render.why.STEP_LINES`` under the kind's name (``tests/render/test_why.py`` holds every
kind here to one)."""

from __future__ import annotations

from harness.explain.crash import CrashWorkaround
from harness.explain.dumps import CompiledPrograms
from harness.explain.held_library import HeldLibrary
from harness.explain.host_profile import HostProfile
from harness.explain.matching_flags import FlagsNamedLikeTheProgram
from harness.explain.profiles import OpProfile
from harness.explain.reproducer import Reproducer
from harness.explain.tried import ChangedDefaults
from harness.steps.evidence import Evidence, Step

KINDS: tuple[Evidence, ...] = (
    HeldLibrary(),
    Reproducer(),
    ChangedDefaults(),
    CompiledPrograms(),
    CrashWorkaround(),
    FlagsNamedLikeTheProgram(),
    OpProfile(),
    HostProfile(),
)

# A crash's decisive fact is the setting that makes it run, and that setting's flags are matched to
# what XLA compiled: for a status step those two come right after library or JAX, so that a why cut
# short by its budget still has them; the reproducer comes after.
STATUS_FIRST = (HeldLibrary, CompiledPrograms, CrashWorkaround)


def kinds_for(step: Step) -> tuple[Evidence, ...]:
    """The kinds in the order ``step``'s why asks them: ``KINDS``, a status step's first three
    first."""
    if not step.by_status:
        return KINDS

    def place(kind: Evidence) -> int:
        return next(
            (i for i, first in enumerate(STATUS_FIRST) if isinstance(kind, first)),
            len(STATUS_FIRST),
        )

    return tuple(sorted(KINDS, key=place))
