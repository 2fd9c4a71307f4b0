#!/usr/bin/env bash
# The deployed models of issue 14 on one GPU machine, in one device call: exported to ONNX there
# with its PyTorch, imported by iostune, searched and replayed with --validate, beside PyTorch's
# CUDA graph and torch.compile in the same precision; raw records (results/README.md) and a table.
#
#   scripts/bench/deployed_models.sh --tag NAME [--iostune BIN] [--out DIR] [--python python3]
#       [--models "efficientnet_b0 mobilenet_v3_large fasterrcnn_fpn_backbone unet"]
#       [--precisions "tf32 fp16"] [--batches "1 16"] [--parts "iostune torch"]
#       [--r 2] [--s 4] [--iters 200] [--validate-iters 20] [--search-timeout 120]
#       [--search-args "--time-budget 30"]
#       [--torch-systems "cudagraph compile"] [--compile-jobs 4] [--compile-budget 150]
#       [--row-budget 5] [--deadline 480] [--torch-deadline 0] [--torch-device cuda] [--small]
#       [--baselines "greedy nimble greedy-dataflow nimble-dataflow"] [--replay-placements 4]
#
# Models (torch_peers.py DEPLOYED_SIZES): efficientnet_b0 and mobilenet_v3_large at 224x224,
# fasterrcnn_fpn_backbone (torchvision's fasterrcnn_resnet50_fpn `model.backbone`, five outputs)
# and unet (tests/fixtures/export_torchvision.py's small U-Net) at 256x256; issue 28's (not in
# the default list): espcn (the fixtures' ESPCN super-resolution net: PReLU, PixelShuffle) at
# 256x256, timm's resnest14d (split attention) and skresnet18 (selective kernels) at 224x224
# and issue 25's hrnet_w18_small_v2 (one 197-op block, 12 wide) at 224x224
# (they need timm; without it their export fails and their rows are recorded as failed);
# --small: the CI fixtures' sizes (CPU dry runs). --search-args: more options for every
# `iostune search` (issue 28's H100 rows: "--time-budget 30"). scripts/bench/deployed_export.py
# exports them with this machine's PyTorch (TorchScript exporter) from the modules torch_peers.py
# times, so both sides run the same architecture and weights.
#
# iostune, per precision, batch and model (in that order: a deadline cuts the big batches last):
#   iostune profile --model M.onnx ... --json (the critical-path bound, a profile record);
#   iostune search --model M.onnx --batch B --precision P --r R --s S --cost measured --db DB
#     (its contest times sequential, greedy and nimble beside the searched schedule and stores
#     the fastest as the DB's best: the record's kept_strategy), recorded as iostune-ios-both
#     with the replay of the DB's best;
#   iostune replay ... --db DB --validate (float I/O): validation passed/failed into
#     validate.jsonl; in tf32 this replay is also the timed one;
#   fp16/bf16: the timed replay of the best with --native-io (16-bit NHWC input and output, as
#     the peers' channels-last tensors; --validate refuses --native-io);
#   iostune replay --schedule-source sequential (likewise --native-io in fp16/bf16);
#   --baselines: each named baseline replayed the same way (NAME or NAME-dataflow: --form
#     dataflow), recorded as iostune-NAME, the rows summarize.py holds a search to (none by
#     default);
#   every timed replay pools its samples over --replay-placements (4) placements of the
#     activation arena (`replay --placements`; run_h100.sh --help).
# and the PyTorch peers of every row (torch_peers.py), the parts in --parts' order ("torch
# iostune": the peers first, as h100_plan.sh's calls 18/19; --torch-deadline S: the peers start
# no row after S seconds, leaving the rest of --deadline to iostune).
# Work folder /tmp/bench_<tag>; at the end OUT/bench_<tag>.tar.gz (named as run_h100.sh's, so
# unpack_results.sh merges its records) holds raw/ (records for summarize.py), logs/, db/ (while
# the tarball stays under 15 MiB), validate.jsonl, deployed.md (the table:
# scripts/bench/deployed_table.py) and summary/ (summarize.py), without the ONNX files;
# OUT/bench_<tag>.log is this script's output, written as it runs.
# --deadline SECONDS: no new step after that (searches are cut off there); what was skipped is
# listed and shown as "not run".
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

tag=""
out="${OUT:-}"
iostune=""
python=python3
models="efficientnet_b0 mobilenet_v3_large fasterrcnn_fpn_backbone unet"
precisions="tf32 fp16"
batches="1 16"
parts="iostune torch"
r=2
s=4
iters=200
validate_iters=20
search_timeout=120
search_args=""
torch_systems="cudagraph compile"
compile_jobs=4
compile_budget=150
row_budget=5
deadline=480
torch_deadline=0
torch_device=cuda
small=0
baselines=""
replay_placements=4

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --iostune) iostune="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --precisions|--precision) precisions="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --parts) parts="$2"; shift 2 ;;
    --r) r="$2"; shift 2 ;;
    --s) s="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --validate-iters) validate_iters="$2"; shift 2 ;;
    --search-timeout) search_timeout="$2"; shift 2 ;;
    --search-args) search_args="$2"; shift 2 ;;
    --torch-systems) torch_systems="$2"; shift 2 ;;
    --compile-jobs) compile_jobs="$2"; shift 2 ;;
    --compile-budget) compile_budget="$2"; shift 2 ;;
    --row-budget) row_budget="$2"; shift 2 ;;
    --deadline) deadline="$2"; shift 2 ;;
    --torch-deadline) torch_deadline="$2"; shift 2 ;;
    --torch-device) torch_device="$2"; shift 2 ;;
    --small) small=1; shift ;;
    --baselines) baselines="$2"; shift 2 ;;
    --replay-placements) replay_placements="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "deployed_models.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

fail() { echo "deployed_models.sh: $*" >&2; exit 2; }
[ -n "$tag" ] || fail "--tag NAME is required (names the tarball bench_NAME.tar.gz, as run_h100.sh)"
[[ "$tag" =~ ^[A-Za-z0-9._-]+$ ]] || fail "--tag '$tag' may hold only letters, digits, '.', '_' and '-'"
[ -n "$out" ] || fail "no --out and no \$OUT: say where bench_$tag.tar.gz goes"
for n in "$r" "$s" "$iters" "$validate_iters" "$search_timeout" "$deadline" "$torch_deadline" "$compile_jobs"; do
  [[ "$n" =~ ^[0-9]+$ ]] || fail "'$n' is not a whole number (--r --s --iters --validate-iters --search-timeout --deadline --compile-jobs)"
done
for p in $precisions; do
  case "$p" in tf32|fp16|bf16|fp32) ;; *) fail "--precisions: '$p' is not tf32, fp16, bf16 or fp32" ;; esac
done
for part in $parts; do
  case "$part" in iostune|torch) ;; *) fail "--parts: '$part' is not iostune or torch" ;; esac
done
for m in $models; do
  case "$m" in efficientnet_b0|mobilenet_v3_large|fasterrcnn_fpn_backbone|unet|espcn|resnest14d|skresnet18|hrnet_w18_small_v2) ;;
    *) fail "--models: '$m' is not a deployed model (efficientnet_b0 mobilenet_v3_large fasterrcnn_fpn_backbone unet espcn resnest14d skresnet18 hrnet_w18_small_v2)" ;; esac
done
read -ra extra_search <<<"$search_args"
if [ -z "$iostune" ]; then iostune="$repo/.devpack/iostune"; fi
[ -x "$iostune" ] || fail "no iostune binary at '$iostune'; pass --iostune BIN (or run scripts/pack_for_device.sh)"
iostune="$(cd "$(dirname "$iostune")" && pwd)/$(basename "$iostune")"

# shellcheck source=scripts/bench/bench_setup.sh
. "$here/bench_setup.sh"
device_libraries
bench_work_folder
onnx="$work/onnx"
validations="$work/validate.jsonl"
mkdir -p "$raw/runs" "$logs" "$work/db" "$onnx"
: >"$validations"
scratch="$(mktemp -d /tmp/iostune-deployed.XXXXXX)"
log="$out/$name.log"
exec > >(tee -a "$log") 2>&1

skipped=()
packed=0
# The table and summary from whatever records there are, then one tarball (no ONNX files: the
# device returns files up to 16 MiB, and deployed_export.py remakes them).
finish() {
  [ "$packed" -eq 1 ] && return
  packed=1
  [ ${#skipped[@]} -gt 0 ] && echo "past --deadline $deadline s, not started: ${skipped[*]}"
  small_flag=(); [ "$small" -eq 1 ] && small_flag=(--note "--small: the CI fixtures' input sizes (a dry run)")
  $python "$here/deployed_table.py" --raw "$raw" --validations "$validations" \
    --models $models --batches $batches --precisions $precisions "${small_flag[@]}" \
    --out "$work/deployed.md" || echo "deployed_table.py failed"
  $python "$here/summarize.py" --raw "$raw" --out "$work/summary" --no-plot >"$logs/summarize.log" 2>&1 ||
    echo "summarize.py failed (see logs/summarize.log)"
  cat "$work/deployed.md" 2>/dev/null
  cp "$log" "$logs/deployed_models.log" 2>/dev/null
  local skip=(--exclude="$name/onnx/*.onnx" --exclude="$name/onnx/*.bin")
  tar -C /tmp -czf "$out/$name.tar.gz" "${skip[@]}" "$name"
  if [ "$(stat -c %s "$out/$name.tar.gz")" -gt $((15 * 1024 * 1024)) ]; then
    echo "tarball over 15 MiB with the schedule DBs; packing without db/"
    tar -C /tmp -czf "$out/$name.tar.gz" "${skip[@]}" --exclude="$name/db" "$name"
  fi
  echo "== $(stamp) done in ${SECONDS}s: $(find "$raw" -name '*.json' | wc -l) raw records in $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1))"
  rm -rf "$scratch"
}
trap 'finish' EXIT
trap 'echo "deployed_models.sh: interrupted; packing what is there"; exit 130' INT TERM

has() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }
quote() { printf '%q ' "$@" | sed 's/ $//'; }
past_deadline() { [ "$deadline" -gt 0 ] && [ "$SECONDS" -ge "$deadline" ]; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
stamp() { date -u +%H:%M:%S; }
json_field() { $python -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$1" "$2" 2>/dev/null; }
record="$python $here/record_iostune.py"
version="$("$iostune" --version 2>&1 | head -1)"
# Every timed replay pools its samples over this many placements of the activation arena
# (`replay --placements`, run_h100.sh --help), where this iostune has it.
place_args=()
# (The help read whole: `grep -q` on a pipe may close it early, which pipefail calls a failure.)
if [ "$replay_placements" -gt 1 ] && grep -q -- '--placements' <<<"$("$iostune" replay --help 2>&1)"
then place_args=(--placements "$replay_placements"); fi

# validation MODEL BATCH STATUS MESSAGE: one line of validate.jsonl.
validation() {
  $python -c 'import json, sys; m, b, p, st, msg = sys.argv[1:]; print(json.dumps({"model": m, "batch": int(b), "precision": p, "status": st, "message": msg}))' \
    "$1" "$2" "$precision" "$3" "$4" >>"$validations"
}

# record_failure MODEL BATCH SYSTEM STATUS COMMAND LOG [record options...]
record_failure() {
  local msg
  msg="$(tail -n 15 "$6" 2>/dev/null | tr -d '\r')"
  [ -n "$msg" ] || msg="exit status without output"
  $record run --model "$1" --batch "$2" --system "$3" --status "$4" --error "$msg" \
    --command "$5" --version "$version" --precision "$precision" --out "$raw" "${@:7}" >/dev/null
  echo "  $3: $4 (see logs/$(basename "$6"))"
}

# timed_replay MODEL BATCH SYSTEM LOGNAME REPLAY_ARGS -- RECORD_ARGS: one replay, recorded as
# SYSTEM (SYSTEM "-": not recorded, only its exit status counts). Returns 1 when the replay
# failed (its failure is recorded).
timed_replay() {
  local model="$1" batch="$2" system="$3" rlog="$logs/$4"
  shift 4
  local args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  local json="$scratch/replay.json"
  local cmd=("$iostune" replay --model "$onnx/$model.onnx" --batch "$batch" "${prec_args[@]}"
             "${args[@]}" "${place_args[@]}" --format json)
  if ! "${cmd[@]}" >"$json" 2>"$rlog"; then
    cat "$json" >>"$rlog"
    [ "$system" = - ] && return 1
    record_failure "$model" "$batch" "$system" failed "$(quote "${cmd[@]}")" "$rlog" "$@"
    return 1
  fi
  [ "$system" = - ] && return 0
  if $record run --model "$model" --batch "$batch" --system "$system" --replay-json "$json" \
      --command "$(quote "${cmd[@]}")" --version "$version" --precision "$precision" \
      --out "$raw" "$@" >>"$rlog" 2>&1; then
    echo "  $system: median $(json_field "$json" median_ms) ms"
  else
    echo "  $system: replay output not recordable (see logs/$(basename "$rlog"))"
  fi
}

# One (model, batch) in the current precision: search, validated replay, timed replays.
iostune_row() {
  local model="$1" batch="$2" base="${1}_b${2}${pfx}"
  local db="$work/db/$base.db" json="$scratch/search.json" slog="$logs/${base}_search.log"
  local cmd=("$iostune" search --model "$onnx/$model.onnx" --batch "$batch" "${prec_args[@]}"
             --r "$r" --s "$s" --cost measured --db "$db" --format json "${extra_search[@]}")
  # A model its builder could not make (timm's without timm) has no ONNX file: its rows say why.
  if [ ! -f "$onnx/$model.onnx" ]; then
    grep -m1 "^$model: export FAILED" "$logs/export.log" >"$slog" 2>/dev/null ||
      echo "$model: no ONNX export (see logs/export.log)" >"$slog"
    record_failure "$model" "$batch" iostune-ios-both failed "$(quote "${cmd[@]}")" "$slog"
    validation "$model" "$batch" "not run" "$(cat "$slog")"
    return
  fi
  # The critical-path bound (isolated kernel times along the longest path), as run_h100.sh's.
  local pjson="$scratch/profile.json" plog="$logs/${base}_profile.log"
  local pcmd=("$iostune" profile --model "$onnx/$model.onnx" --batch "$batch" "${prec_args[@]}"
              --json "$pjson")
  if "${pcmd[@]}" >"$plog" 2>&1 &&
     $record profile --model "$model" --profile-json "$pjson" --command "$(quote "${pcmd[@]}")" \
       --version "$version" --precision "$precision" --out "$raw" >>"$plog" 2>&1; then
    echo "  profile: critical path $(json_field "$pjson" critical_path_us) us"
  else
    echo "  profile: FAILED (see logs/$(basename "$plog"))"
  fi
  local limit="$search_timeout" start status wall
  if [ "$deadline" -gt 0 ] && [ $((deadline - SECONDS)) -lt "$limit" ]; then limit=$((deadline - SECONDS)); fi
  [ "$limit" -gt 0 ] || limit=1
  local info=(--r "$r" --s "$s")
  start="$(now)"
  timeout --kill-after=20 "$limit" "${cmd[@]}" >"$json" 2>"$slog"
  status=$?
  wall="$(elapsed "$start" "$(now)")"
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "search cut off after $limit s (--search-timeout / --deadline)" >>"$slog"
    record_failure "$model" "$batch" iostune-ios-both timeout "$(quote "${cmd[@]}")" "$slog" \
      "${info[@]}" --search-wall-s "$wall" --search-command "$(quote "${cmd[@]}")"
    validation "$model" "$batch" "not run" "the search was cut off after $limit s"
  elif [ "$status" -ne 0 ]; then
    record_failure "$model" "$batch" iostune-ios-both failed "$(quote "${cmd[@]}")" "$slog" "${info[@]}"
    validation "$model" "$batch" "not run" "the search failed: $(tail -n 1 "$slog")"
  else
    cp "$json" "$logs/${base}_search.json"
    echo "  search: $wall s, kept $(json_field "$json" kept_strategy), schedule #$(json_field "$json" best_schedule_id)"
    local searched=(-- --search-json "$json" --search-wall-s "$wall"
                    --search-command "$(quote "${cmd[@]}")" "${info[@]}")
    # tf32/fp32: the validated replay is the timed one; 16-bit: validate with float I/O (not
    # recorded), then time with native I/O, unless validation failed (recorded as the failure).
    local vlog="${base}_validate.log" viters="$validate_iters" vsystem=- valid=1
    if [ ${#replay_args[@]} -eq 0 ]; then viters="$iters"; vsystem=iostune-ios-both; fi
    if timed_replay "$model" "$batch" "$vsystem" "$vlog" --db "$db" --validate --iters "$viters" \
         "${searched[@]}"; then
      validation "$model" "$batch" passed "$(grep -m1 'Validation:' "$logs/$vlog")"
    else
      # "failed": the outputs differ; "error": the replay itself failed (see its log).
      valid=0
      local why verdict=failed
      why="$(grep -m1 'validation failed' "$logs/$vlog")" || { verdict=error; why="$(tail -n 1 "$logs/$vlog")"; }
      validation "$model" "$batch" "$verdict" "$why"
      echo "  validate: $verdict: $why"
      local vcmd=("$iostune" replay --model "$onnx/$model.onnx" --batch "$batch" "${prec_args[@]}"
                  --db "$db" --validate --iters "$viters" --format json)
      [ "$vsystem" = - ] && record_failure "$model" "$batch" iostune-ios-both failed \
        "$(quote "${vcmd[@]}")" "$logs/$vlog" "${searched[@]:1}"
    fi
    if [ ${#replay_args[@]} -gt 0 ] && [ "$valid" -eq 1 ]; then
      timed_replay "$model" "$batch" iostune-ios-both "${base}_best_replay.log" --db "$db" \
        "${replay_args[@]}" --iters "$iters" "${searched[@]}"
    fi
  fi
  past_deadline && { skipped+=("iostune-sequential $(what "$model" "$batch")"); return; }
  timed_replay "$model" "$batch" iostune-sequential "${base}_sequential_replay.log" \
    --schedule-source sequential "${replay_args[@]}" --iters "$iters" --
  local b source form
  for b in $baselines; do
    source="${b%-dataflow}" form=staged
    [ "$source" != "$b" ] && form=dataflow
    past_deadline && { skipped+=("iostune-$b $(what "$model" "$batch")"); continue; }
    timed_replay "$model" "$batch" "iostune-$b" "${base}_${b}_replay.log" \
      --schedule-source "$source" --form "$form" "${replay_args[@]}" --iters "$iters" --
  done
}

precision=tf32
set_precision() {
  precision="$1"
  prec_args=(--precision "$precision") ; replay_args=() ; pfx="_$precision"
  case "$precision" in fp16|bf16) replay_args=(--native-io) ;; esac
}
what() { echo "$1 b$2 $precision"; }

echo "== $(stamp) deployed models $tag: $version"
echo "   models: $models; batches: $batches; precisions: $precisions; parts: $parts"
echo "   r=$r s=$s iters=$iters search-timeout=${search_timeout}s deadline=${deadline}s small=$small${search_args:+ search-args: $search_args}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv \
  >"$logs/nvidia-smi.txt" 2>&1 || echo "   (no nvidia-smi)"

read -ra model_list <<<"$models"
small_arg=(); [ "$small" -eq 1 ] && small_arg=(--small)
echo "== $(stamp) export to ONNX with $python's PyTorch (${SECONDS}s)"
$python "$here/deployed_export.py" "$onnx" --models "${model_list[@]}" "${small_arg[@]}" 2>&1 |
  tee "$logs/export.log"
cp "$onnx/export.json" "$logs/" 2>/dev/null
for model in $models; do
  [ -f "$onnx/$model.onnx" ] || continue
  "$iostune" import "$onnx/$model.onnx" -o "$onnx/$model.json" >"$logs/${model}_import.log" 2>&1 &&
    echo "  $(head -n 1 "$logs/${model}_import.log")" ||
    echo "  $model: iostune import FAILED: $(tail -n 1 "$logs/${model}_import.log")"
done

iostune_part() {
  for prec in $precisions; do
    set_precision "$prec"
    for batch in $batches; do
      for model in $models; do
        if past_deadline; then skipped+=("iostune $(what "$model" "$batch")"); continue; fi
        echo "== $(stamp) $model batch $batch, $precision (${SECONDS}s)"
        iostune_row "$model" "$batch"
      done
    done
  done
}

torch_part() {
  local batch_list system_list stop
  read -ra batch_list <<<"$batches"
  read -ra system_list <<<"$torch_systems"
  stop="$deadline"
  [ "$torch_deadline" -gt 0 ] && stop="$torch_deadline"
  for prec in $precisions; do
    set_precision "$prec"
    if [ "$stop" -gt 0 ] && [ "$SECONDS" -ge "$stop" ]; then skipped+=("torch peers $precision"); continue; fi
    echo "== $(stamp) PyTorch peers, $precision: $torch_systems (${SECONDS}s)"
    peer_args=(--models "${model_list[@]}" --batches "${batch_list[@]}" --out "$raw"
               --systems "${system_list[@]}" --model-dir "$scratch/models" --warmup 20
               --runs "$iters" --min-runs "$((iters < 100 ? iters : 100))"
               --compile-budget-s "$compile_budget" --compile-jobs "$compile_jobs"
               --device "$torch_device" --precision "$precision" --row-budget-s "$row_budget"
               "${small_arg[@]}")
    [ "$stop" -gt 0 ] && peer_args+=(--stop-after-s "$((stop - SECONDS))")
    $python "$here/torch_peers.py" "${peer_args[@]}" 2>&1 | tee "$logs/torch_peers_$precision.log"
  done
}

for part in $parts; do "${part}_part"; done
