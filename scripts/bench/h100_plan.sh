#!/usr/bin/env bash
# The H100 benchmark as three device calls of under 9 minutes each (results/README.md, "The
# H100 plan", has the time estimates). On the workstation first:
#   cmake --build build --target iostune && scripts/pack_for_device.sh build   # -> .devpack/
# then one device call each, carrying .devpack, timeout_s 600:
#   bash scripts/bench/h100_plan.sh call1    # iostune: 4 small models b1+b16 (IOS r=3 s=8,
#                                            # shared DB), then the large models' baselines
#   bash scripts/bench/h100_plan.sh call2    # iostune: nasnet_a_large b1 IOS r=1 (shared DB)
#   bash scripts/bench/h100_plan.sh call3    # PyTorch: eager + cudagraph, then torch.compile
#   bash scripts/bench/h100_plan.sh call4    # optional: randwire b1 IOS r=1 (~8-9 min)
#   bash scripts/bench/h100_plan.sh call5    # small models b1 again: iostune and PyTorch (~3 min)
#   bash scripts/bench/h100_plan.sh call6    # randwire b16 baselines, then nasnet b16 IOS leg 1
# The batch-16 IOS searches of nasnet/randwire take two calls each; results/README.md has the
# --resume-db commands of the later legs.
# Half precision (not yet run; estimates from the TF32 calls' times):
#   bash scripts/bench/h100_plan.sh call7    # fp16, 4 small models b1+b16: PyTorch cudagraph +
#                                            # compile, then iostune profile, sequential/greedy/
#                                            # nimble, IOS r=3 s=8 (shared DB)   (~7-8 min)
#   bash scripts/bench/h100_plan.sh call8    # fp16, nasnet/randwire b1+b16: PyTorch cudagraph +
#                                            # compile, sequential/greedy/nimble, then nasnet b1
#                                            # IOS r=1 leg 1 until the deadline
#   bash scripts/bench/h100_plan.sh call9    # bf16, all six models b1+b16: PyTorch cudagraph +
#                                            # compile, sequential/greedy/nimble; small models' b1
#                                            # IOS searches with what time is left
# In these, PyTorch runs first: a precision's comparison needs its peers even when iostune's
# part is cut off at the deadline. fp16/bf16 replays use --native-io (run_h100.sh --help).
# Each call leaves $OUT/bench_<call>*.tar.gz and .log; here:
#   scripts/bench/unpack_results.sh /work/.device/.../bench_*.tar.gz && \
#   /usr/bin/python3 scripts/bench/summarize.py
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# IOSTUNE, PYTHON and TORCH_DEVICE override the defaults for a dry run here (tests/bench).
run=(bash scripts/bench/run_h100.sh --iostune "${IOSTUNE:-.devpack/iostune}"
     --python "${PYTHON:-python3}" --torch-device "${TORCH_DEVICE:-cuda}")
small="inception_v3 googlenet squeezenet1_1 resnet50"
large="nasnet_a_large randwire"
# The call's own clock: each run_h100.sh gets what is left of the call's 540 s (at least 1:
# --deadline 0 would mean no deadline at all).
left() { local n=$((540 - SECONDS)); echo $((n > 1 ? n : 1)); }
# What is left minus N seconds kept for the call's later steps.
upto() { local n=$((540 - SECONDS - $1)); echo $((n > 1 ? n : 1)); }

case "${1:-}" in
  call1)
    "${run[@]}" --tag call1 --models "$small" --batches "1 16" --shared-db --r 3 --s 8 \
      --parts "profile iostune" --iters 300 --deadline 390
    "${run[@]}" --tag call1-large --models "$large" --batches "1 16" --strategies "" \
      --parts "profile iostune" --iters 300 --deadline "$(left)" ;;
  call2)
    "${run[@]}" --tag call2 --models nasnet_a_large --batches 1 --shared-db --r 1 --s 8 \
      --baselines "" --parts iostune --iters 300 --deadline "$(left)" ;;
  call3)
    "${run[@]}" --tag call3 --models "$small $large" --batches "1 16" --parts torch \
      --torch-systems "eager cudagraph compile" --compile-jobs 8 --compile-budget 300 \
      --iters 300 --row-budget 10 --deadline "$(left)" ;;
  call4)
    "${run[@]}" --tag call4 --models randwire --batches 1 --shared-db --r 1 --s 8 \
      --baselines "" --parts iostune --iters 300 --deadline "$(left)" ;;
  call5)
    "${run[@]}" --tag call5 --models "$small" --batches 1 --shared-db --r 3 --s 8 \
      --parts "iostune torch" --torch-systems "eager cudagraph compile" --compile-jobs 4 \
      --compile-budget 200 --row-budget 10 --iters 300 --deadline "$(left)" ;;
  call6)
    "${run[@]}" --tag rw16base --models randwire --batches 16 --strategies "" \
      --baselines "greedy nimble opara" --parts "profile iostune" --iters 300 --deadline 150
    "${run[@]}" --tag nas16a --models nasnet_a_large --batches 16 --shared-db --r 1 --s 8 \
      --baselines "" --parts iostune --iters 300 --deadline "$(left)" ;;
  call7)
    # Four compiles at a time: torch_peers.py holds back (row budget + 15 s) per row of a wave
    # for its timing before --deadline, so a wave of 8 would leave its compiles too little time.
    "${run[@]}" --tag call7-torch --precisions fp16 --models "$small" --batches "1 16" \
      --parts torch --torch-systems "cudagraph compile" --compile-jobs 4 --compile-budget 200 \
      --row-budget 10 --iters 300 --deadline 240
    "${run[@]}" --tag call7 --precisions fp16 --models "$small" --batches "1 16" --shared-db \
      --r 3 --s 8 --baselines "sequential greedy nimble" --parts "profile iostune" --iters 300 \
      --deadline "$(left)" ;;
  call8)
    "${run[@]}" --tag call8-torch --precisions fp16 --models "$large" --batches "1 16" \
      --parts torch --torch-systems "cudagraph compile" --compile-jobs 4 --compile-budget 150 \
      --row-budget 10 --iters 300 --deadline 280
    "${run[@]}" --tag call8 --precisions fp16 --models "$large" --batches "1 16" --strategies "" \
      --baselines "sequential greedy nimble" --parts iostune --iters 300 --deadline "$(upto 120)"
    # Leg 1 of nasnet b1's fp16 search (TF32's took 259 s); later legs: results/README.md.
    "${run[@]}" --tag nasfp16a --precisions fp16 --models nasnet_a_large --batches 1 --shared-db \
      --r 1 --s 8 --baselines "" --parts iostune --iters 300 --deadline "$(left)" ;;
  call9)
    # Eight compiles at a time here (all small models in one wave): with four, the large
    # models' wave would start later, with less time before the deadline for nasnet's compile.
    "${run[@]}" --tag call9-torch --precisions bf16 --models "$small $large" --batches "1 16" \
      --parts torch --torch-systems "cudagraph compile" --compile-jobs 8 --compile-budget 200 \
      --row-budget 10 --iters 300 --deadline 330
    "${run[@]}" --tag call9 --precisions bf16 --models "$small $large" --batches "1 16" \
      --strategies "" --baselines "sequential greedy nimble" --parts iostune --iters 300 \
      --deadline "$(upto 30)"
    # Whatever is left: the small models' batch-1 searches, in order, cut off at the deadline.
    if [ "$(left)" -gt 30 ]; then
      "${run[@]}" --tag call9-search --precisions bf16 --models "$small" --batches 1 \
        --shared-db --r 3 --s 8 --baselines "" --parts iostune --iters 300 --deadline "$(left)"
    fi ;;
  *) echo "usage: h100_plan.sh call1|...|call9 (see the comment at the top)" >&2
     exit 2 ;;
esac
