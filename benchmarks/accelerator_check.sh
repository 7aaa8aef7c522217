#!/usr/bin/env bash
# The catalogue's cases on this machine's accelerator (a GPU or a TPU), with the JAX installed here and
# no package index: each case at its discussion's own sizes (an accelerator profile's anchors:
# test1(10_000), test2(10_000, 2), test2(100, 10_000), test3(100, 10_000); sharding_scaling across the
# devices, or beside a lone one across the host's 8), under the profile the harness finds for the
# installed jax (cuda12, cuda13 or tpu), the report quoting each discussion's figure beside ours.
# Everything goes to one folder: devices.txt (what was found, read without opening the device),
# run.log, results/ and reports/. The cases whose discussion printed figures run first, and the run is
# held to RUN_SECONDS (default 390): whatever it stored by then is kept and reported, so the whole
# check ends within 8 minutes (on a TPU each case process spends 8-15 s opening the chip: 8 cells of
# 3 processes).
#
#   benchmarks/accelerator_check.sh [FOLDER]   default: accelerator-check
#
# Needs no install and no nox: run from a checkout (`python3 -m harness`, this checkout first on
# PYTHONPATH, which keeps what it already names). PYTHON names the interpreter holding jax. The report
# needs tabulate and matplotlib: where they are missing and REPORT_INDEX names a package index (e.g.
# file:///opt/pypi/simple), they are installed from it into a temporary folder (removed at the end,
# never into FOLDER), after everything else on PYTHONPATH, so that the installed JAX stays the one
# used.
#
# PROFILE=NAME measures under that profile where the harness finds none for this jax (say so when
# reporting: its detection failed here; devices.txt shows what it saw).
#
# Exit status: the run's (0 every case ok or skipped; 124 cut at RUN_SECONDS), 2 no accelerator jax.
set -uo pipefail
folder=${1:-accelerator-check}
python=${PYTHON:-python3}
checkout=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$checkout${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's harness, installed or not
mkdir -p "$folder"
started=$SECONDS
say() { echo "accelerator_check: $*" >&2; }
libs=$(mktemp -d "${TMPDIR:-/tmp}/accelerator-check-libs.XXXXXX")
trap 'rm -rf "$libs"' EXIT
# What is here, without opening the device: a TPU chip is held by one process at a time.
"$python" - >"$folder/devices.txt" 2>&1 <<'PY'
import importlib.metadata as metadata
from harness.host import gpu, installed_jax, tpu
for name in ("jax", "jaxlib", "libtpu", "libtpu-nightly", "jax-cuda12-plugin", "jax-cuda13-plugin"):
    try:
        print(name, metadata.version(name))
    except metadata.PackageNotFoundError:
        pass
print("GPUs:", [g.get("name") for g in gpu.query().gpus] or gpu.query().failure)
print("TPU chips:", tpu.chips() or tpu.absence_reason())
print("profile:", installed_jax.device_profile())
PY
found=$("$python" -c 'from harness.host.installed_jax import device_profile; print(device_profile() or "")')
profile=${found:-${PROFILE:-}}
given=()
if [ -z "$found" ] && [ -n "$profile" ]; then
    say "the harness found no profile for this jax; measuring under PROFILE=$profile as asked"
    given=(--profile "$profile")
    # its flags, as the command sets those of a profile it finds (a variable already set wins)
    exports=$("$python" -c 'import os, shlex, sys; from harness.pins import PROFILE_BY_NAME as P
for k, v in P[sys.argv[1]].env.items():
    print(f"export {k}={shlex.quote(v)}" if k not in os.environ else "")' "$profile" 2>/dev/null) ||
        { say "PROFILE=$profile is no profile of the table"; exit 2; }
    eval "$exports"
fi
if [ -z "$profile" ]; then
    say "no jax here with a usable GPU (a CUDA build) or TPU (libtpu); what was found: $folder/devices.txt"
    exit 2
fi
if ! "$python" -c 'import tabulate, matplotlib' 2>/dev/null && [ -n "${REPORT_INDEX:-}" ]; then
    say "installing the report's tabulate and matplotlib from $REPORT_INDEX"
    PIP_CONFIG_FILE=/dev/null "$python" -m pip install --isolated -q --only-binary=:all: \
        --index-url "$REPORT_INDEX" --target "$libs" tabulate matplotlib \
        >>"$folder/install.log" 2>&1 || say "the install failed: $folder/install.log"
fi
say "the installed jax on profile $profile, results in $folder"
# No --profile: the command finds the device's profile itself and runs under its flags, as a user's
# would. The cases whose discussion printed a figure first.
cases=()
for case in async_dispatch scan_sync vmapped_scans switch_scans nested_scan sharding_scaling; do
    cases+=(--case "$case")
done
timeout --signal=TERM "${RUN_SECONDS:-390}" "$python" -m harness run "${cases[@]}" ${given[@]+"${given[@]}"} --processes 3 \
    --max-seconds 0.5 --timeout 120 --results "$folder/results" 2>&1 | tee "$folder/run.log"
status=${PIPESTATUS[0]}
report_path="$PYTHONPATH:$libs"  # last: the installed JAX comes first
if PYTHONPATH=$report_path "$python" -c 'import tabulate, matplotlib' 2>/dev/null; then
    PYTHONPATH=$report_path "$python" -m harness report --results "$folder/results" \
        --out "$folder/reports" >>"$folder/run.log" 2>&1
    say "report in $folder/reports/index.md"
else
    say "no report extra here (REPORT_INDEX names an index to install it from); render elsewhere:" \
        "jax-repro report --results $folder/results"
fi
say "$((SECONDS - started)) s in all"
exit "$status"
