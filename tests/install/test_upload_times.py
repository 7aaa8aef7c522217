"""Upload times of releases, from the index's PEP 691 JSON (recorded answers of pypi.org), cached
for a day."""

import http.server
import json
import threading
from datetime import UTC, datetime
from typing import ClassVar

import pytest

from harness.errors import HarnessError, UsageError
from harness.install import upload_times
from harness.install.upload_times import UploadTimes, file_version, index_url, parse_listing, shown
from tests.conftest import FIXTURES

RECORDED = FIXTURES / "index_times"
INDEX = "https://pypi.org/simple"


class RecordedIndex:
    """Answers index URLs with the recorded files (None, as for a 404, for any other package); logs
    each URL."""

    def __init__(self, edit=None):
        self.urls: list[str] = []
        self.edit = edit

    def __call__(self, url: str) -> bytes | None:
        self.urls.append(url)
        name = url.rstrip("/").rsplit("/", 1)[1]
        path = RECORDED / f"{name}.json"
        if not path.exists():
            return None
        if self.edit is None:
            return path.read_bytes()
        return json.dumps(self.edit(json.loads(path.read_text()))).encode()


def times(tmp_path, fetcher=None, **options) -> UploadTimes:
    return UploadTimes(
        tmp_path / "index-times", index=INDEX, fetcher=fetcher or RecordedIndex(), **options
    )


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_release_s_time_is_its_earliest_file_s_upload():
    # the wheel, before the sdist
    assert times_of("jax", "0.4.31") == utc("2024-07-30T00:25:44.777269")
    # the first of 15 wheels
    assert times_of("jaxlib", "0.4.31") == utc("2024-07-30T00:25:58.644553")


def times_of(name, version):
    listing = parse_listing(name, INDEX, (RECORDED / f"{name}.json").read_bytes(), 0.0)
    return min(file.uploaded for file in listing.files_of(version))


def test_a_jax_release_s_time_is_the_later_of_jax_s_and_jaxlib_s(tmp_path):
    index = times(tmp_path)
    assert index.release_time("jax", "0.4.31") == utc("2024-07-30T00:25:44.777269")
    assert index.jax_release_time("0.4.31", "0.4.31") == utc("2024-07-30T00:25:58.644553")
    assert index.jax_release_time("0.6.2", "0.6.2") == utc("2025-06-17T23:10:36.916776")
    assert index.release_time("jax", "0.4.32") == utc("2024-09-11T20:10:43.038976"), (
        "yanked, but it came out then"
    )


def test_a_library_s_versions_come_oldest_first_without_yanked_ones(tmp_path):
    listed = dict(times(tmp_path).versions_with_times("equinox"))
    assert "0.10.7" not in listed and "0.10.8" not in listed, "yanked"
    versions = list(listed)
    assert versions[0] == "0.10.6" and versions[-1] == "0.13.8"
    assert versions.index("0.11.4") < versions.index("0.11.10") < versions.index("0.11.11")
    assert listed["0.11.4"] < datetime(2024, 8, 6, tzinfo=UTC) < listed["0.11.5"]
    assert "0.4.32" not in dict(times(tmp_path).versions_with_times("jax"))


def test_versions_without_upload_times_are_left_out_and_a_release_without_one_is_one_clear_error(
    tmp_path,
):
    def without_times(document):
        for entry in document["files"]:
            entry.pop("upload-time", None)
        return document

    index = times(tmp_path, RecordedIndex(without_times))
    assert index.versions_with_times("equinox") == []
    with pytest.raises(
        HarnessError, match=r"index at https://pypi.org/simple gives no upload time for jax 0.4.31"
    ):
        index.release_time("jax", "0.4.31")


def test_a_listing_is_cached_for_a_day_and_a_release_s_time_for_good(tmp_path):
    now = [1_000_000.0]
    fetcher = RecordedIndex()
    index = times(tmp_path, fetcher, clock=lambda: now[0])
    index.release_time("jax", "0.4.31")
    index.versions_with_times("jax")
    assert fetcher.urls == ["https://pypi.org/simple/jax/"]
    assert json.loads((tmp_path / "index-times" / "jax.json").read_text())["fetched_at"] == now[0]
    now[0] += 2 * 24 * 3600
    assert index.release_time("jax", "0.4.31") == utc("2024-07-30T00:25:44.777269")
    assert len(fetcher.urls) == 1, (
        "a release's upload time never changes: an old listing holding it answers"
    )
    index.versions_with_times("jax")
    assert len(fetcher.urls) == 2, "a library's release list is a day old at most"
    with pytest.raises(
        UsageError, match=r"jax 9\.9 is not on the package index at https://pypi\.org/simple"
    ):
        index.release_time("jax", "9.9")
    assert len(fetcher.urls) == 3, (
        "a release a listing lacks may have come out since, however fresh the listing"
    )


def test_a_corrupt_cache_or_one_of_another_index_is_fetched_again(tmp_path):
    fetcher = RecordedIndex()
    index = times(tmp_path, fetcher)
    index.release_time("jax", "0.4.31")
    cached = tmp_path / "index-times" / "jax.json"
    cached.write_text('{"format": 1, "files": [[')
    index.release_time("jax", "0.4.31")
    assert len(fetcher.urls) == 2
    UploadTimes(cached.parent, index="https://mirror.example/simple", fetcher=fetcher).release_time(
        "jax", "0.4.31"
    )
    assert fetcher.urls[-1] == "https://mirror.example/simple/jax/"


def test_a_package_the_index_lacks_and_a_name_that_is_none_are_refused(tmp_path):
    with pytest.raises(
        UsageError, match="there is no package 'no-such-thing' on the package index"
    ):
        times(tmp_path).release_time("no-such-thing", "1.0")
    for bad in ["../../etc/passwd", "a/b", "", "-x", "x" * 300]:
        with pytest.raises(UsageError, match="is not a package name"):
            times(tmp_path).release_time(bad, "1.0")
    assert (
        not (tmp_path / "index-times").exists() or list((tmp_path / "index-times").iterdir()) == []
    )


def test_names_are_normalized_in_the_url_and_the_cache(tmp_path):
    fetcher = RecordedIndex()
    times(tmp_path, fetcher).versions_with_times("Equinox")
    assert fetcher.urls == ["https://pypi.org/simple/equinox/"]
    assert (tmp_path / "index-times" / "equinox.json").is_file()


def test_an_index_that_answers_html_is_one_clear_error(tmp_path):
    with pytest.raises(HarnessError, match="did not answer for jax in the JSON of PEP 691"):
        times(tmp_path, lambda url: b"<html><body>jax-0.4.31.tar.gz</body></html>").release_time(
            "jax", "0.4.31"
        )


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "https://pypi.org/simple"),
        # uv, which resolves from the index the times come from, ignores pip's setting.
        ({"PIP_INDEX_URL": "https://mirror.example/simple/"}, "https://pypi.org/simple"),
        ({"UV_INDEX_URL": "https://mirror.example/simple/"}, "https://mirror.example/simple"),
        (
            {"PIP_INDEX_URL": "https://pip.example/simple", "UV_INDEX_URL": "http://uv.example/s"},
            "http://uv.example/s",
        ),
        (
            {
                "UV_INDEX_URL": "https://a.example/simple",
                "UV_DEFAULT_INDEX": "https://b.example/simple",
            },
            "https://b.example/simple",
        ),
        ({"PIP_INDEX_URL": "/srv/wheels"}, "https://pypi.org/simple"),
        ({"PIP_INDEX_URL": "file:///srv/simple"}, "https://pypi.org/simple"),
    ],
)
def test_the_index_follows_uv_s_setting_when_it_is_an_http_index(environ, expected):
    assert index_url(environ) == expected


def test_credentials_in_an_index_url_are_never_shown_or_cached(tmp_path):
    assert shown("https://user:secret@mirror.example/simple") == "https://mirror.example/simple"
    assert shown("https://pypi.org/simple") == "https://pypi.org/simple"
    fetcher = RecordedIndex()
    index = UploadTimes(
        tmp_path, index="https://user:secret@mirror.example/simple", fetcher=fetcher
    )
    with pytest.raises(UsageError) as raised:
        index.release_time("jax", "9.9")
    assert "secret" not in str(raised.value) and "secret" not in (tmp_path / "jax.json").read_text()
    assert fetcher.urls == ["https://user:secret@mirror.example/simple/jax/"], (
        "the fetch itself needs them"
    )


@pytest.mark.parametrize(
    ("filename", "name", "version"),
    [
        ("jax-0.4.31-py3-none-any.whl", "jax", "0.4.31"),
        ("jaxlib-0.4.31-cp312-cp312-manylinux2014_x86_64.whl", "jaxlib", "0.4.31"),
        ("pkg-1.0-1build-py3-none-any.whl", "pkg", "1.0"),
        ("jax-0.4.31.tar.gz", "jax", "0.4.31"),
        ("jax-cuda12-plugin-0.4.31.tar.gz", "jax-cuda12-plugin", "0.4.31"),
        ("jax_cuda12_plugin-0.4.31.zip", "jax-cuda12-plugin", "0.4.31"),
        ("jax-0.1.egg", "jax", None),
        ("jax-0.1.win32.exe", "jax", None),
        ("other-1.0.tar.gz", "jax", None),
    ],
)
def test_a_file_s_version_comes_from_its_name(filename, name, version):
    assert file_version(filename, name) == version


class LocalIndex(http.server.BaseHTTPRequestHandler):
    """A package index on this machine's loopback (no network): the recorded jax listing, 404 for
    the rest."""

    accepts: ClassVar[list[str]] = []
    authorizations: ClassVar[list[str]] = []

    def do_GET(self):
        LocalIndex.accepts.append(self.headers.get("Accept", ""))
        LocalIndex.authorizations.append(self.headers.get("Authorization", ""))
        if self.path != "/simple/jax/":
            self.send_error(404)
            return
        body = (RECORDED / "jax.json").read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", upload_times.ACCEPT)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def local_index():
    server = http.server.HTTPServer(("127.0.0.1", 0), LocalIndex)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


def test_the_real_fetch_asks_for_pep_691_json_and_bounds_the_answer(
    tmp_path, local_index, monkeypatch
):
    index = UploadTimes(tmp_path, index=local_index)
    assert index.release_time("jax", "0.4.31") == utc("2024-07-30T00:25:44.777269")
    assert LocalIndex.accepts[-1] == "application/vnd.pypi.simple.v1+json"
    with pytest.raises(UsageError, match="no package 'flax'"):
        index.release_time("flax", "0.8.0")
    monkeypatch.setattr(upload_times, "MAX_RESPONSE_BYTES", 1000)
    with pytest.raises(HarnessError, match="with over 1000 bytes"):
        UploadTimes(tmp_path / "other", index=local_index).release_time("jax", "0.4.31")


def test_an_index_url_with_a_user_and_password_is_asked_with_them_as_uv_asks_it(
    tmp_path, local_index
):
    private = local_index.replace("http://", "http://me%40work:s%3Acret@")
    index = UploadTimes(tmp_path, index=private)
    assert index.release_time("jax", "0.4.31") == utc("2024-07-30T00:25:44.777269")
    assert LocalIndex.authorizations[-1] == "Basic bWVAd29yazpzOmNyZXQ=", "me@work:s:cret"
    UploadTimes(tmp_path / "open", index=local_index).release_time("jax", "0.4.31")
    assert LocalIndex.authorizations[-1] == "", "none sent where the URL carries none"


def test_an_index_that_cannot_be_reached_is_one_clear_error(tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), LocalIndex)
    port = server.server_address[1]
    server.server_close()  # nothing listens there now: the connection is refused, on this machine
    address = f"http://127.0.0.1:{port}/simple"
    with pytest.raises(
        HarnessError, match=rf"the package index at {address} could not be reached: .*refused"
    ):
        UploadTimes(tmp_path, index=address).release_time("jax", "0.4.31")
