"""``issue``: whether the draft has a change to show decides whether a progress line comes before its answer."""

import json

from harness.commands.issue import has_a_change
from harness.releases.venvs import ReleaseEnv

from ..conftest import FIXTURES
from ..upstream.test_issue import TINY, request


def test_a_change_is_given_stored_or_the_jax_installed_here(tmp_path):
    plan = [ReleaseEnv("0.4.33", "0.4.33", "3.12", ("jax==0.4.33",), tmp_path / "release-jax-0.4.33")]
    assert has_a_change(request(tmp_path)), "no plan: the JAX installed here is drafted about"
    assert not has_a_change(request(tmp_path, plan=plan)), "nox's plan and nothing stored: nothing to draft"
    assert has_a_change(request(tmp_path, plan=plan, good="0.4.31", bad="0.4.33"))
    (tmp_path / "reports").mkdir()
    answer = json.loads((FIXTURES / "issue" / "bisect-scan_sync.json").read_text()) | {"sizes": TINY}
    (tmp_path / "reports" / "bisect-scan_sync.json").write_text(json.dumps(answer))
    assert has_a_change(request(tmp_path, plan=plan))
