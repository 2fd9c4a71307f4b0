#!/usr/bin/env python3
"""What the schedules in an iostune DB merged: per schedule its key, strategy, measured latency
and merge stages by kind (stacked: Conv ops; batched: SepConv ops), read from the DB's graph;
then the merge stages the search measured, each against the same ops as a concurrent stage (one
op per group) where that was measured too. Usage: merge_stages.py DB"""
import json
import re
import sqlite3
import statistics
import sys


def main(path):
    db = sqlite3.connect(path)
    kinds = {}
    for model_id, graph_json in db.execute("SELECT id, graph_json FROM models"):
        ops = json.loads(graph_json).get("ops", [])
        kinds[model_id] = [op.get("op", "?") for op in ops]
    rows = db.execute("SELECT s.id, m.name, s.model_id, s.batch, s.precision, s.strategy, "
                      "s.measured_ms, s.schedule_json FROM schedules s JOIN models m "
                      "ON m.id = s.model_id ORDER BY s.id")
    for sid, name, model_id, batch, precision, strategy, measured, schedule_json in rows:
        stacked = batched = batched_ops = 0
        for block in json.loads(schedule_json).get("blocks", []):
            for stage in block["stages"]:
                if stage.get("strategy") != "merge":
                    continue
                ops = stage["groups"][0]
                if kinds.get(model_id) and kinds[model_id][ops[0]] == "sepconv":
                    batched += 1
                    batched_ops += len(ops)
                else:
                    stacked += 1
        print(f"{path}: schedule {sid} {name} b{batch} {precision} {strategy}: "
              f"{measured if measured is not None else float('nan'):.4f} ms, "
              f"{stacked} stacked merges, {batched} batched ({batched_ops} ops)")
    measured = db.execute("SELECT COUNT(*), SUM(ok) FROM stage_measurements "
                          "WHERE stage_key LIKE '%m:%'").fetchone()
    print(f"{path}: merge stages measured {measured[0]}, ran {measured[1] or 0}")
    latency = dict(db.execute("SELECT stage_key, latency_ms FROM stage_measurements WHERE ok = 1"))
    ratios = []
    for key, ms in latency.items():
        merge = re.search(r"m:\[([0-9,]+)\]$", key)
        if not merge:
            continue
        apart = key[:merge.start()] + "c:" + "".join(f"[{op}]" for op in merge.group(1).split(","))
        if apart in latency:
            ratios.append(ms / latency[apart])
    if ratios:
        print(f"{path}: merge / concurrent over {len(ratios)} pairs: median "
              f"{statistics.median(ratios):.3f}, best {min(ratios):.3f}, worst {max(ratios):.3f}, "
              f"merge faster in {sum(r < 1 for r in ratios)}")


if __name__ == "__main__":
    main(sys.argv[1])
