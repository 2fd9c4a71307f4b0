#!/usr/bin/env bash
# The whole H100 pass in one go, so every session runs the same thing: [gpu] tests, the
# per-operator profile, sequential replays, measured searches and replays of their schedules and
# of the baselines. Everything is written under $OUT (the device tool brings it back).
#
# Build on the workstation (the GPU machine has no fmt/CLI11/nlohmann/Catch2 headers), then pack
# just the two binaries, since a whole build folder is too large to travel:
#   cmake -S . -B build -G Ninja && cmake --build build -j 2
#   scripts/pack_for_device.sh build          # -> .devpack/{iostune,test_gpu}
# and on the device (carry=[".devpack"]):
#   bash scripts/device_pass.sh .devpack [steps...]
# Steps (default: the first five): tests profile sequential search baselines consistency
#   breakdown (per-kind profile of the large models) contest (search keeps the fastest baseline)
#   yardstick (fp16/bf16 error against the fp32 reference beside PyTorch's, precision_yardstick.py)
#   half (sequential fp16/bf16 replays of every zoo model, b1 and b16, and fp16 profiles)
#   kernels (after an engine kernel change: TF32 and fp16 sequential replays of every zoo model,
#     b1 and b16, and the b16 profiles of the models the kernels matter most to, with breakdown)
#   parity (each op shape timed in iostune and in PyTorch, scripts/bench/op_parity.py; the
#   configurations are PARITY="model:batch:precision[:layout] ...", default below, each measuring
#   torch shapes for at most PARITY_BUDGET_S seconds (default 90); tables in parity.md beside
#   pass.tar.gz)
#   perturb (issue 29: `replay --validate --perturb N`, N = PERTURB_N or 20, of every zoo model at
#     batch 1 in TF32 and fp16 with the greedy and nimble baselines in both replay forms, 4 at a
#     time; a line per run in perturb.tsv beside pass.tar.gz: name, exit status, the verdict)
set -uo pipefail

pack=${1:-.devpack}
shift || true
eval "$(bash "$(dirname "$0")/device_unpack.sh" "$pack")"  # gunzips the binaries
steps=${*:-tests profile sequential search baselines}
out=${OUT:-$PWD/device-out}
work=$(mktemp -d)
raw="$work/raw"
mkdir -p "$out" "$raw"
log="$out/pass.log"

# The device's cuDNN comes with PyTorch's wheels; CUDA's own libraries from the toolkit.
cudnn_lib=$(ls -d /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${cudnn_lib:+:$cudnn_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
iostune="$pack/iostune"
db="$work/iostune.db"
commit=$("$iostune" --version 2>/dev/null)

say() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$log"; }
# Runs a command, keeps its stdout in $raw/<name> and its stderr in the log.
record() {
    local name=$1
    shift
    say "$name: $*"
    "$@" > "$raw/$name" 2>> "$log" || say "FAILED ($?): $name"
}

# One line per replay report: model, batch, precision, layout, median latency.
summarize_replays() {
    python3 -c '
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    print("%15s b%-3s %s %s sequential median %.3f ms"
          % (r["model"], r["batch"], r["precision"], r["layout"], r["median_ms"]))
' "$@" 2>> "$log" | tee -a "$log"
}

{
    date -u
    echo "$commit"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
} > "$raw/device.txt" 2>&1

models_small="inception_v3 googlenet squeezenet1_1"
models_sequential="inception_v3 googlenet squeezenet1_1 nasnet_a_large"

for step in $steps; do
    case $step in
    tests)
        # [fixtures]: the tests that read the CI's PyTorch exports from the build tree (~260 MB,
        # too large to carry); the family sweep covers those models on the device.
        say "[gpu] tests"
        "$pack/test_gpu" "~[fixtures]" --durations yes 2>&1 | tee "$raw/gpu_tests.log" | tail -5 |
            tee -a "$log"
        ;;
    profile)
        record profile_inception_v3_b1.txt "$iostune" profile --model inception_v3 --batch 1 \
            --json "$raw/profile_inception_v3_b1.json" --trace "$raw/trace_inception_v3_b1.json"
        ;;
    sequential)
        for m in $models_sequential; do
            for b in 1 16; do
                record "replay_${m}_b${b}_sequential.json" "$iostune" replay --model "$m" --batch "$b" \
                    --schedule-source sequential --iters 300 --format json
            done
        done
        ;;
    search)
        # One DB per strategy, so each replay runs exactly that strategy's schedule.
        for m in $models_small; do
            for s in ios-both ios-parallel ios-merge; do
                record "search_${m}_b1_${s}.json" "$iostune" search --model "$m" --batch 1 \
                    --strategy "$s" --cost measured --db "$db.$s" --format json
                record "replay_${m}_b1_${s}.json" "$iostune" replay --model "$m" --batch 1 \
                    --db "$db.$s" --iters 300 --format json --validate
            done
        done
        record search_inception_v3_b16_ios-both.json "$iostune" search --model inception_v3 \
            --batch 16 --strategy ios-both --cost measured --db "$db.ios-both" --format json
        record replay_inception_v3_b16_ios-both.json "$iostune" replay --model inception_v3 \
            --batch 16 --db "$db.ios-both" --iters 300 --format json --validate
        ;;
    baselines)
        for m in $models_small; do
            for s in greedy nimble opara; do
                record "replay_${m}_b1_${s}.json" "$iostune" replay --model "$m" --batch 1 \
                    --schedule-source "$s" --iters 300 --format json
            done
        done
        ;;
    consistency)
        # Replay must reproduce what the search measured (within 5%), run after run.
        for b in 1 16; do
            record "search_inception_v3_b${b}_consistency.json" "$iostune" search --model inception_v3 \
                --batch "$b" --cost measured --db "$db.consistency" --format json
            for run in 1 2; do
                record "replay_inception_v3_b${b}_consistency_${run}.json" "$iostune" replay \
                    --model inception_v3 --batch "$b" --db "$db.consistency" --iters 300 --format json
            done
        done
        ;;
    breakdown)
        # Where the time goes in the models furthest from torch.compile: per op kind vs the
        # roofline, and the top kernels (scripts/bench/profile_breakdown.py).
        for mb in nasnet_a_large:16 randwire:16 inception_v3:16 inception_v3:1; do
            m=${mb%:*}; b=${mb#*:}
            record "profile_${m}_b${b}.txt" "$iostune" profile --model "$m" --batch "$b" \
                --json "$raw/profile_${m}_b${b}.json"
            python3 scripts/bench/profile_breakdown.py "$raw/profile_${m}_b${b}.json" \
                >> "$raw/breakdown.md" 2>> "$log"
        done
        ;;
    contest)
        # The tuning job times its schedule beside sequential, greedy and nimble end to end and
        # stores the fastest; replay (no --schedule-id) must then run that one.
        for m in inception_v3 googlenet; do
            record "search_${m}_b1_contest.txt" "$iostune" search --model "$m" --batch 1 \
                --cost measured --db "$db.contest"
            record "replay_${m}_b1_contest.txt" "$iostune" replay --model "$m" --batch 1 \
                --db "$db.contest" --iters 300
        done
        ;;
    yardstick)
        python3 scripts/precision_yardstick.py --iostune "$iostune" --out "$raw" \
            > "$raw/yardstick.txt" 2>> "$log"
        tail -30 "$raw/yardstick.txt" | tee -a "$log"
        ;;
    half)
        for p in fp16 bf16; do
            for m in inception_v3 googlenet squeezenet1_1 resnet50 nasnet_a_large randwire; do
                for b in 1 16; do
                    record "replay_${m}_b${b}_${p}_sequential.json" "$iostune" replay --model "$m" \
                        --batch "$b" --precision "$p" --schedule-source sequential --iters 200 \
                        --format json
                done
            done
        done
        for mb in inception_v3:16 nasnet_a_large:16 resnet50:16; do
            m=${mb%:*}; b=${mb#*:}
            record "profile_${m}_b${b}_fp16.txt" "$iostune" profile --model "$m" --batch "$b" \
                --precision fp16 --json "$raw/profile_${m}_b${b}_fp16.json"
        done
        summarize_replays "$raw"/replay_*_fp16_sequential.json "$raw"/replay_*_bf16_sequential.json
        ;;
    kernels)
        for p in tf32 fp16; do
            io=""; [[ $p == fp16 ]] && io=--native-io
            for m in inception_v3 googlenet squeezenet1_1 resnet50 nasnet_a_large randwire; do
                for b in 1 16; do
                    record "replay_${m}_b${b}_${p}_sequential.json" "$iostune" replay --model "$m" \
                        --batch "$b" --precision "$p" --schedule-source sequential --iters 200 \
                        --format json $io
                done
            done
            for m in randwire nasnet_a_large inception_v3; do
                record "profile_${m}_b16_${p}.txt" "$iostune" profile --model "$m" --batch 16 \
                    --precision "$p" --json "$raw/profile_${m}_b16_${p}.json"
                python3 scripts/bench/profile_breakdown.py "$raw/profile_${m}_b16_${p}.json" \
                    >> "$raw/breakdown.md" 2>> "$log"
            done
        done
        summarize_replays "$raw"/replay_*_sequential.json
        ;;
    parity)
        for spec in ${PARITY:-inception_v3:16:tf32 nasnet_a_large:16:fp16}; do
            IFS=: read -r m b p l <<< "$spec"
            say "parity: $m batch $b $p ${l:-auto}"
            python3 scripts/bench/op_parity.py --iostune "$iostune" --model "$m" --batch "$b" \
                --precision "$p" --layout "${l:-auto}" --out "$raw/parity" --top 25 \
                --budget-s "${PARITY_BUDGET_S:-90}" \
                >> "$raw/parity.md" 2>> "$log" || say "FAILED ($?): parity $spec"
        done
        cp "$raw/parity.md" "$out/parity.md" 2>/dev/null
        grep -E '^### |^\| total' "$raw/parity.md" | tee -a "$log"
        ;;
    perturb)
        : > "$raw/perturb.tsv"
        for m in inception_v3 googlenet squeezenet1_1 resnet50 nasnet_a_large randwire; do
            for p in tf32 fp16; do
                for src in greedy nimble; do
                    for form in staged dataflow; do
                        echo "${m}_b1_${p}_${src}_${form} $m $p $src $form"
                    done
                done
            done
        done | xargs -P 4 -L 1 bash -c '
            name=$1; log="'"$raw"'/perturb_$name.log"
            "'"$iostune"'" replay --model "$2" --batch 1 --precision "$3" --schedule-source "$4" \
                --form "$5" --validate --perturb "'"${PERTURB_N:-20}"'" --iters 10 > "$log" 2>&1
            status=$?
            verdict=$(grep -m1 -i "perturb" "$log" | tr "\t" " ")
            printf "%s\t%s\t%s\n" "$name" "$status" "${verdict:-$(tail -n 1 "$log")}" \
                >> "'"$raw"'/perturb.tsv"' _
        sort -o "$raw/perturb.tsv" "$raw/perturb.tsv"
        cp "$raw/perturb.tsv" "$out/perturb.tsv"
        say "perturb: $(awk -F'\t' '$2 == 0' "$raw/perturb.tsv" | wc -l) of $(wc -l < "$raw/perturb.tsv") passed"
        awk -F'\t' '$2 != 0' "$raw/perturb.tsv" | tee -a "$log"
        ;;
    *) say "unknown step '$step'" ;;
    esac
done

cp "$db".* "$raw/" 2>/dev/null
tar -C "$work" -czf "$out/pass.tar.gz" raw
say "done; results in pass.tar.gz"
