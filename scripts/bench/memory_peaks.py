#!/usr/bin/env python3
"""Peak device memory of a replay beside PyTorch's CUDA graph of the same model (issue 31).

Each system runs in a process of its own while nvidia-smi is sampled every 50 ms for that
process's memory; the peak is the largest sample (CUDA context and cuDNN/cuBLAS handles
included, on both sides). iostune: `iostune replay` of a schedule computed from the graph (no
DB: sequential, or a baseline in either form); PyTorch: torch_peers.py's CUDA graph row of the
same model, batch and precision. A schedule written SOURCE[:FORM]/no-reuse replays with
`--no-memory-reuse` (every activation its own bytes, as before the arena): the same schedule's
memory and latency without the arena, in the same call. Prints a table and writes one JSON line
per row.

  python3 scripts/bench/memory_peaks.py --iostune .devpack/iostune --models inception_v3 \
      --batches 16 64 --schedules sequential nimble:dataflow --out $OUT/memory
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def process_memory_mib(pid):
    """The process's device memory now (MiB), or None when nvidia-smi does not list it."""
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 2 and fields[0] == str(pid):
            return int(fields[1])
    return None


def peak_of(command, log_path, timeout_s):
    """Runs `command`, sampling its device memory; returns (peak MiB, exit code)."""
    with open(log_path, "w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        peak, began = 0, time.time()
        while child.poll() is None:
            if time.time() - began > timeout_s:
                child.kill()
                break
            now = process_memory_mib(child.pid)
            if now:
                peak = max(peak, now)
            time.sleep(0.05)
        return peak, child.wait()


def iostune_command(args, model, batch, schedule):
    schedule, _, variant = schedule.partition("/")
    source, _, form = schedule.partition(":")
    command = [args.iostune, "replay", "--model", model, "--batch", str(batch),
               "--precision", args.precision, "--schedule-source", source,
               "--iters", str(args.iters), "--format", "json"]
    if form:
        command += ["--form", form]
    if variant == "no-reuse":
        command.append("--no-memory-reuse")
    elif variant:
        raise SystemExit(f"memory_peaks.py: unknown variant '/{variant}' (only /no-reuse)")
    return command


def torch_command(args, model, batch):
    return [sys.executable, os.path.join(HERE, "torch_peers.py"), "--models", model,
            "--batches", str(batch), "--systems", "cudagraph", "--precision", args.precision,
            "--runs", str(args.iters), "--min-runs", str(min(args.iters, 200)), "--out",
            os.path.join(args.out, "torch_raw"), "--iostune", args.iostune]


def torch_median_ms(args, model, batch):
    """The median of the CUDA graph row torch_peers.py just wrote, or None."""
    runs = os.path.join(args.out, "torch_raw", "runs")
    newest = None
    for name in os.listdir(runs) if os.path.isdir(runs) else []:
        if name.startswith(f"{model}_b{batch}_") and "cudagraph" in name:
            path = os.path.join(runs, name)
            if newest is None or os.path.getmtime(path) > os.path.getmtime(newest):
                newest = path
    if newest is None:
        return None
    with open(newest) as f:
        samples = sorted(json.load(f).get("samples_ms") or [])
    return samples[len(samples) // 2] if samples else None


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iostune", required=True)
    parser.add_argument("--models", nargs="+", default=["inception_v3", "resnet50", "googlenet"])
    parser.add_argument("--batches", nargs="+", type=int, default=[16, 64])
    parser.add_argument("--schedules", nargs="+", default=["sequential", "nimble:dataflow"],
                        help="SOURCE[:FORM][/no-reuse] of `iostune replay --schedule-source ... "
                        "--form` (/no-reuse: --no-memory-reuse)")
    parser.add_argument("--precision", default="tf32")
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--timeout-s", type=float, default=120)
    parser.add_argument("--deadline", type=float, default=0,
                        help="start no model after S seconds (0: none)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    began = time.time()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for model in args.models:
        if args.deadline and time.time() - began > args.deadline:
            print(f"deadline: {model} not run", flush=True)
            continue
        for batch in args.batches:
            systems = [("iostune-" + s.replace(":", "-").replace("/", "-"),
                        iostune_command(args, model, batch, s)) for s in args.schedules]
            systems.append(("torch-cudagraph", torch_command(args, model, batch)))
            for name, command in systems:
                log = os.path.join(args.out, f"{model}_b{batch}_{name}.log")
                peak, code = peak_of(command, log, args.timeout_s)
                row = {"model": model, "batch": batch, "precision": args.precision,
                       "system": name, "peak_mib": peak, "exit_code": code,
                       "command": " ".join(command)}
                if name.startswith("iostune") and code == 0:
                    with open(log) as f:
                        text = f.read()
                    try:
                        report = json.loads(text[text.index("{"):])
                        row["replay_median_ms"] = report.get("median_ms")
                        for key in ("weight_bytes", "activation_bytes", "workspace_bytes",
                                    "device_memory_bytes"):
                            row[key] = report.get(key)
                    except ValueError:
                        pass
                if name == "torch-cudagraph" and code == 0:
                    row["replay_median_ms"] = torch_median_ms(args, model, batch)
                rows.append(row)
                ms = row.get("replay_median_ms")
                print(f"{model:>14} b{batch:<3} {name:<34} peak {peak:>6} MiB"
                      f"{'' if ms is None else f'  median {ms:.3f} ms'}"
                      f"{'' if code == 0 else f'  (exit {code})'}", flush=True)
    with open(os.path.join(args.out, "memory_peaks.jsonl"), "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
