#!/usr/bin/env bash
# Dry run of `h100_plan.sh profile_ab VAR "VALUE..." KEY...` (an engine switch's A/B at the
# profile's level) on a machine without a GPU: a fake nvidia-smi listing two GPUs and
# tests/bench/fake_iostune.py. Checks one line per key and value, the unset value, the tarball,
# head_ab as its alias, and a call without keys refused.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
tmp="$(mktemp -d /tmp/iostune-profile-ab.XXXXXX)"
cleanup() { rm -rf "$tmp" /tmp/profile_ab /tmp/head_ab; }
trap cleanup EXIT
fail() { echo "profile_ab dry run FAILED: $*" >&2; exit 1; }
mkdir -p "$tmp/bin" "$tmp/out"
printf '#!/bin/sh\nprintf "0\\n1\\n"\n' >"$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
plan() {
  PATH="$tmp/bin:$PATH" IOSTUNE="$here/fake_iostune.py" PYTHON=/usr/bin/python3 OUT="$tmp/out" \
    bash "$root/scripts/bench/h100_plan.sh" "$@"
}
plan profile_ab IOSTUNE_DEPTHWISE_TILED "- off" googlenet:1:fp16 inception_v3:16:tf32 \
  >"$tmp/ab.log" 2>&1 || { cat "$tmp/ab.log"; fail "the call exited non-zero"; }
[ "$(grep -c "op sum" "$tmp/ab.log")" = 4 ] || { cat "$tmp/ab.log"; fail "not one line per key and value"; }
grep -q "^googlenet b1 fp16 IOSTUNE_DEPTHWISE_TILED=-: op sum" "$tmp/ab.log" || fail "no unset line"
grep -q "^inception_v3 b16 tf32 IOSTUNE_DEPTHWISE_TILED=off: op sum" "$tmp/ab.log" ||
  fail "no line for the value off"
[ "$(tar tzf "$tmp/out/profile_ab.tar.gz" | grep -c '\.json$')" = 4 ] || fail "not four profiles"
plan head_ab googlenet:1:tf32 >"$tmp/head.log" 2>&1 || { cat "$tmp/head.log"; fail "head_ab failed"; }
grep -q "IOSTUNE_LINEAR_KERNEL=cublas: op sum" "$tmp/head.log" || fail "head_ab is not the A/B of the linear kernel"
[ -s "$tmp/out/head_ab.tar.gz" ] || fail "no head_ab.tar.gz"
if plan profile_ab IOSTUNE_DEPTHWISE_TILED "- off" >"$tmp/bad.log" 2>&1; then
  fail "a call without keys was accepted"
fi
grep -q "usage: h100_plan.sh profile_ab" "$tmp/bad.log" || fail "no usage line"
echo "profile_ab dry run: passed"
