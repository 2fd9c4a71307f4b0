#!/usr/bin/env bash
# Copies the two binaries the H100 pass needs out of a build folder into .devpack/ (ignored by
# git), small enough to travel with a device call; see scripts/device_pass.sh.
set -euo pipefail
build=${1:-build}
mkdir -p .devpack
cp "$build/cli/iostune" "$build/tests/test_gpu" .devpack/
strip .devpack/iostune .devpack/test_gpu
grep -qx '/.devpack/' .git/info/exclude 2>/dev/null || echo '/.devpack/' >> .git/info/exclude
du -sh .devpack
