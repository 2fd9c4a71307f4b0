#!/usr/bin/env bash
# CPU smoke test of scripts/bench/torch_set_peers.py (PyTorch peers of model sets, issue 15) with
# Debian's PyTorch: a shared set of two googlenets and a separate set squeezenet1_1+googlenet,
# eager back-to-back only (--torch-device cpu), then summarize.py on the records. Also: a shared
# set of different input sizes is refused, each member gets its own weights, and a compile child
# past its budget is recorded as timeout. Prints "skipped" (CTest: Skipped) without torch.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench="$here/../../scripts/bench"
py=/usr/bin/python3
if ! "$py" -c "import torch, torchvision" 2>/dev/null; then
  echo "skipped: $py cannot import torch and torchvision (apt-get install python3-torch python3-torchvision)"
  exit 0
fi
tmp="$(mktemp -d /tmp/iostune-set-peers.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "set peers CPU test FAILED: $*" >&2; exit 1; }

"$py" "$bench/torch_set_peers.py" --set googlenet+googlenet:shared \
  --set "squeezenet1_1 googlenet" --input-mode separate --torch-device cpu --batches 1 \
  --iters 2 --warmup 1 --out "$tmp/raw" --model-dir "$tmp/models" >"$tmp/run.txt" 2>&1 ||
  { cat "$tmp/run.txt"; fail "torch_set_peers.py exited non-zero"; }
cat "$tmp/run.txt"
grep -q "not measured (they need CUDA): torch-cudagraph-back-to-back, torch-cudagraph-streams, torch-compile" \
  "$tmp/run.txt" || fail "no note about the CUDA systems a CPU run skips"

if "$py" "$bench/torch_set_peers.py" --set inception_v3+googlenet:shared --torch-device cpu \
    --out "$tmp/refused" >"$tmp/refused.txt" 2>&1; then
  fail "a shared set of 299x299 and 224x224 models was accepted"
fi
grep -q "shared input needs one input size for every member, but inception_v3 takes 299x299" \
  "$tmp/refused.txt" || { cat "$tmp/refused.txt"; fail "the refusal does not say why"; }
[ ! -e "$tmp/refused" ] || fail "a refused set wrote records"

"$py" - "$bench" "$tmp" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
import torch
import torch_peers
import torch_set_peers as t
tmp = sys.argv[2]
def check(cond, what):
    if not cond:
        sys.exit(f"set peers CPU test FAILED: {what}")
args = t.parse_args(["--set", "googlenet googlenet", "--input-mode", "shared", "--torch-device",
                     "cpu", "--out", f"{tmp}/raw", "--model-dir", f"{tmp}/models",
                     "--compile-budget", "0.01"])
modules, inputs, details = t.build_set(args.sets[0], 1, "bf16", args)
first = [next(m.parameters()) for m in modules]
check(not torch.equal(first[0], first[1]), "the two googlenets have the same weights")
check(len(inputs) == 1 and inputs[0].dtype == torch.bfloat16 and
      inputs[0].is_contiguous(memory_format=torch.channels_last) and
      first[0].dtype == torch.bfloat16, "bf16: one shared channels-last bf16 input and members")
# The compile child cannot even import torch in 10 ms: recorded as timeout, not waited for.
t.compile_in_child(args.sets[0], 1, "tf32", args, torch_peers.provenance("cpu"))
PY

"$py" "$bench/summarize.py" --raw "$tmp/raw" --out "$tmp/summary" --no-plot

"$py" - "$tmp" <<'PY'
import glob, json, sys
tmp = sys.argv[1]
def check(cond, what):
    if not cond:
        sys.exit(f"set peers CPU test FAILED: {what}")
records = [json.load(open(p)) for p in sorted(glob.glob(f"{tmp}/raw/runs/*.json"))]
got = {(r["model"], r["details"]["input_mode"], r["system"], r["status"]) for r in records}
check(got == {("googlenet+googlenet", "shared", "torch-eager-back-to-back", "ok"),
              ("squeezenet1_1+googlenet", "separate", "torch-eager-back-to-back", "ok"),
              ("googlenet+googlenet", "shared", "torch-compile", "timeout")},
      f"records: {sorted(got)}")
for r in records:
    d = r["details"]
    check(d["model_set"] == r["model"].split("+") and d["set_spec"] == f"{r['model']}:"
          f"{d['input_mode']}", f"{r['model']}: set details")
    if r["status"] == "ok":
        check(len(r["samples_ms"]) == 2 and r["precision"] == "tf32" and
              [m["seed"] for m in d["members"]] == [1, 2], f"{r['model']}: samples and seeds")
        shapes = d["input_shapes"]
        check(shapes == ([[1, 3, 224, 224]] if d["input_mode"] == "shared"
                         else [[1, 3, 224, 224]] * 2), f"{r['model']}: inputs {shapes}")
rows = json.load(open(f"{tmp}/summary/summary.json"))["rows"]
labels = {(r["model"], r["system"]): r["status"] for r in rows}
check(labels.get(("googlenet+googlenet:shared", "torch-eager-back-to-back")) == "ok" and
      labels.get(("squeezenet1_1+googlenet:separate", "torch-cudagraph-streams")) == "not run" and
      labels.get(("googlenet+googlenet:shared", "torch-compile")) == "timeout",
      f"summary rows: {labels}")
md = open(f"{tmp}/summary/summary.md").read()
check("## Model sets, batch 1" in md, "summary.md has the model-set table")
print("set peers CPU test passed:", len(records), "records,", len(rows), "summary rows")
PY
