"""When a release was uploaded, from the package index's JSON simple API (PEP 691, PEP 700).

``script_envs`` resolves as the index stood at a jax release; ``--vary PKG`` needs a library's
releases with their times. A release's files may be uploaded over hours, so its time is its
earliest file's, and a jax release's the later of jax's and jaxlib's. Listings are cached for a day,
and an older one holding the release still answers (an upload time never changes). Standard library
and ``packaging`` only: the noxfile may ask in nox's own environment.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.errors import HarnessError, UsageError
from harness.install.index import CACHE_MAX_AGE_S, PYPI
from harness.names import inside
from harness.store.files import replace_file
from harness.units import version_key

# uv's own settings only: the resolver that uses the times is uv, which ignores pip's PIP_INDEX_URL,
# so times read from pip's index would be of another index than the one the set is resolved from.
INDEX_VARIABLES = ("UV_DEFAULT_INDEX", "UV_INDEX_URL")
ACCEPT = "application/vnd.pypi.simple.v1+json"
# The whole answer, not each read: an index trickling a byte a second must time out.
FETCH_TIMEOUT_S = 60
READ_CHUNK_BYTES = 64 * 1024
# numpy's listing, among the largest, is about 2 MB (2026); a runaway answer is cut off.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
CACHE_FORMAT = 1
# A PEP 508 project name: the only thing put into the index's URL and a cache file's name.
PROJECT_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,198}[A-Za-z0-9])?")
SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar")

# GET one URL of the index: its body, or None where the index has no such project (404).
Fetcher = Callable[[str], bytes | None]


class IndexUnreachable(HarnessError):
    """The index could not be asked (refused, timed out, an HTTP error, an answer cut short): no
    answer about any package, so nothing is concluded from it, and the next run asks again."""


@dataclass(frozen=True)
class IndexFile:
    filename: str
    version: str
    uploaded: datetime | None
    yanked: bool


@dataclass(frozen=True)
class PackageListing:
    """A package's files on one index, as listed at ``fetched_at`` (seconds since the epoch)."""

    name: str
    index: str
    files: tuple[IndexFile, ...]
    fetched_at: float

    def files_of(self, version: str) -> list[IndexFile]:
        return [file for file in self.files if same_version(file.version, version)]


def index_url(environ: Mapping[str, str] | None = None) -> str:
    """uv's simple API URL: ``UV_DEFAULT_INDEX`` or ``UV_INDEX_URL`` where http(s), else PyPI's."""
    environ = os.environ if environ is None else environ
    for variable in INDEX_VARIABLES:
        value = environ.get(variable, "").strip()
        if urllib.parse.urlsplit(value).scheme in ("http", "https"):
            return value.rstrip("/")
    return PYPI


def shown(url: str) -> str:
    """``url`` without the user and password it may carry: messages and files never show them."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def credentials(url: str) -> dict[str, str]:
    """The Basic ``Authorization`` header of the user and password an index URL carries, as uv sends
    them (urllib would take ``user:password@host`` for the host's name); {} without them."""
    userinfo = urllib.parse.urlsplit(url).netloc.rpartition("@")[0]
    if not userinfo:
        return {}
    user, _, password = userinfo.partition(":")
    pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
    return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}


def fetch(url: str, timeout_s: float = FETCH_TIMEOUT_S) -> bytes | None:
    """The index's JSON at ``url``; None for no such project; IndexUnreachable if not had whole."""
    asked = shown(url)
    request = urllib.request.Request(asked, headers={"Accept": ACCEPT, **credentials(url)})
    index = f"the package index at {asked.rsplit('/', 2)[0]}"
    deadline = time.monotonic() + timeout_s
    body = bytearray()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            while chunk := response.read1(READ_CHUNK_BYTES):
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    over = f"with over {MAX_RESPONSE_BYTES} bytes"
                    raise HarnessError(f"{index} answered {asked} {over}")
                if time.monotonic() > deadline:
                    late = f"within {timeout_s:.0f} s"
                    raise IndexUnreachable(f"{index} did not answer {asked} {late}")
            if response.length:  # what its Content-Length promised did not all come
                missing = f"its answer to {asked} was cut short ({response.length} bytes missing)"
                raise IndexUnreachable(f"{index} could not be reached: {missing}")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        reached = f"{index} could not be reached"
        raise IndexUnreachable(f"{reached}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", None) or exc.__class__.__name__
        raise IndexUnreachable(f"{index} could not be reached: {reason}") from None
    return bytes(body)


def same_version(a: str, b: str) -> bool:
    """Equal as versions (``1.0`` is ``1.0.0``), or as text where either is no version."""
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def file_version(filename: str, name: str) -> str | None:
    """The version in a wheel's or source archive's file name; None for another kind of file."""
    if filename.endswith(".whl"):
        parts = filename[: -len(".whl")].split("-")
        return parts[1] if len(parts) in (5, 6) else None
    suffix = next((s for s in SDIST_SUFFIXES if filename.endswith(s)), None)
    if suffix is None:
        return None  # .egg, .exe, .msi: long gone formats, never installed by uv
    stem = filename[: -len(suffix)]
    # The name part of an old source archive may hold dashes (jax-cuda12-plugin-0.4.31.tar.gz).
    for at in range(len(stem)):
        if stem[at] == "-" and canonicalize_name(stem[:at]) == name:
            return stem[at + 1 :] or None
    return None


def _upload_time(value: object) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # no string, or not a time
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_listing(name: str, index: str, body: bytes, fetched_at: float) -> PackageListing:
    """A PEP 691 JSON answer as a listing; HarnessError for anything else (HTML only)."""
    try:
        document = json.loads(body)
        entries = document["files"]
        if not isinstance(entries, list):
            raise TypeError("files is not a list")
    except (ValueError, KeyError, TypeError) as exc:
        index_at = f"the package index at {shown(index)}"
        if isinstance(exc, ValueError) and body.lstrip()[:1] in (b"{", b"["):
            # JSON cut off on its way: asked again next time
            raise IndexUnreachable(f"{index_at} answered for {name} with JSON cut short") from None
        not_json = f"{index_at} did not answer for {name} in the JSON of PEP 691"
        raise HarnessError(f"{not_json}, which the harness reads upload times from") from None

    files = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            continue
        version = file_version(entry["filename"], name)
        if version is None:
            continue
        # PEP 691: false, or true, or the reason as a non-empty string.
        yanked = entry.get("yanked") is True or isinstance(entry.get("yanked"), str)
        uploaded = _upload_time(entry.get("upload-time"))
        files.append(IndexFile(entry["filename"], version, uploaded, yanked))
    return PackageListing(name, index, tuple(files), fetched_at)


def _to_json(listing: PackageListing) -> str:
    files = [
        [file.filename, file.version, file.uploaded and file.uploaded.isoformat(), file.yanked]
        for file in listing.files
    ]
    name, index, fetched_at = listing.name, shown(listing.index), listing.fetched_at
    document = dict(format=CACHE_FORMAT, name=name, index=index, fetched_at=fetched_at, files=files)
    return json.dumps(document, indent=0)


def _from_json(text: str, index: str) -> PackageListing | None:
    """The cached listing, or None when it is not one (corrupt, another format, another index)."""
    try:
        document = json.loads(text)
        if document["format"] != CACHE_FORMAT or document["index"] != shown(index):
            return None
        files = tuple(
            IndexFile(str(filename), str(version), _upload_time(uploaded), bool(yanked))
            for filename, version, uploaded, yanked in document["files"]
        )
        return PackageListing(str(document["name"]), index, files, float(document["fetched_at"]))
    except (ValueError, KeyError, TypeError):
        return None


class UploadTimes:
    """Upload times on one package index, each package's listing cached for a day."""

    def __init__(
        self,
        cache: Path,
        *,
        index: str | None = None,
        fetcher: Fetcher = fetch,
        max_age_s: float = CACHE_MAX_AGE_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.cache, self.fetcher, self.max_age_s, self.clock = cache, fetcher, max_age_s, clock
        self.index = index_url() if index is None else index.rstrip("/")

    def listing(self, name: str, *, holds: str | None = None) -> PackageListing:
        """``name``'s files, cached for a day; asked for the release ``holds``, the cache answers at
        any age where it has its upload time, never where not (it may have come out since)."""
        if not PROJECT_NAME.fullmatch(name):
            raise UsageError(f"{name[:60]!r} is not a package name")
        normalized = canonicalize_name(name)
        path = inside(self.cache, f"{normalized}.json")
        try:
            cached = _from_json(path.read_text(), self.index)
        except (OSError, UnicodeDecodeError):
            cached = None  # not cached yet, or unreadable: asked afresh
        if cached is not None:
            if holds is not None:
                if any(file.uploaded for file in cached.files_of(holds)):
                    return cached
            elif self.clock() - cached.fetched_at < self.max_age_s:
                return cached
        now = self.clock()
        body = self.fetcher(f"{self.index}/{normalized}/")
        if body is None:
            index = f"the package index at {shown(self.index)}"
            raise UsageError(f"there is no package {name!r} on {index}")
        listing = parse_listing(normalized, self.index, body, now)
        try:
            self.cache.mkdir(parents=True, exist_ok=True)
            replace_file(path, _to_json(listing))
        except OSError:
            pass  # a cache that takes nothing (read-only, full): the listing in hand still answers
        return listing

    def release_time(self, name: str, version: str) -> datetime:
        """When ``name`` ``version`` came out: its earliest file's upload time (UTC)."""
        listing = self.listing(name, holds=version)
        files = listing.files_of(version)
        if not files:
            raise UsageError(f"{name} {version} is not on the package index at {shown(self.index)}")
        times = [file.uploaded for file in files if file.uploaded is not None]
        if not times:
            needs = "(PEP 700 upload-time), which resolving as the index stood at a release needs"
            index = f"the package index at {shown(self.index)}"
            raise HarnessError(f"{index} gives no upload time for {name} {version} {needs}")
        return min(times)

    def jax_release_time(self, jax: str, jaxlib: str) -> datetime:
        """When a jax release was complete on the index: its jax's or jaxlib's upload, the later."""
        return max(self.release_time("jax", jax), self.release_time("jaxlib", jaxlib))

    def versions_with_times(self, name: str) -> list[tuple[str, datetime]]:
        """``name``'s releases with their upload times, oldest first; none yanked or timeless."""
        earliest: dict[str, datetime] = {}
        live: set[str] = set()
        for file in self.listing(name).files:
            try:  # one label per release however its files spell it (1.0 and 1.0.0)
                key = str(Version(file.version))
            except InvalidVersion:
                key = file.version
            if not file.yanked:
                live.add(key)
            if file.uploaded is not None and (key not in earliest or file.uploaded < earliest[key]):
                earliest[key] = file.uploaded
        pairs = [(version, when) for version, when in earliest.items() if version in live]
        return sorted(pairs, key=lambda pair: version_key(pair[0]))
