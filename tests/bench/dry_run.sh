#!/usr/bin/env bash
# Dry run of the H100 benchmark's scripting on a machine without a GPU: run_h100.sh against
# tests/bench/fake_iostune.py (shared DB, replay by schedule id, a failing baseline, the fallback
# for a binary without --schedule-id, TF32 and fp16 in one call), then unpack_results.sh and
# summarize.py on the merged records. Checks that what the device call returns is one tarball and
# one log per call and that every expected row arrives with the right provenance and precision.
# Needs only /usr/bin/python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench="$here/../../scripts/bench"
fake="$here/fake_iostune.py"
py=/usr/bin/python3
tmp="$(mktemp -d /tmp/iostune-dry-run.XXXXXX)"
tags=()
cleanup() { rm -rf "$tmp"; for t in "${tags[@]}"; do rm -rf "/tmp/bench_$t"; done; }
trap cleanup EXIT
fail() { echo "dry run FAILED: $*" >&2; exit 1; }
run() {  # run TAG ARGS...: one device call's worth
  local tag="dry$$_$1"; shift
  tags+=("$tag")
  "$bench/run_h100.sh" --tag "$tag" --iostune "$fake" --out "$tmp/out" --python "$py" \
    --iters 40 --parts "profile iostune" "$@" >"$tmp/$tag.stdout" 2>&1 ||
    { cat "$tmp/$tag.stdout"; fail "run_h100.sh $tag exited non-zero"; }
  [ -s "$tmp/out/bench_$tag.tar.gz" ] && [ -s "$tmp/out/bench_$tag.log" ] ||
    fail "$tag: no tarball/log in OUT"
}

FAKE_IOSTUNE_FAIL=opara run small --models "squeezenet1_1 googlenet" --batches "1 16" \
  --search-batches 1 --shared-db
run large --models nasnet_a_large --batches 1 --r 1 --shared-db --deadline 600
FAKE_IOSTUNE_NO_SCHEDULE_ID=1 run old --models resnet50 --batches 1 --shared-db \
  --baselines sequential
grep -q "falling back to one DB per strategy" "$tmp/out/bench_dry$$_old.log" ||
  fail "no warning for a binary without --schedule-id"
grep -q "has no 'replay --placements'" "$tmp/out/bench_dry$$_old.log" ||
  fail "no warning for a binary without replay --placements"
# Two precisions in one call: TF32 as before, then fp16 with its own DBs, logs and records.
run half --models inception_v3 --batches "1 16" --search-batches 1 --shared-db \
  --precisions "tf32 fp16"
half="/tmp/bench_dry$$_half"
for f in db/inception_v3_b1.db db/inception_v3_b1_fp16.db logs/inception_v3_b1_fp16_profile.log \
    logs/inception_v3_b1_fp16_iostune-ios-both_search.json logs/inception_v3_b1_iostune-ios-both_search.json \
    logs/inception_v3_b16_fp16_iostune-nimble_replay.log; do
  [ -e "$half/$f" ] || fail "the tf32+fp16 call left no $f"
done

files=$(find "$tmp/out" -type f | wc -l)
[ "$files" -eq 8 ] || fail "expected 4 tarballs + 4 logs in OUT, found $files"

"$bench/unpack_results.sh" --results "$tmp/results" "$tmp"/out/*.tar.gz
# Every replay of a binary that has it pools four placements of the arena (--replay-placements).
grep -rq -- "--placements 4" "$tmp/results/raw" || fail "no replay ran at four placements"

# A search continued in a later call from the shared DB the first one returned. A search cut
# off at the deadline leaves pages in the DB's -wal file, which must travel with it.
echo wal-marker >"$tmp/results/device/bench_dry$$_large/db/nasnet_a_large_b1.db-wal"
run resume --models nasnet_a_large --batches 1 --r 1 --shared-db --strategies ios-both \
  --baselines "" --resume-db "$tmp/results/device/bench_dry$$_large/db"
grep -q "resuming from" "$tmp/out/bench_dry$$_resume.log" || fail "the resumed DB was not used"
"$bench/unpack_results.sh" --results "$tmp/results" "$tmp/out/bench_dry$$_resume.tar.gz"
grep -q wal-marker "$tmp/results/device/bench_dry$$_resume/db/nasnet_a_large_b1.db-wal" ||
  fail "the resumed DB's -wal file was left behind"
# --tuned-db: the best a tuned DB holds, replayed per key and recorded as iostune-ios-both.
run tuned --models nasnet_a_large --batches 1 --strategies "" --baselines "" \
  --tuned-db "$tmp/results/device/bench_dry$$_large/db/nasnet_a_large_b1.db"
grep -q "iostune-ios-both: median" "$tmp/out/bench_dry$$_tuned.log" ||
  fail "--tuned-db replayed nothing"
"$py" "$bench/summarize.py" --raw "$tmp/results/raw" --out "$tmp/results" --no-plot

"$py" - "$tmp/results" "$$" <<'PY'
import json, sys
out, pid = sys.argv[1], sys.argv[2]
all_rows = {(r["model"], r["batch"], r["precision"], r["system"]): r
            for r in json.load(open(f"{out}/summary.json"))["rows"]}
rows = {(m, b, s): r for (m, b, p, s), r in all_rows.items() if p == "tf32"}
def check(cond, what):
    if not cond:
        sys.exit(f"dry run FAILED: {what}")
for model in ("squeezenet1_1", "googlenet"):
    for batch in (1, 16):
        for system in ("sequential", "greedy", "nimble"):
            check(rows.get((model, batch, f"iostune-{system}"), {}).get("status") == "ok",
                  f"{model} b{batch} {system} recorded")
        check(rows[(model, batch, "iostune-opara")]["status"] == "failed", "failing opara recorded")
    check((model, 16, "iostune-ios-both") not in rows or
          rows[(model, 16, "iostune-ios-both")]["status"] == "not run", "no search at b16")
    for s in ("ios-both", "ios-parallel", "ios-merge"):
        check(rows[(model, 1, f"iostune-{s}")]["status"] == "ok", f"{model} {s} replayed")
raw, raw16 = {}, {}
import glob
for path in glob.glob(f"{out}/raw/runs/*.json"):
    rec = json.load(open(path))
    check(rec.get("precision") in ("tf32", "fp16"), f"{path} names its precision")
    (raw if rec["precision"] == "tf32" else raw16)[(rec["model"], rec["batch"], rec["system"])] = rec
both = raw[("googlenet", 1, "iostune-ios-both")]["details"]
par = raw[("googlenet", 1, "iostune-ios-parallel")]["details"]
merge = raw[("squeezenet1_1", 1, "iostune-ios-merge")]["details"]
check("shared_stage_cache" not in both and both["cache_hits"] == 0, "ios-both searched from scratch")
check("ios-both" in par.get("shared_stage_cache", "") and par["cache_hits"] > 0,
      "ios-parallel says it shared ios-both's stage measurements")
check(par["replayed_schedule_id"] == par["schedule_id"], "replayed by its own schedule id")
check(merge["baseline_kept"] == "nimble" and merge["replayed_searched_schedule"] and
      "slower than nimble" in merge["baseline_kept_note"] and
      "searched schedule itself" in merge["baseline_kept_note"],
      "a search that kept a faster baseline still replays its own schedule")
nas = raw[("nasnet_a_large", 1, "iostune-ios-merge")]["details"]
check(nas["r"] == 1 and nas["pruning"]["r"] == 1, "r recorded for the large model")
resumed = [json.load(open(p))["details"] for p in glob.glob(f"{out}/raw/runs/*.json")
           if "nasnet_a_large_b1_iostune-ios-both" in p]
check(any("resumed" in d.get("shared_stage_cache", "") and d["cache_hits"] > 0 and
          d["stages_costed"] == 0 for d in resumed),
      "a resumed search takes every stage from the earlier call's DB and says so")
old = raw[("resnet50", 1, "iostune-ios-parallel")]["details"]
check("shared_stage_cache" not in old and old["cache_hits"] == 0,
      "without --schedule-id each strategy gets its own DB")
# fp16: every iostune part ran with --precision fp16 (replays with --native-io) and says so.
check(set(raw16) == {("inception_v3", b, f"iostune-{s}") for b in (1, 16)
                     for s in ("sequential", "greedy", "nimble", "opara")} |
      {("inception_v3", 1, f"iostune-{s}") for s in ("ios-both", "ios-parallel", "ios-merge")},
      f"fp16 records for inception_v3 only, searched at b1: {sorted(raw16)}")
for key, rec in raw16.items():
    d = rec["details"]
    check(rec["precision"] == "fp16" and "--precision fp16" in rec["command"] and
          "--native-io" in rec["command"] and d["layout"] == "nhwc" and d["storage"] == "half" and
          d["native_io"] is True, f"{key} fp16 record: precision, layout, storage, native I/O")
for key in (("inception_v3", 1, "iostune-nimble"), ("inception_v3", 1, "iostune-ios-both")):
    rec = raw[key]
    check(rec["precision"] == "tf32" and "--precision" not in rec["command"] and
          "--native-io" not in rec["command"] and rec["details"]["layout"] == "nchw" and
          rec["details"]["native_io"] is False, f"{key} TF32 record unchanged by the fp16 run")
both16 = raw16[("inception_v3", 1, "iostune-ios-both")]["details"]
par16 = raw16[("inception_v3", 1, "iostune-ios-parallel")]["details"]
check(both16["cache_hits"] == 0 and "shared_stage_cache" not in both16 and
      both16["search_layout"] == "nhwc" and "--precision fp16" in both16["search_command"],
      "fp16 ios-both searched from scratch in its own DB, in NHWC")
check(par16["cache_hits"] > 0 and "ios-both" in par16["shared_stage_cache"],
      "fp16 ios-parallel shared fp16 ios-both's stages")
profiles = [json.load(open(p)) for p in glob.glob(f"{out}/raw/profiles/inception_v3_b1_fp16_*.json")]
check(len(profiles) == 1 and profiles[0]["precision"] == "fp16" and profiles[0]["layout"] == "nhwc",
      "one fp16 profile of inception_v3 b1, named and marked fp16")
fp16_rows = {k: r for k, r in all_rows.items() if k[2] == "fp16"}
check({(m, b) for m, b, _, _ in fp16_rows} == {("inception_v3", 1), ("inception_v3", 16)} and
      not any(k[2] == "bf16" for k in all_rows),
      "fp16 summary rows only where fp16 was measured, no bf16 rows")
ios16 = fp16_rows[("inception_v3", 1, "fp16", "iostune-ios-both")]
check(ios16["status"] == "ok" and ios16["critical_path_ms"] < rows[("inception_v3", 1, "iostune-ios-both")]
      ["critical_path_ms"], "fp16 rows take the fp16 profile's bound")
md = open(f"{out}/summary.md").read()
check("not run" in md, "missing rows shown as not run")
check("shared" in md, "shared search cost marked in the table")
check("## Batch 1, fp16" in md and "## Batch 16, fp16" in md, "fp16 tables in the summary")
print("dry run passed:", len(all_rows), "summary rows,", len(fp16_rows), "of them fp16")
PY
