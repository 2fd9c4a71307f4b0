#!/usr/bin/env bash
# How much a model's latency depends on the process that chose its convolutions: each run is a
# new process that times cuDNN's variants afresh (iostune replay --schedule-source sequential),
# so the spread over runs is the spread of those choices. Two binaries alternate run by run, so
# the GPU's state is the same for both on average (e.g. before/after an engine change).
#   usage: scripts/bench/choice_spread.sh BIN_A BIN_B [runs=6] [models="resnet50 inception_v3"]
# On the GPU machine; prints one line per run and a median/min/max summary per binary and model.
# Measured on the H100 (results/device/choice_spread/, 2026-11-21): ResNet-50 0.90-1.24 ms and
# Inception V3 1.62-2.16 ms over 6 processes each. A build that first brought the GPU clock up
# with a probe kernel (tried and reverted) spread just as much: 1.02-1.21 and 1.62-2.12.
set -uo pipefail
a=$1 b=$2 runs=${3:-6} models=${4:-"resnet50 inception_v3"}
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
results=$(mktemp)
for model in $models; do
  for run in $(seq "$runs"); do
    for bin in "$a" "$b"; do
      median=$("$bin" replay --model "$model" --batch 1 --schedule-source sequential --iters 200 \
        --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
      echo "$model $bin run $run: $median ms" >&2
      echo "$model $bin $median" >>"$results"
    done
  done
done
python3 - "$results" "$("$a" --version)" "$("$b" --version)" <<'PY'
import sys, statistics
rows = [line.split() for line in open(sys.argv[1])]
print(f"A = {sys.argv[2]}\nB = {sys.argv[3]}")
print("model          binary  runs  median   min      max      (ms, sequential schedule, batch 1)")
for model in dict.fromkeys(r[0] for r in rows):
    for bin_ in dict.fromkeys(r[1] for r in rows):
        v = [float(r[2]) for r in rows if r[0] == model and r[1] == bin_]
        print(f"{model:14} {bin_:7} {len(v):4}  {statistics.median(v):.3f}   {min(v):.3f}   {max(v):.3f}")
PY
