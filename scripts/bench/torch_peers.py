"""PyTorch peers for the iostune benchmark: eager, whole-model CUDA Graph and
torch.compile(mode="reduce-overhead"), one raw JSON record per (model, batch, precision, system)
run.

Conditions (the same as iostune's replay in that precision): --precision tf32 (the default): fp32
storage, TF32 math allowed; fp16/bf16: the model (after batch-norm folding in fp32) and the input
converted to that dtype and to channels-last (NHWC) memory, as iostune stores 16-bit
activations; fp32: TF32 off. cudnn.benchmark on, random seeded weights, batch norm folded into
the convolutions (iostune's graphs have it folded; --keep-bn measures torchvision's unfolded
modules instead). Each sample is one forward pass timed between two CUDA events, with the device
synchronised before it, so a sample is one isolated request including its launch overhead.
Python's garbage collector is off while timing (as timeit).

Models: inception_v3 (299x299), googlenet, squeezenet1_1, resnet50 (224x224) from
torchvision.models; nasnet_a_large and randwire from iostune's JSON export, run by
iostune_json_to_torch.py (--interpreter also|only runs the torchvision models that way too, as
systems with the suffix -ir, for a like-for-like check). The deployed models iostune imports from
ONNX (issue 14): efficientnet_b0, mobilenet_v3_large (224x224), fasterrcnn_fpn_backbone
(torchvision's fasterrcnn_resnet50_fpn `model.backbone`, five outputs) and unet (256x256), built
by tests/fixtures/export_torchvision.py with its seeded weights and calibrated, perturbed batch-norm
statistics, so they are the modules scripts/bench/deployed_models.sh exports for iostune
(--small: the fixtures' small CI sizes, for CPU tests); issue 28's: espcn (the fixtures' ESPCN
super-resolution net: PReLU, PixelShuffle; 256x256) and timm's resnest14d (split attention) and
skresnet18 (selective kernels) at 224x224 (64x64 with --small), built by timm.create_model with
the fixtures' seed and batch-norm calibration (timm must be installed). A model with several
outputs is timed as one forward producing all of them.

torch.compile runs in a child process per (model, batch) with a time budget, so a slow or failing
compile is recorded (status timeout/failed) and the rest of the run goes on.

CPU self-check of the model builders (no GPU needed):  torch_peers.py --check-cpu --iostune BIN
"""

import argparse
import gc
import importlib
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402
from iostune_json_to_torch import IostuneModule  # noqa: E402

ALL_MODELS = ("inception_v3", "googlenet", "squeezenet1_1", "resnet50", "nasnet_a_large",
              "randwire")
TORCHVISION_MODELS = ("inception_v3", "googlenet", "squeezenet1_1", "resnet50")
# The deployed models (issue 14) and their benchmark input sizes, which deployed_models.sh
# exports to ONNX with the same builders and weights; not in the default --models.
DEPLOYED_SIZES = {"efficientnet_b0": 224, "mobilenet_v3_large": 224,
                  "fasterrcnn_fpn_backbone": 256, "unet": 256, "espcn": 256, "resnest14d": 224,
                  "skresnet18": 224, "hrnet_w18_small_v2": 224}
DEPLOYED_MODELS = tuple(DEPLOYED_SIZES)
# Issue 28's timm models: (small input size, export settings as export_torchvision.CI_EXPORTS
# writes them; batch norm folded by PyTorch's export).
TIMM_DEPLOYED = {"resnest14d": (64, dict(opset=17, keep_bn=False, dynamic_batch=False)),
                 "skresnet18": (64, dict(opset=17, keep_bn=False, dynamic_batch=False)),
                 # Issue 25's wide model: one block of 197 operators, 12 branches wide.
                 "hrnet_w18_small_v2": (64, dict(opset=17, keep_bn=False, dynamic_batch=False))}
SYSTEMS = ("eager", "cudagraph", "compile")
IR_SUFFIX = "-ir"
# --precision -> the dtype of weights and activations; TF32 and fp32 keep float32 storage.
DTYPES = {"tf32": torch.float32, "fp32": torch.float32, "fp16": torch.float16,
          "bf16": torch.bfloat16}
# --check-cpu --precision fp16|bf16: how far the 16-bit channels-last model may be from float32,
# relative to the output's largest magnitude (iostune's schedule_tolerance, src/precision.cpp).
HALF_TOLERANCE = {"fp16": 3e-2, "bf16": 1e-1}


class PeerError(Exception):
    """A setup problem the user can fix (missing iostune binary, unknown model, no GPU)."""


# ---------------------------------------------------------------------------------------------
# Models

def torchvision_model(name):
    import torchvision.models as tvm
    if name == "inception_v3":
        return tvm.inception_v3(weights=None, aux_logits=False, init_weights=True), 299
    if name == "googlenet":
        return tvm.googlenet(weights=None, aux_logits=False, init_weights=True), 224
    if name == "squeezenet1_1":
        return tvm.squeezenet1_1(weights=None), 224
    if name == "resnet50":
        return tvm.resnet50(weights=None), 224
    raise PeerError(f"'{name}' is not a torchvision model here; use one of "
                    f"{', '.join(TORCHVISION_MODELS)} or the iostune interpreter")


def fixtures_module():
    """tests/fixtures/export_torchvision.py: the deployed models' builders and seeded weights."""
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                            "fixtures")
    if fixtures not in sys.path:
        sys.path.insert(0, fixtures)
    return importlib.import_module("export_torchvision")


def deployed_size(name, small):
    """The deployed model's input size: the benchmark's, or with small the CI fixtures'."""
    if not small:
        return DEPLOYED_SIZES[name]
    return TIMM_DEPLOYED[name][0] if name in TIMM_DEPLOYED else fixtures_module().TORCHVISION[name][1]


def export_settings(name):
    """The deployed model's ONNX export settings (opset, keep_bn, dynamic_batch)."""
    if name in TIMM_DEPLOYED:
        return dict(TIMM_DEPLOYED[name][1])
    opts = fixtures_module().CI_EXPORTS[name]
    return {k: opts[k] for k in ("opset", "keep_bn", "dynamic_batch")}


def timm_model(name, size):
    """timm.create_model(name) seeded and calibrated as export_torchvision.py's models are."""
    try:
        import timm
    except ImportError as e:
        raise PeerError(f"'{name}' needs timm, which this Python cannot import ({e})")
    fx = fixtures_module()
    torch.manual_seed(fx.SEED)
    model = timm.create_model(name, pretrained=False)
    fx.calibrate_batch_norms(model, (3, size, size), fx.SEED)
    return model.eval()


def deployed_model(name, small):
    """(module, input size) as export_torchvision.py builds it for that size: the same seeded
    weights and batch-norm statistics as the ONNX file deployed_models.sh gives iostune."""
    size = deployed_size(name, small)
    if name in TIMM_DEPLOYED:
        return timm_model(name, size), size
    return fixtures_module().torchvision_model(name, size), size


def last_conv(module):
    """(parent, name) of the Conv2d a module ends in: the module itself, or the last child of a
    Sequential ending in one (timm's deep stem before its bn1); None otherwise."""
    while isinstance(module, nn.Sequential) and len(module) > 0:
        name = list(module._modules)[-1]
        if isinstance(module._modules[name], nn.Conv2d):
            return module, name
        module = module._modules[name]
    return None


def folded_remainder(bn):
    """What stays of a batch norm folded into its convolution: nothing, or timm's
    BatchNormAct2d's dropout and activation (identity and its activation in eval mode)."""
    if type(bn) is nn.BatchNorm2d:
        return nn.Identity()
    return nn.Sequential(getattr(bn, "drop", nn.Identity()), getattr(bn, "act", nn.Identity()))


def fold_batch_norms(model, strict=True):
    """Folds every BatchNorm2d (timm's BatchNormAct2d too) into the Conv2d registered just
    before it in the same parent, or ending the Sequential registered before it (true of all
    torchvision models used here, and of timm's ResNeSt and SKNet). strict: fail if any batch
    norm is left unfolded; else leave those (returned as the second count)."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    model.eval()
    folded = 0
    for parent in list(model.modules()):
        names = list(parent._modules.keys())
        for prev, cur in zip(names, names[1:]):
            bn = parent._modules[cur]
            if not isinstance(bn, nn.BatchNorm2d) or not getattr(bn, "track_running_stats", True):
                continue
            if isinstance(parent._modules[prev], nn.Conv2d):
                holder, name = parent, prev
            elif (found := last_conv(parent._modules[prev])) is not None:
                holder, name = found
            else:
                continue
            holder._modules[name] = fuse_conv_bn_eval(holder._modules[name], bn)
            parent._modules[cur] = folded_remainder(bn)
            folded += 1
    left = sum(isinstance(m, nn.BatchNorm2d) for m in model.modules())
    if left and strict:
        raise PeerError(f"{left} batch norm layers could not be folded (no Conv2d registered "
                        "right before them); use --keep-bn")
    return folded, left


def find_iostune(requested):
    for candidate in (requested, os.environ.get("IOSTUNE"), "build/cli/iostune"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    from shutil import which
    return which("iostune")


def iostune_model_file(name, args):
    """Exports the iostune model to model_dir/NAME.json (re-exported on every run, so the file
    always matches the binary); without a binary an existing file is used as is."""
    os.makedirs(args.model_dir, exist_ok=True)
    path = os.path.join(args.model_dir, f"{name}.json")
    binary = find_iostune(args.iostune)
    if binary:
        cmd = [binary, "export", "--model", name, "-o", path]
        if args.load_iostune_weights:
            cmd += ["-w", os.path.join(args.model_dir, f"{name}.bin"), "--seed", str(args.seed)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise PeerError(f"`{shlex.join(cmd)}` failed: {done.stderr.strip()}")
    elif not os.path.isfile(path):
        raise PeerError(f"no iostune binary (--iostune, $IOSTUNE, build/cli/iostune or PATH) to "
                        f"export '{name}', and no {path}; pass --iostune BIN")
    return path


def build_model(name, use_interpreter, args):
    """(module on the device, input shape, details) with seeded random weights."""
    torch.manual_seed(args.seed)
    if use_interpreter:
        path = iostune_model_file(name, args)
        module = IostuneModule.from_file(path, seed=args.seed,
                                         load_weights=args.load_iostune_weights)
        c, h, w = module.input_chw
        details = {"model_source": "iostune-json", "model_file": os.path.abspath(path),
                   "weights": ("iostune export --seed %d" % args.seed if args.load_iostune_weights
                               else "seeded He-normal, seed %d" % args.seed),
                   "bn_folded": True, "ops": len(module.ops)}
    elif name in DEPLOYED_MODELS:
        module, size = deployed_model(name, getattr(args, "small", False))
        c, h, w = 3, size, size
        timm_built = name in TIMM_DEPLOYED
        # timm's blocks may hold a batch norm no convolution precedes: kept, and counted.
        folded, left = (0, 0) if args.keep_bn else fold_batch_norms(module, strict=not timm_built)
        fx = fixtures_module()
        details = {"model_source": "timm" if timm_built else "export_torchvision",
                   "weights": "%s (seed %d, calibrated and perturbed batch norms)" % (
                       "timm.create_model" if timm_built else
                       "export_torchvision.py torchvision_model", fx.SEED),
                   "bn_folded": not args.keep_bn, "batch_norms_folded": folded,
                   "batch_norms_left": left}
    else:
        module, size = torchvision_model(name)
        c, h, w = 3, size, size
        module.eval()
        folded = 0 if args.keep_bn else fold_batch_norms(module)[0]
        details = {"model_source": "torchvision", "weights": "torchvision init, seed %d" % args.seed,
                   "bn_folded": not args.keep_bn, "batch_norms_folded": folded}
    details["parameters"] = sum(p.numel() for p in module.parameters())
    return module.eval(), (c, h, w), details


def interpreted_only(name):
    """Models iostune exports as JSON (nasnet_a_large, randwire): run by the interpreter only."""
    return name not in TORCHVISION_MODELS and name not in DEPLOYED_MODELS


def uses_interpreter(name, mode):
    return interpreted_only(name) or (mode == "only" and name in TORCHVISION_MODELS)


def variants(name, mode):
    """(use_interpreter, system suffix) pairs to measure for a model; the deployed models are
    not in iostune's zoo, so they have no interpreted variant."""
    if name in DEPLOYED_MODELS:
        return [(False, "")]
    if name not in TORCHVISION_MODELS:
        return [(True, "")]
    if mode == "only":
        return [(True, IR_SUFFIX)]
    if mode == "also":
        return [(False, ""), (True, IR_SUFFIX)]
    return [(False, "")]


# ---------------------------------------------------------------------------------------------
# Measurement

def configure_torch(precision):
    # fp16/bf16 convolutions never use TF32; only fp32 turns it off, as iostune's strict fp32.
    torch.backends.cuda.matmul.allow_tf32 = precision != "fp32"
    torch.backends.cudnn.allow_tf32 = precision != "fp32"
    torch.backends.cudnn.benchmark = True


def half_precision(precision):
    return DTYPES[precision] != torch.float32


def to_precision(model, x, precision):
    """The model and input in the precision's dtype; 16-bit ones channels-last (NHWC), the
    layout iostune stores them in and the one cuDNN's tensor-core kernels want."""
    return model_to_precision(model, precision), input_to_precision(x, precision)


def model_to_precision(model, precision):
    """to_precision's model half (torch_set_peers.py converts a shared input once)."""
    if not half_precision(precision):
        return model
    return model.to(dtype=DTYPES[precision], memory_format=torch.channels_last)


def input_to_precision(x, precision):
    """to_precision's input half."""
    if not half_precision(precision):
        return x
    return x.to(DTYPES[precision]).contiguous(memory_format=torch.channels_last)


def precision_details(precision, x):
    return {"dtype": str(x.dtype).replace("torch.", ""),
            "memory_format": "channels_last" if half_precision(precision) else "contiguous",
            "allow_tf32": precision != "fp32"}


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def time_samples(fn, args):
    """Warm-up, then one event-timed sample per call with an idle device before each; stops
    after args.runs samples, or after args.min_runs once the row's time budget is spent.
    On the CPU (--device cpu, a smoke test of this script) samples are host wall times."""
    cuda = args.device == "cuda"
    for _ in range(args.warmup):
        fn()
    synchronize(args.device)
    if cuda:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
    samples, host = [], []
    gc.collect()
    gc.disable()
    try:
        began = time.perf_counter()
        for i in range(args.runs):
            synchronize(args.device)
            h0 = time.perf_counter()
            if cuda:
                start.record()
            fn()
            if cuda:
                end.record()
                end.synchronize()
            host.append((time.perf_counter() - h0) * 1e3)
            samples.append(start.elapsed_time(end) if cuda else host[-1])
            if i + 1 >= args.min_runs and time.perf_counter() - began > args.row_budget_s:
                break
    finally:
        gc.enable()
    return samples, host


def eager_fn(model, x):
    def run():
        with torch.inference_mode():
            model(x)
    return run


def cudagraph_fn(model, x):
    """The whole forward captured as one CUDA Graph on a static input, after a warm-up on a
    side stream (cudnn.benchmark's algorithm search and lazy loading happen outside capture)."""
    with torch.inference_mode():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            output = model(x)
    torch.cuda.synchronize()

    def run():
        graph.replay()

    run.output = output  # the captured output must outlive the timing, like the graph
    return run


def compile_fn(model, *inputs):
    """torch.compile(mode="reduce-overhead") of model(*inputs) (one input here, several in
    torch_set_peers.py); returns (run, first-call seconds). The first call compiles;
    reduce-overhead records its CUDA Graph on a later call, inside the warm-up."""
    if not hasattr(torch, "compile"):
        raise PeerError(f"torch {torch.__version__} has no torch.compile (2.0 or later needed)")
    # Not loaded by `import torch` in every version (and `import torch._dynamo` here would make
    # `torch` a local name of this function).
    importlib.import_module("torch._dynamo").reset()
    compiled = torch.compile(model, mode="reduce-overhead")

    def run():
        with torch.inference_mode():
            compiled(*inputs)

    began = time.perf_counter()
    run()
    synchronize(inputs[0].device.type)
    return run, time.perf_counter() - began


# ---------------------------------------------------------------------------------------------
# Provenance

def format_cudnn(version):
    if not version:
        return "unknown"
    if version >= 90000:
        return f"{version // 10000}.{version % 10000 // 100}.{version % 100}"
    return f"{version // 1000}.{version % 1000 // 100}.{version % 100}"


def driver_version():
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
        return done.stdout.strip().splitlines()[0] if done.returncode == 0 else "unknown"
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unknown"


def provenance(device_kind):
    if device_kind == "cuda":
        props = torch.cuda.get_device_properties(0)
        device = {"name": props.name, "compute_capability": f"{props.major}.{props.minor}",
                  "sm_count": props.multi_processor_count,
                  "memory_gib": round(props.total_memory / 2 ** 30, 1),
                  "driver": driver_version(), "cuda": torch.version.cuda,
                  "cudnn": format_cudnn(torch.backends.cudnn.version())}
    else:
        device = {"name": f"CPU ({platform.processor() or platform.machine()}, smoke test)",
                  "cuda": str(torch.version.cuda), "cudnn": "none"}
    import torchvision
    software = {"torch": torch.__version__, "torchvision": torchvision.__version__,
                "python": platform.python_version(), "scripts_commit": repo_commit()}
    return device, software


def repo_commit():
    """The commit of these scripts (the checkout may be a plain copy without .git), "-dirty"
    when the files differ from it: a device call's copy of the tree has run with a .git older
    than its files (2026-11-28: d5f41ce for scripts of 1da0097)."""
    try:
        done = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7",
                               "--exclude=*"],
                              capture_output=True,
                              text=True, timeout=10, cwd=os.path.dirname(os.path.abspath(__file__)))
        return done.stdout.strip() if done.returncode == 0 else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def command_line():
    return shlex.join([sys.executable] + sys.argv)


# ---------------------------------------------------------------------------------------------
# Driver

def measure_row(name, batch, system, use_interpreter, suffix, args, device, software):
    """Measures one (model, batch, system) in this process and writes its record."""
    model, (c, h, w), details = build_model(name, use_interpreter, args)
    model = model.to(args.device)
    gen = torch.Generator(device=args.device).manual_seed(args.seed)
    # Drawn in float32 and then converted, so every precision sees the same values (rounded).
    x = torch.randn(batch, c, h, w, device=args.device, generator=gen)
    model, x = to_precision(model, x, args.precision)
    details.update({"input_shape": [batch, c, h, w], "grad_mode": "inference_mode",
                    "cudnn_benchmark": True, **precision_details(args.precision, x)})
    cost = None
    if system == "eager":
        fn = eager_fn(model, x)
    elif system == "cudagraph":
        fn = cudagraph_fn(model, x)
    else:
        fn, cost = compile_fn(model, x)
        details["compile_mode"] = "reduce-overhead"
        details["compile_first_call_s"] = cost
        details["compile_concurrency"] = args.compile_concurrency
        if args.compile_concurrency > 1:
            details["compile_note"] = (f"compiled concurrently with {args.compile_concurrency - 1} "
                                       "other rows' compiles (separate processes); timed alone")
        if args.turn_file:
            wait_for_turn(args.turn_file, cost)
    samples, host = time_samples(fn, args)
    details["host_median_ms"] = bench_record.sample_stats(host)["median_ms"]
    record = bench_record.make_run(
        name, batch, f"torch-{system}{suffix}", command=command_line(), device=device,
        software=software, precision=args.precision, samples_ms=samples,
        search_or_compile_s=cost, details=details,
        measurement={"warmup_runs": args.warmup, "timed_runs": len(samples),
                     "method": ("cuda-events per run, device synchronised before each run"
                                if args.device == "cuda" else "host wall time (CPU smoke test)")})
    path = bench_record.write_record(args.out, record)
    s = record["stats"]
    print(f"{name:>15} b{batch:<3} {args.precision} {record['system']:<20} "
          f"median {s['median_ms']:8.3f} ms  "
          f"p90 {s['p90_ms']:8.3f} ms  ({len(samples)} runs)"
          + (f"  compile {cost:.1f} s" if cost is not None else "") + f"  -> {path}", flush=True)
    del fn, model, x
    gc.collect()
    if args.device == "cuda":
        torch.cuda.empty_cache()


def failure_row(name, batch, system, status, error, args, device, software, details=None):
    record = bench_record.make_run(name, batch, system, command=command_line(), device=device,
                                   software=software, precision=args.precision, status=status,
                                   error=error, details=details or {})
    path = bench_record.write_record(args.out, record)
    print(f"{name:>15} b{batch:<3} {args.precision} {system:<20} {status.upper()}: "
          f"{error.splitlines()[-1]} "
          f"-> {path}", flush=True)


def child_command(name, batch, mode, args):
    """This script, restricted to one compile row, with the parent's options."""
    cmd = [sys.executable, os.path.abspath(__file__), "--in-child", "--models", name,
           "--batches", str(batch), "--systems", "compile", "--interpreter", mode,
           "--out", args.out, "--model-dir", args.model_dir, "--seed", str(args.seed),
           "--warmup", str(args.warmup), "--runs", str(args.runs), "--device", args.device,
           "--min-runs", str(args.min_runs), "--row-budget-s", str(args.row_budget_s),
           "--compile-budget-s", str(args.compile_budget_s), "--precision", args.precision]
    if args.iostune:
        cmd += ["--iostune", args.iostune]
    if args.keep_bn:
        cmd.append("--keep-bn")
    if args.small:
        cmd.append("--small")
    if args.load_iostune_weights:
        cmd.append("--load-iostune-weights")
    return cmd


def wait_for_turn(turn, compile_s):
    """Tells the parent the compile is done, then waits until it is this row's turn to time."""
    with open(turn + ".compiled", "w", encoding="utf-8") as f:
        f.write(f"{compile_s}\n")
    while not os.path.exists(turn):
        time.sleep(0.1)


class Child:
    """A child process in its own session, so a timeout ends it with inductor's compile
    workers (which would otherwise hold its output open), and output in a file, not a pipe."""

    def __init__(self, cmd, log_path, budget_s):
        self.cmd = cmd
        self.log_path = log_path
        self.log = open(log_path, "w", encoding="utf-8")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.deadline = time.monotonic() + budget_s

    def poll(self):
        """None while running; else the exit status, or 'timeout' after killing it."""
        code = self.proc.poll()
        if code is None and time.monotonic() > self.deadline:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            code = "timeout"
        if code is not None:
            self.log.close()
        return code

    def wait(self):
        while (code := self.poll()) is None:
            time.sleep(0.2)
        return code

    def output(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()


def compile_budget(args, began, wave_size):
    """A compile row's budget, leaving the wave time to be timed before --stop-after-s."""
    budget = args.compile_budget_s
    if args.stop_after_s:
        reserve = (args.row_budget_s + 15) * wave_size
        left = args.stop_after_s - (time.monotonic() - began) - reserve
        budget = min(budget, max(1.0, left))
    return budget


def run_compile_wave(wave, args, device, software, began):
    """Compiles the wave's rows concurrently, one child process each, then lets the children
    time their rows one at a time (each signalled by its turn file), so no compile or other
    timing runs beside a timed row and nothing is compiled twice."""
    children = []
    # The precision is in the names: one --model-dir may serve several precisions' runs.
    pfx = "" if args.precision == bench_record.DEFAULT_PRECISION else f"_{args.precision}"
    for row in wave:
        name, batch, use_interpreter, suffix = row
        turn = os.path.join(args.model_dir, f"turn_{name}_b{batch}{pfx}{suffix}")
        for stale in (turn, turn + ".compiled"):
            if os.path.exists(stale):
                os.remove(stale)
        cmd = child_command(name, batch, "only" if use_interpreter else "needed", args)
        cmd += ["--turn-file", turn, "--compile-concurrency", str(len(wave))]
        log = os.path.join(args.model_dir, f"compile_{name}_b{batch}{pfx}{suffix}.log")
        children.append((row, turn, Child(cmd, log, compile_budget(args, began, len(wave)))))
    compiling, ready = list(children), []
    while compiling:
        time.sleep(0.2)
        for item in list(compiling):
            row, turn, child = item
            if os.path.exists(turn + ".compiled"):
                compiling.remove(item)
                child.deadline = float("inf")  # waiting for its turn is not its cost
                ready.append(item)
                continue
            code = child.poll()
            if code is not None:
                compiling.remove(item)
                compile_failure(row, code if code != 0 else "exit 0 before compiling", child,
                                args, device, software)
    for row, turn, child in ready:
        if args.stop_after_s and time.monotonic() - began > args.stop_after_s:
            child.deadline = 0
            child.wait()
            compile_failure(row, "stopped", child, args, device, software)
            continue
        child.deadline = time.monotonic() + 2 * args.row_budget_s + 120
        with open(turn, "w", encoding="utf-8"):
            pass
        code = child.wait()
        if code == 0:
            sys.stdout.write(child.output())
        else:
            compile_failure(row, code, child, args, device, software)


def compile_failure(row, code, child, args, device, software):
    name, batch, _, suffix = row
    system = f"torch-compile{suffix}"
    details = {"child_command": shlex.join(child.cmd)}
    if code == "stopped":
        failure_row(name, batch, system, "skipped",
                    f"compiled, but past --stop-after-s {args.stop_after_s:g} before its turn "
                    "to be timed", args, device, software, details)
    elif code == "timeout":
        failure_row(name, batch, system, "timeout",
                    f"torch.compile row exceeded its budget (--compile-budget-s "
                    f"{args.compile_budget_s:g}, or the time left under --stop-after-s); "
                    "compile + warm-up + timing", args, device, software, details)
    else:
        tail = "\n".join(child.output().strip().splitlines()[-15:]) or f"exit {code}"
        failure_row(name, batch, system, "failed", f"torch.compile child failed: {tail}", args,
                    device, software, details)


def run_all(args):
    if args.device == "cuda" and not torch.cuda.is_available():
        raise PeerError("no CUDA device visible to torch; run this on the GPU machine "
                        "(--device cpu smoke-tests this script, --check-cpu the model builders)")
    configure_torch(args.precision)
    os.makedirs(args.model_dir, exist_ok=True)
    device, software = provenance(args.device)
    began = time.monotonic()
    rows = [(name, batch, use_interpreter, suffix, system)
            for name in args.models for batch in args.batches
            for use_interpreter, suffix in variants(name, args.interpreter)
            for system in args.systems]
    skipped = []
    if not args.in_child:  # compile rows last, in waves of --compile-jobs
        compile_rows = [r[:4] for r in rows if r[4] == "compile"]
        rows = [r for r in rows if r[4] != "compile"]
    for name, batch, use_interpreter, suffix, system in rows:
        if args.stop_after_s and time.monotonic() - began > args.stop_after_s:
            skipped.append(f"{name} b{batch} torch-{system}{suffix}")
            continue
        if system == "cudagraph" and args.device != "cuda":
            failure_row(name, batch, f"torch-cudagraph{suffix}", "skipped",
                        "torch-cudagraph needs a CUDA device (--device cpu smoke test)", args,
                        device, software)
            continue
        try:
            measure_row(name, batch, system, use_interpreter, suffix, args, device, software)
        except Exception as e:  # one broken row must not end the whole run on the GPU
            if args.in_child:
                raise
            failure_row(name, batch, f"torch-{system}{suffix}", "failed",
                        f"{type(e).__name__}: {e}", args, device, software)
            gc.collect()
            if args.device == "cuda":
                torch.cuda.empty_cache()
    if not args.in_child:
        for i in range(0, len(compile_rows), args.compile_jobs):
            wave = compile_rows[i:i + args.compile_jobs]
            if args.stop_after_s and time.monotonic() - began > args.stop_after_s:
                skipped += [f"{n} b{b} torch-compile{s}" for n, b, _, s in wave]
                continue
            print(f"torch.compile: compiling {len(wave)} rows concurrently, then timing them "
                  "one at a time", flush=True)
            run_compile_wave(wave, args, device, software, began)
    if skipped:
        print(f"past --stop-after-s {args.stop_after_s:g}, not started: {', '.join(skipped)}")
    return 0


def check_half(name, source, model, x, y, precision):
    """The model converted as a --precision fp16/bf16 peer is (dtype, channels-last) must run
    and stay near its float32 output; 1 on failure. CPU torch may lack 16-bit kernels (fp16
    convolutions before torch 2.1): that is reported, not failed; --precision bf16 checks the
    same conversion where it does."""
    model, xh = to_precision(model, x, precision)
    try:
        with torch.no_grad():
            yh = flat_output(model(xh)).reshape(y.shape)
    except RuntimeError as e:
        if "not implemented for" not in str(e):
            raise
        print(f"{name} ({source}): {precision} channels-last not checked: this CPU torch "
              f"{torch.__version__} lacks a kernel ({str(e).splitlines()[0]})")
        return 0
    err = float((yh.float() - y).abs().max() / y.abs().max().clamp_min(1e-12))
    ok = yh.dtype == DTYPES[precision] and err <= HALF_TOLERANCE[precision]
    print(f"{name} ({source}): {precision} channels-last vs float32: max |diff| / max |output| "
          f"= {err:.2e} (tolerance {HALF_TOLERANCE[precision]:g}), output {yh.dtype} "
          f"{'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


def flat_output(output):
    """A model's output per sample as one row: several outputs (the FPN backbone's five maps)
    concatenated."""
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    return torch.cat([t.reshape(t.shape[0], -1) for t in outputs], 1)


def reference_model(name, args):
    """The unfolded model of build_model, with non-trivial batch-norm statistics to fold: the
    deployed models have them from export_torchvision.py already, the others get random ones."""
    torch.manual_seed(args.seed)
    if name in DEPLOYED_MODELS:
        return deployed_model(name, args.small)[0]
    reference, _ = torchvision_model(name)
    reference.eval()
    for m in reference.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    return reference


def check_cpu(args):
    """Builds every requested model on the CPU: batch-norm folding must not change outputs, and
    where both builders exist the torchvision and interpreted models must agree in parameter
    count and output shape (same architecture). With --precision fp16/bf16, each model is also
    run converted as that peer is and compared with its float32 output."""
    failures = 0
    for name in args.models:
        built = {}
        for use_interpreter in ((False, True) if name in TORCHVISION_MODELS else
                                (False,) if name in DEPLOYED_MODELS else (True,)):
            model, chw, details = build_model(name, use_interpreter, args)
            x = torch.randn(2, *chw, generator=torch.Generator().manual_seed(0))
            with torch.no_grad():
                y = flat_output(model(x))
            built[details["model_source"]] = (details["parameters"], tuple(y.shape))
            if half_precision(args.precision):
                failures += check_half(name, details["model_source"], model, x, y,
                                       args.precision)
            if not use_interpreter and not args.keep_bn:
                reference = reference_model(name, args)
                xr = x
                if name in DEPLOYED_MODELS:
                    # In float64: EfficientNet's squeeze-excitation gates amplify float32's
                    # rounding to ~1e-3 of the output (export_torchvision.py), which would hide
                    # what this checks, that folding is exact.
                    reference, xr = reference.double(), x.double()
                with torch.no_grad():
                    expected = flat_output(reference(xr))
                    fold_batch_norms(reference, strict=name not in TIMM_DEPLOYED)
                    got = flat_output(reference(xr))
                err = float((got - expected).abs().max() / expected.abs().max().clamp_min(1e-12))
                ok = err < 1e-4
                failures += not ok
                print(f"{name}: batch-norm folding changes outputs by {err:.2e} (relative) "
                      f"{'ok' if ok else 'FAIL'}")
        line = ", ".join(f"{src}: {p} parameters, output {s}" for src, (p, s) in built.items())
        agree = len({v for v in built.values()}) == 1
        failures += not agree
        print(f"{name}: {line} {'ok' if agree else 'MISMATCH'}")
    return 1 if failures else 0


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--models", nargs="+", default=list(ALL_MODELS),
                        choices=ALL_MODELS + DEPLOYED_MODELS,
                        help="default: the zoo's six; the deployed models (%s) on request"
                             % ", ".join(DEPLOYED_MODELS))
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 16])
    parser.add_argument("--systems", nargs="+", default=["eager", "cudagraph"], choices=SYSTEMS,
                        help="default: eager cudagraph (compile is slow; add it or use --compile)")
    parser.add_argument("--compile", action="store_true", help="also measure torch-compile")
    parser.add_argument("--interpreter", choices=("needed", "also", "only"), default="needed",
                        help="run the iostune JSON interpreter only for models torchvision lacks "
                             "(needed), also for the torchvision ones (also, systems suffixed "
                             "-ir), or for every model (only)")
    parser.add_argument("--out", default="results/raw", help="raw record folder (runs/ inside)")
    parser.add_argument("--model-dir", default="/tmp/iostune-bench-models",
                        help="where exported iostune JSON models go (keep it out of $OUT)")
    parser.add_argument("--iostune", help="iostune binary for `iostune export` "
                                          "(default: $IOSTUNE, build/cli/iostune, PATH)")
    parser.add_argument("--load-iostune-weights", action="store_true",
                        help="interpreted models use iostune's exported seeded weights")
    parser.add_argument("--small", action="store_true",
                        help="deployed models at the CI fixtures' small input sizes (CPU tests)")
    parser.add_argument("--keep-bn", action="store_true",
                        help="do not fold torchvision batch norms (not like-for-like)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--runs", type=int, default=500, help="timed runs per row (at most)")
    parser.add_argument("--min-runs", type=int, default=200,
                        help="timed runs per row even past the row budget")
    parser.add_argument("--row-budget-s", type=float, default=20.0,
                        help="stop timing a row after this many seconds once --min-runs are in")
    parser.add_argument("--compile-budget-s", type=float, default=300.0,
                        help="wall-clock limit of one torch-compile row (compile + timing)")
    parser.add_argument("--stop-after-s", type=float, default=0,
                        help="start no new row after this many seconds (0: no limit)")
    parser.add_argument("--compile-jobs", type=int, default=1,
                        help="torch-compile rows compiled concurrently (one process each); "
                             "the rows are then timed one at a time")
    parser.add_argument("--precision", choices=tuple(DTYPES), default="tf32",
                        help="tf32 (fp32 storage, TF32 math; the default), fp16 or bf16 (model "
                             "and input in that dtype, channels-last), fp32 (TF32 off)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cpu: a smoke test of this script (host-timed, no cudagraph rows)")
    parser.add_argument("--turn-file", help=argparse.SUPPRESS)
    parser.add_argument("--compile-concurrency", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--check-cpu", action="store_true",
                        help="check the model builders on the CPU and exit")
    parser.add_argument("--in-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compile and "compile" not in args.systems:
        args.systems.append("compile")
    if any(b <= 0 for b in args.batches) or args.runs <= 0 or args.min_runs > args.runs:
        parser.error("batches and --runs must be positive and --min-runs <= --runs")
    if args.compile_jobs < 1:
        parser.error("--compile-jobs must be at least 1")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return check_cpu(args) if args.check_cpu else run_all(args) or 0
    except PeerError as e:
        print(f"torch_peers: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
