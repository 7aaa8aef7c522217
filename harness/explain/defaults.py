"""The options whose defaults differ between two releases: jax's config options and XLA's flags.

A step often comes from a default that changed (XLA:CPU's thunk runtime, 0.4.31 → 0.4.33). Both
lists are read off the releases' venvs: jax's options from the declarations in its installed
``jax/_src`` (``config.bool_flag(name=..., default=...)`` …), parsed, never imported; XLA's flags
from what a jaxlib prints when started with ``XLA_FLAGS=--help`` (it then aborts on purpose).
"""

from __future__ import annotations

import ast
import contextlib
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

JAX, XLA = "jax", "xla"
LISTING_TIMEOUT_S = 120
# A flag line of XLA's listing: a tab, --name=default (padded), a tab, its type, a tab, its help.
FLAG_LINE = re.compile(
    r"^\t--(?P<name>[A-Za-z0-9_]+)=(?P<default>.*?)\s*\t(?P<type>[A-Za-z0-9_]+)\t(?P<help>.*)$"
)
# jax's declarations of an option: bool_flag, enum_state, define_bool_state (older), DEFINE_bool …
DECLARATION = re.compile(r"^(define_)?[a-z_]*_(flag|state)$|^DEFINE_[a-z]+$")
# What a call reading an environment variable with a default looks like: bool_env('JAX_X', False).
ENV_DEFAULT = re.compile(r"^(bool|int|float|str|string)_env$")
# Options of other platforms than the profile's, by the name's parts.
GPU_PARTS = ("gpu", "cuda", "rocm", "mosaic", "pallas", "triton", "nccl", "cudnn", "cublas", "ptx")
OTHER_PLATFORMS = {
    "cpu": (*GPU_PARTS, "nvptx", "tpu"),
    "gpu": ("tpu",),
    "tpu": (*(part for part in GPU_PARTS if part not in ("mosaic", "pallas")), "nvptx"),
}


@dataclass(frozen=True)
class Option:
    name: str
    default: str
    kind: str  # JAX or XLA
    type: str = ""
    help: str = ""


@dataclass(frozen=True)
class Change:
    name: str
    kind: str
    before: str | None  # the older release's default; None: it has no such option
    after: str | None
    help: str = ""

    def text(self) -> str:
        if self.before is None:
            return f"{self.name}: added (default {self.after})"
        if self.after is None:
            return f"{self.name}: removed (default was {self.before})"
        return f"{self.name}: {self.before} → {self.after}"


def parse_xla_listing(text: str) -> dict[str, Option]:
    matches = (FLAG_LINE.match(line) for line in text.splitlines())
    return {
        m["name"]: Option(m["name"], m["default"].strip(), XLA, m["type"], m["help"].strip())
        for m in matches
        if m
    }


def xla_listing(interpreter: Path, environ: Mapping[str, str]) -> dict[str, Option] | str:
    command = [str(interpreter), "-c", "import jax; jax.devices()"]
    # on the host's CPU: the listing is the same, and an accelerator (a TPU chip, which one process
    # at a time may hold) is left to the case processes
    asked = {**environ, "XLA_FLAGS": "--help", "JAX_PLATFORMS": "cpu"}
    try:
        done = subprocess.run(
            command,
            env=asked,
            capture_output=True,
            text=True,
            timeout=LISTING_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"XLA's flags could not be listed: {exc}"
    found = parse_xla_listing(done.stdout + "\n" + done.stderr)
    if not found:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return f"XLA's flags could not be listed (exit code {done.returncode}): {last}"
    return found


def site_packages(venv: Path) -> Path | None:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    return found[-1] if found else None


def _literal(node: ast.expr | None) -> str | None:
    """An option's default as its source writes it: a constant, an environment reading's default,
    else the expression."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return repr(node.value)
    call_name = _called(node) if isinstance(node, ast.Call) else ""
    if isinstance(node, ast.Call) and ENV_DEFAULT.match(call_name) and len(node.args) >= 2:
        return _literal(node.args[1])
    return ast.unparse(node)


def _called(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def _argument(call: ast.Call, keyword: str, position: int) -> ast.expr | None:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    return call.args[position] if len(call.args) > position else None


def declared_options(source: str) -> dict[str, Option]:
    found = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not DECLARATION.match(_called(node)):
            continue
        name = _argument(node, "name", 0)
        if not (
            isinstance(name, ast.Constant)
            and isinstance(name.value, str)
            and name.value.startswith("jax_")
        ):
            continue
        default = _literal(_argument(node, "default", 1))
        help_node = _argument(node, "help", 2)
        help_text = (
            help_node.value
            if isinstance(help_node, ast.Constant) and isinstance(help_node.value, str)
            else ""
        )
        found[name.value] = Option(
            name.value, default or "", JAX, _called(node), " ".join(help_text.split())
        )
    return found


def jax_options(packages: Path) -> dict[str, Option]:
    found: dict[str, Option] = {}
    for path in sorted((packages / "jax" / "_src").rglob("*.py")):
        with contextlib.suppress(OSError, UnicodeDecodeError, SyntaxError):
            source = path.read_text()
            if any(declares in source for declares in ("_flag(", "_state(", "DEFINE_")):
                found.update(declared_options(source))
    return found


def changes(before: Mapping[str, Option], after: Mapping[str, Option]) -> list[Change]:
    found = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None and old.default == new.default:
            continue
        either = new or old
        assert either is not None
        was, now = (each.default if each else None for each in (old, new))
        found.append(Change(name, either.kind, was, now, either.help))
    return found


def relevant(found: list[Change], platform: str) -> list[Change]:
    others = OTHER_PLATFORMS.get(platform, ())
    return [
        change for change in found if not any(part in others for part in change.name.split("_"))
    ]
