#!/usr/bin/env python3
"""Per-operator parity: every convolution (and pool, add, ReLU) shape of a model timed in
iostune's engine and in PyTorch at the same batch, precision and layout, worst ratio first.

iostune's side is `iostune profile --json` (profiler/model_profile.cpp): each op run alone on the
stream after a warm-up run, its kernels' durations summed as CUPTI records them, median of the
profile's runs. PyTorch's side is the same op built with torch (conv2d with the same geometry,
groups and bias; a fused ReLU as a separate F.relu, as eager runs it; a SepConv as its pre-ReLU,
depthwise and pointwise convolutions; channels-last memory for nhwc; .half()/.bfloat16() for
fp16/bf16; TF32 allowed except for fp32; cudnn.benchmark on) and timed two ways:
  kernel: the op's kernels (and copies) summed as CUPTI records them, through torch.profiler,
          median over --calls eager calls: the way iostune's side was timed, so the ratio uses it;
  graph:  one CUDA graph of the op replayed between CUDA events (enough replays per repeat for
          --min-repeat-ms, median of --repeats), as the engine times its candidates; it adds the
          graph launch gap between ops.
Identical shapes are measured once (the count says how often the model has them; iostune's time
is the median over them). The total weighs each shape by its count. Shapes are measured in order
of iostune's time in them, most first, until --budget-s runs out; the rest are counted as not
measured.

  op_parity.py --model M [--batch B] [--precision tf32|fp16|bf16|fp32] [--layout nchw|nhwc|auto]
               [--iostune BIN | --profile P.json] [--out DIR] [--top N] [--budget-s S]
  op_parity.py --self-test [--iostune BIN]   the pipeline on a canned profile, on the CPU (CI);
                with BIN also: torch rebuilds two zoo models' ops with iostune's output shapes

Writes DIR/parity_M_bB_P_L.md (the table) and .json (every shape). Exits 2 with a message when
torch has no CUDA device (--device cpu times host wall clock, for the self-test only).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_breakdown import short_kernel, x_roofline  # noqa: E402
from torch_peers import DTYPES, configure_torch  # noqa: E402

SCHEMA = "iostune-op-parity/1"
KINDS = ("conv", "sepconv", "maxpool", "avgpool", "add", "relu")
DEFAULT_IOSTUNE = (".devpack/iostune", "build/cli/iostune")
# CUPTI activity categories in torch.profiler's Chrome trace that count as device time, as
# iostune's profile counts kernels and transfers.
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


class ParityError(Exception):
    """A problem the user can fix: no GPU, no iostune binary, an unusable profile."""


# ---------------------------------------------------------------------------------------------
# The ops in torch

def op_key(op):
    """Identical work: same kind, attributes and input shapes (names and ids differ)."""
    return json.dumps([op["kind"], op["attrs"], op["input_shapes"]], sort_keys=True)


def shape_label(op):
    """A compact shape: NxCxHxW in -> out, and the geometry that matters."""
    a, ins = op["attrs"], op["input_shapes"]
    text = "x".join(map(str, ins[0])) + " -> " + "x".join(map(str, op["output_shape"][1:]))
    if op["kind"] == "conv":
        text += (f" k{a['kernel_h']}x{a['kernel_w']} s{a['stride_h']}x{a['stride_w']}"
                 f" p{a['pad_h']}x{a['pad_w']}")
        if a["dilation_h"] != 1 or a["dilation_w"] != 1:
            text += f" d{a['dilation_h']}x{a['dilation_w']}"
        if a["groups"] != 1:
            text += f" g{a['groups']}"
        text += "+relu" if a["relu"] else ""
    elif op["kind"] == "sepconv":
        text += f" k{a['kernel']} s{a['stride']} p{a['pad']}"
        text += f" d{a['dilation']}" if a["dilation"] != 1 else ""
        text += " pre-relu" if a["pre_relu"] else ""
    elif op["kind"] in ("maxpool", "avgpool"):
        text += " global" if a["global"] else (f" k{a['kernel_h']}x{a['kernel_w']} "
                                               f"s{a['stride_h']}x{a['stride_w']} "
                                               f"p{a['pad_h']}x{a['pad_w']}")
    elif op["kind"] == "add":
        text += f" {len(ins)} inputs" + ("+relu" if a["relu"] else "")
    return text


class TorchOp:
    """One iostune op as eager torch calls on fixed random tensors. `parts` are the callables
    whose times are reported separately (a SepConv's pre-ReLU, depthwise and pointwise)."""

    def __init__(self, op, dtype, channels_last, device):
        self.kind, a = op["kind"], op["attrs"]
        gen = torch.Generator().manual_seed(1)

        def tensor(shape):
            t = torch.randn(shape, generator=gen).to(device=device, dtype=dtype)
            return t.contiguous(memory_format=torch.channels_last) if (
                channels_last and len(shape) == 4) else t

        self.inputs = [tensor(s) for s in op["input_shapes"]]
        x = self.inputs[0]
        c = x.shape[1]
        self.parts = {}
        if self.kind == "conv":
            w = tensor([a["out_channels"], c // a["groups"], a["kernel_h"], a["kernel_w"]])
            b = tensor([a["out_channels"]]) if a["bias"] else None
            geometry = dict(stride=(a["stride_h"], a["stride_w"]), padding=(a["pad_h"], a["pad_w"]),
                            dilation=(a["dilation_h"], a["dilation_w"]), groups=a["groups"])

            def conv():
                y = F.conv2d(x, w, b, **geometry)
                return F.relu(y) if a["relu"] else y
            self.run = conv
        elif self.kind == "sepconv":
            dw = tensor([c, 1, a["kernel"], a["kernel"]])
            pw = tensor([a["out_channels"], c, 1, 1])
            b = tensor([a["out_channels"]]) if a["bias"] else None
            geometry = dict(stride=a["stride"], padding=a["pad"], dilation=a["dilation"], groups=c)
            # The parts on their own inputs, so each can be timed alone.
            dw_in = F.relu(x) if a["pre_relu"] else x
            pw_in = F.conv2d(dw_in, dw, None, **geometry)
            if a["pre_relu"]:
                self.parts["pre-relu"] = lambda: F.relu(x)
            self.parts["depthwise"] = lambda: F.conv2d(dw_in, dw, None, **geometry)
            self.parts["pointwise"] = lambda: F.conv2d(pw_in, pw, b)

            def sepconv():
                y = F.relu(x) if a["pre_relu"] else x
                return F.conv2d(F.conv2d(y, dw, None, **geometry), pw, b)
            self.run = sepconv
        elif self.kind in ("maxpool", "avgpool"):
            if a["global"]:
                pool = F.adaptive_max_pool2d if self.kind == "maxpool" else F.adaptive_avg_pool2d
                self.run = lambda: pool(x, 1)
            elif self.kind == "maxpool":
                self.run = lambda: F.max_pool2d(x, (a["kernel_h"], a["kernel_w"]),
                                                (a["stride_h"], a["stride_w"]),
                                                (a["pad_h"], a["pad_w"]), ceil_mode=a["ceil_mode"])
            else:
                self.run = lambda: F.avg_pool2d(x, (a["kernel_h"], a["kernel_w"]),
                                                (a["stride_h"], a["stride_w"]),
                                                (a["pad_h"], a["pad_w"]), ceil_mode=a["ceil_mode"],
                                                count_include_pad=a["count_include_pad"])
        elif self.kind == "add":
            def add():
                y = self.inputs[0]
                for other in self.inputs[1:]:
                    y = y + other
                return F.relu(y) if a["relu"] else y
            self.run = add
        elif self.kind == "relu":
            self.run = lambda: F.relu(x)
        else:
            raise ParityError(f"op kind '{self.kind}' has no torch counterpart here")
        with torch.inference_mode():
            got = list(self.run().shape)
        if got != op["output_shape"]:
            raise ParityError(f"op {op['id']} '{op['name']}': torch's output is {got}, the "
                              f"profile's {op['output_shape']}; the torch op is built wrong")


# ---------------------------------------------------------------------------------------------
# Timing

def kernel_time_us(fn, calls):
    """Median over `calls` eager calls of the device time CUPTI records for one call (kernels,
    copies and memsets summed), through torch.profiler's Chrome trace; and one call's kernel
    names in launch order."""
    from torch.profiler import ProfilerActivity, profile
    with torch.inference_mode():
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            return device_time_per_call(json.load(f), calls)


def device_time_per_call(trace, calls):
    """From a Chrome trace of `calls` identical calls: the median over calls of their device
    activities' summed durations (us), and one call's activity names in launch order."""
    events = sorted((e for e in trace.get("traceEvents", [])
                     if e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES),
                    key=lambda e: e["ts"])
    if not events or len(events) % calls:
        raise ParityError(f"torch.profiler recorded {len(events)} device activities for {calls} "
                          "calls (not a whole number per call)")
    per_call = len(events) // calls
    sums = [sum(e["dur"] for e in events[i:i + per_call]) for i in range(0, len(events), per_call)]
    return statistics.median(sums), [e["name"] for e in events[:per_call]]


def graph_time_us(fn, repeats, min_repeat_ms):
    """The op captured once as a CUDA graph (after a warm-up on a side stream, where
    cudnn.benchmark picks its algorithm), replayed enough times per event-timed repeat to last
    min_repeat_ms; median per replay over `repeats`."""
    with torch.inference_mode():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            output = fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def repeat(number):
        torch.cuda.synchronize()
        start.record()
        for _ in range(number):
            graph.replay()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / number

    for _ in range(10):
        graph.replay()
    number = 1
    while number < 1 << 16:
        per = repeat(number)
        if per * number >= min_repeat_ms:
            break
        number = max(number * 2, int(1.1 * min_repeat_ms / max(per, 1e-4)))
    samples = [repeat(number) for _ in range(repeats)]
    del output
    return 1e3 * statistics.median(samples)


def wall_time_us(fn, calls):
    """--device cpu (the self-test): host wall clock per call, median."""
    samples = []
    with torch.inference_mode():
        fn()
        for _ in range(calls):
            began = time.perf_counter()
            fn()
            samples.append(1e6 * (time.perf_counter() - began))
    return statistics.median(samples)


def measure(fn, args):
    """One callable on args.device: {'us': the time compared, 'timing': how it was taken,
    'graph_us', 'kernels'}. Kernel time when torch.profiler delivers it, else the graph time."""
    if args.device == "cpu":
        return {"us": wall_time_us(fn, args.calls), "timing": "cpu wall", "graph_us": None,
                "kernels": []}
    with torch.inference_mode():
        for _ in range(3):
            fn()  # cudnn.benchmark's search and lazy loading, outside the timing
    torch.cuda.synchronize()
    graph_us = graph_time_us(fn, args.repeats, args.min_repeat_ms)
    try:
        kernel_us, kernels = kernel_time_us(fn, args.calls)
        return {"us": kernel_us, "timing": "kernel", "graph_us": graph_us, "kernels": kernels}
    except (ParityError, RuntimeError) as e:
        print(f"op_parity: kernel timing failed ({e}); comparing with the graph time",
              file=sys.stderr)
        return {"us": graph_us, "timing": "graph", "graph_us": graph_us, "kernels": []}


# ---------------------------------------------------------------------------------------------
# Comparison

def load_profile(path):
    try:
        with open(path, encoding="utf-8") as f:
            profile = json.load(f)
    except (OSError, ValueError) as e:
        raise ParityError(f"cannot read the profile '{path}': {e}") from None
    ops = profile.get("ops")
    if not isinstance(ops, list) or not ops:
        raise ParityError(f"'{path}' has no ops; is it `iostune profile --json` output?")
    if any("attrs" not in op or "input_shapes" not in op for op in ops):
        raise ParityError(f"'{path}' has no op geometry (attrs, input_shapes): it was written by "
                          "an iostune older than op_parity.py; profile again with this build")
    return profile


def group_shapes(profile, kinds):
    """Unique shapes of the wanted kinds, in first-seen order, each with its ops."""
    groups = {}
    for op in profile["ops"]:
        if op["kind"] in kinds:
            groups.setdefault(op_key(op), []).append(op)
    return list(groups.values())


def compare(profile, args):
    """Rows of the measured shapes, worst ratio first, and the shapes left unmeasured when
    args.budget_s ran out (the shapes are measured in order of iostune's time, most first)."""
    dtype = DTYPES[profile["precision"]]
    channels_last = profile["layout"] == "nhwc"
    groups = sorted(group_shapes(profile, args.kinds),
                    key=lambda ops: -sum(op["latency_us"] for op in ops))
    rows, began = [], time.perf_counter()
    for n, ops in enumerate(groups):
        if rows and time.perf_counter() - began > args.budget_s:
            return sorted(rows, key=lambda r: -r["ratio"]), groups[n:]
        first = ops[0]
        torch_op = TorchOp(first, dtype, channels_last, args.device)
        timed = measure(torch_op.run, args)
        parts = {name: measure(fn, args) for name, fn in torch_op.parts.items()}
        iostune_us = statistics.median(op["latency_us"] for op in ops)
        rows.append({
            "kind": first["kind"], "shape": shape_label(first), "count": len(ops),
            "ops": [op["name"] for op in ops],
            "iostune_us": iostune_us,
            "iostune_path": first.get("engine_path", ""),
            "iostune_algorithms": first.get("engine_algorithms", ""),
            "iostune_candidates": first.get("engine_candidates", ""),
            "iostune_kernels": first.get("kernel_times", []),
            "roofline_us": first.get("roofline_us"),
            "torch_us": timed["us"], "torch_timing": timed["timing"],
            "torch_graph_us": timed["graph_us"], "torch_kernels": timed["kernels"],
            "torch_parts": {name: t["us"] for name, t in parts.items()},
            "ratio": iostune_us / timed["us"] if timed["us"] > 0 else float("inf"),
        })
    return sorted(rows, key=lambda r: -r["ratio"]), []


def totals(rows):
    out = {"iostune_us": sum(r["count"] * r["iostune_us"] for r in rows),
           "torch_us": sum(r["count"] * r["torch_us"] for r in rows)}
    out["ratio"] = out["iostune_us"] / out["torch_us"] if out["torch_us"] else None
    by_kind = {}
    for r in rows:
        k = by_kind.setdefault(r["kind"], {"shapes": 0, "ops": 0, "iostune_us": 0.0,
                                           "torch_us": 0.0})
        k["shapes"] += 1
        k["ops"] += r["count"]
        k["iostune_us"] += r["count"] * r["iostune_us"]
        k["torch_us"] += r["count"] * r["torch_us"]
    out["by_kind"] = by_kind
    return out


def kernel_list(names, limit=3):
    short = [short_kernel(n) for n in names]
    return ", ".join(f"`{n}`" for n in short[:limit]) + (f" +{len(short) - limit}" if len(
        short) > limit else "")


def markdown(profile, rows, total, args):
    method = ("host wall clock per eager call (--device cpu: a self-test, not a measurement)"
              if args.device == "cpu" else
              "kernel time per call (CUPTI via torch.profiler), median of "
              f"{args.calls}; graph: CUDA graph replays between events, median of {args.repeats}")
    lines = [f"### {profile['model']} batch {profile['batch']} {profile['precision']} "
             f"{profile['layout']} on {profile['device']['name']}: iostune / PyTorch per op", "",
             f"iostune: isolated op, CUPTI kernel time, median of {profile['iterations']} runs "
             f"(`iostune profile`). PyTorch {torch.__version__}: {method}. Ratio = iostune / "
             "PyTorch kernel time (graph time where marked (graph): the profiler failed); > 1: "
             "iostune is slower.", "",
             "| # | kind | shape | n | iostune us | torch us | ratio | torch graph us | "
             "iostune x roofline | iostune path / algorithm | iostune kernels (us) | torch kernels |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for i, r in enumerate(rows[:args.top]):
        graph = f"{r['torch_graph_us']:.1f}" if r["torch_graph_us"] is not None else "-"
        ours = ", ".join(f"`{short_kernel(k['name'])}` {k['us']:.1f}" for k in r["iostune_kernels"])
        torch_cell = kernel_list(r["torch_kernels"])
        if r["torch_parts"]:
            torch_cell += " (" + ", ".join(f"{n} {us:.1f}" for n, us in r["torch_parts"].items()) + ")"
        path = " / ".join(p for p in (r["iostune_path"], r["iostune_algorithms"]) if p)
        mark = "" if r["torch_timing"] != "graph" else " (graph)"
        lines.append(f"| {i + 1} | {r['kind']} | {r['shape']} | {r['count']} | "
                     f"{r['iostune_us']:.1f} | {r['torch_us']:.1f}{mark} | {r['ratio']:.2f} | "
                     f"{graph} | {x_roofline(r['iostune_us'], r['roofline_us'] or 0)} | {path} | "
                     f"{ours} | {torch_cell} |")
    if len(rows) > args.top:
        lines.append(f"| | ... {len(rows) - args.top} more shapes in the JSON | | | | | | | | | | |")
    lines += ["", "| kind | shapes | ops | iostune ms | torch ms | ratio |",
              "| --- | --- | --- | --- | --- | --- |"]
    for kind, k in sorted(total["by_kind"].items(), key=lambda kv: -kv[1]["iostune_us"]):
        ratio = k["iostune_us"] / k["torch_us"] if k["torch_us"] else float("nan")
        lines.append(f"| {kind} | {k['shapes']} | {k['ops']} | {k['iostune_us'] / 1e3:.3f} | "
                     f"{k['torch_us'] / 1e3:.3f} | {ratio:.2f} |")
    ratio = f"{total['ratio']:.2f}" if total["ratio"] is not None else "-"
    lines.append(f"| total | {len(rows)} | {sum(r['count'] for r in rows)} | "
                 f"{total['iostune_us'] / 1e3:.3f} | {total['torch_us'] / 1e3:.3f} | {ratio} |")
    if total["unmeasured_shapes"]:
        lines += ["", f"Not measured (--budget-s {args.budget_s:g} ran out): "
                      f"{total['unmeasured_shapes']} shapes, "
                      f"{total['unmeasured_iostune_us'] / 1e3:.3f} ms of iostune's op time."]
    return "\n".join(lines) + "\n"


def run_profile(args, path):
    binary = args.iostune or next((b for b in DEFAULT_IOSTUNE if os.path.exists(b)), None)
    if not binary or not os.path.exists(binary):
        raise ParityError(f"no iostune binary (looked for {args.iostune or DEFAULT_IOSTUNE}); "
                          "pass --iostune BIN or --profile P.json")
    cmd = [binary, "profile", "--model", args.model, "--batch", str(args.batch), "--precision",
           args.precision, "--layout", args.layout, "--top", "1", "--json", path]
    print("running:", " ".join(cmd), file=sys.stderr)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False)
    if done.returncode != 0:
        raise ParityError(f"`{' '.join(cmd)}` failed ({done.returncode}):\n{done.stdout[-2000:]}")


def parity(args):
    if args.device == "cuda" and not torch.cuda.is_available():
        raise ParityError(f"torch {torch.__version__} sees no CUDA device: run this on the GPU "
                          "machine (--device cpu only exercises the script)")
    if args.profile:
        profile_path = args.profile
    else:
        os.makedirs(args.out, exist_ok=True)
        profile_path = os.path.join(args.out, f"profile_{args.model}_b{args.batch}_"
                                              f"{args.precision}_{args.layout}.json")
        run_profile(args, profile_path)
    profile = load_profile(profile_path)
    configure_torch(profile["precision"])
    rows, unmeasured = compare(profile, args)
    total = totals(rows)
    total["unmeasured_shapes"] = len(unmeasured)
    total["unmeasured_iostune_us"] = sum(op["latency_us"] for ops in unmeasured for op in ops)
    text = markdown(profile, rows, total, args)
    stem = (f"parity_{profile['model']}_b{profile['batch']}_{profile['precision']}_"
            f"{profile['layout']}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, stem + ".md"), "w", encoding="utf-8") as f:
        f.write(text)
    record = {"schema": SCHEMA, "model": profile["model"], "batch": profile["batch"],
              "precision": profile["precision"], "layout": profile["layout"],
              "device": profile["device"], "torch": torch.__version__,
              "torch_cudnn": torch.backends.cudnn.version(), "timing": {
                  "iostune": "CUPTI kernel time of the op run alone, median of the profile's runs",
                  "torch_us": "cpu wall clock" if args.device == "cpu" else
                  f"CUPTI kernel time via torch.profiler, median of {args.calls} eager calls "
                  "(rows with torch_timing 'graph': the graph time)",
                  "torch_graph_us": None if args.device == "cpu" else
                  f"CUDA graph replays between events, median of {args.repeats}"},
              "profile": os.path.abspath(profile_path), "totals": total, "rows": rows}
    with open(os.path.join(args.out, stem + ".json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    print(text)
    return record


# ---------------------------------------------------------------------------------------------
# Self-test

def canned_profile():
    """A small profile as `iostune profile --json` writes it: two identical convolutions, a
    grouped one, a SepConv, pools, an add and a ReLU (times made up; iostune's side is read only)."""
    def conv(out, k, s=1, p=0, groups=1, relu=True):
        return {"out_channels": out, "kernel_h": k, "kernel_w": k, "stride_h": s, "stride_w": s,
                "pad_h": p, "pad_w": p, "dilation_h": 1, "dilation_w": 1, "groups": groups,
                "bias": True, "relu": relu}

    def pool(k, s, p, global_=False):
        return {"kernel_h": k, "kernel_w": k, "stride_h": s, "stride_w": s, "pad_h": p,
                "pad_w": p, "ceil_mode": False, "count_include_pad": False, "global": global_}

    ops = [("conv", conv(8, 3, p=1), [[2, 4, 16, 16]], [2, 8, 16, 16], 50.0),
           ("conv", conv(8, 3, p=1), [[2, 4, 16, 16]], [2, 8, 16, 16], 70.0),
           ("conv", conv(8, 3, s=2, p=1, groups=4, relu=False), [[2, 8, 16, 16]], [2, 8, 8, 8], 9.0),
           ("sepconv", {"out_channels": 16, "kernel": 5, "stride": 1, "pad": 2, "dilation": 1,
                        "pre_relu": True, "bias": True}, [[2, 8, 8, 8]], [2, 16, 8, 8], 30.0),
           ("maxpool", pool(3, 2, 1), [[2, 16, 8, 8]], [2, 16, 4, 4], 4.0),
           ("add", {"relu": True}, [[2, 16, 4, 4]] * 2, [2, 16, 4, 4], 3.0),
           ("relu", {}, [[2, 16, 4, 4]], [2, 16, 4, 4], 2.0),
           ("avgpool", pool(1, 1, 0, True), [[2, 16, 4, 4]], [2, 16, 1, 1], 2.5),
           ("concat", {}, [[2, 16, 1, 1]] * 2, [2, 32, 1, 1], 0.0)]
    return {"model": "canned", "batch": 2, "precision": "tf32", "layout": "nhwc",
            "device": {"name": "CPU self-test"}, "iterations": 5,
            "ops": [{"id": i, "name": f"{kind}_{i}", "kind": kind, "attrs": attrs,
                     "inputs": [i - 1], "input_shapes": ins, "output_shape": out,
                     "latency_us": us, "engine_path": "test path", "engine_algorithms": "algo",
                     "kernel_times": [{"name": f"kernel_{i}", "us": us}], "roofline_us": 1.0}
                    for i, (kind, attrs, ins, out, us) in enumerate(ops)]}


def export_ops(binary, model, tmp):
    """Every op of a zoo model as a profile would list it (geometry only), from `iostune export`
    and the torch interpreter's shape inference."""
    from iostune_json_to_torch import IostuneModule
    path = os.path.join(tmp, model + ".json")
    subprocess.run([binary, "export", "--model", model, "-o", path], check=True,
                   stdout=subprocess.DEVNULL)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    module = IostuneModule(doc, path)
    chw = [module.input_chw] + list(module.shapes)
    return [{"id": i, "name": op["name"], "kind": op["op"], "attrs": op.get("attrs", {}),
             "input_shapes": [[1, *chw[s + 1]] for s in module.inputs[i]],
             "output_shape": [1, *module.shapes[i]]} for i, op in enumerate(doc["ops"])]


def self_test(binary=None):
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        profile_path = os.path.join(tmp, "profile.json")
        with open(profile_path, "w", encoding="utf-8") as f:
            json.dump(canned_profile(), f)
        out = os.path.join(tmp, "out")
        code = main(["--profile", profile_path, "--device", "cpu", "--calls", "3", "--out", out])
        if code != 0:
            print(f"op_parity self-test FAILED: a CPU run over the canned profile exits {code}",
                  file=sys.stderr)
            return 1
        with open(os.path.join(out, "parity_canned_b2_tf32_nhwc.json"), encoding="utf-8") as f:
            record = json.load(f)
        rows = record["rows"]
        check(len(rows) == 7, f"7 unique shapes of 8 wanted ops (concat skipped), got {len(rows)}")
        conv = [r for r in rows if r["kind"] == "conv" and r["count"] == 2]
        check(len(conv) == 1 and conv[0]["iostune_us"] == 60.0,
              "the two identical convolutions are one row of count 2 at their median, 60 us")
        check(all(a["ratio"] >= b["ratio"] for a, b in zip(rows, rows[1:])), "worst ratio first")
        sep = [r for r in rows if r["kind"] == "sepconv"][0]
        check(list(sep["torch_parts"]) == ["pre-relu", "depthwise", "pointwise"],
              f"a SepConv's parts are timed apart: {list(sep['torch_parts'])}")
        expected = sum(r["count"] * r["iostune_us"] for r in rows)
        check(abs(record["totals"]["iostune_us"] - expected) < 1e-9 and expected == 170.5,
              f"the total weighs shapes by count (170.5 us), got {record['totals']['iostune_us']}")
        with open(os.path.join(out, "parity_canned_b2_tf32_nhwc.md"), encoding="utf-8") as f:
            text = f.read()
        check("| sepconv |" in text and "| total | 7 | 8 |" in text,
              "the markdown has the rows and the total")

        # A budget of zero measures the costliest shape only (the two 60 us convolutions).
        main(["--profile", profile_path, "--device", "cpu", "--calls", "1", "--budget-s", "0",
              "--out", out])
        with open(os.path.join(out, "parity_canned_b2_tf32_nhwc.json"), encoding="utf-8") as f:
            cut = json.load(f)
        check([r["count"] for r in cut["rows"]] == [2] and cut["totals"]["unmeasured_shapes"] == 6
              and cut["totals"]["unmeasured_iostune_us"] == 50.5,
              f"--budget-s 0: one shape measured, 6 (50.5 us) not: {cut['totals']}")

        # The errors a user meets: no GPU, an old profile.
        if not torch.cuda.is_available():
            code = main(["--profile", profile_path, "--out", out])
            check(code == 2, f"no CUDA device: exit 2 (got {code})")
        old = canned_profile()
        for op in old["ops"]:
            del op["attrs"]
        with open(profile_path, "w", encoding="utf-8") as f:
            json.dump(old, f)
        code = main(["--profile", profile_path, "--device", "cpu", "--out", out])
        check(code == 2, f"a profile without geometry: exit 2 (got {code})")

        # A torch op that does not reproduce the profile's output shape is refused.
        bad = canned_profile()
        bad["ops"][0]["output_shape"] = [2, 8, 15, 15]
        try:
            TorchOp(bad["ops"][0], torch.float32, False, "cpu")
            check(False, "a wrong output shape is refused")
        except ParityError:
            pass

        # With an iostune binary: the torch op of every compared shape of two zoo models (pools
        # with ceil_mode, SepConvs, grouped and dilated convolutions) has iostune's output shape.
        for model in ("squeezenet1_1", "nasnet_a_large") if binary else ():
            ops = export_ops(binary, model, tmp)
            try:
                for same in group_shapes({"ops": ops}, KINDS):
                    TorchOp(same[0], torch.float32, True, "cpu")
            except ParityError as e:
                check(False, f"{model}: {e}")

    # torch.profiler's trace: device activities per call, host events ignored.
    def event(cat, name, ts, dur):
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur}
    trace = {"traceEvents": [event("cpu_op", "aten::conv2d", 0, 50.0),
                             event("kernel", "conv", 10, 4.0), event("gpu_memset", "set", 5, 1.0),
                             event("kernel", "conv", 30, 6.0), event("gpu_memset", "set", 25, 1.0),
                             event("kernel", "conv", 50, 9.0), event("gpu_memset", "set", 45, 1.0),
                             event("cuda_runtime", "cudaLaunchKernel", 1, 3.0)]}
    check(device_time_per_call(trace, 3) == (7.0, ["set", "conv"]),
          f"trace of 3 calls: median 7 us per call, got {device_time_per_call(trace, 3)}")
    try:
        device_time_per_call(trace, 4)
        check(False, "6 activities over 4 calls are refused")
    except ParityError:
        pass

    if failures:
        for what in failures:
            print(f"op_parity self-test FAILED: {what}", file=sys.stderr)
        return 1
    print("op_parity self-test passed")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="zoo model or model file (runs `iostune profile`)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--precision", default="tf32", choices=sorted(DTYPES))
    parser.add_argument("--layout", default="auto", choices=("auto", "nchw", "nhwc"))
    parser.add_argument("--iostune", help=f"iostune binary (default: {' or '.join(DEFAULT_IOSTUNE)})")
    parser.add_argument("--profile", help="use this `iostune profile --json` file instead")
    parser.add_argument("--out", default="parity", help="folder for the .md and .json")
    parser.add_argument("--top", type=int, default=30, help="rows in the markdown table")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"op kinds compared (default {','.join(KINDS)})")
    parser.add_argument("--calls", type=int, default=20, help="profiled eager calls per shape")
    parser.add_argument("--repeats", type=int, default=15, help="timed graph repeats per shape")
    parser.add_argument("--min-repeat-ms", type=float, default=0.5)
    parser.add_argument("--budget-s", type=float, default=240,
                        help="stop measuring new shapes after this long (largest iostune time "
                             "first; default 240)")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args(argv)
    if args.self_test:
        return self_test(args.iostune)
    args.kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = [k for k in args.kinds if k not in KINDS]
    if unknown or (not args.model and not args.profile):
        parser.error(f"unknown kinds {unknown} (known: {', '.join(KINDS)})" if unknown else
                     "give --model (to profile it) or --profile P.json")
    try:
        parity(args)
    except ParityError as e:
        print(f"op_parity: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
