#!/usr/bin/python3
"""A stand-in for the iostune CLI with the JSON outputs scripts/bench/run_h100.sh relies on
(results/README.md, "What run_h100.sh needs"), so the benchmark's scripting can be dry-run on a
machine without a GPU. Numbers are made up (seeded); nothing here measures anything.

FAKE_IOSTUNE_NO_SCHEDULE_ID=1 drops `replay --schedule-id` and `--placements` (an older binary);
FAKE_IOSTUNE_FAIL=WORD makes any command whose arguments contain WORD fail.
The DB is a JSON file: {"schedules": [...], "stages": {PRECISION: N}} (a shared DB reports cache
hits); as in iostune's DB, schedules and stages are keyed by precision, and a schedule replays
only in the precision it was searched in. --precision (or --math) fp32|tf32|fp16|bf16, --layout
auto|nchw|nhwc and replay's --native-io are accepted and reported as iostune reports them.
--model may be a model file (.onnx or .json, named after the deployed models: its stem is the
model; a missing one is an error), `import X.onnx -o X.json` writes a placeholder model, and `replay --validate` reports a
passed validation on stderr (as iostune does with --format json); FAKE_IOSTUNE_INVALID=1 makes
it fail as a schedule whose output differs would.
"""

import json
import os
import random
import sys

DEVICE = {"name": "Fake H100", "compute_capability": "9.0", "sm_count": 132,
          "driver": "580.0", "cuda_runtime": "13.0", "cudnn": "9.19.0"}
STAGES = {"inception_v3": 5428, "googlenet": 1314, "squeezenet1_1": 78, "resnet50": 60,
          "nasnet_a_large": 122012, "randwire": 131000, "efficientnet_b0": 900,
          "mobilenet_v3_large": 700, "fasterrcnn_fpn_backbone": 400, "unet": 60, "espcn": 10,
          "resnest14d": 300, "skresnet18": 250}
BASE_MS = {"inception_v3": 2.6, "googlenet": 1.5, "squeezenet1_1": 0.38, "resnet50": 2.2,
           "nasnet_a_large": 7.9, "randwire": 5.1, "efficientnet_b0": 1.1,
           "mobilenet_v3_large": 0.9, "fasterrcnn_fpn_backbone": 1.6, "unet": 0.3, "espcn": 0.4,
           "resnest14d": 1.2, "skresnet18": 1.0}
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
STORAGE = {"fp32": "float", "tf32": "float", "fp16": "half", "bf16": "bfloat16"}


def option(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def model_name(spec):
    """A zoo name as is; a model file's stem (/tmp/x/unet.onnx -> unet)."""
    if spec and os.path.splitext(spec)[1] in (".onnx", ".json"):
        return os.path.splitext(os.path.basename(spec))[0]
    return spec


def fake_import(args):
    source, output = args[1], option(args, "-o", option(args, "--output"))
    name = model_name(source)
    if not os.path.isfile(source) or name not in STAGES or not output:
        print(f"error: cannot import '{source}' (fake iostune knows {', '.join(STAGES)})",
              file=sys.stderr)
        return 1
    with open(output, "w", encoding="utf-8") as f:
        json.dump({"name": name, "fake": True}, f)
    print(f"imported {source}: {STAGES[name] // 10} ops (fake)\nwrote {output}")
    return 0


def load_db(path):
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    return {"schedules": [], "stages": {}}


def precision_and_layout(args):
    """(precision, layout, error): iostune's defaults are tf32 and auto (NHWC for 16-bit)."""
    precision = option(args, "--precision", option(args, "--math", "tf32"))
    layout = option(args, "--layout", "auto")
    if precision not in PRECISIONS:
        return None, None, f"--precision: {precision} not in {{{','.join(PRECISIONS)}}}"
    if layout not in ("auto", "nchw", "nhwc"):
        return None, None, f"--layout: {layout} not in {{auto,nchw,nhwc}}"
    if layout == "auto":
        layout = "nhwc" if STORAGE[precision] != "float" else "nchw"
    return precision, layout, None


def main(args):
    fail = os.environ.get("FAKE_IOSTUNE_FAIL")
    if fail and fail in args:
        print(f"fake iostune: failing on purpose ({fail})", file=sys.stderr)
        return 3
    if args[:1] == ["--version"]:
        print("iostune 0.0.0 (fake, for dry runs)")
        return 0
    command = args[0]
    if command == "import":
        return fake_import(args)
    if "--help" in args:
        print(f"Usage: iostune {command} [OPTIONS]\n  --db TEXT\n  --schedule-source TEXT\n"
              "  --precision,--math TEXT\n  --layout TEXT\n  --native-io")
        if command == "replay" and not os.environ.get("FAKE_IOSTUNE_NO_SCHEDULE_ID"):
            print("  --schedule-id INT   replay exactly this schedule of --db")
            print("  --placements INT    time at this many placements of the arena, pooled")
        return 0
    spec = option(args, "--model")
    model = model_name(spec)
    batch = int(option(args, "--batch", "1"))
    if model != spec and not os.path.isfile(spec):  # a model file, as iostune reads it
        print(f"error: cannot read model file '{spec}'", file=sys.stderr)
        return 1
    if model not in STAGES:
        print(f"error: unknown model '{model}'", file=sys.stderr)
        return 1
    precision, layout, error = precision_and_layout(args)
    if error:
        print(f"error: {error}", file=sys.stderr)
        return 105  # CLI11's exit code for a failed validator
    rng = random.Random(f"{model}{batch}{args}")
    base = BASE_MS[model] * (1 + 0.2 * (batch - 1)) * (0.6 if STORAGE[precision] != "float" else 1)
    if command == "profile":
        with open(option(args, "--json"), "w", encoding="utf-8") as f:
            json.dump({"model": model, "batch": batch, "precision": precision, "layout": layout,
                       "device": DEVICE, "critical_path_us": base * 400, "op_sum_us": base * 900,
                       "span_us": base * 1000, "ops": []}, f)
        print("profile written")
        return 0
    if command == "search":
        path = option(args, "--db")
        db = load_db(path)
        strategy = option(args, "--strategy", "ios-both")
        wanted = STAGES[model] // (1 if strategy == "ios-both" else 2)
        have = db["stages"].get(precision, 0)  # another precision's stages are no hits
        hits = min(wanted, have)
        db["stages"][precision] = max(have, wanted)
        sid = len(db["schedules"]) + 1
        kept = model == "squeezenet1_1" and strategy == "ios-merge"
        db["schedules"].append({"id": sid, "strategy": strategy, "kept": kept,
                                "precision": precision, "layout": layout})
        best = sid
        if kept:
            db["schedules"].append({"id": sid + 1, "strategy": "nimble", "kept": False,
                                    "precision": precision, "layout": layout})
            best = sid + 1
        with open(path, "w", encoding="utf-8") as f:
            json.dump(db, f)
        print(json.dumps({"model": model, "batch": batch, "precision": precision,
                          "layout": layout, "strategy": strategy,
                          "pruning": {"prune": True, "r": int(option(args, "--r", "3")),
                                      "s": int(option(args, "--s", "8"))},
                          "cost_model": "measured", "simulated": False, "db": path,
                          "schedule_id": sid, "best_schedule_id": best, "sequential_kept": False,
                          "kept_strategy": "nimble" if kept else strategy,
                          "baselines_latency_ms": {"sequential": base, "nimble": base * 0.6},
                          "stages": 40, "predicted_latency_ms": base * 0.5,
                          "measured_latency_ms": base * 0.7, "sequential_latency_ms": base,
                          "stages_costed": wanted - hits, "cache_hits": hits,
                          "search_seconds": 0.1, "total_seconds": 0.2,
                          "stats": {"totals": {"wall_s": 0.05}, "layout": layout,
                                    "layout_sequential_ms": {"nchw": base, "nhwc": base * 0.9}}},
                         indent=1))
        return 0
    if command == "replay":
        source = option(args, "--schedule-source", "db")
        sid = None
        if source == "db":
            db = load_db(option(args, "--db"))
            if not db["schedules"]:
                print("error: no schedule in the DB", file=sys.stderr)
                return 1
            wanted = option(args, "--schedule-id")
            chosen = ([s for s in db["schedules"] if s["id"] == int(wanted)] if wanted
                      else [s for s in db["schedules"]
                            if not s["kept"] and s["precision"] == precision][-1:])
            if not chosen:
                print(f"error: no schedule #{wanted}", file=sys.stderr)
                return 1
            if chosen[0]["precision"] != precision:
                print(f"error: schedule #{chosen[0]['id']} was searched in "
                      f"{chosen[0]['precision']}, not {precision}", file=sys.stderr)
                return 1
            sid = chosen[0]["id"]
            layout = chosen[0]["layout"]  # a stored schedule runs in its own layout
        if "--validate" in args:
            if "--native-io" in args:
                print("error: --validate compares float outputs; drop --native-io to validate "
                      "the schedule", file=sys.stderr)
                return 1
            if os.environ.get("FAKE_IOSTUNE_INVALID"):
                print("error: validation failed: the replayed schedule's output 0 ('fc') differs "
                      "from the sequential schedule's by up to 0.5 (tolerance 0.001)",
                      file=sys.stderr)
                return 1
            print("Validation: PASSED (output equals the sequential schedule's, max |diff| 0, "
                  "tolerance 1e-3)", file=sys.stderr)
        iters = int(option(args, "--iters", "200"))
        samples = [base * (0.7 if source == "db" else 1) * (1 + 0.01 * rng.random())
                   for _ in range(iters)]
        median = sorted(samples)[(iters - 1) // 2] if iters % 2 else \
            sum(sorted(samples)[iters // 2 - 1:iters // 2 + 1]) / 2
        print(json.dumps({"model": model, "batch": batch, "precision": precision,
                          "layout": layout, "storage": STORAGE[precision],
                          "native_io": "--native-io" in args, "schedule_id": sid,
                          "strategy": source, "device": DEVICE, "warmup": 20,
                          "iterations": iters, "median_ms": median, "samples_ms": samples,
                          "placements": int(option(args, "--placements", "1")),
                          "stages": 40, "graph_nodes": 120}))
        return 0
    print(f"fake iostune: command '{command}' is not faked", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
