#!/usr/bin/env bash
# Why one model's latency differs from process to process (results/device/choice_spread): runs
# N new processes of `iostune profile` (which chooses every convolution afresh and records the
# choice and its isolated time per op) and of a sequential replay, each preceded by the GPU's
# clocks, power, temperature and throttle reasons from nvidia-smi. Compare the runs' JSON here.
#   usage: scripts/bench/choice_probe.sh [model=resnet50] [runs=6] [iostune=.devpack/iostune]
# Writes $OUT/choice_probe.tar.gz (profiles, replays, gpu_state.csv) and prints a summary.
set -uo pipefail
model=${1:-resnet50} runs=${2:-6} iostune=${3:-.devpack/iostune}
out=${OUT:-$PWD/choice-probe-out}
work=$(mktemp -d)/choice_probe
mkdir -p "$out" "$work"
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
query=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active
echo "run,when,$query" >"$work/gpu_state.csv"
state() { echo "$1,$2,$(nvidia-smi --query-gpu=$query --format=csv,noheader,nounits 2>/dev/null)" >>"$work/gpu_state.csv"; }
for run in $(seq "$runs"); do
  state "$run" before
  "$iostune" profile --model "$model" --batch 1 --json "$work/profile_$run.json" >/dev/null 2>>"$work/log"
  state "$run" after-profile
  "$iostune" replay --model "$model" --batch 1 --schedule-source sequential --iters 200 \
    --format json >"$work/replay_$run.json" 2>>"$work/log"
  echo "run $run: op sum $(python3 -c "import json; print(round(json.load(open('$work/profile_$run.json'))['op_sum_us'], 1))") us, sequential $(python3 -c "import json; print(round(json.load(open('$work/replay_$run.json'))['median_ms'], 3))") ms"
done
cat "$work/gpu_state.csv"
tar -C "$(dirname "$work")" -czf "$out/choice_probe.tar.gz" choice_probe
