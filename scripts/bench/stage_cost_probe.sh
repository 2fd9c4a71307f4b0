#!/usr/bin/env bash
# Per-stage cost of the measured search on the GPU: one `iostune search --cost measured` on a
# fresh database, then the same search again (which must measure nothing: every stage comes from
# the stage cache). Prints seconds per measured stage and, when the search JSON carries
# stats.cost_seconds (CostModel::work_seconds()), its split: engine setup, capture, timing,
# cache lookups and stores. Under a minute for inception_v3 at batch 1.
#
# On the device (carry=[".devpack"], see scripts/device_pass.sh for packing):
#   bash scripts/bench/stage_cost_probe.sh .devpack [model] [batch] [deadline_s]
# Writes $OUT/stage_cost_probe_<model>_b<batch>{,_again}.json and prints the summary.
set -uo pipefail

pack=${1:-.devpack}
model=${2:-inception_v3}
batch=${3:-1}
deadline=${4:-55}
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

work=$(mktemp -d)
db="$work/probe.db"
start=$(date +%s)
run() {  # run NAME: one search, JSON to $out/NAME.json, killed at the deadline
    local left=$((deadline - ($(date +%s) - start)))
    if [ "$left" -le 5 ]; then
        echo "skipped $1: deadline of ${deadline}s reached"
        return 1
    fi
    echo "== $(date -u +%H:%M:%S) $1 (at most ${left}s)"
    timeout "$left" "$pack/iostune" search --model "$model" --batch "$batch" --cost measured \
        --db "$db" --format json > "$out/$1.json" 2> "$out/$1.log"
    local rc=$?
    [ $rc -eq 0 ] || { echo "FAILED ($rc): $1; $(tail -3 "$out/$1.log")"; return 1; }
}

name="stage_cost_probe_${model}_b${batch}"
run "$name" && run "${name}_again"

python3 - "$out/$name.json" "$out/${name}_again.json" <<'PY'
import json, os, sys

def load(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    with open(path) as f:
        return json.load(f)

first, again = load(sys.argv[1]), load(sys.argv[2])
if first is None:
    sys.exit("no search result to summarise")
stages = first["stages_costed"]
seconds = first["search_seconds"]
print(f"{first['model']} batch {first['batch']}: {stages} stages measured in {seconds:.1f} s "
      f"of search = {1e3 * seconds / max(stages, 1):.3f} ms per stage "
      f"(includes the DP and cache hits: {first['cache_hits']})")
work = first.get("stats", {}).get("cost_seconds")
if work:
    calls = max(work.get("calls", stages), 1)
    if "merge_calls" in work:
        print(f"  merge stages: {work['merge_calls']}, {work['merge_capture_s']:.2f} s of the capture time")
    parts = [k for k in ("engine_setup_s", "capture_s", "timing_s", "cache_lookup_s",
                         "cache_store_s") if k in work]
    for k in parts:
        print(f"  {k[:-2]:<14} {work[k]:8.2f} s  {1e3 * work[k] / calls:7.3f} ms per stage")
    accounted = sum(work[k] for k in parts)
    print(f"  {'other':<14} {seconds - accounted:8.2f} s  (the DP, signatures, bookkeeping)")
else:
    print("  (no stats.cost_seconds in the JSON: the tuning job does not report the split yet)")
if again is not None:
    verdict = "ok" if again["stages_costed"] == 0 else "UNEXPECTED: should be 0"
    print(f"second search: {again['stages_costed']} stages measured ({verdict}), "
          f"{again['search_seconds']:.1f} s")
PY
