#!/usr/bin/env bash
# The catalogue's cases on this machine's GPU, with the JAX installed here and no package index: each case
# at its discussion's own sizes (the GPU profile's anchors: test1(10_000), test2(10_000, 2),
# test2(100, 10_000), test3(100, 10_000); sharding_scaling across the GPUs, or beside a lone one across
# the host's 8 devices), under the cuda12/cuda13 profile found for the installed jax, each case page
# quoting the discussion's figure beside ours.  Everything goes to one folder: devices.txt (what was
# found), run.log, results/ and, where the report extra is installed, reports/.  The run is held to
# RUN_SECONDS (default 420): whatever it stored by then is kept and reported, so the whole check ends
# within 8 minutes.
#
#   benchmarks/gpu_check.sh [FOLDER]        default: gpu-check; PYTHON names the interpreter holding jax
#
# Exit status: the run's (0 every case ok or skipped; 124 cut at RUN_SECONDS), 2 no CUDA jax or no GPU.
set -uo pipefail
folder=${1:-gpu-check}
python=${PYTHON:-python3}
checkout=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$checkout${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's harness, installed or not
mkdir -p "$folder"
{
    nvidia-smi -L
    "$python" -c 'import jax; print("jax", jax.__version__, jax.devices())'
} >"$folder/devices.txt" 2>&1
profile=$("$python" -c 'from harness.host.installed_jax import device_profile; print(device_profile() or "")')
if [ -z "$profile" ]; then
    echo "gpu_check: no CUDA build of jax with a usable GPU here; what was found: $folder/devices.txt" >&2
    exit 2
fi
echo "gpu_check: the installed jax on profile $profile, results in $folder" >&2
# No --profile: the command finds the device's profile itself and runs under its flags, as a user's would.
timeout --signal=TERM "${RUN_SECONDS:-420}" "$python" -m harness run --processes 3 --max-seconds 0.5 \
    --timeout 120 --results "$folder/results" 2>&1 | tee "$folder/run.log"
status=${PIPESTATUS[0]}
if "$python" -c 'import tabulate, matplotlib' 2>/dev/null; then
    "$python" -m harness report --results "$folder/results" --out "$folder/reports" >>"$folder/run.log" 2>&1
    echo "gpu_check: report in $folder/reports/index.md" >&2
else
    echo "gpu_check: no report extra here; render elsewhere: jax-repro report --results $folder/results" >&2
fi
exit "$status"
