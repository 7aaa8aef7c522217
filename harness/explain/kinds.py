"""The registry of evidence kinds: every kind a step's why asks, in the order it is asked.

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
from harness.steps.evidence import Evidence

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
