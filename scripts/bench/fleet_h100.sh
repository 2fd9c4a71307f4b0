#!/usr/bin/env bash
# Issue 27 on the GPU: a tuning plan (default examples/fleet/h100_12keys.json: 6 zoo models,
# TF32 and fp16, batch 1) tuned with `iostune tune`, its wall time and per-key results kept.
# On the workstation:
#   cmake -S . -B build -G Ninja && cmake --build build -j 2 && scripts/pack_for_device.sh build
# then one device call (carry [".devpack"], timeout_s 600):
#   bash scripts/bench/fleet_h100.sh --tag fleet12                  # one GPU
#   bash scripts/bench/fleet_h100.sh --tag fleet12x4 --devices all  # a worker per GPU (x2/x4 kinds)
# (Compare wall times within one machine kind: on a multi-GPU kind, also run --devices 0.)
# Options:
#   --plan FILE      the tuning plan (default examples/fleet/h100_12keys.json)
#   --devices LIST   "0,1,..." or "all" (iostune tune --devices all: every GPU it may use);
#                    default: one GPU, no --devices
#   --resume DB      start from this database (e.g. one a cut-short call brought back, copied
#                    into .devpack/ to travel: its keys are skipped, its stage measurements and
#                    convolution choices reused) instead of an empty one
#   --tag NAME       the output folder's name under $OUT (default fleet)
#   --pack DIR       the binaries (default .devpack)
# Under $OUT/<tag>/: tune.log (the progress lines and the summary table), wall.txt, report.md and
# report.json (`iostune report` of the DB), fleet.db (the DB, for --resume or `db merge`) and
# logs.tar.gz (each key's search output). A run the call's limit cuts short leaves what it
# stored: bring fleet.db back and run again with --resume, the stored keys are skipped.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

plan=examples/fleet/h100_12keys.json
devices=""
resume=""
tag=fleet
pack=.devpack
while (($#)); do
  case "$1" in
    --plan) plan=$2; shift 2 ;;
    --devices) devices=$2; shift 2 ;;
    --resume) resume=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --pack) pack=$2; shift 2 ;;
    *) echo "fleet_h100.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done

out="${OUT:-$PWD/device-out}/$tag"
mkdir -p "$out"
iostune="$pack/iostune"
[ -x "$iostune" ] || { echo "fleet_h100.sh: no $iostune; run scripts/pack_for_device.sh first" >&2; exit 2; }
# The device's cuDNN comes with PyTorch's wheels; CUDA's own libraries from the toolkit.
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

db="$out/fleet.db"
rm -f "$db" "$db"-wal "$db"-shm
[ -n "$resume" ] && cp "$resume" "$db"

{
  echo "iostune: $("$iostune" --version)"
  echo "plan: $plan ($(tr -d '\n' <"$plan" | head -c 400))"
  echo "devices: ${devices:-one GPU (no --devices)}"
  nvidia-smi -L 2>/dev/null
  echo "resumed from: ${resume:-nothing (empty DB)}"
} >"$out/wall.txt"

args=(tune --plan "$plan" --db "$db" --log-dir "$out/logs")
[ -n "$devices" ] && args+=(--devices "$devices")
start=$(date +%s.%N)
"$iostune" "${args[@]}" 2>&1 | tee "$out/tune.log"
status=${PIPESTATUS[0]}
end=$(date +%s.%N)
wall=$(awk "BEGIN { printf \"%.1f\", $end - $start }")
echo "wall_seconds: $wall (exit code $status)" | tee -a "$out/wall.txt"

"$iostune" report --db "$db" --format md >"$out/report.md" 2>&1
"$iostune" report --db "$db" --format json >"$out/report.json" 2>&1
[ ! -d "$out/logs" ] || { tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$out/logs"; }
exit "$status"
