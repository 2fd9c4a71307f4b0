#!/usr/bin/env python3
"""ONNX correctness on the GPU: torchvision models at full size, iostune's GPU engine against
PyTorch on the same GPU.

For each of inception_v3 (299 px), googlenet, squeezenet1_1, resnet50 (224 px), with the seeded
weights and export settings of tests/fixtures/export_torchvision.py:
  1. export to ONNX with PyTorch (TorchScript exporter), plus a seeded input;
  2. run PyTorch on the GPU with TF32 on and with TF32 off (strict fp32);
  3. run `iostune run --backend gpu` with --precision tf32 / fp32 and --schedule sequential, and
     --schedule best after `iostune search` stored a schedule for the imported model;
  4. print max|iostune - torch| / max|torch| for each pair (targets: 1e-3 TF32, 1e-4 fp32).

    python3 scripts/gpu_onnx_check.py --iostune BUILD/cli/iostune --out OUT_DIR
    [--models resnet50 ...] [--no-best] [--search-args "--cost measured"]
Exit status 1 if any comparison misses its target.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
import export_torchvision as fx  # noqa: E402

TARGET = {"tf32": 1e-3, "fp32": 1e-4}


def relative_error(got, want):
    scale = float(want.abs().max())
    return float((got - want).abs().max()) / (scale if scale > 0 else 1.0)


def run(cmd, log):
    t0 = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(f"$ {shlex.join(cmd)}\n{proc.stdout}(exit {proc.returncode}, {time.time() - t0:.1f} s)\n\n")
    log.flush()
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed:\n{proc.stdout}")
    return proc.stdout


def torch_gpu_output(model, x, tf32):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    with torch.no_grad():
        return model(x.cuda()).float().cpu()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iostune", required=True, help="path to the iostune binary")
    ap.add_argument("--out", default="gpu_onnx_check")
    ap.add_argument("--models", nargs="*", default=list(fx.TORCHVISION))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--no-best", action="store_true", help="skip the search + best schedule runs")
    ap.add_argument("--search-args", default="", help="extra arguments for `iostune search`")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_onnx_check: PyTorch sees no CUDA device")
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "commands.log"), "w")
    print(f"torch {torch.__version__}, GPU {torch.cuda.get_device_name()}, iostune {args.iostune}")

    rows, ok = [], True
    for i, name in enumerate(args.models):
        _, _, size = fx.TORCHVISION[name]
        opts = fx.CI_EXPORTS[name]
        model = fx.torchvision_model(name, size)
        shape = (args.batch, 3, size, size)
        x = fx.seeded_input(shape, fx.SEED + 10 * i)
        onnx_path = os.path.join(args.out, f"{name}.onnx")
        fx.export(model, x, onnx_path, opset=opts["opset"], keep_bn=opts["keep_bn"],
                  dynamic_batch=opts["dynamic_batch"])
        in_path = os.path.join(args.out, f"{name}.input.bin")
        fx.save_raw(in_path, x)
        model = model.cuda()
        torch_out = {m: torch_gpu_output(model, x, m == "tf32") for m in ("tf32", "fp32")}
        model = model.cpu()
        torch.cuda.empty_cache()

        runs = [(m, "sequential") for m in ("tf32", "fp32")]
        if not args.no_best:
            runs += [(m, "best") for m in ("tf32", "fp32")]
        for math, schedule in runs:
            db = os.path.join(args.out, f"{name}.{math}.db")
            if schedule == "best" and not os.path.exists(db):
                run([args.iostune, "search", "--model", onnx_path, "--batch", str(args.batch),
                     "--db", db, "--math", math] + shlex.split(args.search_args), log)
            out_path = os.path.join(args.out, f"{name}.{math}.{schedule}.out.bin")
            cmd = [args.iostune, "run", "--model", onnx_path, "--batch", str(args.batch), "--input",
                   in_path, "--output", out_path, "--backend", "gpu", "--precision", math,
                   "--schedule", schedule]
            if schedule == "best":
                cmd += ["--db", db]
            run(cmd, log)
            got = torch.from_numpy(fx_read(out_path)).reshape(torch_out[math].shape)
            err_same = relative_error(got, torch_out[math])
            err_strict = relative_error(got, torch_out["fp32"])
            passed = err_same <= TARGET[math]
            ok &= passed
            rows.append(dict(model=name, image=size, batch=args.batch, opset=opts["opset"],
                             math=math, schedule=schedule, rel_err_vs_torch_same_math=err_same,
                             rel_err_vs_torch_fp32=err_strict, target=TARGET[math], passed=passed))
            print(f"{name:14s} {size}px b{args.batch} {math} {schedule:10s} "
                  f"vs torch-{math}: {err_same:.2e}  vs torch-fp32: {err_strict:.2e}  "
                  f"(target {TARGET[math]:.0e}) {'PASS' if passed else 'FAIL'}", flush=True)
        tt = relative_error(torch_out["tf32"], torch_out["fp32"])
        print(f"{name:14s} torch-tf32 vs torch-fp32: {tt:.2e} (PyTorch's own TF32 effect)")
        rows.append(dict(model=name, torch_tf32_vs_fp32=tt))

    meta = dict(torch=torch.__version__, gpu=torch.cuda.get_device_name(),
                date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    with open(os.path.join(args.out, "gpu_onnx_check.json"), "w") as f:
        json.dump(dict(meta=meta, results=rows), f, indent=1)
    print("ALL PASS" if ok else "SOME COMPARISONS MISSED THEIR TARGET")
    sys.exit(0 if ok else 1)


def fx_read(path):
    import numpy
    return numpy.fromfile(path, dtype="<f4")


if __name__ == "__main__":
    main()
