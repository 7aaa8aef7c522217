"""Round four's hostile inputs on installing: a package index that fails (refused, 500, cut short,
trickling, killed mid-triage), venvs that lost files, caches that take no writes, a kept resolution
tampered with.  What they must never do: be stored as an answer ("not installable"), or end in a
traceback.  Network tests only ever talk to 127.0.0.1."""

import functools
import http.server
import json
import os
import shutil
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from harness.catalogue.scripts import read_script
from harness.install import script_envs
from harness.install.environments import INDEX_TIMES, Environments, Failed
from harness.install.script_envs import InstallFailed, ScriptEnv, ScriptEnvRequest, ensure, resolve
from harness.install.upload_times import IndexUnreachable, UploadTimes, fetch
from harness.install.venvs import ReleaseEnv
from harness.measure.runner import Measured
from harness.pins import Release
from harness.steps.probes import ReleaseProber
from harness.store.schema import Settings
from tests.conftest import FIXTURES
from tests.install.test_script_envs import FakeUv, done, recorded_index, request

EQUINOX = FIXTURES / "deps" / "equinox_mlp.py"
DEAD_INDEX = "http://127.0.0.1:9/simple"  # the discard port, closed on loopback: refused at once
UV = shutil.which("uv")


def release_env(tmp_path: Path, jax: str) -> ReleaseEnv:
    return ReleaseEnv(
        jax, jax, sys.executable, ("-e", ".", f"jax=={jax}"), tmp_path / f"release-jax-{jax}"
    )


class Asked:
    """The measurement stands in: which releases each run measured; it stores nothing."""

    def __init__(self):
        self.measured: list[str] = []

    def __call__(self, plan, sides, settings, results_dir, **kwargs):
        self.measured += [side.release for side in sides]
        return [Measured(side, None, None) for side in sides]


def prober(tmp_path, measure) -> ReleaseProber:
    case = read_script(EQUINOX)
    envs = {jax: release_env(tmp_path, jax) for jax in ("0.4.30", "0.4.31")}
    environments = Environments(case, None, progress=lambda line: None)
    return ReleaseProber(
        envs,
        case,
        {},
        "cpu",
        tmp_path / "results",
        Settings(processes=1),
        lambda line: None,
        measure=measure,
        environments=environments,
    )


@pytest.mark.skipif(UV is None, reason="needs uv")
def test_an_index_killed_mid_triage_stores_nothing_and_the_release_is_measured_next_run(
    tmp_path, monkeypatch
):
    # The upload times were fetched while the index was up; then it goes away (uv asks a closed
    # port).
    folder = tmp_path
    UploadTimes(folder / INDEX_TIMES, index=DEAD_INDEX, fetcher=recorded_index).jax_release_time(
        "0.4.31", "0.4.31"
    )
    monkeypatch.setenv("UV_INDEX_URL", DEAD_INDEX)
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    monkeypatch.delenv("UV_DEFAULT_INDEX", raising=False)
    real_ensure = script_envs.ensure
    index_up = {"0.4.30"}  # the first release resolved before the index died

    def ensure_while(request, folder, times):
        if request.release.jax in index_up:
            pins = ("equinox==0.11.4", f"jax=={request.release.jax}", "jaxlib==0.4.30")
            resolved = script_envs.libraries(request, pins, None)
            return ScriptEnv(tmp_path / "script-env-up", request.python, "3.12.1", resolved)
        return real_ensure(request, folder, times)

    monkeypatch.setattr(script_envs, "ensure", ensure_while)
    asked = Asked()
    first = prober(tmp_path, asked)
    probe = first("0.4.31")
    assert probe.result is None
    assert probe.note.startswith("could not be installed: `uv pip compile` failed: ")
    assert "127.0.0.1:9" in probe.note, probe.note
    assert first("0.4.30").note.startswith("the measurement stored no result")
    assert asked.measured == ["0.4.30"]
    assert not list((tmp_path / "results").rglob("*.json")), "nothing stored as an answer"
    assert not list(tmp_path.glob("script-resolutions/*/resolution.json")), "no resolution kept"

    index_up.add("0.4.31")  # the index is back: the next run carries on
    prober(tmp_path, asked)("0.4.31")
    assert asked.measured == ["0.4.30", "0.4.31"]


@pytest.mark.parametrize(
    "explanation",
    [
        # uv with the network off: only its cache was read.
        "  × No solution found when resolving dependencies:\n  ╰─▶ Because jaxlib was not found in "
        "the cache and you require jaxlib==0.4.31, we can conclude that your requirements are "
        "unsatisfiable.\n\n"
        "      hint: Packages were unavailable because the network was disabled.",
        # A mirror that lists nothing (a wrong path): the release itself is missing, which the index
        # it was found on has.
        "  × No solution found when resolving dependencies:\n  ╰─▶ Because jax was not found in "
        "the package registry and you require jax==0.4.31, we can conclude that your requirements "
        "are unsatisfiable.",
        # An index that refused the credentials.
        "  × No solution found when resolving dependencies:\n  ╰─▶ Because equinox was not found "
        "in the package registry and you require equinox, we can conclude ...\n\n      hint: An "
        "index URL (http://127.0.0.1:8/simple) could not be queried due to a lack of valid "
        "authentication credentials",
        # HTTP 500, and a JSON answer cut short.
        "error: Failed to fetch: `http://127.0.0.1:8/simple/jaxlib/`\n  Caused by: HTTP status "
        "server error (500 Internal Server Error)",
        "error: Failed to read metadata: `http://127.0.0.1:8/simple/jax/`\n  Caused by: EOF while "
        "parsing",
        # A time-out (the runner's own), and uv killed by a signal.
        "error: did not finish within 900 s",
        "",
    ],
)
def test_no_answer_of_the_index_is_ever_kept_as_not_installable(tmp_path, explanation):
    uv = FakeUv(compile_error=(2, explanation))
    outcome = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    assert isinstance(outcome, InstallFailed)
    assert not list(tmp_path.glob("script-resolutions/*/resolution.json"))


def times_of(folder: Path) -> UploadTimes:
    return UploadTimes(
        folder / "index-times", index="https://pypi.org/simple", fetcher=recorded_index
    )


def test_a_script_venv_that_lost_a_module_is_synced_again_whole(tmp_path):
    uv = FakeUv()
    env = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    assert isinstance(env, ScriptEnv)
    site = env.venv / "lib" / "python3.12" / "site-packages"
    (site / "equinox").mkdir()
    (site / "equinox" / "__init__.py").write_text("")
    (site / "equinox-0.11.4.dist-info").mkdir()
    (site / "equinox-0.11.4.dist-info" / "RECORD").write_text("equinox/__init__.py,,0\n")
    assert ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"]) == env
    assert len(uv.steps("pip sync")) == 1, "intact: reused"
    (site / "equinox" / "__init__.py").unlink()
    assert ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"]) == env
    syncs = uv.steps("pip sync")
    assert len(syncs) == 2 and "--reinstall" in syncs[-1], "damaged: every distribution again"


def test_a_script_venv_without_site_packages_is_made_again(tmp_path):
    uv = FakeUv()
    env = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    shutil.rmtree(env.venv / "lib")
    ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    assert len(uv.steps("pip sync")) == 2


@pytest.mark.parametrize(
    "pins",
    [
        ["equinox==0.11.4", "numpy==2.0.1"],  # no jax at all: "ok" results with no jax installed
        ["equinox==0.11.4", "jax==0.4.33", "jaxlib==0.4.31"],  # another release's jax
        ["--index-url=http://127.0.0.1:8/simple", "jax==0.4.31", "jaxlib==0.4.31"],  # an option
        ["jax==0.4.31", "jaxlib==0.4.31", "x==1\n--index-url=http://127.0.0.1:8/"],
        "jax==0.4.31",  # not a list
        [7, "jax==0.4.31", "jaxlib==0.4.31"],
    ],
)
def test_a_kept_resolution_tampered_with_is_resolved_afresh(tmp_path, pins):
    uv = FakeUv()
    ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    [record] = tmp_path.glob("script-resolutions/*/resolution.json")
    stored = json.loads(record.read_text())
    record.write_text(json.dumps({**stored, "pins": pins}))
    env = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    assert len(uv.steps("pip compile")) == 2
    assert "jax==0.4.31" in env.libraries.installed
    synced = (env.venv / script_envs.PINS_FILE).read_text().splitlines()
    assert all(script_envs.PIN.fullmatch(line) for line in synced), synced


def test_a_venv_record_listing_an_option_is_not_trusted(tmp_path):
    uv = FakeUv()
    env = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    record = env.venv / script_envs.RECORD
    stored = json.loads(record.read_text())
    record.write_text(json.dumps({**stored, "installed": ["--index-url=http://127.0.0.1:8/"]}))
    again = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    assert "--index-url=http://127.0.0.1:8/" not in again.libraries.installed
    assert len(uv.steps("pip sync")) == 2


def test_a_patch_level_requires_python_is_refused_before_any_venv_is_made(tmp_path):
    from harness.catalogue.script_deps import Declared
    from harness.errors import UsageError

    uv = FakeUv()
    declared = Declared(("equinox",), ("--with",), ">=3.12.5", "repro.py")
    asked = ScriptEnvRequest(Release("0.4.31", "0.4.31"), declared, "/usr/bin/python3.12")
    with pytest.raises(UsageError, match=r"requires Python >=3\.12\.5.*Python 3\.12\.1"):
        ensure(asked, tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    assert not uv.steps("venv") and not uv.steps("pip compile")


def failing_replace(monkeypatch, errno_name="EROFS"):
    import errno
    import os

    def refuse(src, dst):
        raise OSError(getattr(errno, errno_name), os.strerror(getattr(errno, errno_name)))

    monkeypatch.setattr(os, "replace", refuse)


@pytest.mark.parametrize("errno_name", ["EROFS", "ENOSPC", "EACCES"])
def test_a_cache_or_venv_that_takes_no_writes_is_one_line(tmp_path, monkeypatch, errno_name):
    times_of(tmp_path).jax_release_time("0.4.31", "0.4.31")  # the listing cached while it could be
    failing_replace(monkeypatch, errno_name)
    outcome = ensure(request(), tmp_path, times_of(tmp_path), runner=FakeUv(), uv=["uv"])
    assert isinstance(outcome, InstallFailed)
    assert outcome.reason.startswith("cannot write the resolution under ")
    assert "\n" not in outcome.reason


def test_a_venv_that_takes_no_writes_is_one_line(tmp_path, monkeypatch):
    uv = FakeUv()
    ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    shutil.rmtree(next(tmp_path.glob("script-env-*")))
    real_replace = script_envs.replace_file

    def refuse_in_venvs(path, data):
        if path.parent.name.startswith("script-env-"):
            raise OSError(28, "No space left on device")
        real_replace(path, data)

    monkeypatch.setattr(script_envs, "replace_file", refuse_in_venvs)
    outcome = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    assert isinstance(outcome, InstallFailed) and outcome.stage == "install"
    assert outcome.reason.endswith(": No space left on device")


def test_a_folder_where_the_resolutions_go_that_is_a_file_is_one_line(tmp_path):
    (tmp_path / "script-resolutions").write_text("not a folder")
    outcome = ensure(request(), tmp_path, times_of(tmp_path), runner=FakeUv(), uv=["uv"])
    assert isinstance(outcome, InstallFailed) and "cannot write the resolution" in outcome.reason


def test_a_listing_cache_that_takes_no_writes_still_answers(tmp_path, monkeypatch):
    failing_replace(monkeypatch)
    assert times_of(tmp_path).jax_release_time("0.4.31", "0.4.31").year == 2024


def test_an_unreachable_index_for_the_upload_times_is_could_not_be_tried(tmp_path):
    def refused(url):
        raise IndexUnreachable(f"the package index at {DEAD_INDEX} could not be reached: refused")

    times = UploadTimes(tmp_path / "index-times", index=DEAD_INDEX, fetcher=refused)
    outcome = ensure(request(), tmp_path, times, runner=FakeUv(), uv=["uv"])
    assert isinstance(outcome, InstallFailed) and "could not be reached" in outcome.reason


def test_environments_say_a_failure_as_failed_and_never_as_not_installable(tmp_path, monkeypatch):
    monkeypatch.setattr(
        script_envs,
        "ensure",
        lambda *a: InstallFailed("the index at 127.0.0.1:9 refused", "resolve"),
    )
    said = Environments(read_script(EQUINOX), None).prepare(
        "0.4.31", release_env(tmp_path, "0.4.31")
    )
    assert said == Failed("could not be installed: the index at 127.0.0.1:9 refused")


class Trickle(http.server.BaseHTTPRequestHandler):
    """An index that answers slowly, fails, or cuts its answer short, by the path asked."""

    def do_GET(self):
        if self.path.startswith("/slow/"):
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.end_headers()
            for byte in b'{"files": []}' * 100:
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.2)
        elif self.path.startswith("/short/"):
            self.send_response(200)
            self.send_header("Content-Length", "5000")
            self.end_headers()
            self.wfile.write(b'{"files": [')
        else:
            self.send_error(500)

    def log_message(self, *args):
        pass


@pytest.fixture
def trickling_index():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_index_sending_a_byte_at_a_time_is_cut_off_at_the_whole_answer_s_deadline(
    trickling_index,
):
    started = time.monotonic()
    with pytest.raises(IndexUnreachable, match=r"did not answer .* within 1 s"):
        fetch(f"{trickling_index}/slow/jax/", timeout_s=1)
    assert time.monotonic() - started < 3


@pytest.mark.parametrize(
    ("path", "said"), [("/short/jax/", "could not be reached"), ("/fail/jax/", "HTTP 500")]
)
def test_an_answer_cut_short_or_an_http_500_is_one_line_not_a_traceback(
    trickling_index, path, said
):
    with pytest.raises(IndexUnreachable, match=said):
        fetch(f"{trickling_index}{path}", timeout_s=5)


def test_a_json_answer_cut_short_is_asked_again_not_an_error_of_the_index(tmp_path):
    answers = [b'{"files": [{"filename": "jax-0.4.31', recorded_index("https://x/simple/jax/")]
    times = UploadTimes(tmp_path, index="https://x/simple", fetcher=lambda url: answers.pop(0))
    with pytest.raises(IndexUnreachable, match="JSON cut short"):
        times.listing("jax")
    assert times.listing("jax").files, "the next ask gets the whole answer"


def test_resolve_on_an_index_of_nothing_but_refusals_keeps_nothing(tmp_path):
    uv = FakeUv(compile_error=(2, "error: Request failed: Connection refused (os error 111)"))
    for _ in range(3):
        assert isinstance(
            resolve(request(), tmp_path, None, "3.12.1", DEAD_INDEX, uv=["uv"], runner=uv),
            InstallFailed,
        )
    assert len(uv.steps("pip compile")) == 3


class Listings(http.server.BaseHTTPRequestHandler):
    """A PEP 691 index of the recorded listings, that goes away (its port closed) after its
    ``budget`` answers."""

    def do_GET(self):
        server = self.server
        server.asked.append(self.path)  # type: ignore[attr-defined]
        if len(server.asked) > server.budget:  # type: ignore[attr-defined]
            threading.Thread(target=server.shutdown, daemon=True).start()
            self.close_connection = True
            self.connection.close()  # the network drops: nothing comes back
            return
        body = recorded_index(f"https://x{self.path}")
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class LocalIndex:
    """An index on a port of 127.0.0.1 that can die after some answers and come back on the same
    port."""

    def __init__(self):
        self.server = None
        self.port = 0

    def up(self, budget=10**6):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Listings)
        server.daemon_threads = True
        server.asked, server.budget = [], budget  # type: ignore[attr-defined]
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.server = server
        return server

    def down(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/simple"


class IndexAskingUv(FakeUv):
    """uv as far as the index goes: ``pip compile`` asks the index (UV_INDEX_URL) for the script's
    library and answers with the release its constraints hold, or with uv's own words when the index
    cannot be reached."""

    def __call__(self, command, cwd):
        command = list(command)
        if command[1:3] != ["pip", "compile"]:
            return super().__call__(command, cwd)
        self.calls.append(command)
        url = f"{os.environ['UV_INDEX_URL']}/equinox/"
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                answer.read()
        except OSError as exc:
            said = f"error: Failed to fetch: `{url}`\n  Caused by: {exc}"
            return done(command, 2, stderr=said)
        held = (cwd / "constraints.txt").read_text().split()
        return done(command, stdout="\n".join(["equinox==0.11.4", *held]) + "\n")


@pytest.fixture
def local_index():
    index = LocalIndex()
    yield index
    index.down()


def test_an_index_that_dies_mid_triage_leaves_nothing_wrong_stored_and_the_next_run_carries_on(
    tmp_path, monkeypatch, local_index
):
    # The first release's set is had whole (jax's and jaxlib's listings for its date, equinox for
    # uv), then the index goes away, as a network that drops: the second release's resolution meets
    # a dead port.
    server = local_index.up(budget=3)
    monkeypatch.setenv("UV_INDEX_URL", local_index.url)
    uv = IndexAskingUv()
    monkeypatch.setattr(script_envs, "ensure", functools.partial(ensure, runner=uv, uv=["uv"]))
    asked = Asked()
    first = prober(tmp_path, asked)
    assert first("0.4.30").note.startswith("the measurement stored no result")
    probe = first("0.4.31")
    assert len(server.asked) > 3, "the index was asked after it died"  # type: ignore[attr-defined]
    assert probe.result is None and probe.note.startswith("could not be installed: ")
    assert local_index.url.removesuffix("/simple") in probe.note and "\n" not in probe.note
    assert asked.measured == ["0.4.30"]
    assert not list((tmp_path / "results").rglob("*.json")), "nothing stored as an answer"
    kept = [json.loads(p.read_text())["pins"] for p in tmp_path.glob("script-resolutions/*/*.json")]
    assert all("jax==0.4.31" not in pins for pins in kept), "no resolution of 0.4.31 kept"
    assert not [
        p
        for p in tmp_path.glob("script-env-*")
        if "jax==0.4.31" in p.joinpath(script_envs.PINS_FILE).read_text()
    ], "no venv of 0.4.31"

    local_index.down()
    local_index.up()  # the index is back, on the same address: the next run carries on
    again = prober(tmp_path, asked)
    assert again("0.4.31").note.startswith("the measurement stored no result")
    assert asked.measured == ["0.4.30", "0.4.31"], "0.4.31 measured on the next run"


@pytest.mark.parametrize("interpreter", ["dangling", "removed"])
def test_a_script_venv_whose_interpreter_is_gone_is_made_anew(tmp_path, interpreter):
    uv = FakeUv()
    env = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    python = env.venv / "bin" / "python"
    python.unlink()
    if interpreter == "dangling":
        python.symlink_to(tmp_path / "no-such-python")
    (env.venv / "left-over").write_text("from the venv before")
    again = ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"])
    assert again == env
    assert len(uv.steps("venv")) == 2 and len(uv.steps("pip sync")) == 2, "made anew, then synced"
    assert not (env.venv / "left-over").exists(), "nothing of the broken venv kept"
    assert ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"]) == env
    assert len(uv.steps("venv")) == 2, "the venv made anew is reused"


class SlowUv(FakeUv):
    """uv whose venv takes a while to make: time for a second run to ask for the same venv
    meanwhile."""

    def __call__(self, command, cwd):
        if command[1] == "venv":
            time.sleep(0.5)
        return super().__call__(command, cwd)


def test_two_runs_that_need_one_new_script_venv_at_once_make_it_once(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    uv = SlowUv()
    made = []

    def one_run():
        made.append(ensure(request(), tmp_path, times_of(tmp_path), runner=uv, uv=["uv"]))

    runs = [threading.Thread(target=one_run) for _ in range(2)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert all(isinstance(env, ScriptEnv) for env in made) and made[0] == made[1], made
    assert len(uv.steps("venv")) == 1 and len(uv.steps("pip sync")) == 1, (
        "the second waited, then reused"
    )
