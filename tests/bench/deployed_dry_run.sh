#!/usr/bin/env bash
# Dry run of scripts/bench/deployed_models.sh (issue 14's deployed models) on the CPU: the four
# models exported to ONNX at the fixtures' small sizes with Debian's PyTorch, then searched,
# validated and replayed by tests/bench/fake_iostune.py, and the PyTorch peers run on the CPU
# (eager timed; cudagraph recorded as skipped), after torch_peers.py --check-cpu of their
# builders. Checks what one device call returns (one tarball and one log), the records and
# validations of every row, the table, a validation failure and a deadline; and issue 28's
# models: espcn through every step with --search-args and two --baselines, timm's resnest14d
# recorded as failed with the reason where timm is missing. Prints "skipped" (CTest: Skipped)
# without torch, torchvision and onnx.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench="$here/../../scripts/bench"
fake="$here/fake_iostune.py"
py=/usr/bin/python3
if ! "$py" -c "import torch, torchvision, onnx" 2>/dev/null; then
  echo "skipped: $py cannot import torch, torchvision and onnx (apt-get install python3-torch python3-torchvision python3-onnx)"
  exit 0
fi
tmp="$(mktemp -d /tmp/iostune-deployed-dry.XXXXXX)"
tags=()
cleanup() { rm -rf "$tmp"; for t in "${tags[@]}"; do rm -rf "/tmp/bench_$t"; done; }
trap cleanup EXIT
fail() { echo "deployed dry run FAILED: $*" >&2; exit 1; }
run() {  # run TAG ARGS...: one device call's worth
  local name="$1" tag="dry$$_$1"; shift
  tags+=("$tag")
  bash "$bench/deployed_models.sh" --tag "$tag" --iostune "$fake" --out "$tmp/out_$tag" \
    --python "$py" --small --torch-device cpu --torch-systems "eager cudagraph" --iters 3 \
    --row-budget 1 "$@" >"$tmp/$tag.stdout" 2>&1 ||
    { cat "$tmp/$tag.stdout"; fail "deployed_models.sh $tag exited non-zero"; }
  [ "$(find "$tmp/out_$tag" -type f | wc -l)" -eq 2 ] && [ -s "$tmp/out_$tag/bench_$tag.tar.gz" ] &&
    [ -s "$tmp/out_$tag/bench_$tag.log" ] || fail "$tag: OUT does not hold just the tarball and the log"
  mkdir -p "$tmp/unpacked_$name"
  tar -C "$tmp/unpacked_$name" -xzf "$tmp/out_$tag/bench_$tag.tar.gz"
}

# torch_peers.py's CPU self-check of the deployed builders: folding exact (float64), one
# flattened output per sample (the FPN's five maps concatenated).
"$py" "$bench/torch_peers.py" --check-cpu --small --models efficientnet_b0 mobilenet_v3_large \
  fasterrcnn_fpn_backbone unet espcn >"$tmp/check.txt" 2>&1 || { cat "$tmp/check.txt"; fail "--check-cpu"; }
[ "$(grep -c "batch-norm folding changes outputs by .* ok$" "$tmp/check.txt")" -eq 5 ] &&
  grep -q "fasterrcnn_fpn_backbone: export_torchvision: 26825856 parameters, output (2, 87296) ok" \
    "$tmp/check.txt" || { cat "$tmp/check.txt"; fail "--check-cpu of the deployed models"; }

run all --batches "1 2" --precisions "tf32 fp16" --parts "torch iostune" --torch-deadline 400
FAKE_IOSTUNE_INVALID=1 run invalid --models unet --batches 1 --parts iostune
run late --models unet --batches 1 --deadline 1
# Issue 28's models: espcn (PReLU, PixelShuffle) all the way, with the H100 rows' search options;
# timm's resnest14d without timm here: its rows say why.
timm_here=0; "$py" -c "import timm" 2>/dev/null && timm_here=1
run second --models "espcn resnest14d" --batches 1 --precisions tf32 --parts "iostune torch" \
  --torch-systems "eager cudagraph" --search-args "--time-budget 30" \
  --baselines "greedy nimble-dataflow"
"$bench/unpack_results.sh" --results "$tmp/results" "$tmp/out_dry$$_all/bench_dry$$_all.tar.gz" |
  grep -q "80 raw records merged" ||
  fail "unpack_results.sh did not merge the 80 records (64 runs, 16 profiles)"
grep -rq -- "--placements 4" "$tmp/results/raw" || fail "no replay ran at four placements"

"$py" - "$tmp" "$$" "$bench" "$timm_here" <<'PY'
import glob, json, os, re, sys
tmp, pid, bench, timm_here = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
sys.path.insert(0, bench)
import bench_record
def check(cond, what):
    if not cond:
        sys.exit(f"deployed dry run FAILED: {what}")
def work(name):
    return f"{tmp}/unpacked_{name}/bench_dry{pid}_{name}"
models = ("efficientnet_b0", "mobilenet_v3_large", "fasterrcnn_fpn_backbone", "unet")

w = work("all")
check(not glob.glob(f"{w}/onnx/*.onnx"), "the ONNX files stay out of the tarball")
exported = json.load(open(f"{w}/logs/export.json"))["models"]
check(sorted(exported) == sorted(models) and
      len(exported["fasterrcnn_fpn_backbone"]["output_shapes_b1"]) == 5 and
      exported["unet"]["input_shape"] == [1, 3, 48, 48], f"export.json: {exported}")
runs, profiles = bench_record.load_records(f"{w}/raw")
got = {(r["model"], r["batch"], r["precision"], r["system"]): r for r in runs}
bounds = {(p["model"], p["batch"], bench_record.precision_of(p)) for p in profiles}
check(bounds == {(m, b, p) for m in models for b in (1, 2) for p in ("tf32", "fp16")} and
      all(p["critical_path_ms"] > 0 for p in profiles),
      f"a critical-path bound per model, batch and precision: {sorted(bounds)}")
for m in models:
    for b in (1, 2):
        for p in ("tf32", "fp16"):
            for s in ("iostune-ios-both", "iostune-sequential", "torch-eager", "torch-cudagraph"):
                check((m, b, p, s) in got, f"no record of {m} b{b} {p} {s}")
            best, seq = got[(m, b, p, "iostune-ios-both")], got[(m, b, p, "iostune-sequential")]
            check(best["status"] == "ok" and seq["status"] == "ok", f"{m} b{b} {p} iostune ok")
            check(f"{m}.onnx" in best["command"] and f"--precision {p}" in best["command"] and
                  best["details"].get("kept_strategy") and best["search_or_compile_s"] is not None,
                  f"{m} b{b} {p}: the best replays the .onnx with its search's details")
            if p == "tf32":
                check("--validate" in best["command"] and "--native-io" not in best["command"],
                      f"{m} b{b} tf32: the validated replay is the timed one")
            else:
                check("--validate" not in best["command"] and "--native-io" in best["command"] and
                      "--native-io" in seq["command"], f"{m} b{b} fp16: timed with native I/O")
            check(got[(m, b, p, "torch-cudagraph")]["status"] == "skipped", "cudagraph skipped on CPU")
        check(got[(m, b, "tf32", "torch-eager")]["status"] == "ok" and
              got[(m, b, "tf32", "torch-eager")]["details"]["model_source"] == "export_torchvision",
              f"{m} b{b}: PyTorch eager ran the export_torchvision module")
check(set(s for *_, s in got) == {"iostune-ios-both", "iostune-sequential", "torch-eager",
                                  "torch-cudagraph"}, f"systems: {set(s for *_, s in got)}")
vals = [json.loads(l) for l in open(f"{w}/validate.jsonl")]
check(len(vals) == 16 and all(v["status"] == "passed" for v in vals), f"validations: {vals}")
md = open(f"{w}/deployed.md").read()
check("| fasterrcnn_fpn_backbone | 2 | fp16 |" in md and
      re.search(r"\(ios-both\) \| passed \| [0-9.]+ \| skipped \| not run \|", md),
      "the table has every row with the kept strategy, validation and eager peer")
check(os.path.isfile(f"{w}/summary/summary.md"), "summarize.py ran on the records")
log = open(f"{w}/logs/deployed_models.log").read()
check(log.index("PyTorch peers, fp16") < log.index("efficientnet_b0 batch 1, tf32"),
      "--parts 'torch iostune' runs the peers first")

w = work("invalid")
vals = [json.loads(l) for l in open(f"{w}/validate.jsonl")]
check([v["status"] for v in vals] == ["failed", "failed"] and
      all("differs from the sequential" in v["message"] for v in vals), f"failed validations: {vals}")
runs, _ = bench_record.load_records(f"{w}/raw")
bests = {r["precision"]: r for r in runs if r["system"] == "iostune-ios-both"}
check(sorted(bests) == ["fp16", "tf32"] and all(r["status"] == "failed" for r in bests.values()),
      "a schedule that fails validation has no timed best")
md = open(f"{w}/deployed.md").read()
check("| unet | 1 | fp16 | 0." in md and "| failed | FAILED |" in md and "Validation problems" in md,
      "the table shows the failed validation")

w = work("late")
runs, _ = bench_record.load_records(f"{w}/raw")
check(not runs, "nothing measured past the deadline")
check("| unet | 1 | tf32 | not run | not run | not run | not run | not run | not run | - |" in
      open(f"{w}/deployed.md").read(), "rows past the deadline are 'not run'")
log = open(f"{w}/logs/deployed_models.log").read()
check("past --deadline 1 s, not started: iostune unet b1 tf32" in log, "the skipped steps are listed")
w = work("second")
runs, _ = bench_record.load_records(f"{w}/raw")
got2 = {(r["model"], r["system"]): r for r in runs}
espcn = got2[("espcn", "iostune-ios-both")]
check(espcn["status"] == "ok" and "--time-budget 30" in espcn["details"]["search_command"],
      "espcn searched with --search-args and replayed")
for system, form in (("iostune-greedy", "staged"), ("iostune-nimble-dataflow", "dataflow")):
    r = got2.get(("espcn", system), {})
    check(r.get("status") == "ok" and f"--form {form}" in r.get("command", ""),
          f"--baselines: espcn's {system} replayed ({r})")
check(got2[("espcn", "torch-eager")]["status"] == "ok" and
      got2[("espcn", "torch-eager")]["details"]["batch_norms_left"] == 0,
      "espcn's PyTorch eager peer ran")
exported = json.load(open(f"{w}/logs/export.json"))["models"]
check(exported["espcn"]["input_shape"] == [1, 3, 17, 17], f"espcn export: {exported['espcn']}")
if not timm_here:
    check("timm" in exported["resnest14d"]["error"], f"resnest14d export: {exported['resnest14d']}")
    for system in ("iostune-ios-both", "torch-eager"):
        r = got2[("resnest14d", system)]
        check(r["status"] == "failed" and "timm" in r["error"], f"resnest14d {system}: {r}")
    vals = [json.loads(l) for l in open(f"{w}/validate.jsonl")]
    check([v["status"] for v in vals if v["model"] == "resnest14d"] == ["not run"],
          f"resnest14d's validation: {vals}")
md = open(f"{w}/deployed.md").read()
check("| espcn | 1 | tf32 |" in md and "| resnest14d | 1 | tf32 |" in md, "issue 28's rows")
print("deployed dry run passed:", len(got), "records in the full run")
PY
