import os
import re
import socket
from types import SimpleNamespace

import pytest

from harness.host import environment, machine
from tests.conftest import FIXTURES


def test_only_allow_listed_variables_are_kept():
    kept = environment.allowed_variables(
        {
            "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
            "JAX_PLATFORMS": "cpu",
            "CUDA_VISIBLE_DEVICES": "0",
            "HOME": "/home/someone",
            "AWS_SECRET_ACCESS_KEY": "hunter2",
            "PATH": "/usr/bin",
            "MY_JAX_TOKEN": "x",
        }
    )
    assert kept == {
        "CUDA_VISIBLE_DEVICES": "0",
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
    }


def test_scrub_removes_home_and_hostname():
    home = os.path.expanduser("~")
    host = socket.gethostname()
    text = f"dump to {home}/dumps on node='{host}'"
    cleaned = environment.scrub(text)
    assert home not in cleaned and host not in cleaned
    assert "~/dumps" in cleaned and "<host>" in cleaned


def test_host_facts_carry_versions_cpu_and_revision():
    facts = environment.host_facts()
    assert facts["python"].count(".") == 2
    assert facts["cpu_count"] >= 1
    assert set(facts["harness"]) == {"commit", "dirty"}
    assert all(k.startswith(environment.ALLOWED_PREFIXES) for k in facts["variables"])
    assert re.fullmatch(r"[0-9a-f]{16}", facts["machine"]["id"]) and facts["machine"]["basis"]
    assert isinstance(facts["gpus"], list)


def test_gpus_enter_the_host_facts_and_the_machine_id(monkeypatch):
    monkeypatch.setenv("PATH", f"{FIXTURES / 'gpu' / 'working'}{os.pathsep}{os.environ['PATH']}")
    facts = environment.host_facts()
    assert facts["gpus"] == [
        {"name": "NVIDIA H200", "driver_version": "570.86.15", "memory.total": "143771"}
    ]
    hardware = machine.hardware(
        facts["cpu_model"], facts["cpu_count"], facts["memory_total_bytes"], ["NVIDIA H200"]
    )
    assert facts["machine"]["id"] == machine.machine_id(
        hardware, machine.machine_token(machine.cache_folder())
    )


def test_gpu_facts_name_device_driver_cuda_and_wheels(monkeypatch):
    monkeypatch.setenv("PATH", f"{FIXTURES / 'gpu' / 'working'}{os.pathsep}{os.environ['PATH']}")
    devices = [SimpleNamespace(device_kind="NVIDIA H200", compute_capability="9.0")] * 2
    gpu = environment._gpu_facts(devices)
    assert gpu["device_kinds"] == ["NVIDIA H200"] and gpu["compute_capabilities"] == ["9.0"]
    assert gpu["driver_versions"] == ["570.86.15"] and gpu["cuda_driver"] == "12.8"
    assert gpu["cuda_packages"] == environment.cuda_packages()


def test_cuda_wheels_are_recognised_by_name():
    names = [
        "jax-cuda12-plugin",
        "jax-cuda13-pjrt",
        "nvidia-cudnn-cu12",
        "nvidia-cuda-runtime",
        "jaxlib",
        "numpy",
    ]
    assert [n for n in names if environment.CUDA_PACKAGE.match(n)] == names[:4]


def test_credentials_under_an_allowed_prefix_are_redacted():
    from harness.host.environment import REDACTED, allowed_variables, shareable_variables

    environ = {
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "JAX_SOME_TOKEN": "s3cr3t",
        "XLA_SERVICE_PASSWORD": "hunter2",
        "CUDA_API_KEY": "k",
        "JAX_OPAQUE": "ghp_0123456789abcdefghijklmnopqrstuvwx",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "HOME": "/home/x",
    }
    recorded = allowed_variables(environ)
    assert recorded["JAX_PLATFORMS"] == "cpu" and recorded["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert recorded["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8"
    for name in ("JAX_SOME_TOKEN", "XLA_SERVICE_PASSWORD", "CUDA_API_KEY", "JAX_OPAQUE"):
        assert recorded[name] == REDACTED, name
    assert "HOME" not in recorded
    assert set(shareable_variables(environ)) == {
        "JAX_PLATFORMS",
        "XLA_FLAGS",
        "CUDA_VISIBLE_DEVICES",
    }


def test_every_name_that_says_secret_and_every_url_password_is_redacted_in_the_variables():
    from harness.host.environment import REDACTED, allowed_variables, shareable_variables

    environ = {
        "JAX_PASS": "pw",
        "JAX_LICENSE_KEY": "lic",
        "XLA_AUTH_HEADER": "Bearer x",
        "TPU_SESSION_COOKIE": "c",
        "JAX_CACHE_URL": "https://alice:pw@cache.example:8080/path",
        "XLA_PROXY": "http://bob:p@ss@proxy/",  # a password holding an "@"
        "JAX_PLATFORMS": "cpu",
    }
    recorded = allowed_variables(environ)
    for name in ("JAX_PASS", "JAX_LICENSE_KEY", "XLA_AUTH_HEADER", "TPU_SESSION_COOKIE"):
        assert recorded[name] == REDACTED, name
    assert recorded["JAX_CACHE_URL"] == "https://***@cache.example:8080/path"
    assert recorded["XLA_PROXY"] == "http://***@proxy/"
    assert set(shareable_variables(environ)) == {"JAX_CACHE_URL", "XLA_PROXY", "JAX_PLATFORMS"}


def test_every_assignment_line_of_environment_info_is_redacted_by_the_same_rule():
    info = "\n".join(
        [
            "jax:    0.12.0.1",
            "JAX_PLATFORMS=cpu",
            "JAX_SECRET_TOKEN=abc",
            "JAX_PASS=two words",
            "JAX_LICENSE_KEY=lic-1",
            "XLA_FLAGS=--xla_dump_to=/tmp/x",
            "XLA_OPAQUE=ghp_0123456789abcdefghijklmnopqrstuvwx",
            "JAX_CACHE_URL=https://alice:pw@cache.example/",
        ]
    )
    cleaned = environment.redact(info, environ={})
    assert (
        "abc" not in cleaned
        and "two words" not in cleaned
        and "lic-1" not in cleaned
        and "ghp_" not in cleaned
    )
    assert "alice" not in cleaned and ":pw@" not in cleaned
    assert "JAX_PLATFORMS=cpu" in cleaned and "XLA_FLAGS=--xla_dump_to=/tmp/x" in cleaned
    assert (
        "JAX_SECRET_TOKEN=<redacted>" in cleaned
        and "JAX_CACHE_URL=https://***@cache.example/" in cleaned
    )


def test_a_secret_is_redacted_inside_a_command_line_and_wherever_its_long_value_appears():
    environ = {"JAX_SECRET_TOKEN": "tok-0123456789", "JAX_PASS": "short"}
    text = (
        "Run as `JAX_PASS='a b' JAX_PLATFORMS=cpu python x.py`: failed with tok-0123456789 in its "
        "message"
    )
    cleaned = environment.redact(text, environ=environ)
    assert (
        cleaned
        == "Run as `JAX_PASS=<redacted> JAX_PLATFORMS=cpu python x.py`: failed with <redacted> "
        "in its message"
    )


def test_flags_paths_and_ordinary_words_are_left_alone():
    text = (
        "XLA_FLAGS=--xla_force_host_platform_device_count=8 at "
        "https://github.com/jax-ml/jax/issues/1 (N=1000)"
    )
    assert environment.redact(text, environ={}) == text


def test_scrub_removes_the_user_name_from_another_home_and_before_an_at(monkeypatch):
    monkeypatch.setattr(environment, "_user_name", lambda: "jdoe")
    cleaned = environment.scrub(
        "/home/jdoe/x and /Users/jdoe and jdoe@box, but jdoen and /opt/jdoe.d stay"
    )
    assert (
        cleaned == "/home/<user>/x and /Users/<user> and <user>@box, but jdoen and /opt/jdoe.d stay"
    )


def test_facts_are_scrubbed_through_and_through_keys_included():
    home = os.path.expanduser("~")
    facts = {
        "cache": f"{home}/cache",
        home: [f"{home}/a", ("JAX_PASS=x", 3)],
        "n": 1.5,
        "ok": True,
        "none": None,
    }
    assert environment.scrub_value(facts) == {
        "cache": "~/cache",
        "~": [("~/a"), ("JAX_PASS=<redacted>", 3)],
        "n": 1.5,
        "ok": True,
        "none": None,
    }


def test_facts_nested_deeper_than_any_record_are_kept_as_scrubbed_text():
    deep: list = [os.path.expanduser("~")]
    for _ in range(1000):
        deep = [deep]
    scrubbed = environment.scrub_value(deep)
    for _ in range(environment.MAX_SCRUB_DEPTH + 1):
        scrubbed = scrubbed[0]
    assert isinstance(scrubbed, str) and os.path.expanduser("~") not in scrubbed


def test_a_path_is_shown_from_here_below_here_else_from_home_as_tilde_else_whole(
    tmp_path, monkeypatch
):
    here, away = tmp_path / "here", tmp_path / "away"
    (here / "reports").mkdir(parents=True)
    away.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert environment.shown_path(here / "reports" / "a.md") == "reports/a.md"
    assert environment.shown_path(away / "my repro.py") == "~/'away/my repro.py'"
    assert environment.shown_path(here / "x.py", anywhere=True) == "~/here/x.py"
    monkeypatch.setenv("HOME", str(away))
    assert environment.shown_path(tmp_path / "y.py") == str((tmp_path / "y.py").resolve())


JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"Authorization: Bearer {JWT}", "Authorization: <redacted>"),
        ("headers: {'Authorization': 'token ghp_0123456789abcdefghijklmnop'}", "Authorization"),
        (f"retrying with bearer {JWT} after 3 s", "retrying with bearer <redacted> after 3 s"),
        (f"token={JWT}", "token=<redacted>"),
        (f"got {JWT} back", "got <redacted> back"),
        ("key sk-proj-ABCDEFGHIJKLMNOPQRSTUV123 refused", "key <redacted> refused"),
        ("slack xoxb-123456789012-abcdefghijkl", "slack <redacted>"),
        ("aws AKIAIOSFODNN7EXAMPLE id", "aws <redacted> id"),
        ("in a stack: ghp_0123456789abcdefghijklmnopqrstuvwx", "in a stack: <redacted>"),
        ("pat github_pat_11ABCDEFG0123456789_abcdefghijkl", "pat <redacted>"),
        ("Cookie: session=abc123def456", "Cookie: <redacted>"),
        ("login(hf_abcdefghijklmnopqrstuvwxyz0123456789)", "login(<redacted>)"),
        ("key=AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "key=<redacted>"),
        ("\x1b[31mBearer abc1234567890\x1b[0m", "\x1b[31mBearer <redacted>\x1b[0m"),
        ('config {"password": "hunter2pass", "n": 3}', '{"password": <redacted>, "n": 3}'),
        ("db_password: hunter2pass", "db_password: <redacted>"),
        ("pip from https://bob:hunter2pass@pypi.example/simple", "https://***@pypi.example/"),
        (
            "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n"
            "-----END RSA PRIVATE KEY-----\nb",
            "a\n-----<redacted> PRIVATE KEY-----\nb",
        ),
        (  # a text's end that kept only the key's last lines
            "…MIIEowIBAAKCAQEAabcdef\nMIIEowIBAAKCAQEAabcdef\n-----END PRIVATE KEY-----\nthen",
            "-----<redacted> PRIVATE KEY-----\nthen",
        ),
        ("its start: -----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEA", "-----<redacted> PRIVATE"),
    ],
)
def test_credentials_are_redacted_by_their_shape_wherever_they_appear(text, kept):
    cleaned = environment.redact(text, environ={})
    assert kept in cleaned
    for secret in (
        JWT,
        "ghp_",
        "sk-proj",
        "xoxb",
        "AKIA",
        "github_pat",
        "hunter2",
        "MIIE",
        "abc1",
        "hf_a",
        "AIza",
    ):
        assert secret not in cleaned, cleaned
    assert environment.redact(cleaned, environ={}) == cleaned, "redacting twice changes nothing"


def test_words_that_only_resemble_a_credential_shape_are_left_alone():
    text = (
        'File "/venv/lib/python3.12/site-packages/jax/_src/tokens.py", line 3\n'
        "Basic operations; Bearer tokens are refused; the cookie jar; sk-learn; "
        "Token count 12345 of AKIA; eyJ alone; KeyError: 'jaxlib'; the token tok_12345678 of an "
        "effect; KeyboardInterrupt: stopped; https://example.org/x at 12:30; \x1b[1mbold\x1b[0m"
    )
    assert environment.redact(text, environ={}) == text


def test_redacting_a_long_output_of_key_like_lines_takes_time_in_proportion_to_it():
    """A script that prints base64 lines: a regex tried at every line start was quadratic (20,000
    lines took minutes)."""
    import time

    line = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJj\n"

    def seconds(lines):
        text = line * lines + "-----END PRIVATE KEY-----\nafter\n" + line * lines
        started = time.perf_counter()
        cleaned = environment.redact(text, environ={})
        assert cleaned.startswith("-----<redacted> PRIVATE KEY-----\nafter\n")
        return time.perf_counter() - started

    small, large = min(seconds(500) for _ in range(3)), min(seconds(4000) for _ in range(3))
    assert large < 30 * max(small, 1e-3), (small, large)  # linear: ×8; quadratic: ×64


def test_a_script_s_source_is_redacted_by_shape_and_secret_literal_its_code_left_whole():
    source = (
        'API = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"\n'
        'db = {"password": "correct horse battery", "token": "0123456789abcdefABCDEF0123"}\n'
        "url = 'https://bob:hunter2pass@pypi.example/simple'\n"
        "def step(key: jax.Array, tokenizer='bert-base-uncased', n_tokens=3):\n"
        "    key=jax.random.fold_in(key, 1)\n"
        "    return jax.random.normal(key=key, shape=(n_tokens,))\n"
    )
    cleaned = environment.redact(source, environ={}, code=True)
    for secret in ("ghp_", "correct horse", "0123456789abcdefABCDEF", "hunter2"):
        assert secret not in cleaned, cleaned
    assert '"password": "<redacted>"' in cleaned and "https://***@pypi.example" in cleaned
    assert source.splitlines()[3:] == cleaned.splitlines()[3:], "code naming a key is code"
    assert "key: <redacted>" in environment.redact(source, environ={}), "as text it would not be"


def test_a_text_holds_a_secret_by_its_shape_or_this_environment_s_value_never_by_a_name(
    monkeypatch,
):
    monkeypatch.setenv("CI_DEPLOY_TOKEN", "s3cr3t-value-of-ci")
    for text in (
        JWT,
        "xx AKIAIOSFODNN7EXAMPLE",
        "s3cr3t-value-of-ci",
        "-----BEGIN PRIVATE KEY-----",
    ):
        assert environment.holds_secret(text), text
    for text in ("token: 12", "key=k", "json.tokens_ms", "AKIA", "p1_call_ms"):
        assert not environment.holds_secret(text), text
