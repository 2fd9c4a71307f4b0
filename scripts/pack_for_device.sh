#!/usr/bin/env bash
# Copies the two binaries the H100 pass needs out of a build folder into .devpack/ (ignored by
# git), stripped and gzipped so that they travel with a device call (the tool's 64 MiB limit
# counts the whole tree); scripts/device_unpack.sh restores them there. See device_pass.sh.
set -euo pipefail
build=${1:-build}
rm -rf .devpack
mkdir -p .devpack
cp "$build/cli/iostune" "$build/tests/test_gpu" .devpack/
strip .devpack/iostune .devpack/test_gpu
gzip -1 .devpack/iostune .devpack/test_gpu
mkdir -p .git/info
grep -qx '/.devpack/' .git/info/exclude 2>/dev/null || echo '/.devpack/' >> .git/info/exclude
du -sh .devpack
