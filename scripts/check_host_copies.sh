#!/usr/bin/env bash
# No synchronous host-to-device cudaMemcpy / cudaMemcpy2D in the product's code. From pageable
# memory such a copy may return before its last staged chunk reaches the device, and it runs on
# the legacy stream, which the engine's non-blocking streams do not wait for: a kernel launched
# next on one of them can read the old bytes (Engine::set_input did, under load, on the H100).
# Copy with cudaMemcpyAsync on the stream that reads the data.
#   scripts/check_host_copies.sh [ROOT]       check the tree at ROOT (default: this repository)
#   scripts/check_host_copies.sh --self-test  plant such a copy in a copy of the tree, expect it caught
set -euo pipefail

check() {
  local root=$1
  local bad
  bad=$(cd "$root" && find src profiler replay capi tuning cli \
          \( -name '*.cpp' -o -name '*.cu' -o -name '*.h' \) -print0 2>/dev/null |
        xargs -0 perl -0ne 'while (/\bcudaMemcpy(?:2D)?\s*\(([^;]*?)\);/sg) {
            print "$ARGV\n" if $1 =~ /cudaMemcpyHostToDevice/ }' | sort -u)
  if [ -n "$bad" ]; then
    echo "synchronous host-to-device copies (use cudaMemcpyAsync on the stream that reads the data):"
    echo "$bad"
    return 1
  fi
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${1:-}" = "--self-test" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/src"
  printf 'void f(void* d, const float* h) {\n  cudaMemcpy(d, h, 4,\n             cudaMemcpyHostToDevice);\n}\n' > "$tmp/src/planted.cpp"
  if check "$tmp" >/dev/null; then echo "self-test: the planted copy was not caught"; exit 1; fi
  printf 'void f(void* d, const float* h, cudaStream_t s) {\n  cudaMemcpyAsync(d, h, 4, cudaMemcpyHostToDevice, s);\n  cudaMemcpy(h, d, 4, cudaMemcpyDeviceToHost);\n}\n' > "$tmp/src/planted.cpp"
  if ! check "$tmp" >/dev/null; then echo "self-test: a stream-ordered copy was refused"; exit 1; fi
  echo "self-test passed"
  exit 0
fi
check "${1:-$root}"
