#!/usr/bin/env python3
"""Markdown tables from the raw outputs of scripts/device_pass.sh (one folder per pass).

usage: /usr/bin/python3 scripts/pass_tables.py results/h100-2026-11-21/pass1 [more pass folders]
Prints: sequential CUDA-graph replays, then each searched / baseline schedule against sequential.
"""
import glob
import json
import os
import re
import sys


def load(folder, pattern):
    rows = {}
    for path in sorted(glob.glob(os.path.join(folder, pattern))):
        with open(path) as f:
            try:
                rows[os.path.basename(path)] = json.load(f)
            except json.JSONDecodeError:
                print(f"<!-- {path}: not JSON, skipped -->")
    return rows


def spread(replay):
    samples = sorted(replay["samples_ms"])
    p10 = samples[len(samples) // 10]
    return replay["p90_ms"] - p10


def main(folders):
    print("### Sequential schedule replayed as one CUDA Graph (tf32)\n")
    print("| model | batch | median ms | p90 ms | spread p90-p10 ms | stages | graph nodes | enqueue ms |")
    print("|---|---|---|---|---|---|---|---|")
    for folder in folders:
        for name, r in load(folder, "replay_*_sequential.json").items():
            print(f"| {r['model']} | {r['batch']} | {r['median_ms']:.3f} | {r['p90_ms']:.3f} | "
                  f"{spread(r):.3f} | {r['stages']} | {r['graph_nodes']} | {r['enqueue_median_ms']:.4f} |")

    print("\n### Schedules at batch 1 (searched with the measured cost model, r=3 s=8; baselines computed)\n")
    print("| model | schedule | replay median ms | replay p90 ms | vs sequential replay | search: predicted / measured / sequential ms | search s | stages costed |")
    print("|---|---|---|---|---|---|---|---|")
    for folder in folders:
        replays = load(folder, "replay_*.json")
        searches = load(folder, "search_*.json")
        sequential = {(r["model"], r["batch"]): r["median_ms"]
                      for n, r in replays.items() if n.endswith("_sequential.json")}
        for name, r in replays.items():
            m = re.match(r"replay_(.+)_b(\d+)_(.+)\.json", name)
            if not m or m.group(3) == "sequential":
                continue
            model, batch, kind = m.group(1), int(m.group(2)), m.group(3)
            base = sequential.get((model, batch))
            ratio = f"{base / r['median_ms']:.2f}x" if base else "-"
            search_name = name.replace("replay_", "search_")
            # Repeated replays of one search are named <search>_<run>.json.
            s = searches.get(search_name) or searches.get(re.sub(r"_\d+\.json$", ".json", search_name))
            if s:
                search = (f"{s['predicted_latency_ms']:.3f} / {s['measured_latency_ms']:.3f} / "
                          f"{s['sequential_latency_ms']:.3f}")
                cost = f"{s['search_seconds']:.1f}"
                costed = str(s["stages_costed"])
                if s.get("sequential_kept"):
                    kind += " (sequential kept)"
            else:
                search, cost, costed = "baseline", "-", "-"
            print(f"| {model} b{batch} | {kind} | {r['median_ms']:.3f} | {r['p90_ms']:.3f} | {ratio} | "
                  f"{search} | {cost} | {costed} |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["."])
