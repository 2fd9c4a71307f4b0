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
# The call's own clock: each run_h100.sh gets what is left of the call's 540 s.
left() { echo $((540 - SECONDS)); }

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
  *) echo "usage: h100_plan.sh call1|call2|call3|call4|call5|call6 (see the comment at the top)" >&2
     exit 2 ;;
esac
