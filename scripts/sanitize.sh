#!/usr/bin/env bash
# compute-sanitizer over replay and the engine's kernel tests, on the GPU machine (issue 29).
#
#   bash scripts/sanitize.sh [--pack .devpack] [--out DIR] [--models "inception_v3 ..."]
#       [--precisions "tf32 fp16"] [--tools "memcheck initcheck synccheck"]
#       [--sources "greedy"] [--tuned-db DB | --tune-plan PLAN.json] [--jobs 12]
#       [--timeout 480] [--kernel-tests "SPEC1,SPEC2,..."] [--kernel-filter kns=iostune]
#
# The engine's kernel tests (--kernel-tests, Catch2 test specs, one sanitizer run each; default
# below) under racecheck (shared-memory hazards) and memcheck first, checking only the kernels
# --kernel-filter names (compute-sanitizer's --kernel-name; default: the engine's own kernels,
# all in namespace iostune; "" checks every kernel). cuDNN's and cuBLASLt's kernels then run
# uninstrumented: under racecheck the convolution planner's timings of them never finished in
# 480 s, and the zoo replays below check them under memcheck anyway. Then per tool, zoo model,
# precision and schedule source: `compute-sanitizer --tool T iostune replay --model M --batch 1
# --precision P --schedule-source S --iters 2 --warmup 1` (greedy: the concurrent baseline, so
# several streams and the memory plan's shared buffers are exercised, and the engine's
# convolution planner times its candidates under the tool too). --tuned-db DB replays each
# key's best stored schedule instead (`--db DB`): its convolutions run the algorithms stored
# with it, so nothing is timed under the tool and a run takes a fraction of the time;
# --tune-plan PLAN first runs `iostune tune --plan PLAN --db DIR/logs/tuned.db` (no sanitizer)
# and then replays that DB (examples/fleet/sanitize_12keys.json: the zoo, 6 s searches). Runs go
# --jobs at a time, each cut off after --timeout seconds. Each run's log is DIR/logs/<name>.log;
# DIR/sanitize.tsv has one line per run: name, exit status (0 clean, 9 a finding, 124 cut off),
# the tool's summary line. Packed into DIR/sanitize.tar.gz at the end.
set -uo pipefail

pack=.devpack
out=${OUT:-$PWD/sanitize-out}
models="googlenet squeezenet1_1 resnet50 inception_v3 randwire nasnet_a_large"
precisions="tf32 fp16"
tools="memcheck initcheck synccheck"
sources="greedy"
tuned_db=""
tune_plan=""
jobs=12
timeout_s=480
# The op-by-op tests of the engine's own kernels (every op kind, the deployed and second-round
# operators, in every precision and layout): small graphs, so racecheck finishes. (The whole
# "[gpu][engine][precision]" set did not within 300 s on the H100.)
kernel_filter="kns=iostune"
kernel_tests="every op kind matches the CPU reference in*,every deployed-CNN operator matches*,every second-round operator matches*"
while [ $# -gt 0 ]; do
  case "$1" in
    --pack) pack="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --precisions) precisions="$2"; shift 2 ;;
    --tools) tools="$2"; shift 2 ;;
    --sources) sources="$2"; shift 2 ;;
    --tuned-db) tuned_db="$2"; shift 2 ;;
    --tune-plan) tune_plan="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --kernel-tests) kernel_tests="$2"; shift 2 ;;
    --kernel-filter) kernel_filter="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
eval "$(bash "$(dirname "$0")/device_unpack.sh" "$pack")"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "sanitize.sh: no compute-sanitizer" >&2; exit 2; }
iostune="$(cd "$pack" && pwd)/iostune"
test_gpu="$(cd "$pack" && pwd)/test_gpu"
mkdir -p "$out/logs"
out="$(cd "$out" && pwd)"

# One run: NAME TOOL COMMAND...; its result line goes to sanitize.tsv.
run_one() {
  local name=$1 tool=$2
  shift 2
  local log="$out/logs/$name.log"
  # synccheck cannot follow the Hopper kernels of cuBLAS(Lt) and cuDNN: their cuda::barrier
  # objects overflow its automatic count ("Detected overflow of tracked cuda::barrier
  # structures") and the kernel then fails to launch under the tool (ResNet-50: a cuBLASLt GEMM
  # in call57, a cuDNN graph API convolution in call62 with cuBLAS's kernels skipped).
  # --num-cuda-barriers does not help: 64 still overflowed (call60), 65536 made every launch
  # allocate until the GPU ran out of memory (call61). So synccheck checks the engine's own
  # kernels (SYNCCHECK_FILTER, a --kernel-name filter; "" checks every kernel) in the real
  # replay; memcheck and initcheck check every kernel.
  local extra=()
  if [ "$tool" = synccheck ] && [ -n "${SYNCCHECK_FILTER-kns=iostune}" ]; then
    extra=(--kernel-name "${SYNCCHECK_FILTER-kns=iostune}")
  fi
  timeout --kill-after=10 "$timeout_s" "$sanitizer" --tool "$tool" "${extra[@]}" \
    --error-exitcode 9 --print-limit 20 "$@" >"$log" 2>&1
  local status=$?
  local summary
  summary=$(grep -m1 "ERROR SUMMARY\|RACECHECK SUMMARY" "$log" | sed 's/^========= //')
  [ "$status" -eq 124 ] && summary="cut off after $timeout_s s"
  printf '%s\t%s\t%s\n' "$name" "$status" "${summary:-no summary (see the log)}" >>"$out/sanitize.tsv"
  echo "$name: exit $status: ${summary:-see logs/$name.log}"
}
export -f run_one
export out timeout_s sanitizer

: >"$out/sanitize.tsv"
# The kernel tests first, one background run per test spec and tool (a spec has spaces: not
# through xargs); then one tool at a time over every model, so a run cut short by the caller's
# wall clock still has every tool's small models done.
k=0
filter=()
[ -n "$kernel_filter" ] && filter=(--kernel-name "$kernel_filter")
IFS=, read -ra specs <<<"$kernel_tests"
for spec in "${specs[@]}"; do
  k=$((k + 1))
  for tool in racecheck memcheck; do
    run_one "kernels${k}_$tool" "$tool" "${filter[@]}" "$test_gpu" "$spec" &
  done
done
# The tuning (timings: no sanitizer) runs beside the kernel tests; its schedules' timings do not
# matter here, only that their convolution choices are stored.
if [ -n "$tune_plan" ]; then
  tuned_db="$out/logs/tuned.db"  # in the archive, with its tune logs
  "$iostune" tune --plan "$tune_plan" --db "$tuned_db" >"$out/logs/tune.log" 2>&1 ||
    echo "sanitize.sh: iostune tune failed (logs/tune.log); keys it did not store fall back" >&2
fi
if [ -n "$tuned_db" ]; then
  sources="stored"
  tuned_db="$(cd "$(dirname "$tuned_db")" && pwd)/$(basename "$tuned_db")"
fi
{
  for tool in $tools; do
    for model in $models; do
      for precision in $precisions; do
        for source in $sources; do
          if [ "$source" = stored ]; then
            # --fallback-sequential: a key tune did not store still runs (its log says so).
            printf '%s\n' "${model}_b1_${precision}_stored_$tool $tool $iostune replay --model $model --batch 1 --precision $precision --db $tuned_db --fallback-sequential --iters 2 --warmup 1"
          else
            printf '%s\n' "${model}_b1_${precision}_${source}_$tool $tool $iostune replay --model $model --batch 1 --precision $precision --schedule-source $source --iters 2 --warmup 1"
          fi
        done
      done
    done
  done
} | xargs -r -P "$((jobs > 2 * k ? jobs - 2 * k : 1))" -L 1 bash -c 'run_one "$@"' _
wait

sort -o "$out/sanitize.tsv" "$out/sanitize.tsv"
echo "== $(awk -F'\t' '$2 == 0' "$out/sanitize.tsv" | wc -l) clean, $(awk -F'\t' '$2 == 9' "$out/sanitize.tsv" | wc -l) with findings, $(awk -F'\t' '$2 != 0 && $2 != 9' "$out/sanitize.tsv" | wc -l) other (cut off or failed) of $(wc -l <"$out/sanitize.tsv")"
tar -C "$out" -czf "$out/sanitize.tar.gz" logs sanitize.tsv && rm -rf "$out/logs"
