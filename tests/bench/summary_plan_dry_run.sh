#!/usr/bin/env bash
# Dry run of `h100_plan.sh summary JOB...` (the summary's rows as jobs over a host's GPUs) on a
# machine without a GPU: a fake nvidia-smi listing two GPUs, tests/bench/fake_iostune.py, the
# peers on the CPU (skipped there). Checks that one tarball comes back holding every job's bench
# tarball, that the jobs' rows reach the call's output, and that an unknown job is refused.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
tmp="$(mktemp -d /tmp/iostune-summary-plan.XXXXXX)"
c="summary-set_gi-b16_small-sets_four"
cleanup() { rm -rf "$tmp" "/tmp/$c" /tmp/bench_"$c"-*; }
trap cleanup EXIT
fail() { echo "summary plan dry run FAILED: $*" >&2; exit 1; }
mkdir -p "$tmp/bin" "$tmp/out"
printf '#!/bin/sh\nprintf "0\\n1\\n"\n' >"$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
rm -rf "/tmp/$c" /tmp/bench_"$c"-*  # a run killed before its trap
plan() {
  PATH="$tmp/bin:$PATH" IOSTUNE="$here/fake_iostune.py" PYTHON=/usr/bin/python3 TORCH_DEVICE=cpu \
    OUT="$tmp/out" bash "$root/scripts/bench/h100_plan.sh" summary "$@"
}
plan set_gi b16_small sets_four >"$tmp/plan.log" 2>&1 || { cat "$tmp/plan.log"; fail "the plan exited non-zero"; }
[ -s "$tmp/out/$c.tar.gz" ] || fail "no $c.tar.gz in OUT"
[ "$(ls "$tmp/out" | wc -l)" = 1 ] || fail "more than one file in OUT: $(ls "$tmp/out")"
listing=$(tar tzf "$tmp/out/$c.tar.gz")
for part in set b16-ig b16-small sets-four; do
  grep -qx "$c/bench_$c-$part.tar.gz" <<<"$listing" || fail "no bench tarball for $part"
done
grep -q "iostune-coscheduled" "$tmp/plan.log" || fail "the set's rows are not in the call's output"
grep -q "squeezenet1_1+resnet50" "$tmp/plan.log" || fail "the four-model set is not in the call's output"
grep -q "squeezenet1_1" "$tmp/plan.log" || fail "the batch-16 rows are not in the call's output"
if plan no_such_job >"$tmp/bad.log" 2>&1; then fail "an unknown job was accepted"; fi
grep -q "unknown job no_such_job" "$tmp/bad.log" || fail "no message for an unknown job"
echo "summary plan dry run: passed"
