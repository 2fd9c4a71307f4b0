#!/usr/bin/env python3
"""Where a model's GPU time goes, from `iostune profile --json` files: per operator kind, the
isolated kernel time, its share of the op sum, and how far it is from the roofline (each op's
max(FLOPs / peak FLOP/s, bytes / peak bandwidth), with the ceilings the profiler measured on the
device). Then the kernels that take the most time, and the slowest ops, each with its distance
from its own roofline (time / bound), so the next slow kernel is obvious. It answers "what holds
this model back": when ops already sum to more than a peer's whole latency, no schedule can close
the gap.

  /usr/bin/python3 scripts/bench/profile_breakdown.py P.json [P2.json ...] [--top 6] [--ops 15]
  /usr/bin/python3 scripts/bench/profile_breakdown.py --self-test     (a canned profile, for CI)

Prints markdown. Standard library only (it runs on the GPU machine as well).
"""
import argparse
import json
import os
import re
import sys
import tempfile
from collections import defaultdict


def short_kernel(name):
    """A readable kernel name: a mangled C++ name's qualified identifier (`_ZN5cudnn20pooling_fw_
    4d_kernelI...` -> `cudnn::pooling_fw_4d_kernel`), otherwise the name cut at 60 characters."""
    name = name or "?"
    mangled = re.match(r"_Z(N?)", name)
    if not mangled:
        return name[:60]
    parts, rest = [], name[mangled.end():]
    while True:
        length = re.match(r"\d+", rest)
        if not length:
            break
        n = int(length.group())
        parts.append(rest[length.end():length.end() + n])
        rest = rest[length.end() + n:]
        if not mangled.group(1):  # not nested: one identifier
            break
    parts = [p for p in parts if not p.startswith("_GLOBAL__N")]  # anonymous namespaces
    return "::".join(parts)[:60] if parts else name[:60]


def roofline_us(op, ceilings):
    """The op's bound: as the profiler wrote it (profiler/roofline.cpp), else computed the same
    way from the ceilings (profiles from before it did)."""
    if "roofline_us" in op:
        return op["roofline_us"]
    flops_s = op.get("flops", 0) / ceilings["flops_per_s"] if ceilings["flops_per_s"] else 0
    bytes_s = op.get("bytes", 0) / ceilings["bytes_per_s"] if ceilings["bytes_per_s"] else 0
    return 1e6 * max(flops_s, bytes_s)


def x_roofline(us, roof_us):
    return f"{us / roof_us:.1f}x" if roof_us > 0 else "-"


def breakdown(profile, top, top_ops=15):
    ops, ceilings = profile["ops"], profile["ceilings"]
    total = sum(op["latency_us"] for op in ops) or 1.0
    kinds = defaultdict(lambda: {"count": 0, "us": 0.0, "roof_us": 0.0})
    kernels = defaultdict(lambda: {"count": 0, "us": 0.0})
    for op in ops:
        k = kinds[op["kind"]]
        k["count"] += 1
        k["us"] += op["latency_us"]
        k["roof_us"] += roofline_us(op, ceilings)
        kern = kernels[short_kernel(op.get("main_kernel"))]
        kern["count"] += 1
        kern["us"] += op["latency_us"]
    lines = [f"### {profile['model']} batch {profile['batch']} ({profile.get('precision', profile.get('math'))}, "
             f"{profile['device']['name']})", "",
             f"op sum {total / 1e3:.3f} ms, critical path {profile['critical_path_us'] / 1e3:.3f} "
             f"ms, eager span {profile['span_us'] / 1e3:.3f} ms, GPU busy "
             f"{100 * profile['gpu_busy_fraction']:.0f}%", "",
             "| kind | ops | time ms | share | roofline ms | x roofline |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, k in sorted(kinds.items(), key=lambda kv: -kv[1]["us"]):
        lines.append(f"| {name} | {k['count']} | {k['us'] / 1e3:.3f} | "
                     f"{100 * k['us'] / total:.1f}% | {k['roof_us'] / 1e3:.3f} | "
                     f"{x_roofline(k['us'], k['roof_us'])} |")
    lines += ["", "| main kernel | ops | time ms | share |", "| --- | --- | --- | --- |"]
    for name, k in sorted(kernels.items(), key=lambda kv: -kv[1]["us"])[:top]:
        lines.append(f"| `{name}` | {k['count']} | {k['us'] / 1e3:.3f} | "
                     f"{100 * k['us'] / total:.1f}% |")
    lines += ["", "| slowest op | kind | time us | share | roofline us | x roofline | bound | "
              "main kernel |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for op in sorted(ops, key=lambda o: -o["latency_us"])[:top_ops]:
        roof = roofline_us(op, ceilings)
        lines.append(f"| {op['name']} | {op['kind']} | {op['latency_us']:.1f} | "
                     f"{100 * op['latency_us'] / total:.1f}% | {roof:.1f} | "
                     f"{x_roofline(op['latency_us'], roof)} | {op.get('bound', '-')} | "
                     f"`{short_kernel(op.get('main_kernel'))}` |")
    return "\n".join(lines) + "\n"


def canned_profile():
    """Two convolutions and a ReLU at made-up times, on 100 TFLOP/s and 1 TB/s ceilings."""
    def op(name, kind, us, flops, bytes_, roof=None):
        entry = {"name": name, "kind": kind, "latency_us": us, "flops": flops, "bytes": bytes_,
                 "main_kernel": "_ZN5cudnn11conv_kernelIfEEvv" if kind == "conv" else "relu",
                 "bound": "compute" if flops > 100 * bytes_ else "memory"}
        if roof is not None:
            entry["roofline_us"] = roof
        return entry
    return {"model": "canned", "batch": 1, "precision": "tf32", "device": {"name": "none"},
            "ceilings": {"flops_per_s": 100e12, "bytes_per_s": 1e12}, "critical_path_us": 70.0,
            "span_us": 80.0, "gpu_busy_fraction": 0.9,
            "ops": [op("conv_a", "conv", 40.0, 1e9, 1e6, roof=10.0),  # 10 us of FLOPs: 4x
                    op("conv_b", "conv", 20.0, 5e8, 1e6),  # no roofline_us: computed, 5 us
                    op("relu_c", "relu", 10.0, 1e6, 8e6)]}  # 8 us of bytes: 1.25x


def self_test():
    text = breakdown(canned_profile(), top=6, top_ops=2)
    expected = ["| conv | 2 | 0.060 | 85.7% | 0.015 | 4.0x |",
                "| relu | 1 | 0.010 | 14.3% | 0.008 | 1.2x |",
                "| `cudnn::conv_kernel` | 2 | 0.060 | 85.7% |",
                "| conv_a | conv | 40.0 | 57.1% | 10.0 | 4.0x | compute | `cudnn::conv_kernel` |",
                "| conv_b | conv | 20.0 | 28.6% | 5.0 | 4.0x | compute |"]
    missing = [line for line in expected if line not in text]
    if "relu_c | relu" in text:
        missing.append("only the 2 slowest ops are listed (relu_c is third)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bad.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write("{}")
        if main([path]) != 1:
            missing.append("a file that is not a profile exits 1")
    if missing:
        print(text, file=sys.stderr)
        for line in missing:
            print(f"profile_breakdown self-test FAILED: expected {line!r}", file=sys.stderr)
        return 1
    print("profile_breakdown self-test passed")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", nargs="*", help="`iostune profile --json` outputs")
    parser.add_argument("--top", type=int, default=6, help="kernels listed (default 6)")
    parser.add_argument("--ops", type=int, default=15, help="slowest ops listed (default 15)")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args(argv)
    if args.self_test:
        return self_test()
    if not args.profiles:
        parser.error("give one or more `iostune profile --json` files")
    for path in args.profiles:
        try:
            with open(path, encoding="utf-8") as f:
                profile = json.load(f)
            print(breakdown(profile, args.top, args.ops))
        except (OSError, ValueError, KeyError) as e:
            print(f"profile_breakdown: error: '{path}': {e!r}; is it `iostune profile --json` "
                  "output?", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
