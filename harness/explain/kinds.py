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
# short by its budget still has them; the reproducer comes after.  Where no library the script
# declares moved (only jax's own dependencies did, numpy), the workaround, what a user wants first,
# comes before library or JAX, which then goes on only where the budget still allows.
STATUS_FIRST = (HeldLibrary, CompiledPrograms, CrashWorkaround)
WORKAROUND_FIRST = (CompiledPrograms, CrashWorkaround, HeldLibrary)


def kinds_for(step: Step) -> tuple[Evidence, ...]:
    """The kinds in the order ``step``'s why asks them: ``KINDS``, a status step's first 3 first."""
    if not step.by_status:
        return KINDS
    declared_moved = set(step.libraries) & set(step.declared)
    first = STATUS_FIRST if declared_moved else WORKAROUND_FIRST

    def place(kind: Evidence) -> int:
        return next((i for i, each in enumerate(first) if isinstance(kind, each)), len(first))

    return tuple(sorted(KINDS, key=place))
