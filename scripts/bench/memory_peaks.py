#!/usr/bin/env python3
"""Peak device memory of a replay beside PyTorch's CUDA graph of the same model (issue 31).

Each system runs in a process of its own while `nvidia-smi -lms 20` lists every process's device
memory (CUDA context and cuDNN/cuBLAS handles included, on both sides): the peak is that
process's largest sample, the typical figure the time-weighted median of its samples once its
context is up. A transient shorter than the sampling (a set-up allocation freed at once) can be
missed, on both sides alike. iostune: `iostune replay` of a schedule computed from the graph (no
DB: sequential, or a baseline in either form); PyTorch: torch_peers.py's CUDA graph row of the
same model, batch and precision. A schedule written SOURCE[:FORM]/no-reuse replays with
`--no-memory-reuse` (every activation its own bytes, as before the arena): the same schedule's
memory and latency without the arena, in the same call. Prints a table and writes one JSON line
per row.

  python3 scripts/bench/memory_peaks.py --iostune .devpack/iostune --models inception_v3 \
      --batches 16 64 --schedules sequential nimble:dataflow --out $OUT/memory
  python3 scripts/bench/memory_peaks.py --self-test   # the sampling and the commands, no GPU
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def peak_of(command, log_path, timeout_s):
    """Runs `command` while one `nvidia-smi -lms 20` lists the device memory of every process;
    returns (peak MiB, exit code, timeline): the timeline is [seconds, MiB] of the child at each
    change, so a set-up peak and the steady state both show."""
    with open(log_path, "w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        sampler = subprocess.Popen(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                                    "--format=csv,noheader,nounits", "-lms", "20"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        began, timeline = time.time(), []

        def read():
            for line in sampler.stdout:
                fields = [f.strip() for f in line.split(",")]
                if len(fields) == 2 and fields[0] == str(child.pid) and fields[1].isdigit():
                    mib = int(fields[1])
                    if not timeline or timeline[-1][1] != mib:
                        timeline.append([round(time.time() - began, 3), mib])
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            code = child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            code = child.wait()
        ended = time.time() - began
        sampler.terminate()
        sampler.wait()
        reader.join(timeout=5)
        return max((m for _, m in timeline), default=0), code, timeline, ended


def typical_mib(timeline, ended, context_mib=500):
    """The time-weighted median of the samples from the first at or above `context_mib` (the
    CUDA context is up) to the last before the exit: what the process mostly held."""
    first = next((k for k, (_, mib) in enumerate(timeline) if mib >= context_mib), 0)
    span = timeline[first:-1] if len(timeline) - first > 2 else timeline[first:]
    held = sorted((mib, following[0] - t)
                  for (t, mib), following in zip(span, span[1:] + [[ended, None]]))
    total, seen = sum(d for _, d in held), 0.0
    for mib, d in held:
        seen += d
        if seen >= total / 2:
            return mib
    return None


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


def self_test():
    """The steady figure, the replay commands and the sampler (a fake nvidia-smi on PATH)."""
    import tempfile
    # 1600 for 0.2 s, 900 for 2.3 s, the exit's 400 left out
    assert typical_mib([[0.0, 30], [0.5, 1600], [0.7, 900], [3.0, 400]], 3.1) == 900
    assert typical_mib([[0.0, 600], [1.0, 1600], [1.2, 700], [1.3, 100]], 1.4) == 600
    assert typical_mib([], 1.0) is None
    args = argparse.Namespace(iostune="iostune", precision="fp16", iters=7)
    command = iostune_command(args, "googlenet", 16, "nimble:dataflow/no-reuse")
    assert command[-3:] == ["--form", "dataflow", "--no-memory-reuse"], command
    assert "--no-memory-reuse" not in iostune_command(args, "googlenet", 16, "sequential")
    try:
        iostune_command(args, "googlenet", 16, "sequential/typo")
        raise AssertionError("an unknown variant was accepted")
    except SystemExit:
        pass
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "nvidia-smi")
        with open(fake, "w") as f:  # lists every process at 123 MiB (no procps needed)
            f.write("#!/bin/sh\nwhile true; do for p in /proc/[0-9]*; do "
                    "echo \"${p#/proc/}, 123\"; done; sleep 0.02; done\n")
        os.chmod(fake, 0o755)
        os.environ["PATH"] = tmp + os.pathsep + os.environ["PATH"]
        peak, code, timeline, ended = peak_of(["sleep", "0.6"], os.path.join(tmp, "log"), 5)
    assert code == 0 and peak == 123 and timeline and timeline[0][1] == 123, timeline
    assert 0.5 < ended < 5
    print("self-test passed")


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return
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
                peak, code, timeline, ended = peak_of(command, log, args.timeout_s)
                row = {"model": model, "batch": batch, "precision": args.precision,
                       "system": name, "peak_mib": peak, "exit_code": code,
                       "typical_mib": typical_mib(timeline, ended),
                       "timeline": timeline, "command": " ".join(command)}
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
                with open(os.path.join(args.out, "memory_peaks.jsonl"), "a") as f:
                    f.write(json.dumps(row) + "\n")  # as each row ends: a cut-off run keeps it
                ms = row.get("replay_median_ms")
                print(f"{model:>14} b{batch:<3} {name:<34} peak {peak:>6} MiB"
                      f" typical {row['typical_mib'] or 0:>6} MiB"
                      f"{'' if ms is None else f'  median {ms:.3f} ms'}"
                      f"{'' if code == 0 else f'  (exit {code})'}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
