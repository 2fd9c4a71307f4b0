#!/usr/bin/env bash
# The parts' one-way dependencies, checked on every #include (README.md, "Layout"):
#   src      includes nothing of the parts above it (search, profiler, db, replay, tuning, cli,
#            capi);
#   replay   (what production code links) includes nothing of search, profiler, tuning, cli or
#            capi;
#   tuning   includes nothing of cli or capi, the two front ends above it;
#   capi     (the C API, libiostune.so) and cli sit side by side: neither includes the other.
# Prints each violation (file:line: the include) and exits 1 if there is any.
#   scripts/check_dependencies.sh [ROOT]      check the tree at ROOT (default: this repository)
#   scripts/check_dependencies.sh --self-test plant a violation in a copy and expect it caught
set -euo pipefail

check() {
  local root=$1 bad=0
  rule() {  # rule FOLDER FORBIDDEN-PREFIX...
    local folder=$1
    shift
    [ -d "$root/$folder" ] || return 0
    for prefix in "$@"; do
      while IFS= read -r hit; do
        echo "$hit: $folder/ must not include $prefix/" >&2
        bad=1
      done < <(cd "$root" && grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+\"$prefix/" \
                 --include='*.h' --include='*.cpp' --include='*.cu' "$folder" || true)
    done
  }
  rule src search profiler db replay tuning cli capi
  rule replay search profiler tuning cli capi
  rule tuning cli capi
  rule capi cli
  rule cli capi
  return $bad
}

if [ "${1:-}" = "--self-test" ]; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  cp -r "$here/src" "$here/replay" "$here/capi" "$copy/"
  check "$copy" || { echo "self-test: the tree itself fails the check" >&2; exit 1; }
  echo '#include "search/ios_search.h"' >>"$copy/replay/replayer.cpp"
  if check "$copy" 2>/dev/null; then echo "self-test: a planted replay -> search include passed" >&2; exit 1; fi
  sed -i '$d' "$copy/replay/replayer.cpp"
  echo '  #  include "db/records.h"' >>"$copy/src/graph.cpp"
  if check "$copy" 2>/dev/null; then echo "self-test: a planted src -> db include passed" >&2; exit 1; fi
  sed -i '$d' "$copy/src/graph.cpp"
  echo '#include "cli/commands.h"' >>"$copy/capi/search_api.cpp"
  if check "$copy" 2>/dev/null; then echo "self-test: a planted capi -> cli include passed" >&2; exit 1; fi
  echo "self-test passed: the three planted violations were caught"
  exit 0
fi

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
check "$root"
echo "dependencies point one way: src <- replay (no search, profiler or tuning) <- tuning <- cli, capi"
