#!/usr/bin/env bash
# Before/after of an engine change on one GPU machine, in one device call: two iostune binaries
# replay the same schedules of the same exported models, interleaved (A, B, A, B per row) so that
# clock and thermal drift fall on both alike.
#
#   scripts/bench/ab_replay.sh --a BIN_BEFORE --b BIN_AFTER [--out DIR] [--python python3]
#       [--models "efficientnet_b0 mobilenet_v3_large unet"] [--precisions "fp16"]
#       [--batches "1 16"] [--schedules "sequential"] [--iters 300] [--rounds 2]
#
# Models are exported with scripts/bench/deployed_export.py (the deployed models' sizes, seeded
# weights); a zoo model name (iostune models) is used as is. Each row is
#   BIN replay --model M --batch B --precision P --schedule-source S --iters N --format json
# (--native-io in fp16/bf16: 16-bit NHWC input and output, as deployed_models.sh times), run
# --rounds times per binary; the table (OUT/ab.md) shows each binary's best median and B/A.
# Raw JSON lines are in OUT/ab.jsonl, logs in OUT/ab_logs/.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
a="" b="" out="${OUT:-$PWD/ab-out}" python=python3
models="efficientnet_b0 mobilenet_v3_large unet"
precisions="fp16" batches="1 16" schedules="sequential" iters=300 rounds=2

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --a) a="$2"; shift 2 ;;
    --b) b="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --precisions) precisions="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --schedules) schedules="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "ab_replay.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$a" ] && [ -x "$b" ] || { echo "ab_replay.sh: --a and --b must name iostune binaries" >&2; exit 2; }

mkdir -p "$out/ab_logs"
onnx="$out/ab_onnx"
mkdir -p "$onnx"
export_list=()
for m in $models; do
  case "$m" in efficientnet_b0|mobilenet_v3_large|fasterrcnn_fpn_backbone|unet) export_list+=("$m") ;; esac
done
if [ ${#export_list[@]} -gt 0 ]; then
  "$python" "$here/deployed_export.py" "$onnx" --models "${export_list[@]}" > "$out/ab_logs/export.log" 2>&1 ||
    { echo "ab_replay.sh: export failed (see ab_logs/export.log)" >&2; exit 1; }
fi
model_arg() { [ -f "$onnx/$1.onnx" ] && echo "$onnx/$1.onnx" || echo "$1"; }

echo "A: $a ($("$a" --version 2>/dev/null))"
echo "B: $b ($("$b" --version 2>/dev/null))"
: > "$out/ab.jsonl"
for precision in $precisions; do
  io=()
  case "$precision" in fp16|bf16) io=(--native-io) ;; esac
  for batch in $batches; do
    for m in $models; do
      for schedule in $schedules; do
        for round in $(seq "$rounds"); do
          for side in A B; do
            bin=$a; [ "$side" = B ] && bin=$b
            log="$out/ab_logs/${m}_b${batch}_${precision}_${schedule}_${side}${round}.log"
            if line=$("$bin" replay --model "$(model_arg "$m")" --batch "$batch" \
                --precision "$precision" --schedule-source "$schedule" "${io[@]}" \
                --iters "$iters" --format json 2> "$log"); then
              echo "$line" | "$python" -c '
import json, sys
r = json.loads(sys.stdin.read())
print(json.dumps({"side": sys.argv[1], "model": sys.argv[2], "batch": int(sys.argv[3]),
                  "precision": sys.argv[4], "schedule": sys.argv[5], "median_ms": r["median_ms"]}))
' "$side" "$m" "$batch" "$precision" "$schedule" >> "$out/ab.jsonl"
            else
              echo "FAILED: $side $m b$batch $precision $schedule (see $log)"
            fi
          done
        done
      done
    done
  done
done

"$python" - "$out/ab.jsonl" > "$out/ab.md" <<'EOF'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["model"], r["batch"], r["precision"], r["schedule"])
    side = rows.setdefault(key, {})
    side[r["side"]] = min(side.get(r["side"], float("inf")), r["median_ms"])
print("| model | batch | precision | schedule | A ms | B ms | B/A |")
print("|---|---|---|---|---|---|---|")
for (m, b, p, s), v in rows.items():
    ra, rb = v.get("A"), v.get("B")
    ratio = f"{rb / ra:.3f}" if ra and rb else "-"
    fa = f"{ra:.3f}" if ra else "-"
    fb = f"{rb:.3f}" if rb else "-"
    print(f"| {m} | {b} | {p} | {s} | {fa} | {fb} | {ratio} |")
EOF
cat "$out/ab.md"
