"""The releases on the package index: pip's listing, jaxlib pairing, the range, the cache."""

import functools
import http.server
import json
import os
import subprocess
import threading
import zipfile

import pytest

from harness.cli.watch import watched_pair
from harness.errors import HarnessError, UsageError
from harness.install.index import (
    Listing,
    index_url,
    installs_together,
    load_listing,
    nearby,
    newest_installable,
    pair_with_jaxlib,
    parse_pip_listing,
    pip_versions,
    unreachable_index,
    why_no_listing,
)
from tests.conftest import FIXTURES

LISTINGS = FIXTURES / "bisect"


def listed(package: str) -> list[str]:
    return parse_pip_listing((LISTINGS / f"pip-index-{package}.txt").read_text())


def real_listing() -> Listing:
    return Listing("python3.12", pair_with_jaxlib(listed("jax"), listed("jaxlib")))


def test_pip_output_is_parsed_oldest_first():
    versions = listed("jaxlib")
    assert versions[0] == "0.4.18" and versions[-1] == "0.12.0.1"
    assert (
        versions.index("0.9.0")
        < versions.index("0.9.0.1")
        < versions.index("0.9.1")
        < versions.index("0.10.0")
    )
    assert parse_pip_listing("WARNING: nothing here\n") == []


def test_jax_pairs_with_its_own_jaxlib_else_the_newest_below():
    pairs = dict(real_listing().pairs)
    assert pairs["0.4.26"] == "0.4.26" and pairs["0.12.0.1"] == "0.12.0.1"
    assert pairs["0.4.37"] == "0.4.36" and pairs["0.5.2"] == "0.5.1", (
        "no jaxlib of their own number"
    )
    assert "0.4.32" not in pairs, "yanked: pip leaves it out"
    assert "0.4.17" not in pairs, "no jaxlib wheel for this Python at or below it"


def test_a_range_includes_both_ends_and_skips_the_yanked_release():
    span = real_listing().between("0.4.26", "0.4.35")
    assert [jax for jax, _ in span] == [
        "0.4.26",
        "0.4.27",
        "0.4.28",
        "0.4.29",
        "0.4.30",
        "0.4.31",
        "0.4.33",
        "0.4.34",
        "0.4.35",
    ]


@pytest.mark.parametrize(
    ("first", "last", "message"),
    [
        ("0.4.32", "0.4.35", "jax 0.4.32 is not an installable release"),
        ("0.4.26", "9.9", "jax 9.9 is not an installable release"),
        ("0.4.35", "0.4.26", "from an older release to a newer one"),
        (
            "0.4.026",
            "0.4.35",
            r"jax 0\.4\.026 is not on the package index as typed: did you mean 0\.4\.26\?",
        ),
    ],
)
def test_a_range_end_missing_from_the_index_is_refused(first, last, message):
    with pytest.raises(UsageError, match=message):
        real_listing().between(first, last)


def test_the_refusal_names_nearby_releases():
    assert nearby(["0.4.30", "0.4.31", "0.4.33", "0.4.34"], "0.4.32", count=1) == [
        "0.4.31",
        "0.4.33",
    ]


def test_the_listing_is_cached_per_interpreter_for_a_day(tmp_path):
    calls = []

    def lister(python, package):
        calls.append((python, package))
        return listed(package)

    cache = tmp_path / "index.json"
    first = load_listing("py-a", cache, lister=lister)
    assert len(calls) == 2 and json.loads(cache.read_text())["python"] == "py-a"
    again = load_listing("py-a", cache, lister=lister)
    assert len(calls) == 2 and again.pairs == first.pairs
    load_listing("py-b", cache, lister=lister)
    assert len(calls) == 4, "another interpreter may see other wheels"
    load_listing("py-b", cache, lister=lister, max_age_s=0)
    assert len(calls) == 6, "a stale listing is fetched again"


def test_a_failing_pip_is_one_clear_error(tmp_path):
    with pytest.raises(HarnessError, match="cannot list jax releases"):
        pip_versions(str(tmp_path / "no-python"), "jax")


def test_one_release_is_looked_up_with_the_jaxlib_it_installs_with():
    listing = Listing("python", [("0.4.31", "0.4.31"), ("0.4.33", "0.4.33"), ("0.4.37", "0.4.36")])
    assert listing.pair("0.4.37") == ("0.4.37", "0.4.36")
    with pytest.raises(
        UsageError,
        match=r"jax 0\.4\.32 is not an installable release.*nearby releases there: 0\.4\.31, 0",
    ):
        listing.pair("0.4.32")


REFUSED = (
    "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after "
    "connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection "
    "object at 0x7f>: Failed to establish a new connection: [Errno 111] Connection refused')': "
    "/simple/jaxlib/\n"
    "ERROR: No matching distribution found for jaxlib\n"
)


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        (REFUSED, "the package index could not be reached (Connection refused)"),
        (
            "WARNING: Retrying (Retry(total=0)) after connection broken by "
            "'ReadTimeoutError(\"...: Read timed out. (read timeout=15)\")': /simple/jax/\nERROR: "
            "No matching distribution found for jax\n",
            "the package index could not be reached (Read timed out)",
        ),
        (
            "ERROR: No matching distribution found for jaxlib\n",
            "No matching distribution found for jaxlib: the package index offers none, or could "
            "not be reached",
        ),
        ("ERROR: something else\n", "ERROR: something else"),
    ],
)
def test_an_index_pip_could_not_reach_is_said_so_not_no_matching_distribution(stderr, said):
    """D18: offline, pip's last line read as if jaxlib had no release."""
    assert why_no_listing(stderr).startswith(said)


@pytest.mark.skipif(
    subprocess.run(["python3", "-m", "pip", "--version"], capture_output=True).returncode != 0,
    reason="needs a python3 with pip",
)
def test_a_real_pip_against_a_closed_loopback_port_says_the_index_could_not_be_reached(monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    with pytest.raises(HarnessError, match=r"could not be reached \(Connection refused\)"):
        pip_versions("python3", "jaxlib")


def test_a_listing_cache_that_takes_no_writes_still_lists(tmp_path):
    (tmp_path / "cache").write_text("a file where the cache folder would go")
    listing = load_listing(
        "py", tmp_path / "cache" / "jax-index.json", lister=lambda p, n: ["0.4.31"]
    )
    assert listing.pairs == [("0.4.31", "0.4.31")]


def fake_wheel(folder, name, version, tag="py3-none-any", requires=()):
    """A wheel pip can read the metadata of (nothing in it is ever installed: the index's dry runs
    only)."""
    info = f"{name}-{version}.dist-info"
    path = folder / f"{name}-{version}-{tag}.whl"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(f"{info}/METADATA", metadata)
        wheel.writestr(
            f"{info}/WHEEL",
            f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n",
        )
        wheel.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """A package index on 127.0.0.1: jax 0.12.0, 0.12.0.1 and 0.12.1, each asking for its own
    jaxlib; jaxlib 0.12.1 only as a wheel no Python here takes (its wheels for this Python not
    uploaded yet)."""
    files = tmp_path / "files"
    files.mkdir()
    wheels = [fake_wheel(files, "jax", v, requires=[f"jaxlib=={v}"]) for v in VERSIONS]
    wheels += [fake_wheel(files, "jaxlib", v) for v in VERSIONS[:2]]
    wheels.append(fake_wheel(files, "jaxlib", "0.12.1", tag="cp399-cp399-manylinux2014_x86_64"))
    simple = tmp_path / "simple"
    for package in ("jax", "jaxlib"):
        (simple / package).mkdir(parents=True)
        links = "".join(
            f'<a href="/files/{w.name}">{w.name}</a>\n'
            for w in wheels
            if w.name.startswith(f"{package}-")
        )
        (simple / package / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
    handler = functools.partial(QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_address[1]}/simple")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    yield
    server.shutdown()


VERSIONS = ("0.12.0", "0.12.0.1", "0.12.1")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.skipif(
    subprocess.run(["python3", "-m", "pip", "--version"], capture_output=True).returncode != 0,
    reason="needs a python3 with pip",
)
def test_a_jax_whose_jaxlib_has_no_wheel_for_this_python_yet_is_not_the_newest(local_index):
    """Issue 57 #10: jax 0.12.1 was paired with jaxlib 0.12.0.1 (the newest with a wheel here) and
    watched as "the newest"; it then stored as not installable. It is left out, said in a line, and
    the pair is the one before."""
    pairs = pair_with_jaxlib(pip_versions("python3", "jax"), pip_versions("python3", "jaxlib"))
    assert pairs[-1] == ("0.12.1", "0.12.0.1"), "pip lists jaxlib 0.12.1 for no Python here"
    said = []
    versions = newest_installable(Listing("python3", pairs), said.append, installs_together)
    assert versions == ["0.12.0", "0.12.0.1"]
    [line] = said
    assert line.startswith("jax 0.12.1 left out: jax 0.12.1 does not install with jaxlib 0.12.0.1")
    assert watched_pair(versions, None, None) == ("0.12.0", "0.12.0.1")
    assert installs_together("python3", "0.12.0.1", "0.12.0.1") is None


def test_a_release_paired_with_an_older_jaxlib_that_installs_with_it_stays_the_newest():
    asked = []
    listing = Listing("py", [("0.4.36", "0.4.36"), ("0.4.37", "0.4.36")])
    found = newest_installable(listing, asked.append, lambda *pair: asked.append(pair))
    assert found == ["0.4.36", "0.4.37"] and asked == [("py", "0.4.37", "0.4.36")]


@pytest.mark.parametrize("setting", ["UV_OFFLINE", "PIP_NO_INDEX", "UV_NO_INDEX"])
def test_an_index_turned_off_is_unreachable_without_asking(setting):
    assert unreachable_index({setting: "1"}) == f"{setting} is set"
    # no jax/ there
    assert unreachable_index({setting: "0", "PIP_INDEX_URL": "file:///"}) is not None


def test_an_index_that_refuses_is_named_with_why():
    reason = unreachable_index({"UV_DEFAULT_INDEX": "http://127.0.0.1:9/simple"}, timeout_s=5)
    assert reason is not None and reason.startswith(
        "http://127.0.0.1:9/simple/jax/ could not be reached"
    )


def test_a_local_mirror_is_reachable_where_it_has_a_folder_for_jax(tmp_path):
    (tmp_path / "simple" / "jax").mkdir(parents=True)
    assert unreachable_index({"PIP_INDEX_URL": (tmp_path / "simple").as_uri()}) is None
    assert index_url({"UV_INDEX_URL": "https://a/simple https://b/simple"}) == "https://a/simple"
    assert index_url({}) == "https://pypi.org/simple"
