#!/usr/bin/env bash
# On the GPU machine, first in every device call: unzips the binaries pack_for_device.sh packed
# and prints the LD_LIBRARY_PATH the GPU machine needs (CUDA's libraries, PyTorch's cuDNN).
# Use: eval "$(bash scripts/device_unpack.sh)"
set -euo pipefail
pack=${1:-.devpack}
for f in "$pack"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x "$pack"/* 2>/dev/null || true
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
echo "export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
