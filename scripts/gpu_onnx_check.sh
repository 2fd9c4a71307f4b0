#!/usr/bin/env bash
# Runs scripts/gpu_onnx_check.py on the GPU machine: iostune's GPU engine on the four torchvision
# models at full size, imported from ONNX, against PyTorch on the same GPU (L2 relative error of
# the logits of a batch of 2; see the script's header). About 2 minutes on an H100; the script
# stops starting work at --deadline-s (160 s by default) and reports what it did not check.
#   usage: scripts/gpu_onnx_check.sh [build-dir] [gpu_onnx_check.py options...]
# Build on the workstation (cmake --build build-onnx --target iostune) and carry the build folder;
# iostune needs no libprotobuf/libonnx there (protobuf is linked statically). The table, a JSON
# summary and the command log go to $OUT; the ONNX files and outputs to a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-onnx}
shift || true
out=${OUT:-$PWD/gpu-onnx-out}

# The device's cuDNN comes with PyTorch's wheels; CUDA's own libraries from the toolkit.
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1 || true)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python=${PYTHON:-python3}
# A build folder has cli/iostune; scripts/pack_for_device.sh puts it at .devpack/iostune.
iostune=$build/cli/iostune
[[ -x $iostune ]] || iostune=$build/iostune
[[ -x $iostune ]] || { echo "no iostune binary in $build (cli/iostune or iostune)" >&2; exit 2; }
if ! ldd "$iostune" | grep -q -E "libprotobuf|libonnx"; then
    echo "iostune: no libprotobuf/libonnx run-time dependency (ok)"
else
    echo "warning: iostune links libprotobuf/libonnx dynamically:" >&2
    ldd "$iostune" | grep -E "libprotobuf|libonnx" >&2
fi
if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; fi
exec "$python" scripts/gpu_onnx_check.py --iostune "$iostune" --out "$out" "$@"
