#!/usr/bin/env bash
# Dry runs of scripts/bench/family_sweep.py (issue 14's model families) on the CPU, a few seconds:
#  1. with the real iostune (--dry-run --small): squeezenet1_1 and unet exported by Debian's
#     PyTorch, imported, searched with --cost sim twice (--search-again) and run on the CPU
#     reference against PyTorch's output, in tf32 and fp16; timm's nasnetalarge is "timm not
#     installed" without timm;
#  2. the GPU path with tests/bench/fake_iostune.py behind a wrapper that hangs unet's fp16
#     search (cut off by --search-timeout: the greedy baseline is validated instead) and makes
#     squeezenet's validations fail (exit status 1, failures listed), both models exported at
#     --size 40 (not their own sizes);
#  3. a deadline that has passed before the first model: every row "not run", the command to
#     run them printed.
# Each checks that --out holds just the table, the records, the log and the logs tarball.
#   usage: family_sweep_dry_run.sh IOSTUNE_BINARY
# Prints "skipped" (CTest: Skipped) without torch, torchvision and onnx.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sweep="$here/../../scripts/bench/family_sweep.py"
iostune="${1:?usage: family_sweep_dry_run.sh IOSTUNE_BINARY}"
py=/usr/bin/python3
if ! "$py" -c "import torch, torchvision, onnx" 2>/dev/null; then
  echo "skipped: $py cannot import torch, torchvision and onnx (apt-get install python3-torch python3-torchvision python3-onnx)"
  exit 0
fi
tmp="$(mktemp -d /tmp/iostune-families-dry.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "family sweep dry run FAILED: $*" >&2; exit 1; }
run() {  # run NAME EXPECTED_EXIT ARGS... (--small unless ARGS give --size)
  local name="$1" expected="$2" status=0 size=--small; shift 2
  case " $* " in *" --size "*) size="" ;; esac
  "$py" "$sweep" --out "$tmp/$name" ${size:+"$size"} "$@" >"$tmp/$name.stdout" 2>&1 || status=$?
  [ "$status" -eq "$expected" ] || { cat "$tmp/$name.stdout"; fail "$name exited $status, not $expected"; }
  [ "$(ls "$tmp/$name" | sort | tr '\n' ' ')" = \
    "families.jsonl families.log families.md families_logs.tar.gz " ] ||
    fail "$name: --out holds $(ls "$tmp/$name" | tr '\n' ' ')"
}

run cpu 0 --dry-run --iostune "$iostune" --models squeezenet1_1 unet nasnetalarge --search-again

cat >"$tmp/iostune" <<EOF
#!/bin/sh
case " \$* " in
  *" search "*unet.onnx*"--precision fp16"*) exec sleep 60 ;;
  *squeezenet1_1.onnx*) export FAKE_IOSTUNE_INVALID=1 ;;
esac
exec $py $here/fake_iostune.py "\$@"
EOF
chmod +x "$tmp/iostune"
run fake 1 --iostune "$tmp/iostune" --models unet squeezenet1_1 --search-timeout 2 --size 40
run late 0 --iostune "$tmp/iostune" --models unet squeezenet1_1 --deadline 0.01

"$py" - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
def check(cond, what):
    if not cond:
        sys.exit(f"family sweep dry run FAILED: {what}")
def rows(name):
    return {(r["model"], r["precision"]): r for r in map(json.loads, open(f"{tmp}/{name}/families.jsonl"))}

got = rows("cpu")
check(len(got) == 6, f"cpu: {len(got)} rows, not 6")
for m, shape in (("squeezenet1_1", [1, 3, 99, 99]), ("unet", [1, 3, 48, 48])):
    for p in ("tf32", "fp16"):
        r = got[(m, p)]
        check(r["status"] == "ok" and r["input_shape"] == shape and r["ops"] > 10, f"cpu {m} {p}: {r}")
        check(r["search"]["exit"] == 0 and r["search"]["simulated"] and
              f"--precision {p}" in r["search"]["command"] and "--cost sim" in r["search"]["command"],
              f"cpu {m} {p}: a simulated search in its precision")
        check(r["validate"]["status"] == "passed" and r["validate"]["l2_relative"][0] < 1e-4,
              f"cpu {m} {p}: CPU reference against PyTorch")
        check(r["search_again"]["exit"] == 0 and r["search_again"]["command"] == r["search"]["command"],
              f"cpu {m} {p}: searched again on the same DB")
nas = got[("nasnetalarge", "tf32")]
check(nas["status"] == "ok" or nas["note"] == "timm not installed", f"nasnetalarge: {nas}")
md = open(f"{tmp}/cpu/families.md").read()
check("| unet | 48x48 | fp16 | 1 | 24 |" in md and "densenet121 is not in this run" in md,
      "cpu: the table")
check("; again: " in md, "cpu: both searches in the note")

got = rows("fake")
check(len(got) == 4 and all(r["input_shape"] == [1, 3, 40, 40] for r in got.values()),
      f"fake: 4 rows at --size 40: {got}")
r = got[("unet", "tf32")]
check(r["status"] == "ok" and r["validate"]["status"] == "passed" and r["validate"]["median_ms"] > 0
      and "--validate" in r["validate"]["command"] and "--cost measured" in r["search"]["command"],
      f"fake unet tf32: searched and validated: {r}")
r = got[("unet", "fp16")]
check(r["search"]["exit"] == "timeout" and r["validate"]["schedule"] == "greedy (search cut off)"
      and "--schedule-source greedy" in r["validate"]["command"] and r["status"] == "ok",
      f"fake unet fp16: a cut-off search validates greedy: {r}")
for p in ("tf32", "fp16"):
    r = got[("squeezenet1_1", p)]
    check(r["status"] == "failed" and r["validate"]["status"] == "failed" and
          "validation failed" in r["validate"]["message"], f"fake squeezenet {p}: {r}")
md = open(f"{tmp}/fake/families.md").read()
failures = md.split("Failures:")[-1]
check("| unet | 40x40 |" in md and "--size 40: every model at 40 x 40" in md, "fake: the size")
check("Failures:" in md and "- squeezenet1_1 fp16 b1: error: validation failed" in failures and
      "unet" not in failures, "fake: the failures listed")

got = rows("late")
check(len(got) == 4 and all(r["status"] == "not run" for r in got.values()), f"late: {got}")
md = open(f"{tmp}/late/families.md").read()
check("Not run (4 rows" in md and "--models unet squeezenet1_1 --precisions 'tf32 fp16'" in md,
      "late: the rows left and the command that runs them")
print("family sweep dry run passed")
PY
