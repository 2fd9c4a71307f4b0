"""How far iostune's fp16/bf16 output is from the fp32 CPU reference, beside PyTorch's own error
in the same precision on the same model, weights and input: the yardstick for iostune's error
bounds (tests/gpu/engine_fixtures.h). Runs on the GPU machine.

For each zoo model: `iostune export` with seeded weights, a seeded uniform [-1, 1) input,
`iostune run --backend cpu` (the fp32 reference), `iostune run --backend gpu --precision P` for
each precision P, and the same model in PyTorch (scripts/bench/iostune_json_to_torch.py, the
exported weights) converted to P, channels-last for fp16/bf16 (what users deploy; TF32 and fp32
keep NCHW). The error is the L2 relative error of the logits, ||out - ref|| / ||ref||; the ratio
is iostune's error over PyTorch's. Writes a table to stdout and yardstick.json to --out.

  python3 scripts/precision_yardstick.py --iostune .devpack/iostune [--models ...] [--batch N]
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
from iostune_json_to_torch import IostuneModule  # noqa: E402

MODELS = ("inception_v3", "googlenet", "squeezenet1_1", "resnet50", "nasnet_a_large", "randwire")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
          "bf16": torch.bfloat16}


def read_floats(path):
    with open(path, "rb") as f:
        data = f.read()
    return torch.tensor(struct.unpack(f"<{len(data) // 4}f", data), dtype=torch.float64)


def relative_error(out, ref):
    return float((out.double() - ref).norm() / ref.norm().clamp_min(1e-30))


def iostune(binary, *args):
    cmd = [binary, *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def torch_output(module, x, precision):
    """The module's logits in `precision` on the GPU, as float64 on the CPU."""
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    dtype = DTYPES[precision]
    fmt = torch.channels_last if dtype != torch.float32 else torch.contiguous_format
    m = module.to(device="cuda", dtype=dtype, memory_format=fmt)
    with torch.inference_mode():
        y = m(x.to(device="cuda", dtype=dtype).contiguous(memory_format=fmt))
    return y.float().cpu().reshape(-1).double()


def check_model(binary, model, batch, seed, tmp):
    path = os.path.join(tmp, f"{model}.json")
    iostune(binary, "export", "--model", model, "-o", path, "-w",
            os.path.join(tmp, f"{model}.bin"), "--seed", str(seed))
    module = IostuneModule.from_file(path, load_weights=True).eval()
    c, h, w = module.input_chw
    x = torch.rand(batch, c, h, w, generator=torch.Generator().manual_seed(seed)) * 2 - 1
    inp = os.path.join(tmp, f"{model}_input.bin")
    x.numpy().astype("<f4").tofile(inp)
    ref_path = os.path.join(tmp, f"{model}_ref.bin")
    began = time.perf_counter()
    iostune(binary, "run", "--model", path, "--batch", str(batch), "--input", inp, "-o", ref_path,
            "--backend", "cpu")
    ref = read_floats(ref_path)
    rows = []
    for precision in PRECISIONS:
        out_path = os.path.join(tmp, f"{model}_{precision}.bin")
        iostune(binary, "run", "--model", path, "--batch", str(batch), "--input", inp, "-o",
                out_path, "--backend", "gpu", "--precision", precision)
        ours = relative_error(read_floats(out_path), ref)
        theirs = relative_error(torch_output(module, x, precision), ref)
        rows.append({"model": model, "batch": batch, "precision": precision,
                     "iostune_error": ours, "torch_error": theirs,
                     "ratio": ours / theirs if theirs > 0 else None,
                     "layout": "nchw" if precision == "fp32" else "nhwc"})
        print(f"{model:>15} b{batch} {precision}: iostune {ours:.3e}  torch {theirs:.3e}  "
              f"ratio {rows[-1]['ratio'] or float('nan'):.2f}", flush=True)
    print(f"{model:>15}: {time.perf_counter() - began:.1f} s", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iostune", required=True)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    args = parser.parse_args(argv)
    torch.backends.cudnn.benchmark = True
    rows = []
    with tempfile.TemporaryDirectory(prefix="iostune-yardstick-") as tmp:
        for model in args.models:
            try:
                rows += check_model(os.path.abspath(args.iostune), model, args.batch, args.seed, tmp)
            except RuntimeError as e:
                print(f"{model}: FAILED: {e}", flush=True)
                rows.append({"model": model, "batch": args.batch, "error": str(e)})
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "yardstick.json"), "w", encoding="utf-8") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "rows": rows}, f, indent=1)
    print("\n| model | precision | iostune L2 rel. error | torch L2 rel. error | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | - | FAILED | - | - |")
            continue
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        print(f"| {r['model']} | {r['precision']} | {r['iostune_error']:.2e} | "
              f"{r['torch_error']:.2e} | {ratio} |")
    worst = [r for r in rows if r.get("ratio") and r["precision"] in ("fp16", "bf16")]
    if worst:
        top = max(worst, key=lambda r: r["ratio"])
        print(f"\nworst 16-bit ratio: {top['ratio']:.2f} ({top['model']} {top['precision']}); "
              f"the target is <= 2")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
