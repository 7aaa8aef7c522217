"""What a result records of its environment: an allow-list, never a dump.

``host_facts`` runs in the parent (no JAX import), ``jax_facts`` in the child. Every string leaving
passes ``scrub``: no home folder, hostname or user name; credentials redacted (``looks_secret``).
"""

from __future__ import annotations

import getpass
import os
import platform
import re
import shlex
import socket
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.host import gpu, machine

ALLOWED_PREFIXES = ("JAX_", "XLA_", "CUDA_", "TPU_", "NVIDIA_", "LIBTPU_")
PACKAGES = ("jax", "jaxlib", "numpy", "ml_dtypes", "scipy", "libtpu", "libtpu-nightly")
# The CUDA build of a release: JAX's plugin and PJRT wheels and the NVIDIA libraries they
# pull in (runtime, cuDNN, cuBLAS, NCCL...), whatever CUDA major version their names carry.
CUDA_PACKAGE = re.compile(r"^(jax-cuda\d+-(plugin|pjrt)|nvidia-.+)$")
REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG = ("jax_cpu_enable_async_dispatch", "jax_enable_x64", "jax_threefry_partitionable")


def scrub(text: str) -> str:
    """``text`` without the home folder, hostname, user name or what ``looks_secret`` finds."""
    text = redact(text)
    home = os.path.expanduser("~")
    if home and home != "/":
        text = text.replace(home, "~")
    host = socket.gethostname()
    if host:
        text = re.sub(rf"\b{re.escape(host)}\b", "<host>", text)
    user = _user_name()
    if user:
        # Only where it is plainly the user: a home folder under another HOME, or before an "@".
        text = re.sub(rf"(/home/|/Users/){re.escape(user)}(?![\w.-])", r"\g<1><user>", text)
        text = re.sub(rf"(?<![\w.-]){re.escape(user)}@", "<user>@", text)
    return text


def shown_path(path: Path, *, anywhere: bool = False) -> str:
    """``path`` as a page, a line or a command shows it, quoted for the shell: relative below the
    current folder unless ``anywhere`` (pasted elsewhere); else absolute, home as ``~``."""
    try:
        resolved, here = path.resolve(), Path.cwd().resolve()
    except OSError:  # the current folder removed, a link loop
        resolved, here = path, None
    if not anywhere and here is not None and here in resolved.parents:
        return shlex.quote(str(resolved.relative_to(here)))
    shown = scrub(str(resolved))
    if shown.startswith("~/"):
        return "~/" + shlex.quote(shown[2:])
    return shlex.quote(shown)


def _user_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no name for this uid (a container): nothing to scrub
        return ""


# One rule for what is a credential, applied to the recorded variables and to every text that
# leaves: a name that says so (JAX_PASS, JAX_LICENSE_KEY, XLA_SERVICE_PASSWORD...), a value under an
# allowed prefix that looks like an opaque key, and the user:password part of any URL.
SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASS|KEY|LICEN[CS]E|CREDENTIAL|PRIVATE|AUTH|COOKIE|SESSION|SIGNATURE|BEARER",
    re.I,
)
# One long word of key characters, letters and digits mixed; a flag or a path is no key.
OPAQUE_VALUE = re.compile(r"(?=[^-/~.])(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9+/_=.~-]{24,}")
REDACTED = "<redacted>"
# scheme://user:pw@host: greedy up to the authority's last "@", so a password holding one goes too.
URL_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@")
# NAME=value: a whole line (print_environment_info's form, the value may hold spaces), or one word
# of a command line (quoted as shlex quotes it).
LINE_ASSIGNMENT = re.compile(r"^([ \t]*)([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.M)
WORD_ASSIGNMENT = re.compile(
    r"(?<![\w.-])([A-Za-z_][A-Za-z0-9_]*)=('[^'\n]*'|\"[^\"\n]*\"|[^\s'\"`]+)"
)
# A secret value shorter than this is found by its name only: replacing every "abc" garbles text.
SHORTEST_SECRET_VALUE = 8
# Credentials known by their shape wherever they appear (a script's output, a stored stack): the
# value after an Authorization or Cookie header or "Bearer", a JWT, keys of OpenAI/Anthropic
# (sk-), Slack (xox?-), AWS (AKIA/ASIA), GitHub (ghp_..., github_pat_), Hugging Face (hf_), Google
# (AIza), GitLab (glpat-), PyPI (pypi-), Stripe (sk_live_), and a PEM private key,
# its whole block, or what a text's end kept of it (from BEGIN on, or its lines up to END).
SECRET_SHAPES = (
    (
        re.compile(
            r"\b((?:Proxy-)?Authorization|(?:Set-)?Cookie|X-Api-Key|X-Auth-Token)"
            r"([\"']?\s*[:=]\s*)[^\n]*\S",
            re.I,
        ),
        rf"\1\2{REDACTED}",
    ),
    (re.compile(r"\b(Bearer)(\s+)(?=[\w.~+/=-]*\d)[\w.~+/=-]{8,}", re.I), rf"\1\2{REDACTED}"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
    (re.compile(r"\bxox[abeoprs]-[A-Za-z0-9-]{8,}"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (  # Hugging Face, Google, GitLab, PyPI, Stripe
        re.compile(
            r"\b(?:hf_[A-Za-z0-9]{30,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}"
            r"|pypi-[A-Za-z0-9_-]{50,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,})"
        ),
        REDACTED,
    ),
    (
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S
        ),
        f"-----{REDACTED} PRIVATE KEY-----",
    ),
)
UNBOUNDED_SHAPES = tuple(
    re.compile(s.pattern.removeprefix(r"\b"), s.flags) for s, _ in SECRET_SHAPES
)
# A private key's END whose BEGIN a text's end cut off: the key's lines before it go too (found
# walking back from each END, line by line: a regex over every line start would be quadratic).
KEY_END = re.compile(r"^[ \t]*-----END [A-Z ]*PRIVATE KEY-----", re.M)
KEY_LINE = re.compile(r"[ \t…]*[A-Za-z0-9+/=]{16,}[ \t]*")


def _key_ends(text: str) -> str:
    for end in reversed(list(KEY_END.finditer(text))):
        start = end.start()
        while start > 0:
            line = text.rfind("\n", 0, start - 1) + 1
            if not KEY_LINE.fullmatch(text[line : start - 1]):
                break
            start = line
        if start < end.start():
            text = f"{text[:start]}-----{REDACTED} PRIVATE KEY-----{text[end.end() :]}"
    return text


def looks_secret(name: str, value: str) -> bool:
    return bool(SECRET_NAME.search(name)) or OPAQUE_VALUE.fullmatch(value) is not None


def _secret_assignment(name: str, value: str) -> bool:
    """A ``NAME=value``: secret by its name, or an allowed variable holding an opaque key."""
    return bool(SECRET_NAME.search(name)) or (
        name.startswith(ALLOWED_PREFIXES) and looks_secret(name, value)
    )


# A terminal's colour or cursor code: no part of a credential, and no word boundary either.
ANSI_CODE = re.compile(r"(\x1b\[[0-9;?]*[ -/]*[@-~])")
# NAME: value, as YAML, a dict's repr or JSON print it ("password": "hunter2"); an exception's name
# before its message (KeyError: 'jaxlib') is no secret's.
COLON_ASSIGNMENT = re.compile(
    r"""(?<![\w.-])(["']?)([A-Za-z_][\w.-]*)\1(\s*:[ \t]*)("[^"\n]*"|'[^'\n]*'|[^\s,;}'"\]]+)"""
)
EXCEPTION_NAME = re.compile(r"[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit)")


def _colon_secret(m: re.Match[str]) -> str:
    secret = SECRET_NAME.search(m[2]) and not EXCEPTION_NAME.fullmatch(m[2])
    return f"{m[1]}{m[2]}{m[1]}{m[3]}{REDACTED}" if secret else m[0]


# In a script's source ``key=k`` and ``key: jax.Array`` are code: there a quoted literal is redacted
# where its name says secret and it looks like a key, or its name says password or secret.
CODE_ASSIGNMENT = re.compile(
    r"""(?<![\w.])(["']?)([A-Za-z_]\w*)\1(\s*[:=]\s*)(["'])([^"'\n]{8,})\4"""
)
PASSWORD_NAME = re.compile(r"PASS|SECRET|CREDENTIAL", re.I)


def _code_secret(m: re.Match[str]) -> str:
    name, value = m[2], m[5]
    secret = SECRET_NAME.search(name) and (
        OPAQUE_VALUE.fullmatch(value) or PASSWORD_NAME.search(name)
    )
    return f"{m[1]}{name}{m[1]}{m[3]}{m[4]}{REDACTED}{m[4]}" if secret else m[0]


def redact(text: str, environ: dict[str, str] | None = None, *, code: bool = False) -> str:
    """``text`` less credentials: this environment's secret values, known shapes, secret
    ``NAME=value`` and ``NAME: value`` (in ``code``: quoted literals), URLs' user:password; the
    pieces between colour codes each alone."""
    if "\x1b" in text:
        pieces = ANSI_CODE.split(text)
        return "".join(p if i % 2 else _redacted(p, environ, code) for i, p in enumerate(pieces))
    return _redacted(text, environ, code)


def holds_secret(text: str, *, binary: bool = False) -> bool:
    """Whether ``text`` holds a credential by its shape or this environment's secret value: no name
    is needed (a metric's name); in ``binary`` data read as text, a shape that follows a letter
    too (a program's constant: ``Qghp_…``)."""
    if not binary:
        return _shaped(text, None) != text
    found = [shape.search(text) for shape in (*UNBOUNDED_SHAPES, URL_USERINFO)]
    return any(found) or any(value in text for value in _secret_values(None))


def _redacted(text: str, environ: dict[str, str] | None, code: bool = False) -> str:
    text = _shaped(text, environ)
    if code:
        return CODE_ASSIGNMENT.sub(_code_secret, text)
    text = LINE_ASSIGNMENT.sub(
        lambda m: f"{m[1]}{m[2]}={REDACTED}" if _secret_assignment(m[2], m[3].strip()) else m[0],
        text,
    )
    text = WORD_ASSIGNMENT.sub(
        lambda m: f"{m[1]}={REDACTED}" if _secret_assignment(m[1], m[2]) else m[0], text
    )
    return COLON_ASSIGNMENT.sub(_colon_secret, text)


def _shaped(text: str, environ: dict[str, str] | None) -> str:
    """``text`` less this environment's secret values, the known shapes, a URL's user:password."""
    for value in _secret_values(environ):
        text = text.replace(value, REDACTED)
    for shape, replacement in SECRET_SHAPES:
        text = shape.sub(replacement, text)
    if "PRIVATE KEY-----" in text:
        text = _key_ends(text)
    return URL_USERINFO.sub(r"\1***@", text)


def _secret_values(environ: dict[str, str] | None) -> list[str]:
    """This environment's values that are secret by their name or look, longest first."""
    source = os.environ if environ is None else environ
    found = {v for k, v in source.items() if len(v) >= SHORTEST_SECRET_VALUE and looks_secret(k, v)}
    return sorted(found, key=len, reverse=True)


def scrub_value(value: Any, depth: int = 0) -> Any:
    """A JSON-like value (a case's ``facts()``) with every string scrubbed, keys included, and a
    string under a key named like a secret (``api_token``) redacted whole."""
    if isinstance(value, str):
        return scrub(value)
    if depth > MAX_SCRUB_DEPTH:  # no real facts nest this deep; its text is all a record could keep
        try:
            return scrub(repr(value)[:MAX_SCRUBBED_REPR])
        except RecursionError:
            return "<nested too deep to record>"
    if isinstance(value, dict):
        return {
            scrub_value(k, depth + 1): REDACTED
            if isinstance(k, str) and isinstance(v, str) and SECRET_NAME.search(k)
            else scrub_value(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(scrub_value(v, depth + 1) for v in value)
    return value


MAX_SCRUB_DEPTH = 64
MAX_SCRUBBED_REPR = 10_000


def allowed_variables(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The allow-listed variables (``JAX_*``, ``XLA_*``, CUDA, TPU), scrubbed, secrets redacted."""
    source = os.environ if environ is None else environ
    return {
        k: REDACTED if looks_secret(k, v) else scrub(v)
        for k, v in sorted(source.items())
        if k.startswith(ALLOWED_PREFIXES)
    }


def shareable_variables(environ: dict[str, str] | None = None) -> dict[str, str]:
    """What a draft meant for posting shows: the allowed variables set, less the redacted ones."""
    return {k: v for k, v in allowed_variables(environ).items() if v and v != REDACTED}


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions | cuda_packages()


def cuda_packages() -> dict[str, str]:
    every = metadata.distributions()
    named = ((re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower(), d.version) for d in every)
    return dict(sorted({name: v for name, v in named if CUDA_PACKAGE.match(name)}.items()))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def meminfo_bytes(field: str) -> int | None:
    """A field of /proc/meminfo (``MemTotal``, ``MemAvailable``) in bytes; None off Linux."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def harness_revision() -> dict[str, Any]:
    def git(*args: str) -> str | None:
        command = ["git", "-C", str(REPO_ROOT), *args]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": "unknown", "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status)}


def host_facts() -> dict[str, Any]:
    try:
        usable_cores: int | None = len(os.sched_getaffinity(0))
    except AttributeError:
        usable_cores = os.cpu_count()
    smi = gpu.query()
    return {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": f"{platform.system()}-{platform.machine()}",
        "kernel": platform.release(),
        "packages": package_versions(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable_cores,
        "memory_total_bytes": meminfo_bytes("MemTotal"),
        "gpus": [dict(g) for g in smi.gpus],
        "variables": allowed_variables(),
        "harness": harness_revision(),
        "machine": machine_identity(smi),
    }


def machine_identity(smi: gpu.Smi | None = None) -> dict[str, str]:
    """This machine's id (``machine``): what results of different machines are told apart by."""
    smi = gpu.query() if smi is None else smi
    names = [g.get("name", "?") for g in smi.gpus]
    hardware = machine.hardware(cpu_model(), os.cpu_count(), meminfo_bytes("MemTotal"), names)
    return machine.identify(hardware)


def jax_facts() -> dict[str, Any]:
    """Facts only a process that has initialised JAX can give."""
    import jax

    devices = jax.devices()
    facts: dict[str, Any] = {
        "jax_version": jax.__version__,
        "backend": jax.default_backend(),
        "device_count": len(devices),
        "device_kinds": sorted({d.device_kind for d in devices}),
        "platforms": sorted({d.platform for d in devices}),
        "config": {flag: getattr(jax.config, flag) for flag in CONFIG if hasattr(jax.config, flag)},
    }
    try:
        info = jax.print_environment_info(return_string=True)
        facts["environment_info"] = scrub(info or "")
    except Exception as exc:  # reported, never fatal: it shells out to nvidia-smi
        facts["environment_info"] = f"unavailable: {type(exc).__name__}"
    if facts["backend"] == "gpu":
        facts["gpu"] = _gpu_facts(devices)
    return facts


def _gpu_facts(devices: list[Any]) -> dict[str, Any]:
    """The GPUs, driver and CUDA libraries JAX runs on: what an NVIDIA bug report asks first."""
    smi = gpu.query()
    # A CUDA device's "major.minor"; other GPU platforms have no such attribute.
    capabilities = {str(d.compute_capability) for d in devices if hasattr(d, "compute_capability")}
    return {
        "device_kinds": sorted({d.device_kind for d in devices}),
        "compute_capabilities": sorted(capabilities),
        "driver_versions": sorted({g.get("driver_version", "?") for g in smi.gpus}),
        "cuda_driver": smi.cuda_driver,  # the newest CUDA the driver supports
        "nvidia_smi": [dict(g) for g in smi.gpus] if not smi.failure else smi.failure,
        # the CUDA runtime, cuDNN, ... the release's wheels brought
        "cuda_packages": cuda_packages(),
    }
