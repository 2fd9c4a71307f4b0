#!/usr/bin/env bash
# The benchmark on one GPU machine: iostune's profiles, baselines, searches and replays, then the
# PyTorch peers; every measurement becomes a raw record (results/README.md). Builds nothing.
#
#   scripts/bench/run_h100.sh --tag NAME [--iostune BIN | --build DIR] [--out DIR]
#       [--models "inception_v3 ..."] [--batches "1 16"] [--search-batches "1"]
#       [--precisions "tf32 fp16 bf16"] [--layout auto|nchw|nhwc] [--native-io auto|on|off]
#       [--parts "profile iostune torch"] [--strategies "ios-both ios-parallel ios-merge"]
#       [--baselines "sequential greedy nimble opara"] [--baseline-forms "staged dataflow"]
#       [--r 3] [--s 8] [--search-args "--time-budget 60"] [--shared-db [--resume-db DIR]]
#       [--tuned-db DB]
#       [--iters 500] [--warmup 50] [--replay-placements 4]
#       [--torch-systems "eager cudagraph compile"]
#       [--compile-budget 300] [--compile-jobs 1] [--row-budget 20] [--search-timeout 900] [--deadline SECONDS]
#       [--python python3] [--torch-device cuda]
#
# Everything is written into a work folder, /tmp/bench_<tag> (raw/runs, raw/profiles, logs, db),
# and packed at the end into ONE file, OUT/bench_<tag>.tar.gz, next to OUT/bench_<tag>.log (this
# script's output, written as it runs, so it comes back even if the call is cut off). OUT is
# --out, else $OUT (the device machine's return folder). The schedule DBs go into the tarball only
# while it stays under 15 MiB (the device returns files up to 16 MiB).
#
# iostune: --iostune BIN, else .devpack/iostune (scripts/pack_for_device.sh), else
# <--build>/cli/iostune. Per (model, batch): the profile (critical-path bound), the baselines
# (computed from the graph, no DB), then the IOS strategies in the order given, each searched
# with --cost measured and pruning --r/--s, and replayed by its own schedule id
# (`iostune replay --schedule-id`), so a search that kept the sequential schedule as the DB's best
# still has its own schedule measured. IOS searches run only at --search-batches (default: every
# batch); the others get baselines and peers only.
#
# --tuned-db DB: also replay the best schedule DB holds for each (model, batch, precision), as
# production would (`iostune replay --db DB`), recorded as iostune-ios-both (a DB `iostune tune`
# filled: scripts/bench/fleet_h100.sh).
#
# --baseline-forms: the forms each baseline replays in (`replay --form`): staged (every stage a
# barrier, the default) and/or dataflow (each launch waits for its inputs only; its rows are
# iostune-<baseline>-dataflow). --search-args: extra arguments for every `iostune search`.
# --replay-placements N (4): every replay pools its samples over N placements of the activation
# arena (`replay --placements`), since a latency moves up to 4% with where the buffers land
# (call164); 1: one placement, as before the thirty-second session.
#
# Without --shared-db each strategy searches into its own DB from scratch, so its search time is
# a from-scratch cost. With --shared-db the strategies of one (model, batch) share one DB, in the
# order given: ios-parallel's and ios-merge's stages are subsets of ios-both's, so they reuse
# ios-both's stage measurements; their rows say so (details.shared_stage_cache, cache_hits).
#
# --resume-db DIR (with --shared-db): start each (model, batch) from DIR/<model>_b<batch>.db, the
# shared DB an earlier call left in its tarball (results/device/bench_<tag>/db/). A search too
# long for one device call then continues where the last one was cut off: every stage already
# measured comes from that DB (its row records cache_hits and "resumed"). The search time of such
# a row is the last leg's, not a from-scratch cost.
#
# --precisions (default tf32): each precision in turn gets the iostune parts (profile, baselines,
# searches, replays, all with `--precision P`), then each gets the PyTorch peers in it
# (torch_peers.py --precision P: fp16/bf16 models and inputs in that dtype, channels-last). TF32
# commands are those of the runs before fp16/bf16 (no --precision flag: it is iostune's
# default), with the same file names; the other precisions' logs, search outputs and schedule DBs
# carry _<precision> after the batch (db/<model>_b<batch>_fp16.db), so nothing collides.
# --native-io auto (the default) replays fp16/bf16 with `--native-io`: input and output stay in
# the engine's 16-bit NHWC storage, as the peers' channels-last half tensors do, with no float
# conversion inside the timed graph; tf32/fp32 replays take float NCHW as before (on: every
# precision; off: none). --layout nchw|nhwc passes `--layout L` to every profile, search and
# replay (a stored schedule replays in the layout it was searched in); auto passes nothing, so
# searches time both layouts' sequential schedules and keep the faster.
#
# --torch-device cpu smoke-tests the peers without a GPU (host-timed, no cudagraph rows).
# --deadline SECONDS: start no new step after that many seconds and cut a search off there, so a
# run under a wall-clock limit still packs complete records; what it skipped is listed at the end.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

build="$repo/build"
iostune=""
out="${OUT:-}"
tag=""
models="inception_v3 googlenet squeezenet1_1 resnet50 nasnet_a_large randwire"
batches="1 16"
search_batches=""
parts="profile iostune torch"
strategies="ios-both ios-parallel ios-merge"
baselines="sequential greedy nimble opara"
baseline_forms="staged"
search_args=""
r=3
s=8
shared_db=0
resume_db=""
tuned_db=""
iters=500
warmup=50
replay_placements=4
torch_systems="eager cudagraph"
compile_budget=300
compile_jobs=1
row_budget=20
search_timeout=900
deadline=0
python=python3
torch_device=cuda
precisions=tf32
layout=auto
native_io=auto

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --iostune) iostune="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --search-batches) search_batches="$2"; shift 2 ;;
    --parts) parts="$2"; shift 2 ;;
    --precisions|--precision) precisions="$2"; shift 2 ;;
    --layout) layout="$2"; shift 2 ;;
    --native-io) native_io="$2"; shift 2 ;;
    --strategies) strategies="$2"; shift 2 ;;
    --baselines) baselines="$2"; shift 2 ;;
    --baseline-forms) baseline_forms="$2"; shift 2 ;;
    --search-args) search_args="$2"; shift 2 ;;
    --r) r="$2"; shift 2 ;;
    --s) s="$2"; shift 2 ;;
    --replay-placements) replay_placements="$2"; shift 2 ;;
    --shared-db) shared_db=1; shift ;;
    --resume-db) resume_db="$2"; shift 2 ;;
    --tuned-db) tuned_db="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --compile) torch_systems="$torch_systems compile"; shift ;;
    --torch-systems) torch_systems="$2"; shift 2 ;;
    --compile-budget) compile_budget="$2"; shift 2 ;;
    --compile-jobs) compile_jobs="$2"; shift 2 ;;
    --row-budget) row_budget="$2"; shift 2 ;;
    --search-timeout) search_timeout="$2"; shift 2 ;;
    --deadline) deadline="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --torch-device) torch_device="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "run_h100.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

fail() { echo "run_h100.sh: $*" >&2; exit 2; }
[ -n "$tag" ] || fail "--tag NAME is required (names the tarball bench_NAME.tar.gz)"
[ -z "$resume_db" ] || [ "$shared_db" -eq 1 ] || fail "--resume-db needs --shared-db (it resumes the shared DB of each model and batch)"
[ -z "$resume_db" ] || [ -d "$resume_db" ] || fail "--resume-db '$resume_db' is not a folder"
[ -z "$tuned_db" ] || [ -f "$tuned_db" ] || fail "--tuned-db '$tuned_db' is not a file"
[[ "$tag" =~ ^[A-Za-z0-9._-]+$ ]] || fail "--tag '$tag' may hold only letters, digits, '.', '_' and '-'"
[ -n "$out" ] || fail "no --out and no \$OUT: say where bench_$tag.tar.gz goes"
for n in "$r" "$s" "$iters" "$warmup" "$deadline" "$compile_jobs"; do
  [[ "$n" =~ ^[0-9]+$ ]] || fail "'$n' is not a whole number (--r --s --iters --warmup --deadline --compile-jobs)"
done
[ -n "$search_batches" ] || search_batches="$batches"
[ -n "$precisions" ] || fail "--precisions is empty (tf32, fp16, bf16, fp32)"
for p in $precisions; do
  case "$p" in tf32|fp16|bf16|fp32) ;; *) fail "--precisions: '$p' is not tf32, fp16, bf16 or fp32" ;; esac
done
case "$layout" in auto|nchw|nhwc) ;; *) fail "--layout '$layout' is not auto, nchw or nhwc" ;; esac
case "$native_io" in auto|on|off) ;; *) fail "--native-io '$native_io' is not auto, on or off" ;; esac
if [ -z "$iostune" ]; then
  if [ -x "$repo/.devpack/iostune" ]; then iostune="$repo/.devpack/iostune"; else iostune="$build/cli/iostune"; fi
fi
[ -x "$iostune" ] || fail "no iostune binary at '$iostune'; pass --iostune BIN or --build DIR (or run scripts/pack_for_device.sh)"
iostune="$(cd "$(dirname "$iostune")" && pwd)/$(basename "$iostune")"

# shellcheck source=scripts/bench/bench_setup.sh
. "$here/bench_setup.sh"
device_libraries
bench_work_folder
mkdir -p "$raw/runs" "$raw/profiles" "$logs" "$work/db"
scratch="$(mktemp -d /tmp/iostune-bench-scratch.XXXXXX)"
log="$out/$name.log"
exec > >(tee -a "$log") 2>&1

skipped=()
packed=0
# Packs the work folder into OUT/bench_<tag>.tar.gz, with the DBs only if that stays small.
pack() {
  [ "$packed" -eq 1 ] && return
  packed=1
  local tarball="$out/$name.tar.gz" limit=$((15 * 1024 * 1024))
  cp "$log" "$logs/run_h100.log" 2>/dev/null
  tar -C /tmp -czf "$tarball" "$name"
  if [ "$(stat -c %s "$tarball")" -gt "$limit" ]; then
    echo "tarball over 15 MiB with the schedule DBs; packing without db/"
    tar -C /tmp -czf "$tarball" --exclude="$name/db" "$name"
  fi
  echo "packed $(find "$raw" -name '*.json' | wc -l) raw records into $tarball ($(du -h "$tarball" | cut -f1))"
  rm -rf "$scratch"
}
trap 'pack' EXIT
trap 'echo "run_h100.sh: interrupted; packing what is there"; exit 130' INT TERM

version="$("$iostune" --version 2>&1 | head -1)"
record="$python $here/record_iostune.py"
# `iostune replay --schedule-id N` replays exactly schedule N of --db. (The help is read whole
# first: `grep -q` on a pipe may close it before the writer is done, which pipefail reports as
# the check failing.)
replay_help="$("$iostune" replay --help 2>&1)"
by_id=0
grep -q -- '--schedule-id' <<<"$replay_help" && by_id=1
# `iostune replay --placements N` pools its samples over N placements of the activation arena.
place_args=()
if [ "$replay_placements" -gt 1 ]; then
  if grep -q -- '--placements' <<<"$replay_help"; then
    place_args=(--placements "$replay_placements")
  else
    echo "WARNING: this iostune has no 'replay --placements'; every replay times one placement"
  fi
fi
if [ "$shared_db" -eq 1 ] && [ "$by_id" -eq 0 ]; then
  echo "WARNING: this iostune has no 'replay --schedule-id', so a shared DB cannot replay each"
  echo "         strategy's own schedule; falling back to one DB per strategy (--shared-db ignored)"
  shared_db=0
fi

has() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }
quote() { printf '%q ' "$@" | sed 's/ $//'; }
past_deadline() { [ "$deadline" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
stamp() { date -u +%H:%M:%S; }
json_field() { $python -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$1" "$2" 2>/dev/null; }

# The precision being measured, set by the loops below, and what it adds to iostune's commands
# and to file names. TF32 adds nothing: its commands and names stay those of the TF32-only runs.
precision=tf32
set_precision() {
  precision="$1"
  prec_args=() ; replay_args=() ; pfx=""
  if [ "$precision" != tf32 ]; then prec_args=(--precision "$precision"); pfx="_$precision"; fi
  [ "$layout" != auto ] && prec_args+=(--layout "$layout")
  case "$native_io:$precision" in
    on:*|auto:fp16|auto:bf16) replay_args=(--native-io) ;;
  esac
}
set_precision tf32
# "squeezenet1_1 b1" plus " fp16" when not TF32, for progress lines and the skipped list.
what() { echo "$1 b$2${pfx:+ $precision}"; }

# record_failure MODEL BATCH SYSTEM STATUS COMMAND LOG [record options...]
record_failure() {
  local msg
  msg="$(tail -n 15 "$6" 2>/dev/null | tr -d '\r')"
  [ -n "$msg" ] || msg="exit status without output"
  $record run --model "$1" --batch "$2" --system "$3" --status "$4" --error "$msg" \
    --command "$5" --version "$version" --precision "$precision" --out "$raw" "${@:7}" >/dev/null
  echo "  $3: $4 (see logs/$(basename "$6"))"
}

# replay MODEL BATCH SYSTEM SCHEDULE_ARGS -- RECORD_ARGS...
# SCHEDULE_ARGS pick the schedule (--schedule-source NAME, or --db FILE [--schedule-id N]);
# RECORD_ARGS go to record_iostune.py (the search's output and cost for IOS rows).
replay() {
  local model="$1" batch="$2" system="$3"
  shift 3
  local sched=() extra=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do sched+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  extra=("$@")
  local json="$scratch/replay.json" rlog="$logs/${model}_b${batch}${pfx}_${system}_replay.log"
  local cmd=("$iostune" replay --model "$model" --batch "$batch" "${sched[@]}" "${prec_args[@]}"
             "${replay_args[@]}" "${place_args[@]}" --iters "$iters" --format json)
  local start
  start="$(now)"
  if ! "${cmd[@]}" >"$json" 2>"$rlog"; then
    cat "$json" >>"$rlog"
    record_failure "$model" "$batch" "$system" failed "$(quote "${cmd[@]}")" "$rlog" "${extra[@]}"
    return
  fi
  if $record run --model "$model" --batch "$batch" --system "$system" --replay-json "$json" \
      --command "$(quote "${cmd[@]}")" --version "$version" --precision "$precision" \
      --out "$raw" "${extra[@]}" >>"$rlog" 2>&1; then
    echo "  $system: median $(json_field "$json" median_ms) ms (replay $(elapsed "$start" "$(now)") s)"
  else
    echo "  $system: replay output not recordable (see logs/$(basename "$rlog"))"
  fi
}

profile_step() {
  local model="$1" batch="$2" json="$scratch/profile.json" plog="$logs/${1}_b${2}${pfx}_profile.log"
  local cmd=("$iostune" profile --model "$model" --batch "$batch" "${prec_args[@]}" --json "$json")
  if "${cmd[@]}" >"$plog" 2>&1 &&
     $record profile --model "$model" --profile-json "$json" --command "$(quote "${cmd[@]}")" \
       --version "$version" --precision "$precision" --out "$raw" >>"$plog" 2>&1; then
    echo "  profile: critical path $(json_field "$json" critical_path_us) us"
  else
    echo "  profile: FAILED (see logs/$(basename "$plog")); no bound for $(what "$model" "$batch")"
  fi
}

# search_and_replay MODEL BATCH STRATEGY EARLIER: EARLIER lists the strategies that searched
# into the same DB before this one (empty without --shared-db).
search_and_replay() {
  local model="$1" batch="$2" strategy="$3" earlier="$4" system="iostune-$3"
  local json="$scratch/search.json" slog="$logs/${model}_b${batch}${pfx}_${system}_search.log" db
  # One DB per precision: the DB keys schedules and stages by precision, so sharing would be
  # safe, but separate files keep --resume-db and `iostune report --db` to one precision each.
  if [ "$shared_db" -eq 1 ]; then db="$work/db/${model}_b${batch}${pfx}.db"
  else db="$work/db/${model}_b${batch}${pfx}_${strategy}.db"; fi
  if [ -n "$resume_db" ] && [ ! -e "$db" ] && [ -e "$resume_db/$(basename "$db")" ]; then
    cp "$resume_db/$(basename "$db")" "$db"
    # A search cut off at the deadline leaves its last pages in the write-ahead log; SQLite
    # replays a -wal file found beside the DB on open, so it travels too (-shm is rebuilt).
    if [ -e "$resume_db/$(basename "$db")-wal" ]; then
      cp "$resume_db/$(basename "$db")-wal" "$db-wal"
    fi
    earlier="${earlier:+$earlier }resumed"
    echo "  resuming from $resume_db/$(basename "$db")"
  fi
  local extra_search=()
  [ -n "$search_args" ] && read -ra extra_search <<<"$search_args"
  local cmd=("$iostune" search --model "$model" --batch "$batch" --strategy "$strategy"
             "${prec_args[@]}" --r "$r" --s "$s" --cost measured --db "$db" --format json
             "${extra_search[@]}")
  local start status limit="$search_timeout"
  if [ "$deadline" -gt 0 ] && [ $((deadline - SECONDS)) -lt "$limit" ]; then
    limit=$((deadline - SECONDS))
  fi
  local info=(--r "$r" --s "$s")
  [ -n "$earlier" ] && info+=(--shared-cache "$earlier")
  start="$(now)"
  timeout --kill-after=20 "$limit" "${cmd[@]}" >"$json" 2>"$slog"
  status=$?
  local wall
  wall="$(elapsed "$start" "$(now)")"
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "search cut off after $limit s (--search-timeout / --deadline)" >>"$slog"
    # The leg's time is kept: a search resumed later (--resume-db) reports its total over legs.
    record_failure "$model" "$batch" "$system" timeout "$(quote "${cmd[@]}")" "$slog" "${info[@]}" \
      --search-wall-s "$wall" --search-command "$(quote "${cmd[@]}")"
    return
  elif [ "$status" -ne 0 ]; then
    record_failure "$model" "$batch" "$system" failed "$(quote "${cmd[@]}")" "$slog" "${info[@]}"
    return
  fi
  cp "$json" "$logs/${model}_b${batch}${pfx}_${system}_search.json"
  local id
  id="$(json_field "$json" schedule_id)"
  echo "  $system: searched in $wall s, schedule #$id, $(json_field "$json" stages_costed) stages measured, $(json_field "$json" cache_hits) from the DB"
  local sched=(--db "$db")
  [ "$by_id" -eq 1 ] && sched+=(--schedule-id "$id")
  replay "$model" "$batch" "$system" "${sched[@]}" -- --search-json "$json" --search-wall-s "$wall" \
    --search-command "$(quote "${cmd[@]}")" "${info[@]}"
}

echo "== $(stamp) iostune benchmark $tag: $version"
echo "   models: $models; batches: $batches (IOS search at: $search_batches); parts: $parts"
echo "   precisions: $precisions; layout: $layout; native-io: $native_io"
echo "   r=$r s=$s shared-db=$shared_db replay-by-id=$by_id iters=$iters deadline=${deadline}s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv \
  >"$logs/nvidia-smi.txt" 2>&1 || echo "   (no nvidia-smi)"

if has "$parts" profile || has "$parts" iostune; then
  for prec in $precisions; do
    set_precision "$prec"
    for model in $models; do
      for batch in $batches; do
        if past_deadline; then skipped+=("iostune $(what "$model" "$batch")"); continue; fi
        echo "== $(stamp) $model batch $batch${pfx:+, $precision} (${SECONDS}s)"
        has "$parts" profile && profile_step "$model" "$batch"
        has "$parts" iostune || continue
        for baseline in $baselines; do
          for form in $baseline_forms; do
            [ "$baseline" = sequential ] && [ "$form" != staged ] && continue  # one lane: the same graph
            local_system="iostune-$baseline"
            [ "$form" = staged ] || local_system="$local_system-$form"
            if past_deadline; then skipped+=("$local_system $(what "$model" "$batch")"); continue; fi
            replay "$model" "$batch" "$local_system" --schedule-source "$baseline" --form "$form"
          done
        done
        if [ -n "$tuned_db" ]; then
          if past_deadline; then skipped+=("iostune-ios-both (tuned DB) $(what "$model" "$batch")")
          else replay "$model" "$batch" iostune-ios-both --db "$tuned_db"; fi
        fi
        has "$search_batches" "$batch" || continue
        earlier=""
        for strategy in $strategies; do
          if past_deadline; then skipped+=("iostune-$strategy $(what "$model" "$batch")"); continue; fi
          search_and_replay "$model" "$batch" "$strategy" "$earlier"
          # Even a search cut off has stored the stages it measured.
          [ "$shared_db" -eq 1 ] && earlier="${earlier:+$earlier }$strategy"
        done
      done
    done
  done
fi

if has "$parts" torch; then
  read -ra model_list <<<"$models"
  read -ra batch_list <<<"$batches"
  read -ra system_list <<<"$torch_systems"
  for prec in $precisions; do
    set_precision "$prec"
    if past_deadline; then
      skipped+=("torch peers${pfx:+ $precision}")
      continue
    fi
    echo "== $(stamp) PyTorch peers${pfx:+, $precision}: $torch_systems (${SECONDS}s)"
    peer_args=(--models "${model_list[@]}" --batches "${batch_list[@]}" --out "$raw"
               --iostune "$iostune" --systems "${system_list[@]}" --model-dir "$scratch/models"
               --warmup "$warmup" --runs "$iters" --compile-budget-s "$compile_budget"
               --compile-jobs "$compile_jobs" --device "$torch_device" --precision "$precision"
               --row-budget-s "$row_budget" --min-runs "$((iters < 200 ? iters : 200))")
    [ "$deadline" -gt 0 ] && peer_args+=(--stop-after-s "$((deadline - SECONDS))")
    $python "$here/torch_peers.py" "${peer_args[@]}" 2>&1 | tee "$logs/torch_peers${pfx}.log"
  done
fi

[ ${#skipped[@]} -gt 0 ] && echo "past --deadline $deadline s, not started: ${skipped[*]}"
echo "== $(stamp) done in ${SECONDS}s"
