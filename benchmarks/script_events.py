"""Which of JAX's duration events fire on which release of the table: checked by running, not by
reading.

For every release of the release table (or ``--jax V,V``), installs it into its cached
venv (``.nox/release-jax-V``, as the matrix and triage do), runs a small jitted script
under the plain-script hook (``harness/measure/script_hook.py``) and prints one markdown
row per release: the import of jax, and per event how often it fired, its total, and —
where it never fired — whether the release's source names it at all.

    python benchmarks/script_events.py [--jax 0.4.26,0.12.0.1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.install.venvs import ensure, release_env  # noqa: E402
from harness.measure import script_hook  # noqa: E402
from harness.pins import DEFAULT_PROFILE, RELEASE_BY_VERSION, RELEASES  # noqa: E402

SCRIPT = """\
import jax, jax.numpy as jnp
f = jax.jit(lambda x: jnp.sin(x) @ x.T)
f(jnp.ones((64, 64))).block_until_ready()
g = jax.jit(lambda x: jax.lax.scan(lambda c, _: (c * 2.0, None), x, None, length=8)[0])
g(jnp.ones(4)).block_until_ready()
"""


def interpreter(version: str) -> str:
    sys.path.insert(0, str(REPO))
    import noxfile  # the noxfile's own choice of interpreter per Python version

    return str(noxfile.interpreter(version))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", help="releases, comma-separated (default: the whole table)")
    args = parser.parse_args()
    releases = [RELEASE_BY_VERSION[v] for v in args.jax.split(",")] if args.jax else list(RELEASES)
    phases = list(script_hook.EVENTS)
    print("| release | import jax | " + " | ".join(f"{p} (count, total)" for p in phases) + " |")
    print("|---|---|" + "---|" * len(phases))
    with tempfile.TemporaryDirectory() as folder:
        script, report = Path(folder) / "events.py", Path(folder) / "report.json"
        script.write_text(SCRIPT)
        for release in releases:
            env = release_env(release, DEFAULT_PROFILE, interpreter(release.python), REPO / ".nox")
            problem = ensure(env)
            if problem:
                print(f"| {release.jax} | cannot be installed: {problem} |")
                continue
            done = subprocess.run(
                [str(env.interpreter), str(Path(script_hook.__file__)), str(report), str(script)],
                capture_output=True,
                text=True,
                check=False,
                env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
            )
            if done.returncode != 0:
                print(
                    f"| {release.jax} | the script failed: "
                    f"{done.stderr.strip().splitlines()[-1:]} |"
                )
                continue
            found = json.loads(report.read_text())
            cells = []
            for phase in phases:
                event = found["events"][phase]
                if event["count"]:
                    cells.append(f"{event['count']}, {event['total_ns'] / 1e6:.1f} ms")
                else:
                    cells.append("0 (named in its source)" if event.get("exists") else "absent")
            print(
                f"| {release.jax} | {found['import_ns'] / 1e6:.0f} ms | "
                + " | ".join(cells)
                + " |",
                flush=True,
            )


if __name__ == "__main__":
    main()
