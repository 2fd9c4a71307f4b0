#!/usr/bin/env bash
# Unpacks the tarballs run_h100.sh left in the device's $OUT into results/ and merges their raw
# records into results/raw (where summarize.py reads them; bench_record.py pack folds them into
# one .jsonl.xz per folder at a session's end). Record names hold the model, batch,
# system and UTC time, so several calls' records never collide; an existing file with other
# content is refused rather than overwritten.
#
#   scripts/bench/unpack_results.sh [--results DIR] bench_call1.tar.gz [bench_call2.tar.gz ...]
#
# Each tarball's whole folder (logs, search outputs, DBs when they fit) goes to
# DIR/device/bench_<tag>/; DIR defaults to the repository's results/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
results="$here/../../results"
if [ "${1:-}" = "--results" ]; then results="$2"; shift 2; fi
[ $# -gt 0 ] || { echo "usage: unpack_results.sh [--results DIR] bench_TAG.tar.gz..." >&2; exit 2; }
mkdir -p "$results/device" "$results/raw/runs" "$results/raw/profiles"

for tarball in "$@"; do
  name="$(basename "$tarball" .tar.gz)"
  [[ "$name" == bench_* ]] || { echo "unpack_results.sh: '$tarball' is not a bench_TAG.tar.gz" >&2; exit 1; }
  if [ -e "$results/device/$name" ]; then
    echo "unpack_results.sh: $results/device/$name exists; already unpacked?" >&2; exit 1
  fi
  tar -xzf "$tarball" -C "$results/device"
  added=0
  for kind in runs profiles; do
    for file in "$results/device/$name/raw/$kind"/*.json; do
      [ -e "$file" ] || continue
      target="$results/raw/$kind/$(basename "$file")"
      if [ -e "$target" ] && ! cmp -s "$file" "$target"; then
        echo "unpack_results.sh: $target exists with other content; not overwriting" >&2; exit 1
      fi
      cp "$file" "$target"
      added=$((added + 1))
    done
  done
  echo "$name: $added raw records merged into $results/raw (logs in $results/device/$name)"
done
