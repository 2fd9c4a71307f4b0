#!/usr/bin/env bash
# Copies what a device call needs out of a build folder into .devpack/ (ignored by git),
# stripped and gzipped so that it travels with a device call (the tool's 64 MiB limit counts the
# whole tree); scripts/device_unpack.sh restores it there. See scripts/device_pass.sh.
#   scripts/pack_for_device.sh build           # iostune, test_gpu: the [gpu] tests and the pass
#   scripts/pack_for_device.sh build python    # also libiostune.so.1 and the shared
#       libprotobuf-lite it needs (the GPU machine has none): the Python package (python/, in the
#       tree) and scripts/bench/python_api_check.py --pack .devpack
set -euo pipefail
build=${1:-build}
what=${2:-tests}
rm -rf .devpack
mkdir -p .devpack
cp "$build/cli/iostune" "$build/tests/test_gpu" .devpack/
# Results name the commit the binary stamped at its build: a binary built before the commit it
# is benchmarked as stamps the commit before it, "-dirty". Say so here, before device time goes.
stamp=$("$build/cli/iostune" --version 2>/dev/null | sed -n 's/.*(commit \([^,]*\),.*/\1/p')
head=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
state=$head
[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && state+=" with uncommitted changes"
if [ "$stamp" != "$head" ] || [ "$state" != "$head" ]; then
    echo "warning: $build/cli/iostune stamps itself commit '${stamp:-?}', HEAD is $state:" \
         "results will name '${stamp:-?}'; commit, rebuild (each build stamps again), then pack" >&2
fi
strip .devpack/iostune .devpack/test_gpu
case $what in
tests) ;;
python)
    cp -L "$build/capi/libiostune.so.1" .devpack/
    protobuf=$(ldd "$build/capi/libiostune.so.1" | awk '/libprotobuf-lite/ {print $3}')
    [ -n "$protobuf" ] && cp -L "$protobuf" .devpack/
    strip --strip-unneeded .devpack/libiostune.so.1
    ;;
*)
    echo "usage: $0 [BUILD] [tests|python]" >&2
    exit 2
    ;;
esac
gzip -1 .devpack/*
mkdir -p "$(git rev-parse --git-dir)/info"
exclude="$(git rev-parse --git-dir)/info/exclude"
grep -qx '/.devpack/' "$exclude" 2>/dev/null || echo '/.devpack/' >> "$exclude"
du -sh .devpack
# A device call takes the tracked tree plus .devpack, 64 MiB in all: warn here rather than
# have the call refused.
tree=$(git ls-files -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
pack=$(du -sb .devpack | cut -f1)
if [ $((tree + pack)) -gt $((64 * 1024 * 1024)) ]; then
    echo "warning: the tracked tree ($((tree >> 20)) MiB) and .devpack ($((pack >> 20)) MiB) are" \
         "over a device call's 64 MiB; remove what the call does not need from .devpack" \
         "(e.g. test_gpu.gz when it runs no [gpu] test)" >&2
fi
