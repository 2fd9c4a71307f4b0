#!/usr/bin/env bash
# The whole benchmark on one GPU machine: iostune's profiles, searches and replays, then the
# PyTorch peers; every measurement becomes a raw record under OUT/raw (results/README.md).
# Builds nothing: point --build at a folder holding cli/iostune built for this GPU.
#
#   scripts/bench/run_h100.sh [--build build] [--out DIR] [--models "inception_v3 ..."]
#       [--batches "1 16"] [--parts "profile iostune torch"] [--strategies "ios-both ..."]
#       [--baselines "sequential greedy nimble opara"] [--iters 500] [--warmup 50]
#       [--compile] [--torch-systems "eager cudagraph"] [--compile-budget 300]
#       [--search-timeout 900] [--deadline SECONDS] [--python python3]
#
# Each IOS strategy searches into its own schedule DB (OUT/db/<strategy>.db): replay then runs
# exactly that strategy's schedule (the replay library picks the best schedule in a DB), and each
# search's cost is measured from scratch, without stage measurements cached by another one.
# --warmup applies to the PyTorch peers; iostune replay uses its own warm-up and reports it.
# OUT defaults to $OUT (the device machine's return folder), else results/. --deadline stops
# starting new steps after that many seconds, so a run under a wall-clock limit still leaves
# complete records behind; what it skipped is printed at the end.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

build="$repo/build"
out="${OUT:-$repo/results}"
models="inception_v3 googlenet squeezenet1_1 resnet50 nasnet_a_large randwire"
batches="1 16"
parts="profile iostune torch"
strategies="ios-both ios-parallel ios-merge"
baselines="sequential greedy nimble opara"
iters=500
warmup=50
compile=0
torch_systems="eager cudagraph"
compile_budget=300
search_timeout=900
deadline=0
python=python3

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --parts) parts="$2"; shift 2 ;;
    --strategies) strategies="$2"; shift 2 ;;
    --baselines) baselines="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --compile) compile=1; shift ;;
    --torch-systems) torch_systems="$2"; shift 2 ;;
    --compile-budget) compile_budget="$2"; shift 2 ;;
    --search-timeout) search_timeout="$2"; shift 2 ;;
    --deadline) deadline="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "run_h100.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

iostune="$build/cli/iostune"
if [ ! -x "$iostune" ]; then
  echo "run_h100.sh: no iostune binary at $iostune; build it (cmake --build $build --target iostune) or pass --build DIR" >&2
  exit 1
fi
raw="$out/raw"
logs="$out/logs"
mkdir -p "$raw" "$logs" "$out/db"
work="$(mktemp -d /tmp/iostune-bench.XXXXXX)"
trap 'rm -rf "$work"' EXIT
version="$("$iostune" --version 2>&1 | head -1)"
record="$python $here/record_iostune.py"
skipped=()

has_part() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
quote() { printf '%q ' "$@" | sed 's/ $//'; }
past_deadline() { [ "$deadline" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# Last lines of a log, as one error message.
tail_of() { tail -n 15 "$1" 2>/dev/null | tr -d '\r'; }

# record_failure MODEL BATCH SYSTEM STATUS COMMAND LOG
record_failure() {
  local msg
  msg="$(tail_of "$6")"
  [ -n "$msg" ] || msg="exit status without output"
  $record run --model "$1" --batch "$2" --system "$3" --status "$4" --error "$msg" \
    --command "$5" --version "$version" --out "$raw" >/dev/null
  echo "  $3: $4 (see $6)"
}

# replay MODEL BATCH SYSTEM SEARCH_JSON SEARCH_S SEARCH_CMD SCHEDULE_ARG...
# The search fields are empty for baselines; SCHEDULE_ARG... picks the schedule
# (--db FILE, or --schedule-source baseline:NAME).
replay() {
  local model="$1" batch="$2" system="$3" search_json="$4" search_s="$5" search_cmd="$6"
  shift 6
  local json="$work/replay.json" log="$logs/${model}_b${batch}_${system}_replay.log"
  local cmd=("$iostune" replay --model "$model" --batch "$batch" "$@" --iters "$iters"
             --format json)
  if ! "${cmd[@]}" >"$json" 2>"$log"; then
    cat "$json" >>"$log"
    record_failure "$model" "$batch" "$system" failed "$(quote "${cmd[@]}")" "$log"
    return
  fi
  local extra=()
  [ -n "$search_json" ] && extra=(--search-json "$search_json" --search-wall-s "$search_s"
                                  --search-command "$search_cmd")
  if $record run --model "$model" --batch "$batch" --system "$system" --replay-json "$json" \
      --command "$(quote "${cmd[@]}")" --version "$version" --out "$raw" "${extra[@]}" >>"$log" 2>&1; then
    echo "  $system: $($python -c 'import json,sys; print("median %.3f ms" % json.load(open(sys.argv[1]))["median_ms"])' "$json" 2>/dev/null || echo recorded)"
  else
    echo "  $system: replay output not recordable (see $log)"
  fi
}

profile_step() {
  local model="$1" batch="$2" json="$work/profile.json" log="$logs/${1}_b${2}_profile.log"
  local cmd=("$iostune" profile --model "$model" --batch "$batch" --json "$json")
  if "${cmd[@]}" >"$log" 2>&1 &&
     $record profile --model "$model" --profile-json "$json" --command "$(quote "${cmd[@]}")" \
       --version "$version" --out "$raw" >>"$log" 2>&1; then
    echo "  profile: recorded critical-path bound"
  else
    echo "  profile: FAILED (see $log); the summary will lack the bound for $model batch $batch"
  fi
}

search_and_replay() {
  local model="$1" batch="$2" strategy="$3" system="iostune-$3"
  local json="$work/search_${strategy}.json" log="$logs/${model}_b${batch}_${system}_search.log"
  local db="$out/db/$strategy.db"
  local cmd=("$iostune" search --model "$model" --batch "$batch" --strategy "$strategy"
             --cost measured --db "$db" --format json)
  local start status limit="$search_timeout"
  # Under --deadline a search may not run past it either.
  if [ "$deadline" -gt 0 ] && [ $((deadline - SECONDS)) -lt "$limit" ]; then
    limit=$((deadline - SECONDS))
  fi
  start="$(now)"
  timeout --kill-after=30 "$limit" "${cmd[@]}" >"$json" 2>"$log"
  status=$?
  local wall
  wall="$(elapsed "$start" "$(now)")"
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "search exceeded its time limit of $limit s (--search-timeout / --deadline)" >>"$log"
    record_failure "$model" "$batch" "$system" timeout "$(quote "${cmd[@]}")" "$log"
    return
  elif [ "$status" -ne 0 ]; then
    record_failure "$model" "$batch" "$system" failed "$(quote "${cmd[@]}")" "$log"
    return
  fi
  echo "  $system: searched in $wall s"
  replay "$model" "$batch" "$system" "$json" "$wall" "$(quote "${cmd[@]}")" --db "$db"
}

echo "iostune benchmark: $version; models: $models; batches: $batches; parts: $parts -> $raw"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv \
  >"$logs/nvidia-smi.txt" 2>&1 || true

if has_part profile || has_part iostune; then
  for model in $models; do
    for batch in $batches; do
      if past_deadline; then skipped+=("iostune $model b$batch"); continue; fi
      echo "$model batch $batch"
      has_part profile && profile_step "$model" "$batch"
      if has_part iostune; then
        for strategy in $strategies; do
          if past_deadline; then skipped+=("iostune-$strategy $model b$batch"); continue; fi
          search_and_replay "$model" "$batch" "$strategy"
        done
        for baseline in $baselines; do
          if past_deadline; then skipped+=("iostune-$baseline $model b$batch"); continue; fi
          replay "$model" "$batch" "iostune-$baseline" "" "" "" --schedule-source "baseline:$baseline"
        done
      fi
    done
  done
fi

if has_part torch; then
  if past_deadline; then
    skipped+=("torch peers")
  else
    read -ra model_list <<<"$models"
    read -ra batch_list <<<"$batches"
    read -ra system_list <<<"$torch_systems"
    peer_args=(--models "${model_list[@]}" --batches "${batch_list[@]}" --out "$raw" --iostune "$iostune"
               --systems "${system_list[@]}" --model-dir "$work/models" --warmup "$warmup"
               --runs "$iters" --compile-budget-s "$compile_budget")
    [ "$compile" -eq 1 ] && peer_args+=(--compile)
    [ "$deadline" -gt 0 ] && peer_args+=(--stop-after-s "$((deadline - SECONDS))")
    $python "$here/torch_peers.py" "${peer_args[@]}" 2>&1 | tee "$logs/torch_peers.log"
  fi
fi

if $python -c 'import matplotlib' 2>/dev/null; then
  $python "$here/summarize.py" --raw "$raw" --out "$out" || echo "summarize failed; run it where the raw files are"
else
  echo "matplotlib is not installed here: copy $raw to results/raw and run scripts/bench/summarize.py there"
fi
if [ ${#skipped[@]} -gt 0 ]; then
  echo "past --deadline $deadline s, skipped: ${skipped[*]}"
fi
