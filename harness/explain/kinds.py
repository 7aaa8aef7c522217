"""The registry of evidence kinds: every kind a step's why asks, in the order its shape asks them
(``ORDER``, data beside each shape, never a branch in a kind), and the kind that settles each shape.

A new kind is a module of ``harness.explain`` implementing ``harness.steps.evidence.Evidence`` (its
``Found`` judged when gathered), one entry in each shape's order it serves, and its lines function
in ``harness.render.why.STEP_LINES`` under the kind's name (``tests/render/test_why.py`` holds every
kind here to one)."""

from __future__ import annotations

from collections.abc import Mapping

from harness.analysis.significance import Shape
from harness.explain.crash import CrashFlags, CrashWorkaround
from harness.explain.dumps import CompiledPrograms
from harness.explain.held_library import HeldLibrary
from harness.explain.host_profile import HostProfile
from harness.explain.matching_flags import FlagsNamedLikeTheProgram
from harness.explain.profiles import OpProfile
from harness.explain.reproducer import Reproducer
from harness.explain.tried import ChangedDefaults
from harness.steps.evidence import Evidence, Step

LIBRARY, REPRODUCER, DEFAULTS = HeldLibrary(), Reproducer(), ChangedDefaults()
COMPILED, FLAGS, CRASH, CRASH_FLAGS = (
    CompiledPrograms(),
    FlagsNamedLikeTheProgram(),
    CrashWorkaround(),
    CrashFlags(),
)
PROFILE, HOST = OpProfile(), HostProfile()

# Each shape's kinds, in the order asked: what settles the shape first, so that a why its budget
# cuts short still has it.
# - A cost: whether it comes with a library, then whether jax alone shows it, then a workaround
#   among the changed defaults, what was compiled, where the time went.
# - A value (or a presence: a number printed or not) is exact: whether an old default brings it
#   back takes two processes a side, so the changed defaults come first, then what was compiled.
#   No profile of where the time went: a value is no time .
# - An ending: the setting that makes the release that dies run (a workaround, what a user wants
#   first), then what was compiled, and the flags named like it.
ORDER: Mapping[Shape, tuple[Evidence, ...]] = {
    Shape.COST: (LIBRARY, REPRODUCER, DEFAULTS, COMPILED, FLAGS, PROFILE, HOST),
    Shape.VALUE: (DEFAULTS, COMPILED, FLAGS, LIBRARY, REPRODUCER),
    Shape.PRESENCE: (DEFAULTS, COMPILED, FLAGS, LIBRARY, REPRODUCER),
    Shape.ENDING: (CRASH, COMPILED, CRASH_FLAGS, LIBRARY, REPRODUCER),
}
# The kind whose answer settles each shape: asked however much of the why's budget is left, its
# first measurement as long as the whole budget covers it (``harness.steps.evidence.gather``).
SETTLES: Mapping[Shape, str] = {
    Shape.COST: DEFAULTS.name,
    Shape.VALUE: DEFAULTS.name,
    Shape.PRESENCE: DEFAULTS.name,
    Shape.ENDING: CRASH.name,
}
KINDS: tuple[Evidence, ...] = tuple(
    dict.fromkeys(kind for order in ORDER.values() for kind in order)
)


def kinds_for(step: Step) -> tuple[Evidence, ...]:
    """The kinds in the order ``step``'s shape asks them; where some of its metrics are exact (a
    value, a presence, a cost constant in every process: two processes a side settle a trial), a
    value's order first, since its first kind settles them cheapest."""
    if not step.exact:
        return ORDER[step.shape]
    return tuple(dict.fromkeys((*ORDER[Shape.VALUE], *ORDER[step.shape])))
