"""Summarises the raw benchmark records under results/raw/ into results/summary.json,
results/summary.md and results/throughput.png (results/README.md describes all of them).

  summarize.py [--raw results/raw] [--out results] [--no-plot]
  summarize.py --self-test      checks this script on synthetic records in a temporary folder

Row selection: every raw run is kept on disk; for each (model, batch, precision, system) the
summary shows the latest successful run (by its `date`), lists how many runs there were and the
medians of all successful ones (so repeat-to-repeat drift is visible). A row whose runs all
failed shows its latest failure. A record without a string `precision` (from before fp16/bf16)
is TF32. "Best peer" is the fastest successful torch-* row of the same (model, batch, precision);
the critical-path bound is the latest `iostune profile` record of that (model, batch, precision).

Model sets (torch_set_peers.py, issue 15: several models run together as one request): a record
whose details name a `model_set` is a set row. Its summary row is labelled with the set's spec,
NAMES:MODE (e.g. resnet50+resnet50:shared), so the same members with a shared and with separate
inputs stay apart, and carries `set_members` and `input_mode`. Set rows get their own tables
(after the single-model ones), are compared only with the peers of the same set, and have no
goal check, critical-path bound or plot bars; their throughput counts set requests (batch / one
sample of every member). Without set records the output is what it always was.
"""

import argparse
import json
import lzma
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402

SUMMARY_SCHEMA = "iostune-bench-summary/1"
PEER_PREFIX = "torch-"
IOSTUNE_PREFIX = "iostune-"
# The goal: the best IOS schedule against the best peer on the multi-branch models.
IOS_SYSTEMS = ("iostune-ios-both", "iostune-ios-parallel", "iostune-ios-merge")
GOALS = {1: 1.5, 16: 1.2}
# Issue 25's targets for the search: the searched schedule (SEARCH_SYSTEM) at most BOUND_TARGET
# times its critical-path bound, and no slower than any baseline row of the same key.
SEARCH_SYSTEM = "iostune-ios-both"
BOUND_TARGET = 1.15
SET_TARGET = 1.3  # issue 25: a co-scheduled set against its members back to back
BASELINE_SYSTEMS = ("iostune-sequential", "iostune-greedy", "iostune-nimble",
                    "iostune-greedy-dataflow", "iostune-nimble-dataflow")
# The search's contenders and a model set's baselines, as a refinement's start names them.
BASELINE_NAMES = ("sequential", "greedy", "nimble", "opara", "back-to-back", "streams")
# The grid the benchmark is meant to fill; combinations without a record show as "not run".
EXPECTED_BATCHES = (1, 16)
EXPECTED_SYSTEMS = ("torch-eager", "torch-cudagraph", "torch-compile", "iostune-sequential",
                    "iostune-greedy", "iostune-nimble", "iostune-opara", "iostune-ios-merge",
                    "iostune-ios-parallel", "iostune-ios-both")
# A model set's peers (torch_set_peers.py), shown as "not run" where a (set, batch, precision)
# has records but not of these.
EXPECTED_SET_SYSTEMS = ("torch-cudagraph-back-to-back", "torch-cudagraph-streams",
                        "torch-compile")
NOT_RUN = "not run"
# Tables, goal checks and plot panels go precision by precision in this order; TF32 (the only one
# before fp16/bf16) keeps the unmarked headings it always had.
PRECISION_ORDER = bench_record.PRECISIONS
DEFAULT_PRECISION = bench_record.DEFAULT_PRECISION
CONTROL_MODELS = ("resnet50",)
MODEL_ORDER = ("inception_v3", "googlenet", "squeezenet1_1", "nasnet_a_large", "randwire",
               "resnet50")
SYSTEM_ORDER = ("torch-eager", "torch-eager-back-to-back", "torch-cudagraph",
                "torch-cudagraph-back-to-back", "torch-cudagraph-streams", "torch-compile",
                "torch-eager-ir", "torch-cudagraph-ir", "torch-compile-ir", "iostune-sequential",
                "iostune-greedy",
                "iostune-nimble", "iostune-opara", "iostune-ios-merge", "iostune-ios-parallel",
                "iostune-ios-both")
# Peers in greys, iostune's baselines in muted colours, the IOS schedules in strong ones.
SYSTEM_COLOURS = {"torch-eager": "#d0d0d0", "torch-cudagraph": "#a0a0a0",
                  "torch-compile": "#606060", "iostune-sequential": "#c6dbef",
                  "iostune-greedy": "#9ecae1", "iostune-nimble": "#fdd0a2",
                  "iostune-opara": "#fdae6b", "iostune-ios-merge": "#a1d99b",
                  "iostune-ios-parallel": "#41ab5d", "iostune-ios-both": "#006d2c"}


def order_key(order, name):
    return (order.index(name) if name in order else len(order), name)


def precision_label(precision, sep=" "):
    """Nothing for TF32 (labels stay as they were before other precisions), else the separator
    and the precision's name."""
    return "" if precision == DEFAULT_PRECISION else f"{sep}{precision}"


def set_members(record):
    """A model-set record's member names (torch_set_peers.py), else None."""
    members = record.get("details", {}).get("model_set")
    return list(members) if isinstance(members, list) and members else None


def row_model(record):
    """The summary's model label: the model, or a set's NAMES:MODE spec."""
    if set_members(record) is None:
        return record["model"]
    details = record["details"]
    mode = details.get("input_mode")
    return details.get("set_spec") or (f"{record['model']}:{mode}" if mode else record["model"])


def is_set_row(row):
    return "set_members" in row


def select_rows(runs, profiles):
    """One summary row per (model, batch, precision, system), with speedups (against peers of
    the same precision) and the critical-path bound of that precision."""
    groups = {}
    for run in runs:
        key = (row_model(run), run["batch"], bench_record.precision_of(run), run["system"])
        groups.setdefault(key, []).append(run)
    bounds = {}
    for prof in sorted(profiles, key=lambda p: (bench_record.parse_date(p["date"]), p["_path"])):
        bounds[(prof["model"], prof["batch"], bench_record.precision_of(prof))] = prof
    rows = []
    for (model, batch, precision, system), group in groups.items():
        group.sort(key=lambda r: (bench_record.parse_date(r["date"]), r["_path"]))
        ok = [r for r in group if r["status"] == "ok"]
        chosen = ok[-1] if ok else group[-1]
        row = {"model": model, "batch": batch, "precision": precision, "system": system,
               "status": chosen["status"],
               "device": chosen["device"]["name"], "date": chosen["date"],
               "runs": len(group), "ok_runs": len(ok),
               "search_or_compile_s": chosen.get("search_or_compile_s"),
               "raw_file": os.path.basename(chosen["_path"])}
        if set_members(chosen) is not None:
            row["set_members"] = set_members(chosen)
            row["input_mode"] = chosen["details"].get("input_mode")
        if ok:
            stats = chosen["stats"]
            row.update({key: stats[key] for key in ("median_ms", "p90_ms", "p10_ms", "min_ms",
                                                    "max_ms", "std_ms")})
            row["samples"] = stats["count"]
            row["throughput_per_s"] = batch * 1e3 / stats["median_ms"]
            row["run_medians_ms"] = [r["stats"]["median_ms"] for r in ok]
        else:
            row["median_ms"] = row["p90_ms"] = None
            row["error"] = chosen.get("error", "")
        details = chosen.get("details", {})
        if details.get("baseline_kept"):
            row["note"] = details["baseline_kept_note"]
        elif details.get("sequential_kept"):  # records from before baselines were timed too
            row["note"] = details.get("sequential_kept_note") or (
                "the search kept the sequential schedule (its IOS schedule measured slower end "
                "to end), so this row replays the sequential schedule")
        for key in ("r", "s", "cache_hits", "stages_costed", "kept_strategy", "refined_from",
                    "refine_changes", "conv_objective"):
            if key in details:
                row[key] = details[key]
        if details.get("shared_stage_cache"):
            row["search_shared"] = True
            row["search_note"] = details["shared_stage_cache"]
        legs = earlier_search_legs(group, chosen)
        if legs and row["search_or_compile_s"] is not None:
            row["search_legs"] = len(legs) + 1
            row["search_total_s"] = sum(legs) + row["search_or_compile_s"]
        bound = None if is_set_row(row) else bounds.get((model, batch, precision))
        if bound:
            row["critical_path_ms"] = bound["critical_path_ms"]
            row["bound_commit"] = iostune_commit(bound)
            if ok and system.startswith(IOSTUNE_PREFIX):
                row["x_critical_path"] = row["median_ms"] / bound["critical_path_ms"]
        rows.append(row)
    add_not_run(rows, bounds)
    add_speedups(rows)
    rows.sort(key=lambda r: (order_key(PRECISION_ORDER, r["precision"]), r["batch"],
                             order_key(MODEL_ORDER, r["model"]),
                             order_key(SYSTEM_ORDER, r["system"])))
    return rows


def earlier_search_legs(group, chosen):
    """Seconds of each cut-off search leg this resumed search (--resume-db) continued from."""
    if "resumed" not in chosen.get("details", {}).get("shared_stage_cache", ""):
        return []
    legs = []
    for record in group:
        if record is chosen:
            break
        if record["status"] != "timeout" or not record["system"].startswith(IOSTUNE_PREFIX):
            continue
        seconds = record.get("search_or_compile_s")
        if seconds is None:  # records from before run_h100.sh kept a leg's time
            cut = re.search(r"cut off after (\d+(?:\.\d+)?) s", record.get("error", ""))
            seconds = float(cut.group(1)) if cut else None
        if seconds is not None:
            legs.append(seconds)
    return legs


def expected_pairs(rows, bounds):
    """(model, batch, precision) combinations the summary shows every expected system of:
    TF32's whole grid (every model at batch 1 and 16, and any batch measured); in the other
    precisions only (model, batch) pairs with a record of that precision, so precisions never
    measured do not fill the summary with 'not run' rows. Model sets are not part of it."""
    rows = [r for r in rows if not is_set_row(r)]
    tf32 = [r for r in rows if r["precision"] == DEFAULT_PRECISION]
    models = list(MODEL_ORDER) + sorted({r["model"] for r in tf32} - set(MODEL_ORDER))
    batches = sorted(set(EXPECTED_BATCHES) | {r["batch"] for r in tf32})
    pairs = {(m, b, DEFAULT_PRECISION) for m in models for b in batches}
    pairs |= {(r["model"], r["batch"], r["precision"]) for r in rows}
    pairs |= set(bounds)
    return sorted(pairs, key=lambda k: (order_key(PRECISION_ORDER, k[2]), k[1],
                                        order_key(MODEL_ORDER, k[0])))


def add_not_run(rows, bounds):
    """A 'not run' row for every expected (model, batch, precision, system) without a record."""
    have = {(r["model"], r["batch"], r["precision"], r["system"]) for r in rows}
    for model, batch, precision in expected_pairs(rows, bounds):
        for system in EXPECTED_SYSTEMS:
            if (model, batch, precision, system) in have:
                continue
            row = {"model": model, "batch": batch, "precision": precision, "system": system,
                   "status": NOT_RUN, "median_ms": None, "p90_ms": None, "device": None,
                   "date": None, "runs": 0, "ok_runs": 0, "search_or_compile_s": None}
            if (model, batch, precision) in bounds:
                row["critical_path_ms"] = bounds[(model, batch, precision)]["critical_path_ms"]
            rows.append(row)
    # A model set's peers that are missing where the set has some record at that batch and
    # precision.
    sets = {(r["model"], r["batch"], r["precision"]): r for r in rows if is_set_row(r)}
    for (model, batch, precision), some in sorted(sets.items()):
        for system in EXPECTED_SET_SYSTEMS:
            if (model, batch, precision, system) in have:
                continue
            rows.append({"model": model, "batch": batch, "precision": precision,
                         "system": system, "status": NOT_RUN, "median_ms": None,
                         "p90_ms": None, "device": None, "date": None, "runs": 0, "ok_runs": 0,
                         "search_or_compile_s": None, "set_members": some["set_members"],
                         "input_mode": some["input_mode"]})


def add_speedups(rows):
    """Speedup against the fastest peer of the same precision: an fp16 iostune row is compared
    with PyTorch in fp16, never with a TF32 peer (nor the other way round)."""
    best = {}
    for row in rows:
        if row["system"].startswith(PEER_PREFIX) and row["median_ms"] is not None:
            key = (row["model"], row["batch"], row["precision"])
            if key not in best or row["median_ms"] < best[key]["median_ms"]:
                best[key] = row
    for row in rows:
        peer = best.get((row["model"], row["batch"], row["precision"]))
        if peer and row["median_ms"] is not None:
            row["best_peer"] = peer["system"]
            row["speedup_vs_best_peer"] = peer["median_ms"] / row["median_ms"]


def goal_checks(rows):
    """The fastest IOS row of each multi-branch (model, batch, precision) against the issue's
    goal and the best peer of that precision."""
    checks = []
    keys = sorted({(r["model"], r["batch"], r["precision"]) for r in rows if r["batch"] in GOALS
                   and r["model"] not in CONTROL_MODELS and not is_set_row(r)},
                  key=lambda k: (order_key(PRECISION_ORDER, k[2]), k[1],
                                 order_key(MODEL_ORDER, k[0])))
    for model, batch, precision in keys:
        mine = [r for r in rows if r["model"] == model and r["batch"] == batch
                and r["precision"] == precision and r["median_ms"] is not None]
        ios = [r for r in mine if r["system"] in IOS_SYSTEMS]
        peers = [r for r in mine if r["system"].startswith(PEER_PREFIX)]
        goal = GOALS[batch]
        check = {"model": model, "batch": batch, "precision": precision, "goal": goal,
                 "system": None, "speedup": None, "best_peer": None}
        if not ios or not peers:
            check["status"] = "no data" if not ios and not peers else (
                "no IOS row" if not ios else "no peer row")
            checks.append(check)
            continue
        best = min(ios, key=lambda r: r["median_ms"])
        peer = min(peers, key=lambda r: r["median_ms"])
        check.update({"system": best["system"], "median_ms": best["median_ms"],
                      "best_peer": peer["system"], "best_peer_ms": peer["median_ms"],
                      "speedup": peer["median_ms"] / best["median_ms"]})
        if check["speedup"] >= goal:
            check["status"] = "met"
        else:
            check["status"] = "short"
            check["needed_ms"] = peer["median_ms"] / goal
            check["short_by_ms"] = best["median_ms"] - check["needed_ms"]
            check["short_by_factor"] = goal / check["speedup"]
        checks.append(check)
    return checks


def search_checks(rows):
    """The searched schedule of each (model, batch, precision) against its critical-path bound
    and the fastest baseline row of the same key (issue 25's targets)."""
    checks = []
    for row in rows:
        if row["system"] != SEARCH_SYSTEM or row["median_ms"] is None or is_set_row(row):
            continue
        key = (row["model"], row["batch"], row["precision"])
        baselines = [r for r in rows if (r["model"], r["batch"], r["precision"]) == key
                     and r["system"] in BASELINE_SYSTEMS and r["median_ms"] is not None]
        check = {"model": row["model"], "batch": row["batch"], "precision": row["precision"],
                 "median_ms": row["median_ms"], "x_critical_path": row.get("x_critical_path"),
                 "kept_strategy": row.get("kept_strategy"),
                 "unchanged_baseline": unchanged_baseline(row),
                 "search_kernels": search_kernels(row),
                 "unchanged_row": unchanged_row(row)}
        if check["x_critical_path"] is not None:
            check["within_bound_target"] = check["x_critical_path"] <= BOUND_TARGET
        if baselines:
            best = min(baselines, key=lambda r: r["median_ms"])
            check.update({"best_baseline": best["system"], "best_baseline_ms": best["median_ms"],
                          "vs_best_baseline": row["median_ms"] / best["median_ms"] - 1})
        checks.append(check)
    return checks


def set_checks(rows):
    """Each model set's co-scheduled row against its members' best schedules back to back
    (iostune's own rows of the set), with issue 25's target."""
    medians = {}
    for r in rows:
        if is_set_row(r) and r["median_ms"] is not None:
            medians[(r["model"], r["batch"], r["precision"], r["system"])] = r["median_ms"]
    checks = []
    for (model, batch, precision, system), co in sorted(medians.items()):
        b2b = medians.get((model, batch, precision, "iostune-back-to-back"))
        if system != "iostune-coscheduled" or b2b is None:
            continue
        checks.append({"set": model, "batch": batch, "precision": precision,
                       "coscheduled_ms": co, "back_to_back_ms": b2b, "speedup": b2b / co,
                       "met": b2b / co >= SET_TARGET})
    return checks


def set_check_table(checks):
    """The markdown section of set_checks: a row per set, then the count."""
    if not checks:
        return []
    lines = ["## Model sets against back to back (issue 25)", "",
             f"Each set co-scheduled by the search against its members' own best schedules one "
             f"after another (`iostune-back-to-back`); target {SET_TARGET:.1f}x.", "",
             "| set | batch | precision | co-scheduled ms | back to back ms | speedup | target |",
             "|---|---|---|---|---|---|---|"]
    for c in checks:
        lines.append(f"| {c['set']} | {c['batch']} | {c['precision']} | "
                     f"{fmt_ms(c['coscheduled_ms'])} | {fmt_ms(c['back_to_back_ms'])} | "
                     f"{fmt_x(c['speedup'])} | {'met' if c['met'] else 'not met'} |")
    lines += ["", f"At least {SET_TARGET:.1f}x over back to back: "
              f"{sum(c['met'] for c in checks)} of {len(checks)} sets.", ""]
    return lines


def unchanged_baseline(row):
    """The baseline whose schedule the search stored unchanged under its own name (its
    refinement started there and kept no change), or None. Records from before 2026-11-28 do not
    say where the refinement started: None."""
    start, changes = row.get("refined_from"), row.get("refine_changes")
    if not start or changes != 0:
        return None
    name = start.split(" ")[0]  # "nimble (dataflow)" -> "nimble"
    return name if name in BASELINE_NAMES else None


def search_kernels(row):
    """How the search chose the stored schedule's convolution kernels where that differs from a
    baseline row's (which replays on the kernels chosen to run alone): "corun" or "mixed"
    (kernel moves kept), else None (alone, or a record from before 2026-11-30 that does not
    say)."""
    objective = row.get("conv_objective")
    return objective if objective in ("corun", "mixed") else None


def unchanged_row(row):
    """The baseline row whose schedule, form and kernels included, the search stored unchanged
    (e.g. iostune-greedy-dataflow), or None: that row and the searched one replay one schedule."""
    name = unchanged_baseline(row)
    if name is None or search_kernels(row):
        return None
    form = row["refined_from"].split(" ", 1)[1:]  # "nimble (dataflow)" -> ["(dataflow)"]
    suffix = {"(dataflow)": "-dataflow", "(staged)": ""}.get(form[0] if form else None)
    return None if suffix is None else f"iostune-{name}{suffix}"


def own_schedule(check):
    """Whether the DB's best is the search's own schedule: stored under the search's strategy,
    and not a baseline's schedule it kept unchanged."""
    return check["kept_strategy"].startswith("ios") and not check.get("unchanged_baseline")


def baseline_streams_own_kernels(check):
    """Whether the DB's best keeps a baseline's streams unchanged on kernels the search chose
    (co-run, or switched by kernel moves): not the baseline row's schedule, nor the search's
    own streams. A baseline the final contest kept runs on the searched row's kernels too."""
    kept = check["kept_strategy"]
    keeps_streams = (bool(check.get("unchanged_baseline")) if kept.startswith("ios")
                     else kept in BASELINE_NAMES)
    return keeps_streams and bool(check.get("search_kernels"))


def own_schedule_counts(kept):
    """The count line's part on the DB's best: the search's own streams, then those that keep a
    baseline's streams on the search's kernels."""
    own = sum(own_schedule(c) for c in kept)
    kernels = sum(baseline_streams_own_kernels(c) for c in kept)
    text = f"the DB kept the search's own schedule: {own} of {len(kept)}"
    if kernels:
        text += (f" ({own + kernels} of {len(kept)} counting its kernel choices: {kernels} "
                 f"{'keeps' if kernels == 1 else 'keep'} a baseline's streams on kernels the "
                 "search chose)")
    return text


def search_table(checks):
    """The markdown section of search_checks: a row per key, then the counts."""
    if not checks:
        return []
    lines = ["## The search against its bound and the baselines (issue 25)", "",
             f"`{SEARCH_SYSTEM}` (the searched schedule) of each key against its critical-path "
             f"bound (target {BOUND_TARGET:.2f}x) and the fastest baseline row of the same key "
             "(sequential, greedy or nimble, either form, each replayed in a process of its own); "
             "`kept` is what the search stored as the DB's best (with a baseline's name when "
             "the refinement started from that baseline's schedule and changed nothing; its "
             "kernels are the baseline row's unless the search chose them to co-run or switched "
             "them by kernel moves, which is said).", "",
             "| model | batch | precision | searched ms | x bound | best baseline | vs it | kept |",
             "|---|---|---|---|---|---|---|---|"]
    for c in checks:
        vs = c.get("vs_best_baseline")
        lines.append(f"| {c['model']} | {c['batch']} | {c['precision']} | "
                     f"{fmt_ms(c['median_ms'])} | {fmt_x(c['x_critical_path'])} | "
                     + (f"{c['best_baseline']} {fmt_ms(c['best_baseline_ms'])} | {100 * vs:+.1f}%"
                        if vs is not None else "- | -")
                     + f" | {kept_label(c)} |")
    bounded = [c for c in checks if "within_bound_target" in c]
    compared = [c for c in checks if "vs_best_baseline" in c]
    kept = [c for c in checks if c.get("kept_strategy")]
    lines += ["", f"Within {BOUND_TARGET:.2f}x of the bound: "
              f"{sum(c['within_bound_target'] for c in bounded)} of {len(bounded)} keys; no "
              f"slower than its fastest baseline: "
              f"{sum(c['vs_best_baseline'] <= 0 for c in compared)} of {len(compared)}"
              f"{same_schedule_note(compared)}; {own_schedule_counts(kept)}.", ""]
    return lines


def same_schedule_note(compared):
    """Of the keys slower than their fastest baseline row, those where that row replays the
    very schedule the search stored: their difference is two processes' timings of one
    schedule."""
    same = sum(c["vs_best_baseline"] > 0 and c.get("unchanged_row") == c["best_baseline"]
               for c in compared)
    return (f" ({same} of the others {'is' if same == 1 else 'are'} that row's own schedule, "
            "replayed in two processes)") if same else ""


def kept_label(check):
    """The table's `kept` cell: the stored strategy, and the baseline whose schedule (or
    streams, on kernels the search chose) it is."""
    kept = check.get("kept_strategy") or "-"
    baseline = check.get("unchanged_baseline")
    kernels = {"corun": "chosen to co-run", "mixed": "switched by kernel moves"}.get(
        check.get("search_kernels"))
    if kept in BASELINE_NAMES:  # kept by the final contest, on the searched row's kernels
        return f"{kept} (on kernels {kernels})" if kernels else kept
    if not baseline or kept == baseline:
        return kept
    if kernels:
        return f"{kept} ({baseline}'s streams, unchanged, on kernels {kernels})"
    return f"{kept} ({baseline}'s schedule, unchanged)"


def provenance(runs, profiles):
    versions, software, dates = {}, {}, []
    for rec in runs + profiles:
        dev = rec["device"]
        seen = versions.setdefault(dev["name"], {})
        for key in ("driver", "cuda_driver", "cuda", "cudnn"):
            if dev.get(key) not in (None, "", "unknown"):
                seen.setdefault(key, set()).add(str(dev[key]))
        for key, value in rec["software"].items():
            software.setdefault(key, set()).add(str(value))
        dates.append(rec["date"])
    # Every value seen, not the last record's: records from different writers may disagree (older
    # iostune records put the CUDA driver API version, e.g. 13.0, under "driver").
    devices = {name: "; ".join(f"{key} {', '.join(sorted(values))}"
                               for key, values in seen.items())
               for name, seen in versions.items()}
    return {"devices": devices, "software": {k: sorted(v) for k, v in software.items()},
            "first_date": min(dates) if dates else None, "last_date": max(dates) if dates else None}


def fmt_ms(value):
    return "-" if value is None else f"{value:.3f}"


def fmt_x(value):
    return "-" if value is None else f"{value:.2f}x"


def binary_share(rows, main_commit):
    """How far the summary is from one binary: its measured iostune rows, how many the main
    binary wrote, and how many each other binary did."""
    measured = [r for r in rows if r.get("raw_file") and r["system"].startswith("iostune")]
    others = {}
    for r in measured:
        if r.get("other_binary"):
            others[r["other_binary"]] = others.get(r["other_binary"], 0) + 1
    main = len(measured) - sum(others.values())
    text = f"Of the {len(measured)} measured iostune rows, {main} come from {main_commit}"
    if others:
        text += "; the others from " + ", ".join(
            f"{c} ({n})" for c, n in sorted(others.items(), key=lambda kv: (-kv[1], kv[0])))
    return text + "."


def markdown(rows, checks, prov, since=None, main_commit=None, searched=(), sets_checked=()):
    lines = ["# Benchmark summary", "",
             "Generated by `scripts/bench/summarize.py` from the raw records in `results/raw/` "
             "(see `results/README.md`). Latency is the median of event-timed runs; each row is "
             "the latest successful run of its (model, batch, system); `speedup` is the best "
             "PyTorch peer's median over this row's median; `x bound` is the median over the "
             "critical-path bound (each operator's isolated kernel time summed along the longest "
             "dependency path). `(shared)` marks a search that reused stage measurements of "
             "an earlier strategy's search of the same (model, batch) from a shared DB, so its "
             "time is not a from-scratch cost. `in N legs`: a search cut off at a device call's "
             "deadline and resumed from its DB in the next call; the time is the sum of the "
             "legs. `not run`: no record of that row exists.", ""]
    if since or main_commit:
        lines += [(f"Records measured since {since} only" if since else "Every record")
                  + (f"; the binary is iostune commit {main_commit}: a row or bound written by "
                     "another binary names its commit beside it" if main_commit else "")
                  + ". An iostune row faster than its critical-path bound is marked BELOW BOUND "
                  "(the bound cannot be beaten: such a row is a bug to find).", ""]
    if main_commit:
        lines += [binary_share(rows, main_commit), ""]
    others = sorted({r["precision"] for r in rows} - {DEFAULT_PRECISION},
                    key=lambda p: order_key(PRECISION_ORDER, p))
    if others:
        lines += ["Tables go by batch and precision. Unmarked tables are TF32 (fp32 storage, TF32 "
                  "math on both sides); a table marked "
                  + (" or ".join(others) if len(others) < 3 else
                     ", ".join(others[:-1]) + " or " + others[-1]) + " has iostune run "
                  "with `--precision` of that name and the PyTorch peers in it (fp16, bf16: "
                  "16-bit storage, NHWC on iostune's side and channels-last tensors on "
                  "PyTorch's; fp32: TF32 off). Speedups and goal checks compare rows of one "
                  "precision only.", ""]
    set_rows = [r for r in rows if is_set_row(r)]
    if set_rows:
        lines += ["Model sets (`torch_set_peers.py`, issue 15) have tables of their own: several "
                  "models run together as one request, labelled by their members and input mode "
                  "(`shared`: every member reads one input; `separate`: each its own). One sample "
                  "runs every member once; `speedup` compares a set's rows with the best peer of "
                  "the same set. `torch-cudagraph-back-to-back` replays one CUDA Graph per "
                  "member on one stream, `torch-cudagraph-streams` the same graphs each on its "
                  "own stream, `torch-compile` compiles one module calling every member.", ""]
    rows = [r for r in rows if not is_set_row(r)]
    for name, versions in prov["devices"].items():
        lines.append(f"- device: {name}" + (f" ({versions})" if versions else ""))
    for key, values in prov["software"].items():
        lines.append(f"- {key}: {', '.join(values)}")
    if prov["first_date"]:
        lines.append(f"- measured: {prov['first_date']} .. {prov['last_date']}")
    lines.append("")
    tables = sorted({(r["precision"], r["batch"]) for r in rows},
                    key=lambda k: (order_key(PRECISION_ORDER, k[0]), k[1]))
    for precision, batch in tables:
        batch_rows = [r for r in rows if r["batch"] == batch and r["precision"] == precision]
        with_bound = any("critical_path_ms" in r for r in batch_rows)
        header = ["model", "system", "median ms", "p90 ms", "p10-p90 ms", "speedup vs best peer"]
        if with_bound:
            header += ["critical path ms", "x bound"]
        header += ["search/compile s", "runs"]
        lines += [f"## Batch {batch}{precision_label(precision, ', ')}", "",
                  "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        models = sorted({r["model"] for r in batch_rows}, key=lambda m: order_key(MODEL_ORDER, m))
        for model in models:
            model_rows = [r for r in batch_rows if r["model"] == model]
            if all(r["status"] == NOT_RUN for r in model_rows):
                cells = [model, "all systems", NOT_RUN] + ["-"] * (len(header) - 3)
                lines.append("| " + " | ".join(cells) + " |")
                continue
            lines += [table_row(r, with_bound) for r in model_rows]
        lines.append("")
    lines += set_tables(set_rows)
    for precision in sorted({c["precision"] for c in checks},
                            key=lambda p: order_key(PRECISION_ORDER, p)):
        title = ("## Goal: the fastest IOS schedule against the best peer (multi-branch models)"
                 if precision == DEFAULT_PRECISION else
                 f"## Goal, {precision}: the fastest {precision} IOS schedule against the best "
                 f"{precision} peer (multi-branch models)")
        lines += [title, "", "| model | batch | IOS row | best peer | speedup | goal | status |",
                  "|---|---|---|---|---|---|---|"]
        for c in (c for c in checks if c["precision"] == precision):
            status = c["status"]
            if status == "short":
                status = (f"short by {c['short_by_factor']:.2f}x: needs {c['needed_ms']:.3f} ms, "
                          f"is {c['short_by_ms']:.3f} ms slower than that")
            lines.append(f"| {c['model']} | {c['batch']} | {c.get('system') or '-'} | "
                         f"{c.get('best_peer') or '-'} | {fmt_x(c['speedup'])} | "
                         f"{c['goal']:.1f}x | {status} |")
        lines.append("")
    lines += search_table(searched)
    lines += set_check_table(sets_checked)
    rows = rows + set_rows  # notes and failures list both
    noted = [r for r in rows if r.get("note")]
    if noted:
        lines += ["## Notes", ""]
        lines += [f"- {r['model']} batch {r['batch']}{precision_label(r['precision'], ' ')} "
                  f"{r['system']}: {r['note']}" for r in noted]
        lines.append("")
    failed = [r for r in rows if r["median_ms"] is None and r["status"] != NOT_RUN]
    if failed:
        lines += ["## Rows without a successful run", ""]
        for r in failed:
            lines.append(f"- {r['model']} batch {r['batch']}{precision_label(r['precision'], ' ')} "
                         f"{r['system']}: {r['status']}: "
                         f"{r['error'].strip().splitlines()[-1] if r['error'].strip() else ''}")
        lines.append("")
    return "\n".join(lines)


def set_tables(set_rows):
    """One markdown table of model sets per batch and precision."""
    lines = []
    tables = sorted({(r["precision"], r["batch"]) for r in set_rows},
                    key=lambda k: (order_key(PRECISION_ORDER, k[0]), k[1]))
    header = ["set", "system", "median ms", "p90 ms", "p10-p90 ms", "speedup vs best peer",
              "search/compile s", "runs"]
    for precision, batch in tables:
        lines += [f"## Model sets, batch {batch}{precision_label(precision, ', ')}", "",
                  "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += [table_row(r, False) for r in set_rows
                  if r["batch"] == batch and r["precision"] == precision]
        lines.append("")
    return lines


def table_row(r, with_bound):
    """One markdown table line of a summary row."""
    if r["median_ms"] is None:
        cells = [r["model"], r["system"], r["status"], "-", "-", "-"]
    else:
        cells = [r["model"], r["system"], fmt_ms(r["median_ms"]), fmt_ms(r["p90_ms"]),
                 f"{r['p10_ms']:.3f}-{r['p90_ms']:.3f}", fmt_x(r.get("speedup_vs_best_peer"))]
    if with_bound:
        bound = fmt_ms(r.get("critical_path_ms"))
        if r.get("bound_other_binary"):
            bound += f" (binary {r['bound_other_binary']})"
        x_bound = fmt_x(r.get("x_critical_path"))
        if r.get("below_bound"):
            x_bound += " BELOW BOUND (a bug)"
        cells += [bound, x_bound]
    if r.get("other_binary"):
        cells[1] += f" (binary {r['other_binary']})"
    cost = r.get("search_or_compile_s")
    cost_text = "-" if cost is None else f"{cost:.1f}"
    if r.get("search_legs"):
        cost_text = f"{r['search_total_s']:.1f} in {r['search_legs']} legs"
    if r.get("search_shared"):
        cost_text += " (shared)"
    if "r" in r and r["system"] in IOS_SYSTEMS:
        cost_text += f" r={r['r']}"
    cells += [cost_text, f"{r['ok_runs']}/{r['runs']}"]
    return "| " + " | ".join(cells) + " |"


def plot(rows, path):
    """IOS paper Figure 7 style: grouped bars per model, throughput normalised to the best
    system of that model, one panel per batch and precision. Returns why no plot was written,
    or None."""
    ok = [r for r in rows if r["median_ms"] is not None and not is_set_row(r)]
    if not ok:
        return "no successful rows to plot"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (apt-get install python3-matplotlib)"
    panels = sorted({(r["precision"], r["batch"]) for r in ok},
                    key=lambda k: (order_key(PRECISION_ORDER, k[0]), k[1]))
    systems = sorted({r["system"] for r in ok}, key=lambda s: order_key(SYSTEM_ORDER, s))
    others = plt.get_cmap("tab10")
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(8, 1.6 * len(MODEL_ORDER)),
                                                       3.6 * max(1, len(panels))), squeeze=False)
    width = 0.8 / max(1, len(systems))
    for ax, (precision, batch) in zip(axes[:, 0], panels):
        batch_rows = [r for r in ok if r["batch"] == batch and r["precision"] == precision]
        models = sorted({r["model"] for r in batch_rows}, key=lambda m: order_key(MODEL_ORDER, m))
        best = {m: max(r["throughput_per_s"] for r in batch_rows if r["model"] == m)
                for m in models}
        for i, system in enumerate(systems):
            xs, hs = [], []
            for j, model in enumerate(models):
                match = [r for r in batch_rows if r["model"] == model and r["system"] == system]
                if match:
                    xs.append(j - 0.4 + width * (i + 0.5))
                    hs.append(match[0]["throughput_per_s"] / best[model])
            base = system[:-len("-ir")] if system.endswith("-ir") else system
            ax.bar(xs, hs, width, label=system, color=SYSTEM_COLOURS.get(base, others(i % 10)),
                   hatch=".." if base != system else None, edgecolor="black", linewidth=0.3)
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("normalised throughput")
        ax.set_title(f"batch {batch}{precision_label(precision, ', ')}")
        ax.grid(axis="y", alpha=0.3)
    # Every panel's systems (a later panel may have systems the first lacks, e.g. an fp16 panel
    # without opara), each from a panel where it has bars: an empty bar set has no colour.
    legend = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in legend or (len(handle) and not len(legend[label])):
                legend[label] = handle
    labels = sorted(legend, key=lambda s: order_key(SYSTEM_ORDER, s))
    handles = [legend[label] for label in labels]
    fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 5), fontsize=8,
               bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.05 * ((len(labels) + 4) // 5) / len(panels)))
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return None


def iostune_commit(record):
    """The commit of the iostune binary that wrote a record ("6660c5cc8913"), or None."""
    version = record.get("software", {}).get("iostune", "")
    start = version.find("commit ")
    return version[start + 7:].split(",")[0].strip() if start >= 0 else None


def mark_binaries(rows, runs, profiles):
    """The summary should come from one binary: the commit most of its shown iostune rows
    name (counting the rows, not every record, so that a session which re-measured most rows
    names its binary even when an earlier session left more records behind; the records'
    commits decide only where no row names one). A row (or the bound beside it) written by
    another binary is marked so; an iostune row faster than its critical-path bound is marked
    as the bug it is (the bound sums isolated kernel times along the longest path: nothing
    runs faster)."""
    by_file = {os.path.basename(r["_path"]): r for r in runs}
    row_commit = {}
    for i, row in enumerate(rows):
        rec = by_file.get(row.get("raw_file"))
        row_commit[i] = iostune_commit(rec) if rec else None
    commits = [c for c in row_commit.values() if c]
    commits = commits or [c for c in (iostune_commit(r) for r in runs + profiles) if c]
    if not commits:
        return None
    main_commit = max(set(commits), key=commits.count)
    for i, row in enumerate(rows):
        commit = row_commit[i]
        if commit and commit != main_commit:
            row["other_binary"] = commit
        bound_commit = row.get("bound_commit")
        if bound_commit and bound_commit != main_commit:
            row["bound_other_binary"] = bound_commit
        if row.get("x_critical_path") is not None and row["x_critical_path"] < 1.0:
            row["below_bound"] = True
    return main_commit


def summarize(raw_dir, out_dir, make_plot=True, since=None):
    runs, profiles = bench_record.load_records(raw_dir)
    if since:
        # One session's records: those measured at or after `since` (an ISO date or time).
        runs = [r for r in runs if r["date"] >= since]
        profiles = [p for p in profiles if p["date"] >= since]
    if not runs:
        raise bench_record.RecordError(f"{raw_dir}: no run records under {raw_dir}/runs"
                                       + (f" since {since}" if since else "")
                                       + "; fetch the raw files from the GPU machine first")
    rows = select_rows(runs, profiles)
    main_commit = mark_binaries(rows, runs, profiles)
    checks = goal_checks(rows)
    searched = search_checks(rows)
    sets_checked = set_checks(rows)
    prov = provenance(runs, profiles)
    os.makedirs(out_dir, exist_ok=True)
    summary = {"schema": SUMMARY_SCHEMA, "generated": bench_record.utc_now(),
               "selection": "latest successful run per (model, batch, precision, system)",
               "provenance": prov, "since": since, "binary": main_commit,
               "rows": rows, "goals": checks, "search_checks": searched,
               "set_checks": sets_checked}
    with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    with open(os.path.join(out_dir, "summary.md"), "w", encoding="utf-8") as f:
        f.write(markdown(rows, checks, prov, since, main_commit, searched, sets_checked))
    plotted = False
    if make_plot:
        png = os.path.join(out_dir, "throughput.png")
        why_not = plot(rows, png)
        plotted = why_not is None
        if why_not:
            # An older plot would no longer match the tables next to it.
            if os.path.exists(png):
                os.remove(png)
            print(f"summarize: warning: throughput.png not written: {why_not}", file=sys.stderr)
    return summary, plotted


# ---------------------------------------------------------------------------------------------
# Self-test on synthetic records

def synthetic_samples(median):
    """21 samples with exactly this median, p10 = 0.92x and p90 = 1.08x of it."""
    return [median * (1 + 0.01 * k) for k in range(-10, 11)]


def write_synthetic(raw):
    device = {"name": "Synthetic GPU", "driver": "1.0", "cuda": "13.0", "cudnn": "9.19.0"}
    medians = {  # (model, batch, system) -> median ms of the latest run
        ("googlenet", 1, "torch-eager"): 4.0, ("googlenet", 1, "torch-cudagraph"): 2.0,
        ("googlenet", 1, "iostune-sequential"): 1.8, ("googlenet", 1, "iostune-ios-both"): 1.0,
        ("googlenet", 1, "iostune-ios-parallel"): 0.9,
        ("googlenet", 16, "torch-cudagraph"): 6.0, ("googlenet", 16, "iostune-ios-both"): 5.5,
        ("resnet50", 1, "torch-eager"): 5.0, ("resnet50", 1, "iostune-ios-both"): 2.5,
    }
    for (model, batch, system), median in medians.items():
        software = {"torch": "2.11"} if system.startswith(PEER_PREFIX) else {"iostune": "0.1"}
        rec = bench_record.make_run(model, batch, system, command=f"synthetic {system}",
                                    device=device, software=software,
                                    samples_ms=synthetic_samples(median),
                                    search_or_compile_s=12.5 if "ios" in system else None,
                                    details={"sequential_kept": model == "resnet50" and "ios" in system,
                                             **({"shared_stage_cache": "shared stage cache",
                                                 "r": 3} if system.endswith("parallel") else {}),
                                             **({"conv_objective": "mixed"}
                                                if system.endswith("ios-both") else {})},
                                    date="2025-02-01T10:00:00Z")
        bench_record.write_record(raw, rec)
    # An older repeat of one row (must not be chosen) and a newer failed one (must not win).
    older = bench_record.make_run("googlenet", 1, "iostune-ios-both", command="synthetic old",
                                  device=device, software={"iostune": "0.0"},
                                  samples_ms=synthetic_samples(9.0), date="2025-01-01T10:00:00Z")
    bench_record.write_record(raw, older)
    newer_failed = bench_record.make_run("googlenet", 1, "iostune-ios-both", command="synthetic",
                                         device=device, software={"iostune": "0.1"},
                                         status="failed", error="replay crashed",
                                         date="2025-03-01T10:00:00Z")
    bench_record.write_record(raw, newer_failed)
    timeout = bench_record.make_run("googlenet", 1, "torch-compile", command="synthetic compile",
                                    device=device, software={"torch": "2.11"}, status="timeout",
                                    error="torch.compile row exceeded its budget of 300 s",
                                    date="2025-02-01T10:00:00Z")
    bench_record.write_record(raw, timeout)
    # A search cut off at a call's deadline (one legacy record without its time), then resumed.
    for date, seconds in (("2025-02-01T11:00:00Z", None), ("2025-02-01T12:00:00Z", 40.0)):
        leg = bench_record.make_run("googlenet", 16, "iostune-ios-merge", command="synthetic leg",
                                    device=device, software={"iostune": "0.1"}, status="timeout",
                                    error="search cut off after 30 s (--search-timeout / "
                                    "--deadline)", search_or_compile_s=seconds, date=date)
        bench_record.write_record(raw, leg)
    resumed = bench_record.make_run("googlenet", 16, "iostune-ios-merge", command="synthetic",
                                    device=device, software={"iostune": "0.1"},
                                    samples_ms=synthetic_samples(5.8), search_or_compile_s=5.5,
                                    details={"shared_stage_cache": "shared stage cache "
                                             "(ios-both resumed)", "r": 1},
                                    date="2025-02-01T13:00:00Z")
    bench_record.write_record(raw, resumed)
    for batch, bound in ((1, 0.8), (16, 5.0)):
        prof = bench_record.make_profile("googlenet", batch, command="synthetic profile",
                                         device=device, software={"iostune": "0.1"},
                                         critical_path_ms=bound, op_sum_ms=bound * 3,
                                         date="2025-02-01T09:00:00Z")
        bench_record.write_record(raw, prof)
    write_synthetic_fp16(raw, device)
    # Records from before the precision field was a name: the object {"storage", "math"} and
    # no field at all are both TF32.
    for system, median, old in (("torch-eager", 3.0, {"storage": "fp32", "math": "tf32"}),
                                ("iostune-sequential", 2.5, None)):
        rec = bench_record.make_run("squeezenet1_1", 1, system, command="synthetic legacy",
                                    device=device, software={"iostune": "0.0"},
                                    samples_ms=synthetic_samples(median),
                                    date="2024-12-01T10:00:00Z")
        if old is None:
            del rec["precision"]
        else:
            rec["precision"] = old
        del rec["numerics"]
        bench_record.write_record(raw, rec)


def write_synthetic_fp16(raw, device):
    """googlenet b1 in fp16, faster than TF32 on both sides: its iostune rows must be compared
    with the fp16 peers only (and the TF32 rows with the TF32 peers only)."""
    medians = {"torch-cudagraph": 1.2, "torch-compile": 1.0, "iostune-sequential": 0.8,
               "iostune-ios-both": 0.5}
    for system, median in medians.items():
        software = {"torch": "2.11"} if system.startswith(PEER_PREFIX) else {"iostune": "0.1"}
        rec = bench_record.make_run("googlenet", 1, system, command=f"synthetic fp16 {system}",
                                    device=device, software=software, precision="fp16",
                                    samples_ms=synthetic_samples(median),
                                    details={"layout": "nhwc", "native_io": True},
                                    date="2025-02-02T10:00:00Z")
        bench_record.write_record(raw, rec)
    failed = bench_record.make_run("googlenet", 1, "iostune-opara", command="synthetic fp16",
                                   device=device, software={"iostune": "0.1"}, precision="fp16",
                                   status="failed", error="opara: no fp16 kernel",
                                   date="2025-02-02T10:00:00Z")
    bench_record.write_record(raw, failed)
    prof = bench_record.make_profile("googlenet", 1, command="synthetic fp16 profile",
                                     device=device, software={"iostune": "0.1"},
                                     critical_path_ms=0.4, op_sum_ms=1.2, precision="fp16",
                                     layout="nhwc", date="2025-02-02T09:00:00Z")
    bench_record.write_record(raw, prof)


def write_synthetic_sets(raw):
    """Model-set records (torch_set_peers.py): the same members with a shared and with separate
    inputs, a batch no single model has (8), and an fp16 set whose compile timed out. Device,
    software and dates as the single-model records', so the provenance lines stay as they were."""
    device = {"name": "Synthetic GPU", "driver": "1.0", "cuda": "13.0", "cudnn": "9.19.0"}
    sets = {("resnet50+resnet50", "shared", 1, "tf32"): {"torch-cudagraph-back-to-back": 4.0,
                                                         "torch-cudagraph-streams": 3.0,
                                                         "torch-compile": 3.5},
            ("resnet50+resnet50", "separate", 8, "tf32"): {"torch-cudagraph-back-to-back": 4.2},
            ("inception_v3+googlenet", "separate", 16, "fp16"): {"torch-cudagraph-streams": 8.0,
                                                                 "torch-compile": None}}
    for (model, mode, batch, precision), systems in sets.items():
        details = {"model_set": model.split("+"), "input_mode": mode,
                   "set_spec": f"{model}:{mode}"}
        for system, median in systems.items():
            kwargs = ({"samples_ms": synthetic_samples(median)} if median else
                      {"status": "timeout", "error": "torch.compile row exceeded its budget"})
            rec = bench_record.make_run(model, batch, system, command=f"synthetic set {system}",
                                        device=device, software={"torch": "2.11"},
                                        precision=precision, details=details,
                                        search_or_compile_s=60.0 if system == "torch-compile"
                                        and median else None, date="2025-02-01T10:00:00Z",
                                        **kwargs)
            bench_record.write_record(raw, rec)


def without_set_parts(md):
    """The summary's markdown less what model sets add: their paragraph, tables and lines."""
    kept, in_set_table = [], False
    for line in md.split("\n"):
        if line.startswith("## "):
            in_set_table = line.startswith("## Model sets")
        if in_set_table or line.startswith("Model sets (`torch_set_peers.py`") or (
                line.startswith("- ") and (":shared " in line or ":separate " in line)):
            continue
        kept.append(line)
    return re.sub(r"\n\n\n+", "\n\n", "\n".join(kept))


def self_test():
    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    def close(a, b):
        return a is not None and abs(a - b) < 1e-9 * max(1.0, abs(b))

    tmp = tempfile.mkdtemp(prefix="iostune-summarize-")
    try:
        raw, out = os.path.join(tmp, "raw"), os.path.join(tmp, "out")
        write_synthetic(raw)
        summary, plotted = summarize(raw, out)
        check(all(isinstance(r.get("precision"), str) for r in summary["rows"]),
              "every summary row carries its precision")
        by_precision = {(r["model"], r["batch"], r["precision"], r["system"]): r
                        for r in summary["rows"]}
        check(len(by_precision) == len(summary["rows"]), "one row per (model, batch, precision, "
              "system)")
        rows = {(m, b, sy): r for (m, b, p, sy), r in by_precision.items() if p == "tf32"}
        fp16 = {(m, b, sy): r for (m, b, p, sy), r in by_precision.items() if p == "fp16"}
        measured = [r for r in rows.values() if r["status"] != NOT_RUN]
        check(len(measured) == 13, f"expected 13 TF32 rows with records, got {len(measured)}")
        check(len(rows) == len(MODEL_ORDER) * 2 * len(EXPECTED_SYSTEMS),
              "every expected (model, batch, system) has a row, 'not run' if nothing was recorded")
        check(rows.get(("inception_v3", 16, "torch-eager"), {}).get("status") == NOT_RUN,
              "a missing row is 'not run'")
        ios = rows.get(("googlenet", 1, "iostune-ios-both"), {})
        check(close(ios.get("median_ms"), 1.0), "latest successful run chosen (median 1.0 ms)")
        check(close(ios.get("p90_ms"), 1.08) and close(ios.get("p10_ms"), 0.92),
              "p90/p10 recomputed from samples")
        check(ios.get("runs") == 3 and ios.get("ok_runs") == 2, "run counts 2 ok of 3")
        check(ios.get("run_medians_ms") == [9.0, 1.0], "all successful medians listed, oldest first")
        check(close(ios.get("speedup_vs_best_peer"), 2.0) and
              ios.get("best_peer") == "torch-cudagraph", "speedup vs best peer (cudagraph) 2.0x")
        check(close(ios.get("x_critical_path"), 1.25), "x critical path = 1.0 / 0.8")
        check(close(ios.get("throughput_per_s"), 1000.0), "throughput = batch / median")
        check(close(ios.get("search_or_compile_s"), 12.5), "search time carried over")
        check(ios.get("conv_objective") == "mixed", "the search's kernel objective carried over")
        legs = rows.get(("googlenet", 16, "iostune-ios-merge"), {})
        check(legs.get("search_legs") == 3 and close(legs.get("search_total_s"), 75.5),
              "a resumed search's time adds its cut-off legs (30 from the error text, 40, 5.5)")
        check("search_legs" not in ios, "a search that was not resumed has one leg")
        compile_row = rows.get(("googlenet", 1, "torch-compile"), {})
        check(compile_row.get("status") == "timeout" and compile_row.get("median_ms") is None,
              "timed-out compile row kept without a latency")
        check("sequential schedule" in rows.get(("resnet50", 1, "iostune-ios-both"), {})
              .get("note", "") and "note" not in ios, "a kept sequential schedule is noted")
        eager = rows.get(("resnet50", 1, "torch-eager"), {})
        check("critical_path_ms" not in eager, "no bound where no profile was recorded")
        check("x_critical_path" not in rows.get(("googlenet", 1, "torch-eager"), {}),
              "x bound only for iostune rows")
        goals = {(g["model"], g["batch"]): g for g in summary["goals"] if g["precision"] == "tf32"}
        check(("resnet50", 1) not in goals and len(goals) == 10, "goals skip the resnet50 control")
        g1 = goals.get(("googlenet", 1), {})
        check(g1.get("status") == "met" and g1.get("system") == "iostune-ios-parallel" and
              close(g1.get("speedup"), 2.0 / 0.9), "the fastest IOS row (2.22x) meets 1.5x")
        check(goals.get(("inception_v3", 1), {}).get("status") == "no data",
              "a model without records has no data")
        g16 = goals.get(("googlenet", 16), {})
        check(g16.get("status") == "short" and close(g16.get("needed_ms"), 5.0) and
              close(g16.get("short_by_factor"), 1.2 * 5.5 / 6.0),
              "batch 16: 6.0/5.5 = 1.09x is short of 1.2x; needs 5.0 ms")
        # Precisions: fp16 rows stand apart from TF32 ones, old records are TF32.
        check(len(by_precision) == len(rows) + len(EXPECTED_SYSTEMS) and
              set(fp16) == {("googlenet", 1, s) for s in EXPECTED_SYSTEMS},
              "fp16 rows only for the (model, batch) measured in fp16, 'not run' for the rest of "
              "its systems; no bf16 rows")
        legacy = rows.get(("squeezenet1_1", 1, "torch-eager"), {})
        check(legacy.get("status") == "ok" and
              rows.get(("squeezenet1_1", 1, "iostune-sequential"), {}).get("status") == "ok",
              "records without a precision name (old object, or no field) are read as TF32")
        check(close(rows.get(("squeezenet1_1", 1, "iostune-sequential"), {})
                    .get("speedup_vs_best_peer"), 3.0 / 2.5), "legacy rows compared within TF32")
        ios16 = fp16.get(("googlenet", 1, "iostune-ios-both"), {})
        check(close(ios16.get("median_ms"), 0.5) and ios16.get("best_peer") == "torch-compile" and
              close(ios16.get("speedup_vs_best_peer"), 2.0),
              "fp16 speedup against the fp16 peers only (1.0 / 0.5, not TF32's 2.0 / 0.5)")
        check(ios.get("best_peer") == "torch-cudagraph",
              "TF32 speedup ignores the faster fp16 peer")
        check(close(ios16.get("x_critical_path"), 1.25) and
              close(ios16.get("critical_path_ms"), 0.4), "fp16 rows take the fp16 profile's bound")
        check(fp16.get(("googlenet", 1, "torch-eager"), {}).get("status") == NOT_RUN and
              fp16.get(("googlenet", 1, "iostune-opara"), {}).get("status") == "failed",
              "fp16 rows without records are 'not run', failures are kept")
        g16fp = [g for g in summary["goals"] if g["precision"] == "fp16"]
        check(len(g16fp) == 1 and g16fp[0]["model"] == "googlenet" and
              g16fp[0]["status"] == "met" and close(g16fp[0]["speedup"], 2.0),
              "one fp16 goal check, against the fp16 peer")
        with open(os.path.join(out, "summary.md"), encoding="utf-8") as f:
            md = f.read()
        check("## Batch 1, fp16" in md and "## Batch 16, fp16" not in md and "bf16" not in
              md.replace("fp16, bf16", ""), "one fp16 table, only where fp16 was measured")
        check("## Goal, fp16:" in md and "| googlenet | 1 | iostune-ios-both | torch-compile | "
              "2.00x |" in md, "the fp16 goal table")
        check("googlenet batch 1 fp16 iostune-opara: failed: opara: no fp16 kernel" in md,
              "an fp16 failure is listed with its precision")
        names = os.listdir(os.path.join(raw, "runs"))
        check(any(n.startswith("googlenet_b1_fp16_iostune-ios-both_") for n in names) and
              any(n.startswith("googlenet_b1_iostune-ios-both_") for n in names),
              "fp16 record names hold the precision, TF32 ones keep theirs")
        searched = {(c["model"], c["batch"], c["precision"]): c for c in summary["search_checks"]}
        sg = searched.get(("googlenet", 1, "tf32"), {})
        check(sg.get("best_baseline") == "iostune-sequential" and
              close(sg.get("vs_best_baseline"), 1.0 / 1.8 - 1) and
              sg.get("within_bound_target") is False,
              "the searched schedule against its fastest baseline (sequential) and its bound "
              "(1.25x, over 1.15x)")
        check("vs_best_baseline" not in searched.get(("googlenet", 16, "tf32"), {"x": 1}),
              "a key without baseline rows is not compared")
        unchanged = {"kept_strategy": "ios-both", "refined_from": "nimble (dataflow)",
                     "refine_changes": 0}
        check(unchanged_baseline(unchanged) == "nimble" and
              unchanged_baseline({**unchanged, "refine_changes": 2}) is None and
              unchanged_baseline({**unchanged, "refined_from": "ios-both (staged)"}) is None and
              unchanged_baseline({"kept_strategy": "ios-both"}) is None,
              "a baseline's schedule stored unchanged is named; a changed one, the search's own "
              "start, or a record without the fields is not")
        check(unchanged_row(unchanged) == "iostune-nimble-dataflow" and
              unchanged_row({**unchanged, "refined_from": "greedy (staged)"}) ==
              "iostune-greedy" and unchanged_row({**unchanged, "refine_changes": 1}) is None and
              unchanged_row({**unchanged, "conv_objective": "alone"}) ==
              "iostune-nimble-dataflow" and
              unchanged_row({**unchanged, "conv_objective": "mixed"}) is None,
              "the baseline row of the schedule stored unchanged, form and kernels included")
        check(search_kernels({"conv_objective": "corun"}) == "corun" and
              search_kernels({"conv_objective": "mixed"}) == "mixed" and
              search_kernels({"conv_objective": "alone"}) is None and search_kernels({}) is None,
              "the search's kernels differ from a baseline row's when co-run or moved")
        streams = {"kept_strategy": "ios-both", "unchanged_baseline": "nimble",
                   "search_kernels": "corun"}
        check(baseline_streams_own_kernels(streams) and not own_schedule(streams) and
              not baseline_streams_own_kernels({**streams, "search_kernels": None}) and
              not baseline_streams_own_kernels({**streams, "unchanged_baseline": None}) and
              kept_label(streams) ==
              "ios-both (nimble's streams, unchanged, on kernels chosen to co-run)" and
              kept_label({**streams, "search_kernels": "mixed"}) ==
              "ios-both (nimble's streams, unchanged, on kernels switched by kernel moves)",
              "a baseline's streams on the search's kernels are named apart")
        contest = {"kept_strategy": "greedy", "search_kernels": "mixed"}
        check(baseline_streams_own_kernels(contest) and not own_schedule(contest) and
              not baseline_streams_own_kernels({**contest, "search_kernels": None}) and
              kept_label(contest) == "greedy (on kernels switched by kernel moves)" and
              kept_label({**contest, "search_kernels": None}) == "greedy",
              "a baseline the final contest kept runs on the search's kernels, said so")
        check(own_schedule_counts([streams, {"kept_strategy": "ios-both"}]) ==
              "the DB kept the search's own schedule: 1 of 2 (2 of 2 counting its kernel "
              "choices: 1 keeps a baseline's streams on kernels the search chose)" and
              own_schedule_counts([{"kept_strategy": "ios-both"}]) ==
              "the DB kept the search's own schedule: 1 of 1",
              "both counts, the second only where it differs")
        slower_same = {"vs_best_baseline": 0.003, "best_baseline": "iostune-greedy-dataflow",
                       "unchanged_row": "iostune-greedy-dataflow"}
        check(same_schedule_note([slower_same, {**slower_same, "unchanged_row": None},
                                  {**slower_same, "vs_best_baseline": -0.01}]) ==
              " (1 of the others is that row's own schedule, replayed in two processes)" and
              same_schedule_note([{**slower_same, "unchanged_row": "iostune-greedy"}]) == "",
              "a slower key whose best baseline row replays its own schedule is said so")
        named = {"kept_strategy": "ios-both", "unchanged_baseline": "nimble"}
        check(not own_schedule(named) and own_schedule({"kept_strategy": "ios-both"}) and
              not own_schedule({"kept_strategy": "greedy"}) and
              kept_label(named) == "ios-both (nimble's schedule, unchanged)",
              "the search's own schedule counts only when it is not a baseline's, unchanged")
        check("## The search against its bound and the baselines (issue 25)" in md and
              "| googlenet | 1 | tf32 | 1.000 | 1.25x | iostune-sequential 1.800 | -44.4% | - |"
              in md, "the search table's row")
        check("## Batch 1" in md and "## Batch 16" in md, "one markdown table per batch")
        check("critical path ms" in md, "bound column present")
        check("| googlenet | iostune-ios-both | 1.000 | 1.080 |" in md, "ios-both row in markdown")
        check("torch.compile row exceeded" in md, "failure listed")
        check("## Notes" in md and "resnet50 batch 1 iostune-ios-both" in md, "notes listed")
        check("| inception_v3 | all systems | not run |" in md, "an unmeasured model is 'not run'")
        check("12.5 (shared) r=3" in md, "a shared search's cost is marked")
        check("short by 1.10x" in md, "the shortfall is stated")
        check("75.5 in 3 legs (shared) r=1" in md, "a resumed search's legs are shown")
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
            check(json.load(f)["schema"] == SUMMARY_SCHEMA, "summary.json readable")
        png = os.path.join(out, "throughput.png")
        if plotted:
            with open(png, "rb") as f:
                check(f.read(8) == b"\x89PNG\r\n\x1a\n", "throughput.png is a PNG")
        else:
            print("summarize self-test: matplotlib missing, plot not checked", file=sys.stderr)
        # Model sets: their own rows and tables; every single-model row and line as before.
        write_synthetic_sets(raw)
        with_sets, _ = summarize(raw, os.path.join(tmp, "out_sets"), make_plot=False)
        singles = [r for r in with_sets["rows"] if "set_members" not in r]
        check(singles == summary["rows"] and with_sets["goals"] == summary["goals"],
              "set records change no single-model row or goal check")
        with open(os.path.join(tmp, "out_sets", "summary.md"), encoding="utf-8") as f:
            md_sets = f.read()
        check(without_set_parts(md_sets) == md and md_sets != md,
              "set records only add their own paragraph, tables and lines to summary.md")
        sets = {(r["model"], r["batch"], r["precision"], r["system"]): r
                for r in with_sets["rows"] if "set_members" in r}
        streams = sets.get(("resnet50+resnet50:shared", 1, "tf32", "torch-cudagraph-streams"), {})
        b2b = sets.get(("resnet50+resnet50:shared", 1, "tf32", "torch-cudagraph-back-to-back"),
                       {})
        check(close(streams.get("median_ms"), 3.0) and close(b2b.get("speedup_vs_best_peer"),
                                                               0.75)
              and b2b.get("best_peer") == "torch-cudagraph-streams" and
              streams.get("set_members") == ["resnet50", "resnet50"] and
              streams.get("input_mode") == "shared", "a set's rows compared within the set")
        check(sets.get(("resnet50+resnet50:separate", 8, "tf32", "torch-cudagraph-streams"),
                       {}).get("status") == NOT_RUN and
              close(sets.get(("resnet50+resnet50:separate", 8, "tf32",
                              "torch-cudagraph-back-to-back"), {}).get("median_ms"), 4.2),
              "shared and separate inputs of the same members are separate rows; a missing set "
              "peer is 'not run'")
        check(len(sets) == 9 and not any(r["batch"] == 8 for r in singles),
              "9 set rows; a set's batch adds no single-model rows")
        check("## Model sets, batch 1\n" in md_sets and "## Model sets, batch 16, fp16" in md_sets
              and "| resnet50+resnet50:shared | torch-cudagraph-streams | 3.000 |" in md_sets and
              "- inception_v3+googlenet:separate batch 16 fp16 torch-compile: timeout" in md_sets,
              "set tables and the set's failure in summary.md")
        check(with_sets["set_checks"] == [], "no iostune set rows: no set check")
        made = [{"model": "a+b:separate", "batch": 1, "precision": "tf32", "system": system,
                 "median_ms": ms, "set_members": ["a", "b"]}
                for system, ms in (("iostune-coscheduled", 2.0), ("iostune-back-to-back", 2.7),
                                   ("iostune-streams", 2.5))]
        made += [{**made[0], "model": "c+d:shared", "median_ms": 2.0},
                 {**made[1], "model": "c+d:shared", "median_ms": 2.5}]
        set_checked = set_checks(made)
        check(len(set_checked) == 2 and close(set_checked[0]["speedup"], 1.35) and
              set_checked[0]["met"] and close(set_checked[1]["speedup"], 1.25) and
              not set_checked[1]["met"] and
              "At least 1.3x over back to back: 1 of 2 sets." in
              "\n".join(set_check_table(set_checked)),
              "a set's co-scheduled row against its back-to-back row, with the 1.3x target")
        for bad, why in (("fp8", "is not one of"), (16, "expected str")):
            rec = bench_record.make_run("googlenet", 1, "torch-eager", command="synthetic",
                                        device={"name": "Synthetic GPU"}, software={},
                                        samples_ms=[1.0])
            rec["precision"] = bad
            try:
                bench_record.validate_run(rec, "bad.json")
                check(False, f"precision {bad!r} is refused")
            except bench_record.RecordError as e:
                check(why in str(e) and "precision" in str(e), f"precision refusal says why: {e}")
        # A session's records packed into one file per folder read back the same, and a record
        # then unpacked again loose is refused, not counted twice.
        loose = bench_record.load_records(raw)
        packed_count = bench_record.pack_records(raw, "session")
        check(packed_count == len(loose[0]) + len(loose[1]) and
              sorted(os.listdir(os.path.join(raw, "runs"))) == ["session.jsonl.xz"] and
              bench_record.load_records(raw) == loose,
              "packed records load as they did loose, with the same paths")
        # A pack written before packs were compressed (plain .jsonl) reads the same.
        runs_pack = os.path.join(raw, "runs", "session.jsonl.xz")
        with lzma.open(runs_pack, "rt", encoding="utf-8") as f, \
                open(os.path.join(raw, "runs", "session.jsonl"), "w", encoding="utf-8") as out:
            out.write(f.read())
        os.remove(runs_pack)
        check(bench_record.load_records(raw) == loose, "a plain .jsonl pack reads the same")
        # Packing twice under one name appends to the compressed pack (a second xz stream).
        appended = os.path.join(tmp, "appended")
        for record in loose[0][:2]:
            bench_record.write_record(appended, {k: v for k, v in record.items() if k != "_path"})
            bench_record.pack_records(appended, "session")
        check(len(bench_record.load_records(appended)[0]) == 2 and
              os.listdir(os.path.join(appended, "runs")) == ["session.jsonl.xz"],
              "a second pack into one file adds to it")
        first = loose[0][0]
        with open(first["_path"], "w", encoding="utf-8") as f:
            json.dump({k: v for k, v in first.items() if k != "_path"}, f)
        try:
            bench_record.load_records(raw)
            check(False, "a record both loose and packed is refused")
        except bench_record.RecordError as e:
            check("twice" in str(e), f"the double record is named: {e}")
        # One session, one binary: --since drops older records; a row from another binary and
        # a row faster than its bound are marked.
        session = os.path.join(tmp, "session")
        device = {"name": "Synthetic GPU"}
        for system, median, commit, date in (
                ("iostune-sequential", 2.0, "aaa", "2025-05-02T10:00:00Z"),
                # Older runs of a row re-measured later: more records name bbb than aaa, but
                # more shown rows name aaa, so aaa is the summary's binary.
                ("iostune-greedy", 1.1, "bbb", "2025-05-02T10:00:10Z"),
                ("iostune-greedy", 1.1, "bbb", "2025-05-02T10:00:20Z"),
                ("iostune-greedy", 1.1, "bbb", "2025-05-02T10:00:30Z"),
                ("iostune-greedy", 1.0, "aaa", "2025-05-02T10:01:00Z"),
                ("iostune-nimble", 0.5, "bbb", "2025-05-02T10:02:00Z"),
                ("iostune-ios-both", 0.1, "ccc", "2025-04-01T10:00:00Z")):
            bench_record.write_record(session, bench_record.make_run(
                "googlenet", 1, system, command="synthetic", device=device,
                software={"iostune": f"iostune 0.1.0 (commit {commit}, Release build)"},
                samples_ms=synthetic_samples(median), date=date))
        bench_record.write_record(session, bench_record.make_profile(
            "googlenet", 1, command="synthetic profile", device=device,
            software={"iostune": "iostune 0.1.0 (commit aaa, Release build)"},
            critical_path_ms=0.8, op_sum_ms=2.4, date="2025-05-02T09:59:00Z"))
        marked, _ = summarize(session, os.path.join(tmp, "session_out"), make_plot=False,
                              since="2025-05-02")
        by_system = {r["system"]: r for r in marked["rows"] if r.get("raw_file")}
        md_session = open(os.path.join(tmp, "session_out", "summary.md"), encoding="utf-8").read()
        check(marked["binary"] == "aaa" and "iostune-ios-both" not in by_system,
              "--since keeps one session's records; the binary is the one most shown rows name")
        check(by_system["iostune-nimble"].get("other_binary") == "bbb" and
              "other_binary" not in by_system["iostune-greedy"] and
              "iostune-nimble (binary bbb)" in md_session, "a row from another binary is marked")
        check("Of the 3 measured iostune rows, 2 come from aaa; the others from bbb (1)."
              in md_session, "the summary counts the rows each binary wrote")
        check(by_system["iostune-nimble"].get("below_bound") and
              not by_system["iostune-greedy"].get("below_bound") and
              "BELOW BOUND" in md_session, "a row faster than its bound is marked as a bug")
        with open(os.path.join(raw, "runs", "broken.json"), "w", encoding="utf-8") as f:
            f.write('{"schema": "iostune-bench-run/1", "model": "x"}')
        try:
            summarize(raw, out, make_plot=False)
            check(False, "a malformed record is refused")
        except bench_record.RecordError as e:
            check("broken.json" in str(e) and "batch" in str(e),
                  f"the refusal names the file and field: {e}")
    finally:
        shutil.rmtree(tmp)
    for what in failures:
        print(f"summarize self-test FAILED: {what}", file=sys.stderr)
    if not failures:
        print("summarize self-test passed")
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    here = os.path.dirname(os.path.abspath(__file__))
    results = os.path.normpath(os.path.join(here, "..", "..", "results"))
    parser.add_argument("--raw", default=os.path.join(results, "raw"))
    parser.add_argument("--out", default=results)
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--since", help="only records measured at or after this UTC date/time "
                        "(ISO, e.g. 2026-11-25): one session's rows")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args(argv)
    if args.self_test:
        return self_test()
    try:
        summary, plotted = summarize(args.raw, args.out, make_plot=not args.no_plot,
                                     since=args.since)
    except bench_record.RecordError as e:
        print(f"summarize: error: {e}", file=sys.stderr)
        return 1
    print(f"summarize: {len(summary['rows'])} rows -> {args.out}/summary.json, summary.md"
          + (", throughput.png" if plotted else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
