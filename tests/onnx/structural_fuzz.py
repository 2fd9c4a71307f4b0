#!/usr/bin/python3
"""Structural fuzz of iostune's ONNX importer and CPU reference (issue 33).

Small models exported with PyTorch are mutated with the onnx Python API, seeded: dimensions,
attributes, op types, arity, names and sizes. Each mutated file goes through `iostune run
--backend cpu`'s steps (import, then the CPU reference) in onnx_cpu_run, which forks a child per
file instead of paying the CLI's start each time; every 20th file also goes through the CLI,
which must agree. The outcome must match what the mutation is known to be:

  same    benign (a symbolic batch, explicit default attributes, renamed nodes or tensors, an
          Identity, an unused optional output): exit 0 and an output bit for bit equal to the
          unmutated model's;
  refuse  invalid or past iostune's limits (more inputs than the op takes, an unknown attribute,
          a flag of 7, a size past 32 bits, a dangling name): exit 1 with one printable line;
  either  a valid model that computes something else (another activation, stride or size):
          exit 1 with one line, or exit 0 with finite values and as many as ONNX's own shape
          inference says the output has. Where onnx.checker (full check) rejects the model,
          the expectation becomes `refuse`.

Never exit 3 (an internal error), never a signal, never a hang, never a silently different
result. Prints the counts per mutation class. Exits 1 on any violation.

    /usr/bin/python3 structural_fuzz.py --iostune build/cli/iostune \
        --runner build/tests/onnx_cpu_run --work DIR [--seed N] [--per-class N]
"""
import argparse
import concurrent.futures
import copy
import os
import random
import subprocess
import sys
import time

try:
    import numpy as np
    import onnx
    import torch
    import torch.nn as nn
    from onnx import checker, helper, shape_inference
except Exception as e:  # no torch or onnx here: CTest reports the test as skipped
    print(f"skipped: {sys.executable} cannot import torch/onnx/numpy ({e})")
    sys.exit(0)

MAX_LINE = 3000  # longest error line accepted (the list of supported ops is most of one)
TIMEOUT_S = 60

# Values past what iostune's int sizes hold: they must be refused, never cut.
HUGE = [2**31, 2**32 + 1, 2**32 + 3, 2**62, 2**63 - 1]
HOSTILE_NAMES = [
    "",
    "a" * 10000,
    "nul\x00inside",
    "\x1b[31mred\x1b[0m",
    "line\nbreak\r",
    "caf\u00e9 \u202eevil",
    "quote'and\\backslash",
]


# ---- base models ---------------------------------------------------------------------------

class ConvNet(nn.Module):
    """Conv-BN-ReLU, MaxPool, a 1x1 branch beside an AveragePool, Add, Concat, LeakyReLU,
    global pooling and a classifier."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.branch = nn.Conv2d(8, 8, 1)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1)
        self.mix = nn.Conv2d(16, 12, 3, padding=1, stride=2)
        self.act = nn.LeakyReLU(0.1)
        self.head = nn.Linear(12, 5)

    def forward(self, x):
        x = self.pool(self.stem(x))
        y = self.branch(x) + self.avg(x)
        z = self.act(self.mix(torch.cat([y, x], 1)))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(z, 1), 1))


class MobileNet(nn.Module):
    """Strided conv, Hardswish, depthwise conv, ReLU6 (Clip), squeeze-excitation (Sigmoid, Mul),
    nearest upsampling and a 1x1 projection: a fully convolutional output."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.se_reduce = nn.Conv2d(8, 4, 1)
        self.se_expand = nn.Conv2d(4, 8, 1)
        self.project = nn.Conv2d(8, 6, 1)

    def forward(self, x):
        x = nn.functional.hardswish(self.stem(x))
        x = nn.functional.relu6(self.dw(x))
        s = torch.sigmoid(self.se_expand(torch.relu(self.se_reduce(x.mean((2, 3), keepdim=True)))))
        x = nn.functional.interpolate(x * s, scale_factor=2, mode="nearest")
        return self.project(x)


def export(module, path, size, opset):
    torch.manual_seed(7)
    module.eval()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
        torch.onnx.export(module, torch.randn(1, 3, size, size), path, opset_version=opset,
                          input_names=["x"], output_names=["y"], do_constant_folding=True)
    return onnx.load(path)


# ---- running iostune -----------------------------------------------------------------------

class Outcome:
    def __init__(self, code, stderr, values):
        self.code, self.stderr, self.values = code, stderr, values


def batch_of(model):
    """The batch to run at: the model's own where it fixes a small one, else 1 (iostune's
    default, which binds a symbolic batch)."""
    dim = model.graph.input[0].type.tensor_type.shape.dim
    value = dim[0].dim_value if len(dim) and dim[0].HasField("dim_value") else 1
    return value if 1 <= value <= 64 else 1


def case_files(work, tag):
    return tuple(os.path.join(work, f"{tag}{suffix}") for suffix in (".onnx", ".out.bin", ".err"))


def write_model(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def read_outcome(code, out, err):
    values = np.fromfile(out, dtype="<f4") if code == 0 and os.path.exists(out) else None
    with open(err, "rb") as f:
        return Outcome(code, f.read(), values)


def run_runner(runner, work, tagged_models):
    """onnx_cpu_run on [(tag, model)]: one process, a forked child per case."""
    listing = os.path.join(work, f"cases_{os.getpid()}_{id(tagged_models)}.txt")
    with open(listing, "w") as f:
        for tag, model in tagged_models:
            path, out, err = case_files(work, tag)
            write_model(model, path)
            if os.path.exists(out):
                os.remove(out)
            f.write(f"{path}\t{out}\t{batch_of(model)}\t{err}\n")
    r = subprocess.run([runner, listing], capture_output=True, text=True, check=True)
    codes = [int(line.split("\t")[1]) for line in r.stdout.splitlines()]
    return [read_outcome(code, *case_files(work, tag)[1:])
            for code, (tag, _) in zip(codes, tagged_models)]


def run_iostune(iostune, model, work, tag):
    path, out, err = case_files(work, tag + "_cli")
    write_model(model, path)
    if os.path.exists(out):
        os.remove(out)
    try:
        r = subprocess.run([iostune, "run", "--model", path, "--backend", "cpu", "--output", out,
                            "--batch", str(batch_of(model))],
                           capture_output=True, timeout=TIMEOUT_S)
        code = r.returncode
        stderr = r.stderr
    except subprocess.TimeoutExpired:
        code, stderr = "timeout", b""
    values = np.fromfile(out, dtype="<f4") if code == 0 and os.path.exists(out) else None
    return Outcome(code, stderr, values)


def same_outcome(cli, runner):
    """Why the CLI's outcome differs from the runner's, or None."""
    if cli.code != runner.code:
        return f"the CLI exits {cli.code}, the runner {runner.code}: {cli.stderr[:300]!r}"
    if cli.code == 0 and not np.array_equal(cli.values, runner.values):
        return "the CLI's output differs from the runner's"
    return None


def one_line_error(stderr):
    """Why `stderr` is not one printable `iostune: error:` line, or None."""
    text = stderr.decode("latin-1")
    if not text.startswith("iostune: error: "):
        return "does not start with 'iostune: error: '"
    if text.count("\n") != 1 or not text.endswith("\n"):
        return f"is {text.count(chr(10))} lines"
    if any(not (0x20 <= ord(c) < 0x7F) for c in text[:-1]):
        return "holds bytes that are not printable ASCII"
    if len(text) > MAX_LINE:
        return f"is {len(text)} characters long"
    return None


def without_recorded_shapes(model):
    """The model without the shapes the exporter recorded for the unmutated model (value_info,
    the output's dims), which strict inference would otherwise hold against a valid mutation."""
    m = copy.deepcopy(model)
    del m.graph.value_info[:]
    for output in m.graph.output:
        for k, dim in enumerate(output.type.tensor_type.shape.dim):
            dim.ClearField("dim_value")
            dim.dim_param = f"out{k}"
    return m


def inferred_size(model):
    """The element count ONNX's shape inference gives the first output, or None if unknown."""
    try:
        inferred = shape_inference.infer_shapes(without_recorded_shapes(model), strict_mode=True)
        dims = inferred.graph.output[0].type.tensor_type.shape.dim
        size = 1
        for d in dims:
            if not d.HasField("dim_value"):
                return None
            size *= d.dim_value
        return size if dims else None
    except Exception:
        return None


def onnx_accepts(model):
    try:
        checker.check_model(without_recorded_shapes(model), full_check=True)
        return True
    except Exception:
        return False


# ---- mutations -----------------------------------------------------------------------------
# Each takes (model, rng) and returns (mutated model, expectation, description) or None when the
# model has nothing it applies to.

def nodes_of(model, *op_types):
    return [n for n in model.graph.node if not op_types or n.op_type in op_types]


def attribute(node, name):
    for a in node.attribute:
        if a.name == name:
            return a
    return None


def set_ints(node, name, values):
    a = attribute(node, name)
    if a is None:
        node.attribute.append(helper.make_attribute(name, values))
    else:
        del a.ints[:]
        a.ints.extend(values)


def input_dims(model):
    return model.graph.input[0].type.tensor_type.shape.dim


def mutate_dims(m, rng):
    dims = input_dims(m)
    kind = rng.randrange(4)
    if kind == 0:
        dims[0].ClearField("dim_value")
        dims[0].dim_param = "batch"
        return m, "same", "symbolic batch"
    axis = rng.randrange(4)
    if kind == 1:
        value = rng.choice(HUGE)
        dims[axis].dim_value = value
        return m, "refuse", f"input dim {axis} = {value}"
    if kind == 2:
        value = rng.choice([0, -1, -7])
        dims[axis].ClearField("dim_param")
        dims[axis].dim_value = value
        return m, "refuse", f"input dim {axis} = {value}"
    value = rng.choice([2, 3, 5, 8, 12, 20, 33])
    if axis == 1:
        value = rng.choice([1, 4])  # the stem's weights take 3 channels
    dims[axis].dim_value = value
    return m, "either", f"input dim {axis} = {value}"


def mutate_attributes(m, rng):
    kind = rng.randrange(7)
    convs = nodes_of(m, "Conv")
    node = rng.choice(convs)
    if kind == 0:
        name, value = rng.choice([("transB", 1), ("kernel_shap", [3, 3]), ("alpha", 0.5),
                                  ("ceil_mode", 0)])
        node.attribute.append(helper.make_attribute(name, value))
        return m, "refuse", f"{node.name}: unknown attribute {name}"
    if kind == 1:
        defaults = [("dilations", [1, 1]), ("group", None), ("auto_pad", "NOTSET")]
        name, value = rng.choice(defaults)
        if attribute(node, name) is not None:
            return None
        if name == "group":
            value = 1
        node.attribute.append(helper.make_attribute(name, value))
        return m, "same", f"{node.name}: explicit default {name}"
    if kind == 2:
        pools = nodes_of(m, "MaxPool", "AveragePool") or convs
        pool = rng.choice(pools)
        counted = pool.op_type == "AveragePool" and rng.randrange(2)
        flag = "count_include_pad" if counted else "ceil_mode"
        if pool.op_type == "Conv":
            return None
        value = rng.choice([7, -1, 2])
        a = attribute(pool, flag)
        if a is None:
            pool.attribute.append(helper.make_attribute(flag, value))
        else:
            a.i = value
        return m, "refuse", f"{pool.name}: {flag} = {value}"
    if kind == 3:
        name = rng.choice(["pads", "strides", "dilations"])
        value = rng.choice(HUGE)
        values = {"pads": [1, 1, 1, 1], "strides": [1, 1], "dilations": [1, 1]}[name]
        values[rng.randrange(len(values))] = value
        set_ints(node, name, values)
        return m, "refuse", f"{node.name}: {name} = {values}"
    if kind == 4:
        a = rng.choice(list(node.attribute) or [None])
        if a is None:
            return None
        if a.type == onnx.AttributeProto.INTS:
            ints = list(a.ints)
            a.ClearField("ints")
            a.type = onnx.AttributeProto.INT
            a.i = ints[0] if ints else 0
        else:
            a.type = onnx.AttributeProto.FLOAT
            a.f = 1.0
        return m, "refuse", f"{node.name}: attribute {a.name} retyped"
    if kind == 5:
        name, values = rng.choice([("strides", [0, 1]), ("pads", [-1, 0, 0, 0]),
                                   ("dilations", [0, 1])])
        set_ints(node, name, values)
        return m, "refuse", f"{node.name}: {name} = {values}"
    name, values = rng.choice([("strides", [2, 2]), ("strides", [1, 2]), ("dilations", [2, 2]),
                               ("pads", [0, 0, 0, 0]), ("pads", [2, 2, 2, 2])])
    set_ints(node, name, values)
    return m, "either", f"{node.name}: {name} = {values}"


def mutate_op_types(m, rng):
    kind = rng.randrange(4)
    if kind == 0:
        node = rng.choice(nodes_of(m))
        node.op_type = rng.choice(["Foo", "relu", "Softsign", "\x1b[2J", "Q" * 8000,
                                   "Conv\x00Relu"])
        return m, "refuse", f"{node.name}: op type made unknown"
    unary = nodes_of(m, "Relu", "LeakyRelu", "Sigmoid", "HardSwish", "Clip")
    if kind == 1 and unary:
        node = rng.choice([n for n in unary if n.op_type != "Clip"] or unary)
        if node.op_type == "Clip":
            return None
        # HardSwish only where the model's opset has it (iostune reads newer ops leniently).
        opset = m.opset_import[0].version
        new = rng.choice(["Relu", "Sigmoid", "Tanh", "LeakyRelu"] + ["HardSwish"] * (opset >= 14))
        node.op_type = new
        # An attribute of the old op stays: the new one does not have it (LeakyRelu's alpha).
        expect = "refuse" if len(node.attribute) and new != "LeakyRelu" else "either"
        return m, expect, f"{node.name}: {new}"
    binary = nodes_of(m, "Add", "Mul")
    if kind == 2 and binary:
        node = rng.choice(binary)
        node.op_type = rng.choice(["LeakyRelu", "Relu", "Sigmoid"])
        return m, "refuse", f"{node.name}: a binary op made {node.op_type} (two inputs)"
    if unary:
        node = rng.choice([n for n in unary if len(n.input) == 1] or [None])
        if node is None:
            return None
        node.op_type = rng.choice(["Add", "Mul", "Concat"])
        if node.op_type == "Concat":
            node.attribute.append(helper.make_attribute("axis", 1))
            del node.attribute[:-1]
            return m, "either", f"{node.name}: a one-input Concat in its place"
        return m, "refuse", f"{node.name}: a one-input {node.op_type}"
    return None


def mutate_arity(m, rng):
    kind = rng.randrange(6)
    if kind == 0:
        node = rng.choice(nodes_of(m, "Relu", "LeakyRelu", "Sigmoid", "HardSwish", "MaxPool",
                                   "Flatten", "GlobalAveragePool"))
        node.input.append(node.input[0])
        return m, "refuse", f"{node.name}: an extra input"
    if kind == 1:
        node = rng.choice(nodes_of(m, "Add", "Mul", "Concat", "Gemm", "Conv"))
        if node.op_type == "Concat":
            if len(node.input) < 2:
                return None
            del node.input[-1]
            return m, "either", f"{node.name}: an input dropped"
        del node.input[1:]
        return m, "refuse", f"{node.name}: inputs cut to one"
    if kind == 2:
        node = rng.choice(nodes_of(m, "Conv"))
        if len(node.input) < 3:
            return None
        del node.input[2]
        return m, "either", f"{node.name}: bias dropped"
    if kind == 3:
        node = rng.choice(nodes_of(m, "Conv", "Gemm"))
        node.input[rng.choice([0, 1])] = ""
        return m, "refuse", f"{node.name}: a required input left empty"
    if kind == 4:
        node = rng.choice(nodes_of(m, "Relu", "Conv", "Add", "Sigmoid", "Mul"))
        node.output.append(f"{node.output[0]}_extra")
        return m, "refuse", f"{node.name}: an extra output"
    pools = nodes_of(m, "MaxPool")
    if not pools:
        return None
    pools[0].output.append("unused_indices")
    return m, "same", f"{pools[0].name}: its optional Indices output, unused"


def all_uses(m, name):
    """Every place the tensor `name` is named: node inputs and outputs, graph outputs."""
    places = []
    for n in m.graph.node:
        places += [(n.input, i) for i, v in enumerate(n.input) if v == name]
        places += [(n.output, i) for i, v in enumerate(n.output) if v == name]
    places += [(None, o) for o in m.graph.output if o.name == name]
    return places


def rename_tensor(m, old, new):
    for seq, i in all_uses(m, old):
        if seq is None:
            i.name = new
        else:
            seq[i] = new


def mutate_names(m, rng):
    kind = rng.randrange(5)
    hostile = rng.choice(HOSTILE_NAMES)
    if kind == 0:
        node = rng.choice(nodes_of(m))
        node.name = hostile
        return m, "same", f"node renamed to {hostile[:20]!r}"
    internal = [o for n in m.graph.node for o in n.output if o != m.graph.output[0].name]
    if kind == 1:
        if not hostile:
            return None
        rename_tensor(m, rng.choice(internal), hostile)
        return m, "same", f"tensor renamed to {hostile[:20]!r} everywhere"
    if kind == 2:
        node = rng.choice([n for n in m.graph.node if n.input])
        node.input[0] = hostile or "nowhere"
        return m, "refuse", f"{node.name}: input 0 dangling as {hostile[:20]!r}"
    if kind == 3:
        # Two nodes assign the same tensor: ONNX graphs are single assignment.
        a, b = rng.sample([n for n in m.graph.node], 2)
        if a.output[0] == m.graph.output[0].name or b.output[0] == m.graph.output[0].name:
            return None
        b.output[0] = a.output[0]
        return m, "refuse", f"{b.name} also writes {a.output[0]!r}"
    # An Identity between a node and its readers.
    node = rng.choice([n for n in m.graph.node if n.output[0] != m.graph.output[0].name])
    old = node.output[0]
    node.output[0] = old + "_pre"
    index = list(m.graph.node).index(node)
    m.graph.node.insert(index + 1, helper.make_node("Identity", [old + "_pre"], [old],
                                                    name=hostile))
    return m, "same", f"Identity after {node.name}"


def mutate_sizes(m, rng):
    kind = rng.randrange(5)
    inits = [t for t in m.graph.initializer if len(t.dims) > 0]
    if kind == 0:
        t = rng.choice(inits)
        d = rng.randrange(len(t.dims))
        t.dims[d] = t.dims[d] + rng.choice([1, -1, 2])
        return m, "refuse", f"initializer {t.name} dim {d} changed"
    if kind == 1:
        t = rng.choice(inits)
        t.dims[rng.randrange(len(t.dims))] = rng.choice(HUGE)
        return m, "refuse", f"initializer {t.name} dim made huge"
    dims = input_dims(m)
    if kind == 2:
        # Within the element limit per axis, past it in elements or in this machine's memory.
        dims[2].dim_value = rng.choice([50000, 200000, 2**31 - 1])
        dims[3].dim_value = rng.choice([50000, 2**31 - 1])
        return m, "refuse", f"input {dims[2].dim_value}x{dims[3].dim_value}"
    if kind == 3:
        t = rng.choice(inits)
        t.raw_data = t.raw_data[: len(t.raw_data) // 2]
        del t.float_data[len(t.float_data) // 2:]
        return m, "refuse", f"initializer {t.name} data halved"
    scale = rng.choice([2, 3])
    dims[2].dim_value *= scale
    dims[3].dim_value *= scale
    return m, "either", f"input spatial size x{scale}"


CLASSES = {
    "dims": mutate_dims,
    "attributes": mutate_attributes,
    "op types": mutate_op_types,
    "arity": mutate_arity,
    "names": mutate_names,
    "sizes": mutate_sizes,
}


# ---- the fuzz loop -------------------------------------------------------------------------

def judge(outcome, expect, reference, expected_size):
    """Why `outcome` violates `expect`, or None."""
    if outcome.code == "timeout":
        return f"no answer within {TIMEOUT_S} s"
    if outcome.code not in (0, 1):
        return f"exit {outcome.code} (3: internal error, negative: a signal): {outcome.stderr!r}"
    if outcome.code == 1:
        why = one_line_error(outcome.stderr)
        if why:
            return f"the error {why}: {outcome.stderr[:400]!r}"
        if expect == "same":
            return f"a benign mutation was refused: {outcome.stderr.decode('latin-1').strip()}"
        return None
    if expect == "refuse":
        return "an invalid model was accepted (exit 0)"
    values = outcome.values
    if values is None or not np.all(np.isfinite(values)):
        return "exit 0 with a missing or non-finite output"
    if expect == "same":
        if values.shape != reference.shape or not np.array_equal(values, reference):
            return "a benign mutation changed the output"
    elif expected_size is not None and values.size != expected_size:
        return f"{values.size} output values, ONNX's shape inference says {expected_size}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iostune", required=True)
    parser.add_argument("--runner", required=True, help="onnx_cpu_run (tests/onnx/cpu_run)")
    parser.add_argument("--cli-every", type=int, default=20,
                        help="every Nth case also goes through the iostune CLI")
    parser.add_argument("--work", required=True)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--per-class", type=int, default=100,
                        help="mutations per class and base model")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    start = time.monotonic()
    torch.set_num_threads(1)
    bases = {
        "convnet": export(ConvNet(), os.path.join(args.work, "convnet.onnx"), 16, 13),
        "mobilenet": export(MobileNet(), os.path.join(args.work, "mobilenet.onnx"), 12, 17),
    }
    rng = random.Random(args.seed)
    # The cases first, in one seeded order; then iostune on them, two at a time (CI's cores).
    cases = []
    references = {}
    for base_name, base in bases.items():
        references[base_name] = run_iostune(args.iostune, base, args.work, f"{base_name}_base")
        if references[base_name].code != 0:
            print(f"FAILED: the unmutated {base_name} does not run: "
                  f"{references[base_name].stderr!r}")
            return 1
        for class_name, mutate in CLASSES.items():
            done = 0
            while done < args.per_class:
                mutated = mutate(copy.deepcopy(base), rng)
                if mutated is None:
                    continue
                model, expect, what = mutated
                if expect == "either" and not onnx_accepts(model):
                    expect = "refuse"
                done += 1
                tag = f"{base_name}_{class_name.replace(' ', '_')}_{done}"
                size = inferred_size(model) if expect == "either" else None
                cases.append((base_name, class_name, tag, model, expect, what, size))

    # Every case through the runner, in two processes (CI's two cores).
    half = (len(cases) + 1) // 2
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        parts = pool.map(lambda part: run_runner(args.runner, args.work, part),
                         [[(c[2], c[3]) for c in cases[:half]],
                          [(c[2], c[3]) for c in cases[half:]]])
        outcomes = [o for part in parts for o in part]
        # A sample through the CLI itself, which must agree with the runner.
        sample = list(range(0, len(cases), args.cli_every))
        cli = dict(zip(sample, pool.map(
            lambda i: run_iostune(args.iostune, cases[i][3], args.work, cases[i][2]), sample)))

    counts = {c: {"cases": 0, "same": 0, "refused": 0, "accepted": 0, "failed": 0} for c in CLASSES}
    failures = []
    for i, (case, outcome) in enumerate(zip(cases, outcomes)):
        base_name, class_name, tag, model, expect, what, size = case
        why = judge(outcome, expect, references[base_name].values, size)
        if not why and i in cli:
            why = judge(cli[i], expect, references[base_name].values, size)
            why = why and f"through the CLI: {why}" or same_outcome(cli[i], outcome)
        row = counts[class_name]
        row["cases"] += 1
        if why:
            row["failed"] += 1
            failures.append(f"{tag} ({what}, expected {expect}): {why}")
        elif outcome.code == 1:
            row["refused"] += 1
        elif expect == "same":
            row["same"] += 1
        else:
            row["accepted"] += 1
    elapsed = time.monotonic() - start
    print(f"structural fuzz, seed {args.seed}, {len(bases)} base models, {len(cases)} cases, "
          f"{elapsed:.1f} s:")
    print(f"  {'class':<11} {'cases':>5} {'same':>5} {'refused':>7} {'accepted':>8} {'failed':>6}")
    for name, row in counts.items():
        print(f"  {name:<11} {row['cases']:>5} {row['same']:>5} {row['refused']:>7} "
              f"{row['accepted']:>8} {row['failed']:>6}")
    print("  (same: benign, output bit for bit the original's; refused: exit 1, one line; "
          "accepted: a valid other model, exit 0 with ONNX's output size)")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
