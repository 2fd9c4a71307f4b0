#!/usr/bin/env python3
"""Where a model's GPU time goes, from `iostune profile --json` files: per operator kind, the
isolated kernel time, its share of the op sum, and how far it is from the roofline (each op's
max(FLOPs / peak FLOP/s, bytes / peak bandwidth), with the ceilings the profiler measured on the
device). Then the kernels that take the most time (by each op's main kernel, then every launch
of every op: an op's helper kernels, such as a separable convolution's pre-ReLU copy, show only
there; the forty-fourth session found 172 such copies in NASNet-A's batch-1 profile), and the slowest ops, each with its distance
from its own roofline (time / bound), so the next slow kernel is obvious. It answers "what holds
this model back": when ops already sum to more than a peer's whole latency, no schedule can close
the gap.

  /usr/bin/python3 scripts/bench/profile_breakdown.py P.json [P2.json ...] [--top 6] [--ops 15]
  /usr/bin/python3 scripts/bench/profile_breakdown.py --choices P.json [...]
  /usr/bin/python3 scripts/bench/profile_breakdown.py --self-test     (a canned profile, for CI)

--choices: where choosing the convolutions took its seconds instead (each shape timed in full
notes them since 8645017: cuDNN's find, each kind of candidate, the graph API's shortlists), and
what the fused-epilogue shortlist bought: on how many shapes a fused configuration was fastest,
and the per-shape bests (each shape once, however many ops share it; times alone) summed with the
fused shortlist cut to its first 1, 2, 3 ranks, beside none and all of it (docs/search-log.md, thirty-ninth session: finalizing that shortlist's run-time
compiled engines is nearly all of the choosing). Those sums are of times alone: the fortieth
session's cap of 2 kept 94-99% of them and still made the searches' schedules 1-4% slower.

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
    launches = defaultdict(lambda: {"count": 0, "us": 0.0})  # every kernel of every op
    for op in ops:
        for launch in op.get("kernel_times", []):
            entry = launches[short_kernel(launch["name"])]
            entry["count"] += 1
            entry["us"] += launch["us"]
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
    if launches:
        lines += ["", "| every kernel | launches | time ms | share |", "| --- | --- | --- | --- |"]
        for name, k in sorted(launches.items(), key=lambda kv: -kv[1]["us"])[:top]:
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


TIMED = re.compile(r"(?:^|, )([A-Z][A-Z_0-9]*(?: [A-Z_]+)?(?: [a-z+]+)?) ([0-9.]+) ms")


def timed_in_full(profile):
    """Per shape timed in full (a part of an op's candidates with "; seconds:"): its seconds
    by kind, the fused shortlist's times by rank, and the best of every other candidate."""
    shapes = []
    for op in profile["ops"]:
        for part in op.get("engine_candidates", "").split(" || "):
            seconds = re.search(r"; seconds: ([0-9.]+)((?:, [^,;]+ [0-9.]+)*)", part)
            if not seconds or "; timed: " not in part:
                continue
            kinds = {}
            for item in seconds.group(2).split(", ")[1:]:
                kind, value = item.rsplit(" ", 1)
                kinds[kind] = float(value)
            timed = part.split("; timed: ", 1)[1].split("; seconds:")[0].split("; two at once")[0]
            fused, other = {}, []
            for m in TIMED.finditer(timed):
                rank = re.fullmatch(r"GRAPH_(\d+) graph\+epilogue", m.group(1))
                if rank:
                    fused[int(rank.group(1))] = float(m.group(2))
                else:
                    other.append(float(m.group(2)))
            shapes.append({"op": op["name"], "seconds": float(seconds.group(1)), "kinds": kinds,
                           "fused": fused, "other": min(other) if other else None})
    return shapes


def choices(profile):
    shapes = timed_in_full(profile)
    title = (f"### Choosing convolutions: {profile['model']} batch {profile['batch']} "
             f"({profile.get('precision', profile.get('math'))}, {profile['device']['name']})")
    if not shapes:
        return f"{title}\n\nno convolution timed in full (pinned, cached, or chosen quickly)\n"
    total = sum(s["seconds"] for s in shapes)
    kinds = defaultdict(float)
    for s in shapes:
        for kind, value in s["kinds"].items():
            kinds[kind] += value
    lines = [title, "", f"{len(shapes)} shapes timed in full in {total:.1f} s", "",
             "| spent on | seconds | share |", "| --- | --- | --- |"]
    for kind, value in sorted(kinds.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {kind} | {value:.2f} | {100 * value / total:.1f}% |")
    # The per-shape best with the fused shortlist cut to its first `ranks` (None: all of it).
    def best_sum(ranks):
        return sum(min([s["other"]] + [ms for r, ms in s["fused"].items()
                                       if ranks is None or r < ranks])
                   for s in shapes if s["other"] is not None)
    without, with_all = best_sum(0), best_sum(None)
    wins = [s for s in shapes if s["fused"] and (s["other"] is None or
                                                 min(s["fused"].values()) < s["other"])]
    gain = without - with_all
    lines += ["", f"a fused-epilogue configuration was fastest on {len(wins)} of {len(shapes)} "
              f"shapes; the per-shape bests sum to {without:.4f} ms without the fused shortlist, "
              f"{with_all:.4f} ms with it", "",
              "| first fused ranks kept | per-shape bests, ms | of the fused gain |",
              "| --- | --- | --- |"]
    for ranks in (0, 1, 2, 3, None):
        ms = best_sum(ranks)
        share = f"{100 * (without - ms) / gain:.0f}%" if gain > 0 else "-"
        lines.append(f"| {'all' if ranks is None else ranks} | {ms:.4f} | {share} |")
    lines += ["", "(times alone: on EfficientNet-B1 a cap of 2 compiled configurations kept "
              "94-99% of the fused gain by this table and still cost the searches' schedules "
              "1-4%; docs/search-log.md, \"Fewer engines compiled\")"]
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
            "ops": [dict(op("conv_a", "conv", 40.0, 1e9, 1e6, roof=10.0),  # 10 us of FLOPs: 4x
                         engine_candidates=CANNED_A,  # its input staged by a copy first
                         kernel_times=[{"name": "_ZN7iostune11copy_kernelIfEEvv", "us": 8.0},
                                       {"name": "_ZN5cudnn11conv_kernelIfEEvv", "us": 32.0}]),
                    dict(op("conv_b", "conv", 20.0, 5e8, 1e6),  # no roofline_us: computed, 5 us
                         engine_candidates=CANNED_B),
                    op("relu_c", "relu", 10.0, 1e6, 8e6)]}  # 8 us of bytes: 1.25x


# conv_a: fused rank 1 fastest (0.006 against 0.010 unfused); conv_b: pinned, not timed in full
# (no seconds); a third shape inside conv_a's merge ("||"), fused rank 0 fastest.
CANNED_A = ("find: IMPLICIT_GEMM DEFAULT_MATH 0.0261 ms ok; timed: GEMM_0 0.0100 ms, graph API: "
            "2 of 9 heuristic engine configurations (GRAPH_0 = engine 28, GRAPH_1 = engine 58) "
            "(seconds: graph and heuristics 0.001, finalizing 0.010), fused graph API: 2 of 3 "
            "heuristic engine configurations (GRAPH_0 = engine 52, GRAPH_1 = engine 0), GRAPH_0 "
            "0.0120 ms, GRAPH_1 0.0110 ms, GRAPH_0 graph+epilogue 0.0080 ms, GRAPH_1 "
            "graph+epilogue 0.0060 ms, IMPLICIT_GEMM DEFAULT_MATH fused 0.0105 ms; seconds: "
            "2.000, find 0.100, gemm 0.050, graph shortlist 0.050, graph+epilogue shortlist "
            "1.700, legacy 0.100 || find: ; timed: DEPTHWISE_NHWC 0.0200 ms, GRAPH_0 "
            "graph+epilogue 0.0150 ms; seconds: 1.000, depthwise 0.010, graph+epilogue shortlist "
            "0.990")
CANNED_B = "pinned"


def self_test():
    text = breakdown(canned_profile(), top=6, top_ops=2)
    expected = ["| conv | 2 | 0.060 | 85.7% | 0.015 | 4.0x |",
                "| relu | 1 | 0.010 | 14.3% | 0.008 | 1.2x |",
                "| `cudnn::conv_kernel` | 2 | 0.060 | 85.7% |",
                "| conv_a | conv | 40.0 | 57.1% | 10.0 | 4.0x | compute | `cudnn::conv_kernel` |",
                "| conv_b | conv | 20.0 | 28.6% | 5.0 | 4.0x | compute |",
                "| `cudnn::conv_kernel` | 1 | 0.032 | 45.7% |",  # every launch
                "| `iostune::copy_kernel` | 1 | 0.008 | 11.4% |"]
    missing = [line for line in expected if line not in text]
    chosen = choices(canned_profile())
    for line in ["2 shapes timed in full in 3.0 s", "| graph+epilogue shortlist | 2.69 | 89.7% |",
                 "fastest on 2 of 2 shapes", "0.0300 ms without the fused shortlist, 0.0210 ms",
                 "| 0 | 0.0300 | 0% |", "| 1 | 0.0230 | 78% |", "| 2 | 0.0210 | 100% |",
                 "| all | 0.0210 | 100% |"]:
        if line not in chosen:
            missing.append(line)
            text += "\n" + chosen
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
    parser.add_argument("--choices", action="store_true",
                        help="where choosing the convolutions spent its seconds instead")
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
            print(choices(profile) if args.choices else breakdown(profile, args.top, args.ops))
        except (OSError, ValueError, KeyError) as e:
            print(f"profile_breakdown: error: '{path}': {e!r}; is it `iostune profile --json` "
                  "output?", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
