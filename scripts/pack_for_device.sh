#!/usr/bin/env bash
# Copies what a device call needs out of a build folder into .devpack/ (ignored by git), small
# enough to travel with it; see scripts/device_pass.sh.
#   scripts/pack_for_device.sh build           # iostune, test_gpu: the [gpu] tests and the pass
#   scripts/pack_for_device.sh build python    # iostune, libiostune.so.1 and the shared
#       libprotobuf-lite it needs (the GPU machine has none): the Python package (python/, in the
#       tree) and scripts/bench/python_api_check.py --pack .devpack
set -euo pipefail
build=${1:-build}
what=${2:-tests}
mkdir -p .devpack
case $what in
tests)
    cp "$build/cli/iostune" "$build/tests/test_gpu" .devpack/
    strip .devpack/iostune .devpack/test_gpu
    ;;
python)
    cp "$build/cli/iostune" .devpack/
    cp -L "$build/capi/libiostune.so.1" .devpack/
    protobuf=$(ldd "$build/capi/libiostune.so.1" | awk '/libprotobuf-lite/ {print $3}')
    [ -n "$protobuf" ] && cp -L "$protobuf" .devpack/
    strip .devpack/iostune
    strip --strip-unneeded .devpack/libiostune.so.1
    ;;
*)
    echo "usage: $0 [BUILD] [tests|python]" >&2
    exit 2
    ;;
esac
grep -qx '/.devpack/' .git/info/exclude 2>/dev/null || echo '/.devpack/' >> .git/info/exclude
du -sh .devpack
