"""Which jax releases the package index offers, each paired with the jaxlib it installs with.

Listed by ``pip index versions`` under the interpreter that will install them, which leaves out
yanked releases and those without a wheel for it. A jax installs with its own number's jaxlib, else
the newest below (jax 0.4.37 with 0.4.36). Cached for a day, so a bisect asks once. Standard library
only: ``commands.nox_session`` reads it.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError, UsageError
from harness.units import normal_version, version_key

CACHE_MAX_AGE_S = 24 * 3600
LIST_TIMEOUT_S = 300


def parse_pip_listing(output: str) -> list[str]:
    for line in output.splitlines():
        if line.startswith("Available versions:"):
            versions = [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
            return sorted(versions, key=version_key)
    return []


def _pip(command: list[str], what: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            command, capture_output=True, text=True, timeout=LIST_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HarnessError(f"cannot {what} with {' '.join(command)}: {exc}") from None


def pip_versions(python: str, package: str) -> list[str]:
    command = [python, "-m", "pip", "index", "versions", package]
    done = _pip(command, f"list {package} releases")
    versions = parse_pip_listing(done.stdout)
    if done.returncode != 0 or not versions:
        why = why_no_listing(done.stderr)
        raise HarnessError(f"cannot list {package} releases with {' '.join(command)}: {why}")
    return versions


# pip's words for an index it could not ask, most telling first; its last line ("No matching
# distribution found") hides them.
UNREACHED = (
    re.compile(r"Failed to establish a new connection: (?:\[Errno -?\d+\] )?([^'\"]+)"),
    re.compile(r"Could not fetch URL \S+?: (.+?)(?: - skipping)?$", re.MULTILINE),
    re.compile(r"(Read timed out)"),
    re.compile(r"connection broken by '(\w+)"),
)


def why_no_listing(stderr: str) -> str:
    """Why pip listed nothing, in one line: the index out of reach where pip's warnings say so (its
    last line, "No matching distribution found", reads as if there were no release)."""
    for pattern in UNREACHED:
        found = pattern.search(stderr)
        if found:
            return f"the package index could not be reached ({found.group(1).strip()[:200]})"
    last = (stderr.strip().splitlines() or ["no versions listed"])[-1]
    if "No matching distribution found" in last:
        unsaid = "could not be reached (pip gave no reason; PIP_RETRIES=0 hides it)"
        return f"{last.removeprefix('ERROR: ')}: the package index offers none, or {unsaid}"
    return last


def pair_with_jaxlib(
    jax_versions: Sequence[str], jaxlib_versions: Sequence[str]
) -> list[tuple[str, str]]:
    """(jax, jaxlib) per jax release, oldest first: the same-numbered jaxlib, else the newest below
    it; a jax release older than every jaxlib on offer has none and is left out."""
    jaxlibs = sorted(jaxlib_versions, key=version_key)
    pairs = []
    for jax in sorted(jax_versions, key=version_key):
        below = [lib for lib in jaxlibs if version_key(lib) <= version_key(jax)]
        if jax in jaxlibs or below:
            pairs.append((jax, jax if jax in jaxlibs else below[-1]))
    return pairs


# pip's words for requirements that cannot be met together, as against an index it could not ask.
UNRESOLVABLE = (
    "ResolutionImpossible",
    "conflicting dependencies",
    "No matching distribution found",
)


def installs_together(python: str, jax: str, jaxlib: str) -> str | None:
    """None when pip (a dry run) resolves ``jax`` with ``jaxlib`` for ``python``, else why not;
    HarnessError when pip could not ask. A jax paired with an older jaxlib is right for a release
    that had none (0.4.37), wrong where its jaxlib's wheels are not up yet."""
    command = [python, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed"]
    done = _pip([*command, f"jax=={jax}", f"jaxlib=={jaxlib}"], "ask the index")
    if done.returncode == 0:
        return None
    unreached = any(pattern.search(done.stderr) for pattern in UNREACHED)
    if any(words in done.stderr for words in UNRESOLVABLE) and not unreached:
        newest = "the newest with a wheel for this Python"
        return f"jax {jax} does not install with jaxlib {jaxlib}, {newest}"
    why = why_no_listing(done.stderr)
    raise HarnessError(f"cannot ask the index whether jax {jax} installs: {why}")


def newest_installable(
    listing: Listing, say: Callable[[str], None], check: Callable[[str, str, str], str | None]
) -> list[str]:
    """The listing's jax releases, less the newest that do not install with the jaxlib of another
    number they are paired with (each said): never watched with an older jaxlib."""
    pairs = list(listing.pairs)
    while pairs and pairs[-1][0] != pairs[-1][1]:
        problem = check(listing.python, *pairs[-1])
        if problem is None:
            break
        say(f"jax {pairs[-1][0]} left out: {problem} (its own jaxlib has no wheel for it yet?)")
        pairs.pop()
    return [jax for jax, _ in pairs]


@dataclass(frozen=True)
class Listing:
    """Installable (jax, jaxlib) pairs, oldest first, as listed for one interpreter."""

    python: str
    pairs: list[tuple[str, str]]

    def pair(self, version: str) -> tuple[str, str]:
        """(jax, jaxlib) of one release; one missing from the index is refused with nearby ones."""
        versions = [jax for jax, _ in self.pairs]
        if version in versions:
            return self.pairs[versions.index(version)]
        normal = normal_version(version)
        if normal != version and normal in versions:  # 0.4.026: the index spells it 0.4.26
            typed = f"jax {version} is not on the package index as typed"
            raise UsageError(f"{typed}: did you mean {normal}?")
        raise UsageError(
            f"jax {version} is not an installable release on the package index (yanked, or no "
            f"wheel for this Python); nearby releases there: {', '.join(nearby(versions, version))}"
        )

    def between(self, first: str, last: str) -> list[tuple[str, str]]:
        """The pairs from ``first`` to ``last``, both included; either missing is refused."""
        for version in (first, last):
            self.pair(version)
        low, high = version_key(first), version_key(last)
        if low >= high:
            older = "the range must run from an older release to a newer one"
            raise UsageError(f"{older}, not {first} to {last}")
        return [pair for pair in self.pairs if low <= version_key(pair[0]) <= high]


def nearby(versions: Sequence[str], version: str, count: int = 3) -> list[str]:
    """Up to ``count`` listed versions on either side of ``version`` (which need not be listed)."""
    below = [v for v in versions if version_key(v) < version_key(version)]
    above = [v for v in versions if version_key(v) > version_key(version)]
    return below[-count:] + above[:count]


Lister = Callable[[str, str], list[str]]


def load_listing(
    python: str, cache: Path, *, max_age_s: float = CACHE_MAX_AGE_S, lister: Lister = pip_versions
) -> Listing:
    """The listing for ``python``: from ``cache`` while younger than ``max_age_s``, else asked."""
    now = time.time()
    try:
        stored = json.loads(cache.read_text())
        if stored["python"] == python and now - stored["listed_at"] < max_age_s:
            return Listing(python, [(str(jax), str(lib)) for jax, lib in stored["pairs"]])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no usable cache: list afresh
    pairs = pair_with_jaxlib(lister(python, "jax"), lister(python, "jaxlib"))
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"python": python, "pairs": pairs, "listed_at": now}, indent=1))
    except OSError:
        pass  # a cache that takes nothing (read-only, full): the listing in hand answers this run
    return Listing(python, pairs)


# What says the index is off by choice, before anything asks it.
OFFLINE_SETTINGS = ("UV_OFFLINE", "UV_NO_INDEX", "PIP_NO_INDEX")
PROBE_TIMEOUT_S = 10.0
PYPI = "https://pypi.org/simple"


def index_url(environ: Mapping[str, str]) -> str:
    """The index the installs ask first: uv's or pip's setting, else PyPI."""
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        if environ.get(name):
            return environ[name].split()[0]
    return PYPI


def unreachable_index(environ: Mapping[str, str], timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Why the package index cannot give jax here, in a few words; None where it answers for jax."""
    for name in OFFLINE_SETTINGS:
        if environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off"):
            return f"{name} is set"
    url = index_url(environ).rstrip("/") + "/jax/"
    if url.startswith("file:"):  # a local mirror: a folder per project
        folder = urllib.request.url2pathname(urllib.parse.urlparse(url).path)
        return None if Path(folder).is_dir() else f"{url} is not a folder"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout_s):
            return None
    except urllib.error.HTTPError as exc:
        return f"{url} answered {exc.code}"
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        return f"{url} could not be reached ({str(reason)[:120]})"
