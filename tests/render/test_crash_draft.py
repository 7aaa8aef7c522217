"""The crash report draft, rendered from stored fixture answers and results: JAX's bug form,
pure."""

import dataclasses

from harness.render.crash_draft import SCRIPT_LINES, SHOWN_LINES, CrashDraft, render_crash, title
from harness.store.schema import EndKind
from harness.upstream.change import read_bisect_answers
from harness.upstream.crash import crash_between, status_answer

from ..conftest import FIXTURES, SEGFAULT, as_stored, derive, died, real_result

SCRIPT = (
    "import os, signal\nimport jax\nif jax.__version__ == '0.4.33':\n    os.kill(os.getpid(), "
    "signal.SIGSEGV)\n"
)
STACK = (
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n"
    + "\n".join(f'  File "repro.py", line {n} in <module>' for n in range(60))
    + '\n  File "<frozen runpy>", line 88 in _run_code'
    + '\n  File "/opt/venv/lib/harness/measure/script_hook.py", line 340 in main'
)


def draft(**changes) -> CrashDraft:
    where = {"case": "async_dispatch", "sizes": {"N": 1000}, "profile": "cpu"}
    step = status_answer(read_bisect_answers(FIXTURES / "crash", "async_dispatch"), [], **where)
    assert step is not None
    base = real_result("async_dispatch-0.12.0.1")
    ok = as_stored(derive(base, release=step.before, processes=5))
    dead = derive(base, release=step.after, processes=5)
    died(dead, {**SEGFAULT, "stack": STACK})
    crash = crash_between(ok, as_stored(dead))
    assert crash is not None
    crash = dataclasses.replace(crash, environment_info="jax:    0.4.33\njaxlib: 0.4.33")
    fields = {
        "name": "repro.py",
        "platform": "cpu",
        "crash": crash,
        "script": SCRIPT,
        "script_name": "repro.py",
        "script_words": "the script itself (plain JAX)",
        "source": step.source,
        "workaround": step.workaround,
        "newest": "still crashes on 0.5.0 (SIGSEGV (exit 139) in 5 of 5 processes)",
    }
    return CrashDraft(**(fields | changes))


def test_the_draft_has_the_bug_form_s_sections_with_the_crash_the_stack_and_the_workaround():
    d = draft()
    text = render_crash(d)
    assert title(d) == "repro.py crashes since jax 0.4.33 on CPU: SIGSEGV (exit 139)"
    order = ["### Description", "#### Reproducer", "#### What happened", "### System info"]
    assert [text.index(heading) for heading in order] == sorted(text.index(h) for h in order)
    assert "runs ok on jax 0.4.31 (ok in 5 of 5 processes)" in text
    assert "crashes on jax 0.4.33 (SIGSEGV (exit 139) in 5 of 5 processes)" in text
    assert (
        "Workaround: on jax 0.4.33 it runs with `XLA_FLAGS=--xla_cpu_use_thunk_runtime=false`"
        in text
    )
    assert "Newest release on the index: still crashes on 0.5.0" in text
    assert "```python\n" + SCRIPT in text and "pip install jax==0.4.33 jaxlib==0.4.33" in text
    assert "faulthandler" in text and "line 59 in <module>" in text
    assert "line 0 in <module>" not in text, f"the stack's end only, {SHOWN_LINES} lines"
    assert "Fatal Python error: Segmentation fault" in text, "the last lines it wrote"
    assert "print_environment_info()</code> (jax 0.4.33)" in text and "jaxlib: 0.4.33" in text
    assert f"CPU: {d.crash.cpu_model}" in text


def test_without_a_workaround_or_a_reproducer_the_draft_says_so_and_no_more():
    missing = (
        "The script imports optax besides jax; `nox -s bisect -- --script r.py --status` cuts one."
    )
    text = render_crash(draft(workaround="", script="", missing_script=missing))
    assert "Workaround" not in text and "```python" not in text
    assert missing in text


def test_a_script_too_long_to_paste_is_named_and_a_fix_is_titled_as_one():
    text = render_crash(draft(script="x = 1\n" * (SCRIPT_LINES + 1)))
    assert "attach `repro.py`" in text and "```python" not in text
    d = draft()
    fixed = dataclasses.replace(d, crash=dataclasses.replace(d.crash, runs="0.5.0"))
    assert title(fixed) == (
        "repro.py crashes on jax 0.4.33 on CPU, runs again since 0.5.0: SIGSEGV (exit 139)"
    )


def test_each_release_installs_as_the_plan_pins_it_quoted_for_a_shell():
    text = render_crash(draft(installs={"0.4.31": ("jax==0.4.31", "jaxlib==0.4.30", "numpy<2")}))
    assert "pip install jax==0.4.31 jaxlib==0.4.30 'numpy<2'" in text
    assert "pip install jax==0.4.33 jaxlib==0.4.33" in text, "a release the plan does not pin"


def test_a_hang_is_titled_as_one_with_its_stack_at_the_time_out():
    d = draft()
    assert d.crash.end is not None
    end = dataclasses.replace(d.crash.end, how=EndKind.TIMEOUT, signal=None, timeout_s=60.0)
    hung = dataclasses.replace(d.crash, how="timed out at 60 s", end=end)
    text = render_crash(dataclasses.replace(d, crash=hung))
    assert text.count("hangs since jax 0.4.33 on CPU: timed out at 60 s") == 1
    assert "stack at its time-out (faulthandler)" in text


def test_credentials_in_stored_results_are_redacted_again_but_the_script_is_pasted_as_it_is():
    d = draft(script=SCRIPT + "y = jax.random.normal(key=subkey_0123456789ab, shape=(3,))\n")
    assert d.crash.end is not None
    token = "ghp_" + "0123456789abcdefghijklmn"
    end = dataclasses.replace(
        d.crash.end,
        stack=f'  File "repro.py", line 3 in <module>  # {token}',
        last_lines="Authorization: Bearer abc.def0123456789.ghi\nAKIAIOSFODNN7EXAMPLE",
    )
    text = render_crash(
        dataclasses.replace(
            d,
            crash=dataclasses.replace(d.crash, end=end, environment_info=f"HF={token}"),
            workaround=f"on jax 0.4.33 it runs with `XLA_FLAGS=--x` (key sk-{token})",
        )
    )
    for secret in ("ghp_", "abc.def", "AKIA"):
        assert secret not in text
    assert "Authorization: <redacted>" in text and "line 3 in <module>" in text
    assert "key=subkey_0123456789ab" in text, "the reproducer is the user's own, pasted whole"
