"""Turns iostune's JSON outputs into raw benchmark records (results/README.md).

  record_iostune.py run --model M --batch B --system iostune-ios-both --replay-json R.json
                    --command "iostune replay ..." [--search-json S.json --search-wall-s 12.3]
                    [--r 3 --s 8] [--shared-cache "ios-both"] [--precision fp16]
                    [--version "iostune 0.1 (commit ..)"] --out RAW
  record_iostune.py run ... --status failed --error "what went wrong"   (no --replay-json)
  record_iostune.py profile --profile-json P.json --command "iostune profile ..." --out RAW

`iostune replay --format json` must print one object with `samples_ms` (every timed run, in
milliseconds); `median_ms`/`p90_ms` it prints are kept in details and cross-checked, the record's
stats are recomputed from the samples. Device fields come from its `device` object (the same
keys `iostune profile --json` writes) or, if absent, from nvidia-smi.

The record's precision is the one the JSON reports (`precision`; older binaries: `math`, else
tf32); --precision, the one the command asked for, must agree with it and names the precision of
a failure, which has no JSON.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402

# Fields of the replay output that are copied into the record's details (the rest are noise).
REPLAY_DETAIL_KEYS = ("fingerprint", "schedule_source", "strategy", "stages", "streams",
                      "graph_nodes", "warmup", "iterations", "math", "predicted_latency_ms",
                      "host_median_ms", "enqueue_median_ms", "sequential_fallback", "db",
                      "layout", "storage", "native_io")


# Fields of `iostune search --format json` kept with the replayed row: what the search cost,
# what it predicted and measured, which schedule it kept as the DB's best, and how it chose
# that schedule's convolution kernels (conv_objective: alone, corun, or mixed after kernel
# moves; a baseline row replays on the kernels chosen to run alone).
SEARCH_DETAIL_KEYS = ("cost_model", "simulated", "schedule_id", "best_schedule_id",
                      "kept_strategy", "sequential_kept", "baselines_latency_ms", "stages",
                      "predicted_latency_ms", "refined_from", "refine_changes",
                      "measured_latency_ms", "sequential_latency_ms", "stages_costed",
                      "cache_hits", "search_seconds", "total_seconds", "pruning",
                      "conv_objective")


def load_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise SystemExit(f"record_iostune: error: cannot read the {what} '{path}': {e}")
    except json.JSONDecodeError as e:
        raise SystemExit(f"record_iostune: error: the {what} '{path}' is not JSON ({e}); "
                         "did the command print anything besides its JSON object?")
    if not isinstance(doc, dict):
        raise SystemExit(f"record_iostune: error: the {what} '{path}' is not a JSON object")
    return doc


def nvidia_smi_device():
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap",
                               "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=30)
        name, driver, cc = [f.strip() for f in done.stdout.splitlines()[0].split(",")]
        return {"name": name, "driver": driver, "compute_capability": cc, "cuda": "unknown",
                "cudnn": "unknown"}
    except (OSError, subprocess.TimeoutExpired, IndexError, ValueError):
        return {"name": "unknown", "driver": "unknown", "cuda": "unknown", "cudnn": "unknown"}


def device_from(doc):
    """The device object of an iostune JSON output, in the raw records' key names."""
    dev = doc.get("device")
    if not isinstance(dev, dict) or not dev.get("name"):
        return nvidia_smi_device()
    # iostune reports the CUDA driver API version (e.g. 13.0); the driver's own version
    # (e.g. 580.159.04) comes from nvidia-smi.
    return {"name": dev["name"],
            "compute_capability": str(dev.get("compute_capability", "unknown")),
            "driver": nvidia_smi_device()["driver"],
            "cuda_driver": str(dev.get("driver", "unknown")),
            "cuda": str(dev.get("cuda_runtime", dev.get("cuda", "unknown"))),
            "cudnn": str(dev.get("cudnn", "unknown"))}


def software(version):
    return {"iostune": version or "unknown"}


def reported_precision(doc, asked, source):
    """The precision an iostune JSON output was measured in; it must be the one asked for."""
    value = doc.get("precision")
    if not isinstance(value, str):  # binaries before fp16/bf16 called it math
        value = doc.get("math") if doc.get("math") in bench_record.PRECISIONS else None
    if value is None:
        return asked or bench_record.DEFAULT_PRECISION
    if value not in bench_record.PRECISIONS:
        raise SystemExit(f"record_iostune: error: '{source}' reports precision '{value}', not one "
                         f"of {', '.join(bench_record.PRECISIONS)}")
    if asked and value != asked:
        raise SystemExit(f"record_iostune: error: '{source}' reports precision '{value}' but the "
                         f"command asked for --precision {asked}")
    return value


def record_run(args):
    details = {}
    measurement = {}
    samples = None
    device = None
    precision = args.precision or bench_record.DEFAULT_PRECISION
    if args.status == "ok":
        if not args.replay_json:
            raise SystemExit("record_iostune: error: a successful run needs --replay-json")
        replay = load_json(args.replay_json, "replay output")
        samples = replay.get("samples_ms")
        if not isinstance(samples, list) or not samples:
            raise SystemExit(f"record_iostune: error: '{args.replay_json}' has no samples_ms "
                             "list; `iostune replay --format json` must print every timed run")
        device = device_from(replay)
        precision = reported_precision(replay, args.precision, args.replay_json)
        details = {k: replay[k] for k in REPLAY_DETAIL_KEYS if k in replay}
        details["reported"] = {k: replay[k] for k in ("median_ms", "p90_ms") if k in replay}
        details["replayed_schedule_id"] = replay.get("schedule_id")
        # A model set (several --model): the keys summarize.py groups set rows by, as
        # torch_set_peers.py writes them.
        members = replay.get("members") or []
        if len(members) > 1:
            mode = replay.get("set_inputs")
            details.update({"model_set": members, "input_mode": mode,
                            "set_spec": f"{'+'.join(members)}:{mode}"})
        measurement = {"warmup_runs": replay.get("warmup"), "timed_runs": len(samples),
                       "method": replay.get("timing", "cuda-events per graph launch")}
        check_reported(replay, samples, args.replay_json)
    elif not args.error:
        raise SystemExit("record_iostune: error: --status failed/timeout needs --error")
    if args.r is not None:
        details.update({"r": args.r, "s": args.s})
    if args.shared_cache:
        details["shared_stage_cache"] = (
            f"shared stage cache: searched into the DB that {args.shared_cache} searched into "
            "first for this (model, batch), so stages measured there were reused (cache_hits); "
            "search_or_compile_s is not a from-scratch cost")
    cost = None
    if args.search_wall_s is not None:
        cost = args.search_wall_s
        details["search_command"] = args.search_command
    if args.search_json:
        search = load_json(args.search_json, "search output")
        searched = reported_precision(search, args.precision, args.search_json)
        if searched != precision:
            raise SystemExit(f"record_iostune: error: the search ran in {searched}, the replay "
                             f"in {precision}")
        details.update({k: search[k] for k in SEARCH_DETAIL_KEYS if k in search})
        stats = search.get("stats")
        # The layout the search ran in (top level, or in its stats), and what each layout's
        # sequential schedule measured when the search timed both to choose.
        layout = search.get("layout") or (stats.get("layout") if isinstance(stats, dict) else None)
        if layout:
            details["search_layout"] = layout
        if isinstance(stats, dict) and isinstance(stats.get("layout_sequential_ms"), dict):
            details["layout_sequential_ms"] = stats["layout_sequential_ms"]
        totals = stats.get("totals", {}) if isinstance(stats, dict) else {}
        if isinstance(totals, dict) and "wall_s" in totals:
            details["search_dp_s"] = totals["wall_s"]
        replayed = details.get("replayed_schedule_id")
        details["replayed_searched_schedule"] = replayed == search.get("schedule_id")
        # Older binaries compared with sequential only and said so with sequential_kept.
        kept = search.get("kept_strategy") or ("sequential" if search.get("sequential_kept")
                                               else search.get("strategy"))
        if kept != search.get("strategy"):
            details["baseline_kept"] = kept
            details["baseline_kept_note"] = (
                f"the searched schedule measured slower than {kept} in the search, which "
                f"stored {kept} as the DB's best; "
                + ("this row replays the searched schedule itself by its id"
                   if replayed == search.get("schedule_id") else
                   f"this row replays the DB's best, i.e. the {kept} schedule"))
        if search.get("simulated"):
            details["warning"] = "the schedule was searched with a simulated cost model"
    record = bench_record.make_run(
        args.model, args.batch, args.system, command=args.command,
        device=device or nvidia_smi_device(), software=software(args.version),
        precision=precision, samples_ms=samples, status=args.status, error=args.error,
        measurement=measurement, search_or_compile_s=cost, details=details)
    print(bench_record.write_record(args.out, record))


def check_reported(replay, samples, source):
    """The replay's own median must agree with its samples (a unit or field mix-up otherwise)."""
    reported = replay.get("median_ms")
    if not isinstance(reported, (int, float)):
        return
    median = bench_record.sample_stats(samples)["median_ms"]
    if abs(reported - median) > 0.02 * median + 1e-6:
        raise SystemExit(f"record_iostune: error: '{source}' reports median_ms {reported} but its "
                         f"samples_ms have median {median:.6g}; are the samples in milliseconds?")


def record_profile(args):
    profile = load_json(args.profile_json, "profile output")
    for key in ("model", "batch", "critical_path_us", "op_sum_us"):
        if key not in profile:
            raise SystemExit(f"record_iostune: error: '{args.profile_json}' lacks '{key}'; is it "
                             "the output of `iostune profile --json`?")
    span = profile.get("span_us")
    record = bench_record.make_profile(
        args.model or profile["model"], profile["batch"], command=args.command,
        device=device_from(profile), software=software(args.version),
        critical_path_ms=profile["critical_path_us"] / 1e3, op_sum_ms=profile["op_sum_us"] / 1e3,
        span_ms=None if span is None else span / 1e3,
        precision=reported_precision(profile, args.precision, args.profile_json),
        layout=profile.get("layout") if isinstance(profile.get("layout"), str) else None)
    print(bench_record.write_record(args.out, record))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    sub = parser.add_subparsers(dest="kind", required=True)
    run = sub.add_parser("run", help="one replay measurement (or its failure)")
    run.add_argument("--model", required=True)
    run.add_argument("--batch", type=int, required=True)
    run.add_argument("--system", required=True, help="e.g. iostune-ios-both")
    run.add_argument("--replay-json")
    run.add_argument("--search-json")
    run.add_argument("--search-wall-s", type=float,
                     help="wall-clock seconds of the `iostune search` that made the schedule")
    run.add_argument("--search-command", default="")
    run.add_argument("--r", type=int, help="the search's pruning r (recorded in details)")
    run.add_argument("--s", type=int, help="the search's pruning s")
    run.add_argument("--shared-cache", default="",
                     help="strategies that searched into the same DB before this one")
    run.add_argument("--status", choices=bench_record.STATUSES, default="ok")
    run.add_argument("--error")
    prof = sub.add_parser("profile", help="the critical-path bound from `iostune profile --json`")
    prof.add_argument("--profile-json", required=True)
    prof.add_argument("--model", help="model name to record (default: the profile's own)")
    for p in (run, prof):
        p.add_argument("--command", required=True, help="the exact iostune command line")
        p.add_argument("--version", help="`iostune --version` output")
        p.add_argument("--out", required=True, help="raw record folder")
        p.add_argument("--precision", choices=bench_record.PRECISIONS,
                       help="the --precision the command ran with (default: what its JSON "
                            "reports, else tf32)")
    args = parser.parse_args(argv)
    try:
        if args.kind == "run":
            record_run(args)
        else:
            record_profile(args)
    except bench_record.RecordError as e:
        raise SystemExit(f"record_iostune: error: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
