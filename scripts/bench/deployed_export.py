"""Exports the deployed models (issues 14 and 28) to ONNX for scripts/bench/deployed_models.sh,
built as torch_peers.py builds its peers (tests/fixtures/export_torchvision.py's seeded weights
and calibrated, perturbed batch-norm statistics; timm's models through timm.create_model), at
torch_peers.DEPLOYED_SIZES (--small: the CI fixtures' sizes), with their export settings
(torch_peers.export_settings: opset, batch norm kept or folded by PyTorch, symbolic batch) and
the TorchScript exporter (dynamo=False where torch has it). A model that cannot be built (timm's
without timm) is recorded with its error; the others are still exported.

    deployed_export.py OUT_DIR [--models efficientnet_b0 ...] [--small]

Writes OUT_DIR/<model>.onnx and OUT_DIR/export.json (per model: input shape, opset, export
settings, outputs, seconds).
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peers  # noqa: E402


def export_one(name, out_dir, small):
    fx = torch_peers.fixtures_module()
    began = time.perf_counter()
    model, size = torch_peers.deployed_model(name, small)
    opts = torch_peers.export_settings(name)
    path = os.path.join(out_dir, f"{name}.onnx")
    example = fx.seeded_input((1, 3, size, size), fx.SEED)
    fx.export(model, example, path, opts["opset"], keep_bn=opts["keep_bn"],
              dynamic_batch=opts["dynamic_batch"])
    with torch.no_grad():
        out = model(example)
    outputs = [list(t.shape) for t in (out if isinstance(out, (tuple, list)) else (out,))]
    return {"onnx": os.path.basename(path), "input_shape": [1, 3, size, size],
            "opset": opts["opset"], "keep_bn": opts["keep_bn"],
            "dynamic_batch": opts["dynamic_batch"], "output_shapes_b1": outputs,
            "bytes": os.path.getsize(path), "seconds": round(time.perf_counter() - began, 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--models", nargs="+", default=list(torch_peers.DEPLOYED_MODELS),
                        choices=torch_peers.DEPLOYED_MODELS)
    parser.add_argument("--small", action="store_true",
                        help="the CI fixtures' small input sizes (CPU tests)")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    done = {"torch": torch.__version__, "models": {}}
    failures = 0
    for name in args.models:
        try:
            entry = export_one(name, args.out_dir, args.small)
        except Exception as e:  # one model's export must not stop the others
            failures += 1
            done["models"][name] = {"error": f"{type(e).__name__}: {e}"}
            print(f"{name}: export FAILED: {type(e).__name__}: {e}", flush=True)
            continue
        done["models"][name] = entry
        print(f"{name}: exported {entry['input_shape']} opset {entry['opset']} "
              f"({entry['bytes'] / 2**20:.1f} MiB, {len(entry['output_shapes_b1'])} output(s), "
              f"{entry['seconds']} s)", flush=True)
    with open(os.path.join(args.out_dir, "export.json"), "w", encoding="utf-8") as f:
        json.dump(done, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
