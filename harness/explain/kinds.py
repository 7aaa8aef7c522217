"""The registry of evidence kinds: every kind a step's why asks, in the order its shape asks them
(each shape's ``why``, data, never a branch in a kind), and the kind that settles each (its
``settles``).

A new kind is a module of ``harness.explain`` implementing ``harness.steps.evidence.Evidence`` (its
``Found`` judged when gathered), its name in each shape's ``why`` it serves, and its lines function
in ``harness.render.why.STEP_LINES`` under the kind's name (``tests/render/test_why.py`` holds every
kind here to one)."""

from __future__ import annotations

from harness.analysis.significance import EXACT_FIRST
from harness.errors import UsageError
from harness.explain.dumps import CompiledPrograms
from harness.explain.held_library import HeldLibrary
from harness.explain.matching_flags import CrashFlags, FlagsNamedLikeTheProgram
from harness.explain.profiles import HostProfile, OpProfile
from harness.explain.reproducer import Reproducer
from harness.explain.tried import ChangedDefaults, CrashWorkaround
from harness.steps.evidence import Evidence, Step

# Each kind once, in the order a cost asks them, then an ending's own.
KINDS: tuple[Evidence, ...] = (
    HeldLibrary(), Reproducer(), ChangedDefaults(), CompiledPrograms(), FlagsNamedLikeTheProgram(),
    OpProfile(), HostProfile(), CrashWorkaround(), CrashFlags(),
)  # fmt: skip
NAMED = {kind.name: kind for kind in KINDS}


def kinds_for(step: Step, only: tuple[str, ...] = ()) -> tuple[Evidence, ...]:
    """The kinds in the order ``step``'s shape asks them (its ``why``); where some of its metrics
    are exact (a value, a presence, a cost constant in every process: two processes a side settle a
    trial), an exact metric's order first, since its first kind settles them cheapest. ``only``:
    those of these names (``--why-kinds``)."""
    names = (*EXACT_FIRST, *step.shape.why) if step.exact else step.shape.why
    return tuple(NAMED[name] for name in dict.fromkeys(names) if not only or name in only)


def refuse_unknown_kinds(names: tuple[str, ...]) -> None:
    if unknown := [name for name in names if name not in NAMED]:
        kinds = ", ".join(NAMED)
        raise UsageError(f"--why-kinds: no kind named {unknown[0]!r} (kinds: {kinds})")


def settling_kind(step: Step) -> str:
    """The kind whose answer settles ``step``: its shape's, but library or JAX where the script
    declares a library that moved with jax and the step is a varying cost's (which side to look at
    comes before any workaround, and a cost's order asks it first)."""
    library = NAMED["library"]
    if step.declared and step.varying and not step.exact and library.wanted(step, ()):
        return library.name
    return step.shape.settles
