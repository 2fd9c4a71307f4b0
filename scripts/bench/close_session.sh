#!/usr/bin/env bash
# A device session's results, filed in one step (results/README.md, "Layout"): every bench
# tarball the device calls returned is unpacked into results/ (unpack_results.sh), the summary
# regenerated when asked (summarize.py), the loose raw records packed into one .jsonl.xz per folder
# (bench_record.py pack), and the calls' work folders (less their DBs, ONNX files and raw
# copies) with every other tarball (unpacked, less its DBs) and every *.log the DEVICE_DIRs hold
# archived as results/device/session-TAG.tar.xz (a DEVICE_DIR's logs, and a tarball's files, in
# a folder of its name), the loose folders removed. A call whose tarball holds bench tarballs
# (h100_plan.sh summary): give the folder it unpacks to, not the tarball's, so that nothing is
# archived twice.
#
#   scripts/bench/close_session.sh --tag TAG [--results DIR] [--summarize "ARGS"] DEVICE_DIR...
#
# DEVICE_DIR: where a device call's files landed (the run tool's files_at, one per call).
# --summarize: summarize.py's arguments, e.g. "--since 2026-11-28T18:30 --out results/h200
# --no-plot" (its --raw is DIR/raw). Refuses an archive that exists, or a tag with a slash.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
results="$here/../../results" tag="" summarize=""
while [ $# -gt 0 ]; do
  case $1 in
    --tag) tag=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --summarize) summarize=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "close_session.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
usage="usage: close_session.sh --tag TAG [--results DIR] [--summarize \"ARGS\"] DEVICE_DIR..."
[ -n "$tag" ] && [ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
[[ "$tag" != */* ]] || { echo "close_session.sh: a tag names a file, no slash: $tag" >&2; exit 2; }
archive="$results/device/session-$tag.tar.xz"
[ ! -e "$archive" ] || { echo "close_session.sh: $archive exists; a new tag?" >&2; exit 1; }

benches=() others=() logs=()
for dir in "$@"; do
  [ -d "$dir" ] || { echo "close_session.sh: $dir is no folder" >&2; exit 1; }
  for f in "$dir"/*.tar.gz; do
    [ -e "$f" ] || continue
    case $(basename "$f") in bench_*) benches+=("$f") ;; *) others+=("$f") ;; esac
  done
  for f in "$dir"/*.log; do [ -e "$f" ] && logs+=("$f"); done
done
[ ${#benches[@]} -gt 0 ] || [ ${#others[@]} -gt 0 ] ||
  { echo "close_session.sh: no tarballs in $*" >&2; exit 1; }

[ ${#benches[@]} -eq 0 ] || bash "$here/unpack_results.sh" --results "$results" "${benches[@]}"
if [ -n "$summarize" ]; then
  # shellcheck disable=SC2086  # the arguments as given, word by word
  python3 "$here/summarize.py" --raw "$results/raw" $summarize
fi
python3 "$here/bench_record.py" pack "$results/raw" "session-$tag"

stage="$(mktemp -d /tmp/close-session.XXXXXX)"
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/session-$tag"
for f in "${benches[@]}"; do
  folder="$results/device/$(basename "$f" .tar.gz)"
  rm -rf "$folder/db" "$folder/onnx" "$folder/raw" "$folder"/*.db
  mv "$folder" "$stage/session-$tag/"
done
# Another tarball (a call's own, h100_plan.sh's b2b_pinning, connections, shards...) goes in
# unpacked, in a folder of its name (a tarball of that one folder as it is), less the DBs a call
# leaves in it (SQLite's -wal and -shm).
for f in "${others[@]}"; do
  name="$(basename "$f" .tar.gz)" into="$stage/session-$tag"
  listing="$(tar -tzf "$f")"  # whole, before grep (a pipe's early exit fails under pipefail)
  grep -qv "^$name\(/\|$\)" <<<"$listing" && into="$into/$name"
  mkdir -p "$into"
  tar -xzf "$f" -C "$into"
  find "$stage/session-$tag/$name" \( -name '*.db' -o -name '*.db-wal' -o -name '*.db-shm' \) \
    -delete
done
for f in "${logs[@]}"; do
  mkdir -p "$stage/session-$tag/$(basename "$(dirname "$f")")"
  cp "$f" "$stage/session-$tag/$(basename "$(dirname "$f")")/"
done
tar -cJf "$archive" -C "$stage" "session-$tag"
echo "session-$tag: ${#benches[@]} work folders, ${#others[@]} other tarballs and ${#logs[@]} logs in $archive"
