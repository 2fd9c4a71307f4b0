"""Runs an iostune JSON model (docs/model-format.md; written by `iostune export`) as a torch
nn.Module, so a PyTorch peer executes exactly the architecture iostune schedules: same ops, same
attributes, same edges (batch norm is already folded into the convolutions there).

The module runs in any dtype and memory format it is converted to (torch_peers.py --precision
fp16/bf16: `.to(dtype, memory_format=torch.channels_last)`): its ops reshape and flatten, never
`.view`, so channels-last activations pass through (`torch_peers.py --check-cpu --precision bf16`
compares it with its float32 output).

Library use:   model = IostuneModule.from_file("nasnet_a_large.json", seed=1)
Command line:  python3 iostune_json_to_torch.py MODEL.json [--batch N] [--run]
               prints the op count, parameter count and output shape (--run: a CPU forward).
Oracle check:  python3 iostune_json_to_torch.py --oracle IOSTUNE_BIN --model NAME [--batch N]
               exports NAME with its weights, runs `iostune run --backend cpu` (iostune's fp32
               reference) and this module on the same input; they must agree (max |diff| over
               max |output| below --tolerance): the torch peer computes the same function.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch import nn

FORMAT = "iostune-model"
VERSION = 1
WEIGHTS_LAYOUT = "per op in id order, param_shapes() order, row-major, little-endian"
KINDS = ("conv", "sepconv", "maxpool", "avgpool", "concat", "add", "relu", "linear", "softmax",
         "identity")


class ModelFormatError(Exception):
    """A model file this interpreter cannot run; the message names the file and the op."""


def window_output(size, kernel, stride, pad, dilation, ceil_mode):
    """torch's conv/pool output size, including ceil_mode's rule that the last window starts
    inside the left-padded input (mirrors src/graph.cpp)."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    if span < 0:
        return 0
    out = (span + stride - 1) // stride + 1 if ceil_mode else span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


class _Op(nn.Module):
    """One iostune operator: its parameters (if any) and how it maps its inputs to its output."""

    def __init__(self, kind, attrs, in_shape):
        super().__init__()
        self.kind = kind
        self.attrs = attrs
        c = in_shape[0]
        a = attrs
        if kind == "conv":
            self.conv = nn.Conv2d(c, a["out_channels"], (a["kernel_h"], a["kernel_w"]),
                                  stride=(a["stride_h"], a["stride_w"]),
                                  padding=(a["pad_h"], a["pad_w"]),
                                  dilation=(a["dilation_h"], a["dilation_w"]),
                                  groups=a["groups"], bias=a["bias"])
        elif kind == "sepconv":
            # The depthwise part carries stride/pad/dilation and no bias; the pointwise part
            # carries the folded batch norm's bias (src/graph.h, SepConvAttrs).
            self.depthwise = nn.Conv2d(c, c, a["kernel"], stride=a["stride"], padding=a["pad"],
                                       dilation=a["dilation"], groups=c, bias=False)
            self.pointwise = nn.Conv2d(c, a["out_channels"], 1, bias=a["bias"])
        elif kind == "linear":
            self.fc = nn.Linear(in_shape[0] * in_shape[1] * in_shape[2], a["out_features"],
                                bias=a["bias"])

    def parameter_tensors(self):
        """Parameters in the order of iostune's param_shapes() (the weights file layout)."""
        if self.kind == "conv":
            layers = [self.conv]
        elif self.kind == "sepconv":
            layers = [self.depthwise, self.pointwise]
        elif self.kind == "linear":
            layers = [self.fc]
        else:
            return []
        weights = [layer.weight for layer in layers]
        bias = layers[-1].bias
        return weights + ([bias] if bias is not None else [])

    def forward(self, inputs):
        a = self.attrs
        k = self.kind
        x = inputs[0]
        if k == "conv":
            y = self.conv(x)
            return F.relu(y) if a["relu"] else y
        if k == "sepconv":
            if a["pre_relu"]:
                x = F.relu(x)  # not in place: the input tensor has other consumers
            return self.pointwise(self.depthwise(x))
        if k in ("maxpool", "avgpool"):
            if a["global"]:
                return (F.adaptive_max_pool2d(x, 1) if k == "maxpool"
                        else F.adaptive_avg_pool2d(x, 1))
            kernel = (a["kernel_h"], a["kernel_w"])
            stride = (a["stride_h"], a["stride_w"])
            pad = (a["pad_h"], a["pad_w"])
            if k == "maxpool":
                return F.max_pool2d(x, kernel, stride, pad, ceil_mode=a["ceil_mode"])
            return F.avg_pool2d(x, kernel, stride, pad, ceil_mode=a["ceil_mode"],
                                count_include_pad=a["count_include_pad"])
        if k == "concat":
            return torch.cat(inputs, dim=1)
        if k == "add":
            y = inputs[0]
            for other in inputs[1:]:
                y = y + other
            return F.relu(y) if a["relu"] else y
        if k == "relu":
            return F.relu(x)
        if k == "linear":
            y = self.fc(torch.flatten(x, 1))
            return y.reshape(y.shape[0], y.shape[1], 1, 1)  # iostune's N x out x 1 x 1
        if k == "softmax":
            return F.softmax(x, dim=1)
        return x  # identity


class IostuneModule(nn.Module):
    """A whole iostune model. Tensors are dropped after their last consumer, as an engine's
    memory plan would, so eager peak memory stays comparable to torchvision models."""

    def __init__(self, doc, source="<model>"):
        super().__init__()
        self.source = source
        self.name, self.input_chw, specs = _parse(doc, source)
        self.ops = nn.ModuleList()
        self.inputs = []
        self.shapes = []  # C, H, W of each op's output (batch excluded)
        for i, spec in enumerate(specs):
            in_shapes = [self.input_chw if s == -1 else self.shapes[s] for s in spec["inputs"]]
            try:
                shape = _infer_shape(spec["op"], spec["attrs"], in_shapes)
            except ValueError as e:
                raise ModelFormatError(f"{source}: ops[{i}] '{spec['name']}': {e}") from None
            self.ops.append(_Op(spec["op"], spec["attrs"], in_shapes[0]))
            self.inputs.append(tuple(spec["inputs"]))
            self.shapes.append(shape)
        last_use = {}
        for i, ins in enumerate(self.inputs):
            for s in ins:
                last_use[s] = i
        # Per op: the tensors whose last reader it is (freed after it runs).
        self.frees = [tuple(s for s in set(ins) if last_use[s] == i and s != len(self.inputs) - 1)
                      for i, ins in enumerate(self.inputs)]
        self.weights_file = doc.get("weights", {}).get("file")

    @classmethod
    def from_file(cls, path, seed=1, load_weights=False):
        """Builds the module from a model file. Parameters are seeded He-normal, or, with
        load_weights, read from the model's raw float32 weights file (bit-identical to what
        iostune runs)."""
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise ModelFormatError(f"{path}: cannot read the model: {e}") from None
        module = cls(doc, path)
        if load_weights:
            if not module.weights_file:
                raise ModelFormatError(f"{path}: the model names no weights file; export it with "
                                       "`iostune export --model M -o FILE.json -w FILE.bin`")
            weights = module.weights_file
            if not os.path.isabs(weights):
                weights = os.path.join(os.path.dirname(os.path.abspath(path)), weights)
            module.load_raw_weights(weights)
        else:
            module.init_seeded(seed)
        return module

    def init_seeded(self, seed):
        """He-normal weights (fan-in) and small biases from a seeded generator."""
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for op in self.ops:
                for p in op.parameter_tensors():
                    if p.dim() > 1:
                        fan_in = p[0].numel()
                        p.copy_(torch.randn(p.shape, generator=gen) * (2.0 / fan_in) ** 0.5)
                    else:
                        p.copy_(torch.randn(p.shape, generator=gen) * 0.01)

    def load_raw_weights(self, path):
        tensors = [p for op in self.ops for p in op.parameter_tensors()]
        needed = sum(p.numel() for p in tensors)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ModelFormatError(f"{self.source}: cannot read weights file '{path}': {e}") from None
        if len(data) != 4 * needed:
            raise ModelFormatError(f"{self.source}: weights file '{path}' has {len(data)} bytes, "
                                   f"the model needs {needed} float32 values ({4 * needed} bytes)")
        offset = 0
        with torch.no_grad():
            for p in tensors:
                n = p.numel()
                values = struct.unpack_from(f"<{n}f", data, offset)
                p.copy_(torch.tensor(values, dtype=torch.float32).reshape(p.shape))
                offset += 4 * n

    def parameter_count(self):
        return sum(p.numel() for op in self.ops for p in op.parameter_tensors())

    def forward(self, x):
        values = {-1: x}
        for i, op in enumerate(self.ops):
            values[i] = op([values[s] for s in self.inputs[i]])
            for s in self.frees[i]:
                del values[s]
        return values[len(self.ops) - 1]


def _parse(doc, source):
    """Checks the parts of the format the interpreter relies on; iostune itself validates the
    rest when it writes the file."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelFormatError(f"{source}: not an iostune model file (format must be {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise ModelFormatError(f"{source}: unsupported version {doc.get('version')!r} "
                               f"(this interpreter reads version {VERSION})")
    try:
        inp = doc["input"]
        chw = (int(inp["channels"]), int(inp["height"]), int(inp["width"]))
        ops = doc["ops"]
    except (KeyError, TypeError, ValueError) as e:
        raise ModelFormatError(f"{source}: missing or malformed 'input'/'ops': {e}") from None
    if "weights" in doc and doc["weights"].get("layout") != WEIGHTS_LAYOUT:
        raise ModelFormatError(f"{source}: weights.layout is not {WEIGHTS_LAYOUT!r}")
    specs = []
    for i, op in enumerate(ops):
        where = f"{source}: ops[{i}]"
        if op.get("id") != i:
            raise ModelFormatError(f"{where}: id {op.get('id')!r} is not its position {i}")
        if op.get("op") not in KINDS:
            raise ModelFormatError(f"{where}: unknown operator {op.get('op')!r} "
                                   f"(known: {', '.join(KINDS)})")
        inputs = []
        for ref in op.get("inputs", []):
            if ref == "input":
                inputs.append(-1)
            elif isinstance(ref, int) and 0 <= ref < i:
                inputs.append(ref)
            else:
                raise ModelFormatError(f"{where}: input {ref!r} is neither \"input\" nor an "
                                       "earlier op id")
        if not inputs:
            raise ModelFormatError(f"{where}: an operator needs at least one input")
        specs.append({"name": op.get("name", f"op{i}"), "op": op["op"],
                      "attrs": dict(op.get("attrs", {})), "inputs": inputs})
    if not specs:
        raise ModelFormatError(f"{source}: the model has no operators")
    return doc.get("name", "model"), chw, specs


def _infer_shape(kind, a, ins):
    c, h, w = ins[0]
    if kind == "conv":
        return (a["out_channels"],
                window_output(h, a["kernel_h"], a["stride_h"], a["pad_h"], a["dilation_h"], False),
                window_output(w, a["kernel_w"], a["stride_w"], a["pad_w"], a["dilation_w"], False))
    if kind == "sepconv":
        return (a["out_channels"],
                window_output(h, a["kernel"], a["stride"], a["pad"], a["dilation"], False),
                window_output(w, a["kernel"], a["stride"], a["pad"], a["dilation"], False))
    if kind in ("maxpool", "avgpool"):
        if a["global"]:
            return (c, 1, 1)
        return (c,
                window_output(h, a["kernel_h"], a["stride_h"], a["pad_h"], 1, a["ceil_mode"]),
                window_output(w, a["kernel_w"], a["stride_w"], a["pad_w"], 1, a["ceil_mode"]))
    if kind == "concat":
        if any(s[1:] != ins[0][1:] for s in ins):
            raise ValueError(f"concat inputs differ in height/width: {ins}")
        return (sum(s[0] for s in ins), h, w)
    if kind == "add":
        if any(s != ins[0] for s in ins):
            raise ValueError(f"add inputs differ in shape: {ins}")
        return ins[0]
    if kind == "linear":
        return (a["out_features"], 1, 1)
    return ins[0]  # relu, softmax, identity


def oracle_check(binary, model, batch, tolerance, seed=1):
    """Relative max difference between iostune's CPU reference and this interpreter on the same
    exported weights and input; prints it and returns 0 when within tolerance."""
    with tempfile.TemporaryDirectory(prefix="iostune-oracle-") as tmp:
        path = os.path.join(tmp, f"{model}.json")

        def call(*args):
            cmd = [binary, *args]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise ModelFormatError(f"`{' '.join(cmd)}` failed: {done.stderr.strip()}")

        call("export", "--model", model, "-o", path, "-w", os.path.join(tmp, f"{model}.bin"),
             "--seed", str(seed))
        module = IostuneModule.from_file(path, load_weights=True).eval()
        c, h, w = module.input_chw
        x = torch.rand(batch, c, h, w, generator=torch.Generator().manual_seed(seed)) * 2 - 1
        x.numpy().astype("<f4").tofile(os.path.join(tmp, "input.bin"))
        call("run", "--model", path, "--batch", str(batch), "--input",
             os.path.join(tmp, "input.bin"), "-o", os.path.join(tmp, "output.bin"),
             "--backend", "cpu")
        with open(os.path.join(tmp, "output.bin"), "rb") as f:
            data = f.read()
        with torch.no_grad():
            y = module(x).reshape(-1)
        if len(data) != 4 * y.numel():
            raise ModelFormatError(f"{model}: iostune wrote {len(data) // 4} output values, "
                                   f"the interpreter {y.numel()}")
        ref = torch.tensor(struct.unpack(f"<{y.numel()}f", data))
        err = float((y - ref).abs().max() / ref.abs().max().clamp_min(1e-12))
    ok = err <= tolerance
    print(f"{model} batch {batch}: {len(module.ops)} ops, interpreter vs `iostune run --backend "
          f"cpu`: max |diff| / max |output| = {err:.2e} (tolerance {tolerance:g}) "
          f"{'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    if "--oracle" in (sys.argv[1:] if argv is None else argv):
        parser.add_argument("--oracle", required=True, metavar="IOSTUNE_BIN")
        parser.add_argument("--model", required=True, nargs="+", help="zoo model names")
        parser.add_argument("--batch", type=int, default=1)
        parser.add_argument("--tolerance", type=float, default=1e-4)
        args = parser.parse_args(argv)
        try:
            return max(oracle_check(args.oracle, m, args.batch, args.tolerance)
                       for m in args.model)
        except ModelFormatError as e:
            print(f"iostune_json_to_torch: error: {e}", file=sys.stderr)
            return 1
    parser.add_argument("model", help="iostune JSON model file (iostune export --model M -o F)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--load-weights", action="store_true",
                        help="use the raw weights file the model names instead of seeded ones")
    parser.add_argument("--run", action="store_true", help="also run one CPU forward pass")
    args = parser.parse_args(argv)
    try:
        module = IostuneModule.from_file(args.model, args.seed, args.load_weights).eval()
    except ModelFormatError as e:
        print(f"iostune_json_to_torch: error: {e}", file=sys.stderr)
        return 1
    c, h, w = module.input_chw
    print(f"{module.name}: {len(module.ops)} ops, {module.parameter_count()} parameters, "
          f"input {args.batch}x{c}x{h}x{w}, output {args.batch}x"
          + "x".join(str(d) for d in module.shapes[-1]))
    if args.run:
        with torch.no_grad():
            y = module(torch.randn(args.batch, c, h, w, generator=torch.Generator().manual_seed(0)))
        print(f"forward: output {tuple(y.shape)}, sum {float(y.sum()):.6g}")
        if tuple(y.shape[1:]) != module.shapes[-1]:
            print("iostune_json_to_torch: error: output shape differs from the inferred one",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
