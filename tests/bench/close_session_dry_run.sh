#!/usr/bin/env bash
# close_session.sh on what two device calls return, without a GPU: run_h100.sh against
# tests/bench/fake_iostune.py writes two bench tarballs (two calls' folders, one with a call
# tarball and a log of its own beside); close_session.sh files them into a fresh results folder.
# Checks the archive (work folders without DBs or raw copies, the call tarball's files without
# its DB, the log), the packed records, the summary, that nothing loose is left, and that the
# same tag is refused a second time.
# Needs only /usr/bin/python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench="$here/../../scripts/bench"
tmp="$(mktemp -d /tmp/iostune-close-session.XXXXXX)"
tags=("close$$_a" "close$$_b")
cleanup() { rm -rf "$tmp"; for t in "${tags[@]}"; do rm -rf "/tmp/bench_$t"; done; }
trap cleanup EXIT
fail() { echo "close_session dry run FAILED: $*" >&2; exit 1; }

models=(squeezenet1_1 googlenet)  # records are named by model and second: one each
for k in 0 1; do
  mkdir -p "$tmp/call$k"
  "$bench/run_h100.sh" --tag "${tags[$k]}" --iostune "$here/fake_iostune.py" --out "$tmp/call$k" \
    --python /usr/bin/python3 --iters 20 --parts "profile iostune" --models "${models[$k]}" \
    --batches 1 --baselines sequential >"$tmp/run$k.log" 2>&1 ||
    { cat "$tmp/run$k.log"; fail "run_h100.sh ${tags[$k]} exited non-zero"; }
done
echo "a call's own output" >"$tmp/marker.txt"
echo "not a real DB" >"$tmp/left.db"  # a call's DB: left out
tar -czf "$tmp/call1/call999.tar.gz" -C "$tmp" marker.txt left.db
mkdir -p "$tmp/call998" && echo "in a call's folder" >"$tmp/call998/inside.txt"
tar -czf "$tmp/call1/call998.tar.gz" -C "$tmp" call998  # a tarball of its own folder
echo "a call's loose log" >"$tmp/call1/perturb.log"
# A DB at a work folder's top (run_sets.sh keeps its sets.db there): left out of the archive.
tar -xzf "$tmp/call0/bench_${tags[0]}.tar.gz" -C "$tmp"
echo "not a real DB" >"$tmp/bench_${tags[0]}/sets.db"
tar -czf "$tmp/call0/bench_${tags[0]}.tar.gz" -C "$tmp" "bench_${tags[0]}"

results="$tmp/results"
bash "$bench/close_session.sh" --tag dry --results "$results" \
  --summarize "--out $results --no-plot" "$tmp/call0" "$tmp/call1" >"$tmp/close.log" 2>&1 ||
  { cat "$tmp/close.log"; fail "close_session.sh exited non-zero"; }

archive="$results/device/session-dry.tar.xz"
[ -s "$archive" ] || fail "no $archive"
listing="$(tar -tJf "$archive")"
for t in "${tags[@]}"; do
  grep -q "^session-dry/bench_$t/logs/" <<<"$listing" || fail "the archive lacks bench_$t's logs"
  [ ! -e "$results/device/bench_$t" ] || fail "bench_$t was left loose in $results/device"
done
grep -q "^session-dry/call999/marker.txt$" <<<"$listing" ||
  fail "the archive lacks the call tarball's file"
grep -q "^session-dry/call998/inside.txt$" <<<"$listing" ||
  fail "a tarball of its own folder was not archived as that folder"
! grep -q "\.tar\.gz$" <<<"$listing" || fail "the archive holds a tarball, not its files"
grep -q "^session-dry/call1/perturb.log$" <<<"$listing" || fail "the archive lacks call1's log"
! grep -qE "/(db|raw)/|\.db$" <<<"$listing" || fail "the archive holds DBs or raw copies"
for kind in runs profiles; do
  [ -s "$results/raw/$kind/session-dry.jsonl.xz" ] || fail "no packed $kind records"
  ! ls "$results/raw/$kind"/*.json >/dev/null 2>&1 || fail "loose $kind records left"
done
[ -s "$results/summary.json" ] || fail "no summary"
for m in "${models[@]}"; do
  grep -q "$m" "$results/summary.md" || fail "the summary lacks $m"
done

# The same tag again: refused, nothing changed.
before="$(cksum <"$archive")"
if bash "$bench/close_session.sh" --tag dry --results "$results" "$tmp/call0" >"$tmp/again.log" 2>&1; then
  fail "a second session-dry was not refused"
fi
grep -q "exists" "$tmp/again.log" || fail "the refusal does not say why: $(cat "$tmp/again.log")"
[ "$(cksum <"$archive")" = "$before" ] || fail "the refused run changed the archive"
echo "close_session dry run passed: $(xzcat "$results/raw/runs/session-dry.jsonl.xz" | wc -l) run records"
