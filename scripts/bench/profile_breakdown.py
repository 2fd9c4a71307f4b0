#!/usr/bin/env python3
"""Where a model's GPU time goes, from `iostune profile --json` files: per operator kind, the
isolated kernel time, its share of the op sum, and how far it is from the roofline (each op's
max(FLOPs / peak FLOP/s, bytes / peak bandwidth), with the ceilings the profiler measured on the
device). Then the kernels that take the most time. It answers "what holds this model back":
when ops already sum to more than a peer's whole latency, no schedule can close the gap.

  /usr/bin/python3 scripts/bench/profile_breakdown.py P.json [P2.json ...] [--top 6]

Prints markdown. Standard library only (it runs on the GPU machine as well).
"""
import argparse
import json
import re
import sys
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
    flops_s = op.get("flops", 0) / ceilings["flops_per_s"] if ceilings["flops_per_s"] else 0
    bytes_s = op.get("bytes", 0) / ceilings["bytes_per_s"] if ceilings["bytes_per_s"] else 0
    return 1e6 * max(flops_s, bytes_s)


def breakdown(profile, top):
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
        ratio = k["us"] / k["roof_us"] if k["roof_us"] > 0 else float("nan")
        lines.append(f"| {name} | {k['count']} | {k['us'] / 1e3:.3f} | "
                     f"{100 * k['us'] / total:.1f}% | {k['roof_us'] / 1e3:.3f} | {ratio:.1f}x |")
    lines += ["", "| main kernel | ops | time ms | share |", "| --- | --- | --- | --- |"]
    for name, k in sorted(kernels.items(), key=lambda kv: -kv[1]["us"])[:top]:
        lines.append(f"| `{name}` | {k['count']} | {k['us'] / 1e3:.3f} | "
                     f"{100 * k['us'] / total:.1f}% |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", nargs="+", help="`iostune profile --json` outputs")
    parser.add_argument("--top", type=int, default=6, help="kernels listed (default 6)")
    args = parser.parse_args(argv)
    for path in args.profiles:
        try:
            with open(path, encoding="utf-8") as f:
                profile = json.load(f)
            print(breakdown(profile, args.top))
        except (OSError, ValueError, KeyError) as e:
            print(f"profile_breakdown: error: '{path}': {e!r}; is it `iostune profile --json` "
                  "output?", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
