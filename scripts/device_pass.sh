#!/usr/bin/env bash
# One full pass on a GPU machine (the H100 reached through the device tool): runs the [gpu]
# test binary built on the workstation and keeps every log under $OUT.
#   usage: scripts/device_pass.sh [build-dir] [catch2 test spec...]
# The build happens on the workstation (the device has no fmt/CLI11/nlohmann/Catch2 headers):
#   cmake -S . -B build-engine -G Ninja && cmake --build build-engine -j 2 --target test_gpu
# then the build folder travels with the call (carry=["build-engine"]).
set -uo pipefail

build=${1:-build-engine}
shift || true
out=${OUT:-$PWD/device-out}
mkdir -p "$out"

# The device's cuDNN comes with PyTorch's wheels; CUDA's own libraries from the toolkit.
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
} > "$out/device.txt" 2>&1

status=0
if [[ -x "$build/tests/test_gpu" ]]; then
    "$build/tests/test_gpu" --durations yes "$@" 2>&1 | tee "$out/gpu.log"
    status=${PIPESTATUS[0]}
    echo "test_gpu exit status: $status" | tee -a "$out/gpu.log"
else
    echo "no $build/tests/test_gpu: build it on the workstation first" | tee "$out/gpu.log"
    status=1
fi
exit "$status"
