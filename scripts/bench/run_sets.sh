#!/usr/bin/env bash
# The model-set benchmark (issue 15, docs/model-sets.md) on one GPU machine: per precision and
# batch, each member model searched alone (so back-to-back runs its own best schedule), then each
# set searched as one graph, then three iostune rows per set: iostune-coscheduled (the set's best
# stored schedule), iostune-back-to-back (each model's best schedule, one after another, in one
# CUDA Graph) and iostune-streams (each model's ops in order on its own stream); then the PyTorch
# peers of the same sets (torch_set_peers.py). Builds nothing.
#
#   scripts/bench/run_sets.sh --tag NAME [--iostune .devpack/iostune] [--python python3]
#       [--precisions "tf32 fp16"] [--batches "1 8"] [--sets "SPEC;SPEC"] [--parts "iostune torch"]
#       [--torch-systems "cudagraph-back-to-back cudagraph-streams compile"]
#       [--iters 300] [--compile-budget 240] [--deadline SECONDS] [--out DIR]
#       [--search-args "--time-budget 30"] [--replay-placements 4]
#
# A SPEC is models joined by '+' and ':shared' or ':separate' (default: the issue's three sets).
# Everything goes to /tmp/bench_<tag> (raw records in raw/runs, logs, the schedule DB) and is
# packed at the end, or when the script is stopped, into ONE file OUT/bench_<tag>.tar.gz (the
# device machine returns few files and none with '+' in its name), next to OUT/bench_<tag>.log.
# The PyTorch step gets what is left before --deadline (timeout), so the packing happens.
# --replay-placements N (4): every replay pools N placements of the arena (run_h100.sh --help).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tag="" iostune=".devpack/iostune" python=python3 precisions="tf32 fp16" batches="1 8"
sets="resnet50+resnet50+resnet50+resnet50:shared;googlenet+googlenet+googlenet+googlenet:shared;inception_v3+googlenet+squeezenet1_1+resnet50:separate"
parts="iostune torch" torch_systems="cudagraph-back-to-back cudagraph-streams compile"
iters=300 compile_budget=240 deadline=0 out="${OUT:-$PWD/device-out}" search_args=""
replay_placements=4
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="$2" ;; --iostune) iostune="$2" ;; --python) python="$2" ;;
    --precisions) precisions="$2" ;; --batches) batches="$2" ;; --sets) sets="$2" ;;
    --parts) parts="$2" ;; --torch-systems) torch_systems="$2" ;; --iters) iters="$2" ;;
    --compile-budget) compile_budget="$2" ;; --deadline) deadline="$2" ;; --out) out="$2" ;;
    --search-args) search_args="$2" ;;
    --replay-placements) replay_placements="$2" ;;
    -h|--help) sed -n 2,18p "$0"; exit 0 ;;
    *) echo "run_sets.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$tag" ] || { echo "run_sets.sh: --tag is required" >&2; exit 2; }
[ -x "$iostune" ] || { echo "run_sets.sh: no iostune binary at '$iostune'" >&2; exit 2; }
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1

name="bench_$tag"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="/tmp/$name"
[ -e "$work" ] && { echo "run_sets.sh: '$work' exists; pick another --tag" >&2; exit 2; }
mkdir -p "$work/raw/runs" "$work/logs"
log="$out/$name.log"
exec > >(tee -a "$log") 2>&1
db="$work/sets.db"
pack() { cp "$log" "$work/logs/" 2>/dev/null; tar -C /tmp -czf "$out/$name.tar.gz" "$name";
         echo "packed $(find "$work/raw" -name '*.json' | wc -l) raw records into $out/$name.tar.gz"; }
trap pack EXIT
trap 'echo "run_sets.sh: stopped; packing what is there"; exit 130' INT TERM
version="$("$iostune" --version 2>&1 | head -1)"
place_args=()
# (The help read whole: `grep -q` on a pipe may close it early, which pipefail calls a failure.)
if [ "$replay_placements" -gt 1 ] && grep -q -- '--placements' <<<"$("$iostune" replay --help 2>&1)"
then place_args=(--placements "$replay_placements"); fi
say() { echo "== $(date -u +%H:%M:%S) $* (${SECONDS}s)"; }
late() { [ "$deadline" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; }
say "model-set benchmark $tag: $version; precisions $precisions; batches $batches"

# models_args SPEC -> "--model a --model b [--shared-input]"
models_args() {
  local spec="$1" names="${1%%:*}" mode="${1##*:}" args=""
  for m in ${names//+/ }; do args="$args --model $m"; done
  [ "$mode" = shared ] && args="$args --shared-input"
  echo "$args"
}

search() {  # search LOGNAME ARGS...: one tuning job into the shared DB
  local logname="$1"; shift
  local extra=()
  [ -n "$search_args" ] && read -ra extra <<<"$search_args"
  "$iostune" search "$@" "${extra[@]}" --db "$db" --format json > "$work/logs/$logname.json" \
    2> "$work/logs/$logname.log" || echo "  search failed: see logs/$logname.log"
}

replay_row() {  # replay_row SPEC BATCH PRECISION SYSTEM [replay args...]
  local spec="$1" batch="$2" prec="$3" system="$4"; shift 4
  local names="${spec%%:*}"
  local file="$work/logs/${names}_b${batch}_${prec}_${system}"
  local cmd=("$iostune" replay $(models_args "$spec") --batch "$batch" --precision "$prec"
             --db "$db" --iters "$iters" --format json "${place_args[@]}" "$@")
  [ "$prec" != tf32 ] && cmd+=(--native-io)
  if "${cmd[@]}" > "$file.json" 2> "$file.log"; then
    $python "$here/record_iostune.py" run --model "$names" --batch "$batch" --system "$system" \
      --precision "$prec" --replay-json "$file.json" --command "${cmd[*]}" --version "$version" \
      --out "$work/raw" > /dev/null
    echo "  $system: median $(json_field "$file.json" median_ms) ms"
  else
    echo "  $system: FAILED (logs/$(basename "$file").log)"
  fi
}
json_field() { $python -c 'import json,sys; print(round(json.load(open(sys.argv[1]))[sys.argv[2]], 4))' "$1" "$2" 2>/dev/null; }

IFS=';' read -r -a set_list <<< "$sets"
if [[ " $parts " == *" iostune "* ]]; then
  for prec in $precisions; do
    for batch in $batches; do
      late && { say "deadline: skipping iostune $prec b$batch"; continue; }
      say "iostune $prec b$batch: each model alone"
      members=$(for s in "${set_list[@]}"; do echo "${s%%:*}" | tr '+' '\n'; done | sort -u)
      for m in $members; do
        late && break
        search "alone_${m}_b${batch}_${prec}" --model "$m" --batch "$batch" --precision "$prec"
      done
      for spec in "${set_list[@]}"; do
        late && { say "deadline: skipping $spec $prec b$batch"; continue; }
        say "set $spec $prec b$batch: search"
        search "set_${spec%%:*}_b${batch}_${prec}" $(models_args "$spec") --batch "$batch" \
          --precision "$prec"
        $python -c 'import json,sys; d=json.load(open(sys.argv[1])); print("  searched in %.1f s, %d stages measured; kept %s %.4f ms; baselines %s" % (d["search_seconds"], d["stages_costed"], d["kept_strategy"], d["measured_latency_ms"], d["baselines_latency_ms"]))' \
          "$work/logs/set_${spec%%:*}_b${batch}_${prec}.json" 2>/dev/null
        replay_row "$spec" "$batch" "$prec" iostune-coscheduled
        replay_row "$spec" "$batch" "$prec" iostune-back-to-back --schedule-source back-to-back
        replay_row "$spec" "$batch" "$prec" iostune-streams --schedule-source streams
      done
    done
  done
fi
if [[ " $parts " == *" torch "* ]]; then
  for prec in $precisions; do
    late && { say "deadline: skipping PyTorch $prec"; continue; }
    say "PyTorch peers $prec: $torch_systems"
    set_args=()
    for spec in "${set_list[@]}"; do set_args+=(--set "$spec"); done
    limit=()
    [ "$deadline" -gt 0 ] && limit=(timeout $((deadline - SECONDS > 1 ? deadline - SECONDS : 1)))
    "${limit[@]}" $python "$here/torch_set_peers.py" "${set_args[@]}" --batches $batches --precisions "$prec" \
      --systems $torch_systems --iters "$iters" --compile-budget "$compile_budget" \
      --iostune "$iostune" --out "$work/raw" 2>&1 | tail -n 40
  done
fi
say "done"
