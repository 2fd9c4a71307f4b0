"""PyTorch peers for model sets (issue 15, multi-model co-scheduling): several models run
together as one request, one raw JSON record per (set, batch, precision, system) run.

A model set is an ordered list of torch_peers.py's models (a model may appear several times) and
an input mode:
  shared    every member reads the same input tensor (so all members must take one input size:
            e.g. 4x resnet50, or googlenet+squeezenet1_1+resnet50)
  separate  each member has its own input of its own size (e.g. inception_v3 at 299x299 beside
            googlenet, squeezenet1_1 and resnet50 at 224x224)

--set SPEC names one set and may be given several times. SPEC is two or more member names
separated by '+', ',' or spaces, optionally followed by ':shared' or ':separate'; a SPEC without
that suffix takes --input-mode. A shared set of members with different input sizes is refused.
Examples:
  --set resnet50+resnet50+resnet50+resnet50:shared
  --set "inception_v3 googlenet squeezenet1_1 resnet50" --input-mode separate

Member i gets its own random weights, seeded with --seed + i (torch.manual_seed before it is
built, as torch_peers.py seeds its one model with --seed; interpreted models, nasnet_a_large and
randwire, take the same seed). The shared input is drawn with --seed; member i's separate input
with --seed + i (so member 0 sees torch_peers.py's input). Batch norms are folded, and fp16/bf16
convert every member (after folding) and every input to that dtype and channels-last, exactly as
torch_peers.py does for one model; tf32 keeps fp32 storage with TF32 math.

Systems (--systems; records are named torch-<system>):
  cudagraph-back-to-back  one CUDA Graph per member (torch_peers.py's cudagraph_fn), replayed one
                          after another on the timing stream
  cudagraph-streams       the same per-member graphs, each replayed on its own CUDA stream,
                          forked from and joined to the timing stream with events, so they
                          can run at once
  compile                 torch.compile(mode="reduce-overhead") of one module whose forward
                          calls every member (on the shared input, or each on its own) and
                          returns the tuple of outputs; run in a child process with a wall-clock
                          budget (--compile-budget), so a slow compile is recorded as timeout
  eager-back-to-back      the members in eager mode one after another (not in the default set
                          on CUDA; the only system of --torch-device cpu)
One sample is every member run once: one request to the whole set, timed between two CUDA
events with the device synchronised before it (torch_peers.py's time_samples).

Records (bench_record.py, read by summarize.py): `model` is the member names joined by '+'
(e.g. resnet50+resnet50+resnet50+resnet50), `details.model_set` the members,
`details.input_mode` the mode, `details.set_spec` NAMES:MODE, `details.members` each member's
seed, input shape and model provenance. File names hold the model with '-' for '+'
(googlenet-googlenet_b1_torch-cudagraph-streams_<time>.json). summarize.py shows set rows in
tables of their own, labelled with their set_spec.

  torch_set_peers.py --set resnet50+resnet50+resnet50+resnet50:shared \
      --set inception_v3+googlenet+squeezenet1_1+resnet50:separate --batches 1 16 \
      --precisions tf32 fp16 --out results/raw

--torch-device cpu is a smoke test of this script: it measures eager back-to-back only, timed by
the host clock, and prints which CUDA systems it skipped.
"""

import argparse
import copy
import gc
import os
import re
import shlex
import sys
import types

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402
import torch_peers  # noqa: E402
from torch_peers import PeerError  # noqa: E402

INPUT_MODES = ("shared", "separate")
SYSTEMS = ("cudagraph-back-to-back", "cudagraph-streams", "compile", "eager-back-to-back")
DEFAULT_SYSTEMS = ("cudagraph-back-to-back", "cudagraph-streams", "compile")
CUDA_SYSTEMS = ("cudagraph-back-to-back", "cudagraph-streams", "compile")
# The input side build_model gives each model (checked again after building); --set validation
# needs it before anything is built.
INPUT_SIZES = {"inception_v3": 299, "googlenet": 224, "squeezenet1_1": 224, "resnet50": 224,
               "nasnet_a_large": 331, "randwire": 224}
assert set(INPUT_SIZES) == set(torch_peers.ALL_MODELS)


class ModelSet:
    """An ordered list of member names and an input mode."""

    def __init__(self, members, mode):
        self.members = list(members)
        self.mode = mode

    @property
    def model(self):
        """The record's `model`: the member names joined by '+'."""
        return "+".join(self.members)

    @property
    def spec(self):
        """NAMES:MODE, what --set takes and what summarize.py labels set rows with."""
        return f"{self.model}:{self.mode}"


def parse_set(text, default_mode):
    """A --set SPEC -> ModelSet; raises ValueError with the reason."""
    names, mode = text.strip(), default_mode
    if ":" in names:
        names, mode = names.rsplit(":", 1)
        mode = mode.strip()
        if mode not in INPUT_MODES:
            raise ValueError(f"input mode '{mode}' is not one of {', '.join(INPUT_MODES)}")
    members = [m for m in re.split(r"[+,\s]+", names) if m]
    if len(members) < 2:
        raise ValueError("a set needs at least two models (one model is torch_peers.py's job, "
                         "and its rows would mix with that script's)")
    unknown = [m for m in members if m not in torch_peers.ALL_MODELS]
    if unknown:
        raise ValueError(f"unknown model{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(unknown)}; the models are "
                         f"{', '.join(torch_peers.ALL_MODELS)}")
    if mode is None:
        raise ValueError("no input mode: append ':shared' or ':separate', or pass --input-mode")
    if mode == "shared":
        sizes = {}
        for m in members:
            sizes.setdefault(INPUT_SIZES[m], m)
        if len(sizes) > 1:
            takes = ", ".join(f"{m} takes {s}x{s}" for s, m in sizes.items())
            raise ValueError(f"shared input needs one input size for every member, but {takes}; "
                             "use ':separate' (each member its own input)")
    return ModelSet(members, mode)


# ---------------------------------------------------------------------------------------------
# Building a set

class SetModule(nn.Module):
    """The members as one module, what torch-compile compiles: forward(x) calls every member on
    the shared input, forward(x0, x1, ...) member i on input i; returns the tuple of outputs."""

    def __init__(self, members, mode):
        super().__init__()
        self.members = nn.ModuleList(members)
        self.shared = mode == "shared"

    def forward(self, *inputs):
        outputs = []  # a plain loop: dynamo unrolls it over the ModuleList
        for i, member in enumerate(self.members):
            outputs.append(member(inputs[0] if self.shared else inputs[i]))
        return tuple(outputs)


def member_args(args, index):
    """torch_peers.build_model's options for member `index` (its seed is --seed + index)."""
    margs = copy.copy(args)
    margs.seed = args.seed + index
    return margs


def build_set(model_set, batch, precision, args):
    """(modules, inputs, details): the members on the device in the precision, and the inputs
    they read (shared: one tensor; separate: one per member, in member order)."""
    device = args.torch_device
    modules, members, chws = [], [], []
    for i, name in enumerate(model_set.members):
        margs = member_args(args, i)
        use_interpreter = torch_peers.uses_interpreter(name, "needed")
        module, chw, info = torch_peers.build_model(name, use_interpreter, margs)
        module = torch_peers.model_to_precision(module.to(device), precision)
        modules.append(module)
        chws.append(chw)
        members.append({"model": name, "seed": margs.seed, **info})
    if model_set.mode == "shared":
        if len(set(chws)) > 1:
            raise PeerError(f"{model_set.spec}: shared input, but the members take inputs "
                            f"{', '.join('x'.join(map(str, c)) for c in chws)}")
        seeds = [args.seed]
    else:
        seeds = [args.seed + i for i in range(len(chws))]
    inputs = []
    for seed, chw in zip(seeds, chws):
        gen = torch.Generator(device=device).manual_seed(seed)
        # Drawn in float32 and then converted, so every precision sees the same values (rounded).
        x = torch.randn(batch, *chw, device=device, generator=gen)
        inputs.append(torch_peers.input_to_precision(x, precision))
    for i, (member, chw) in enumerate(zip(members, chws)):
        member["input_shape"] = [batch, *chw]
        member["input"] = "shared" if model_set.mode == "shared" else f"input {i}"
    details = {"model_set": list(model_set.members), "input_mode": model_set.mode,
               "set_spec": model_set.spec, "members": members,
               "input_shapes": [list(x.shape) for x in inputs], "input_seeds": seeds,
               "grad_mode": "inference_mode", "cudnn_benchmark": True,
               "sample": f"all {len(modules)} members once",
               **torch_peers.precision_details(precision, inputs[0])}
    return modules, inputs, details


def member_inputs(model_set, inputs):
    """Member i's input tensor, in member order."""
    return [inputs[0] if model_set.mode == "shared" else inputs[i]
            for i in range(len(model_set.members))]


# ---------------------------------------------------------------------------------------------
# The systems

def eager_back_to_back_fn(modules, xs):
    def run():
        with torch.inference_mode():
            for module, x in zip(modules, xs):
                module(x)
    return run


def cudagraphs(modules, xs):
    """One CUDA Graph per member (torch_peers.cudagraph_fn: warm-up on a side stream, then
    capture, each into its own memory pool so concurrent replays share no buffers)."""
    return [torch_peers.cudagraph_fn(module, x) for module, x in zip(modules, xs)]


def back_to_back_fn(replays):
    def run():
        for replay in replays:
            replay()
    run.replays = replays  # the graphs and their outputs must outlive the timing
    return run


def streams_fn(replays):
    """Each member's graph replayed on its own stream: the streams wait for an event recorded
    on the timing (current) stream, and the timing stream waits for each stream's end event."""
    streams = [torch.cuda.Stream() for _ in replays]
    fork = torch.cuda.Event()
    joins = [torch.cuda.Event() for _ in replays]

    def run():
        main = torch.cuda.current_stream()
        fork.record(main)
        for stream, replay, join in zip(streams, replays, joins):
            stream.wait_event(fork)
            with torch.cuda.stream(stream):
                replay()  # CUDAGraph.replay launches on the current stream
            join.record(stream)
        for join in joins:
            main.wait_event(join)

    run.replays = replays
    run.streams = streams
    return run


# ---------------------------------------------------------------------------------------------
# Measurement and records

def timing_args(args):
    """torch_peers.time_samples' options: exactly --iters samples after --warmup calls."""
    return types.SimpleNamespace(device=args.torch_device, warmup=args.warmup, runs=args.iters,
                                 min_runs=args.iters, row_budget_s=float("inf"))


def write_row(model_set, batch, precision, system, fn, details, args, env, cost=None):
    """Times fn and writes its record."""
    samples, host = torch_peers.time_samples(fn, timing_args(args))
    details = dict(details, host_median_ms=bench_record.sample_stats(host)["median_ms"])
    device, software = env
    record = bench_record.make_run(
        model_set.model, batch, f"torch-{system}", command=torch_peers.command_line(),
        device=device, software=software, precision=precision, samples_ms=samples,
        search_or_compile_s=cost, details=details,
        measurement={"warmup_runs": args.warmup, "timed_runs": len(samples),
                     "sample": "every member of the set once",
                     "method": ("cuda-events per run, device synchronised before each run"
                                if args.torch_device == "cuda"
                                else "host wall time (CPU smoke test)")})
    path = bench_record.write_record(args.out, record)
    s = record["stats"]
    print(f"{model_set.spec} b{batch} {precision} {record['system']:<28} "
          f"median {s['median_ms']:8.3f} ms  p90 {s['p90_ms']:8.3f} ms  ({len(samples)} runs)"
          + (f"  compile {cost:.1f} s" if cost is not None else "") + f"  -> {path}", flush=True)


def failure_row(model_set, batch, precision, system, status, error, args, env, details=None):
    device, software = env
    details = {"model_set": list(model_set.members), "input_mode": model_set.mode,
               "set_spec": model_set.spec, **(details or {})}
    record = bench_record.make_run(model_set.model, batch, f"torch-{system}",
                                   command=torch_peers.command_line(), device=device,
                                   software=software, precision=precision, status=status,
                                   error=error, details=details)
    path = bench_record.write_record(args.out, record)
    print(f"{model_set.spec} b{batch} {precision} {'torch-' + system:<28} {status.upper()}: "
          f"{error.strip().splitlines()[-1] if error.strip() else ''} -> {path}", flush=True)


def free_memory(args):
    gc.collect()
    if args.torch_device == "cuda":
        torch.cuda.empty_cache()


def measure_in_process(model_set, batch, precision, systems, args, env):
    """The eager and CUDA Graph systems of one (set, batch, precision): the set is built once,
    and both graph systems replay the same captured graphs."""
    try:
        modules, inputs, details = build_set(model_set, batch, precision, args)
    except Exception as e:  # noqa: BLE001 (one broken set must not end the run on the GPU)
        for system in systems:
            failure_row(model_set, batch, precision, system, "failed",
                        f"building the set: {type(e).__name__}: {e}", args, env)
        free_memory(args)
        return
    xs = member_inputs(model_set, inputs)
    replays = None
    for system in systems:
        try:
            if system == "eager-back-to-back":
                fn, extra = eager_back_to_back_fn(modules, xs), {}
            else:
                if replays is None:
                    replays = cudagraphs(modules, xs)
                if system == "cudagraph-back-to-back":
                    fn, extra = back_to_back_fn(replays), {"graphs": len(replays), "streams": 1}
                else:
                    fn, extra = streams_fn(replays), {
                        "graphs": len(replays), "streams": len(replays),
                        "stream_sync": "fork event on the timing stream, one join event per "
                                       "member stream"}
            write_row(model_set, batch, precision, system, fn, {**details, **extra}, args, env)
            del fn
        except Exception as e:  # noqa: BLE001
            failure_row(model_set, batch, precision, system, "failed",
                        f"{type(e).__name__}: {e}", args, env)
    del modules, inputs, xs, replays
    free_memory(args)


def measure_compile(model_set, batch, precision, args, env):
    """torch-compile of one set, in this process (the child the parent started)."""
    modules, inputs, details = build_set(model_set, batch, precision, args)
    module = SetModule(modules, model_set.mode).eval()
    fn, cost = torch_peers.compile_fn(module, *inputs)
    details.update({"compile_mode": "reduce-overhead", "compile_first_call_s": cost,
                    "compiled_module": "one nn.Module calling every member, returning the tuple "
                                       "of outputs",
                    "compile_budget_s": args.compile_budget})
    write_row(model_set, batch, precision, "compile", fn, details, args, env, cost=cost)


def child_command(model_set, batch, precision, args):
    """This script, restricted to one (set, batch, precision) compile row."""
    cmd = [sys.executable, os.path.abspath(__file__), "--in-child", "--set", model_set.spec,
           "--batches", str(batch), "--precisions", precision, "--systems", "compile",
           "--out", args.out, "--model-dir", args.model_dir, "--seed", str(args.seed),
           "--warmup", str(args.warmup), "--iters", str(args.iters),
           "--compile-budget", str(args.compile_budget), "--torch-device", args.torch_device]
    if args.iostune:
        cmd += ["--iostune", args.iostune]
    if args.keep_bn:
        cmd.append("--keep-bn")
    if args.load_iostune_weights:
        cmd.append("--load-iostune-weights")
    return cmd


def compile_in_child(model_set, batch, precision, args, env):
    """Runs one compile row in a child process within --compile-budget seconds (compile,
    warm-up and timing); a child past it is killed and the row recorded as timeout."""
    cmd = child_command(model_set, batch, precision, args)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", model_set.spec)
    log = os.path.join(args.model_dir, f"set_compile_{safe}_b{batch}_{precision}.log")
    child = torch_peers.Child(cmd, log, args.compile_budget)
    code = child.wait()
    details = {"child_command": shlex.join(cmd), "child_log": log}
    if code == 0:
        sys.stdout.write(child.output())
        sys.stdout.flush()
    elif code == "timeout":
        failure_row(model_set, batch, precision, "compile", "timeout",
                    f"torch.compile row exceeded its budget (--compile-budget "
                    f"{args.compile_budget:g} s): compile + warm-up + timing", args, env, details)
    else:
        tail = "\n".join(child.output().strip().splitlines()[-15:]) or f"exit {code}"
        failure_row(model_set, batch, precision, "compile", "failed",
                    f"torch.compile child failed: {tail}", args, env, details)


def run_all(args):
    cuda = args.torch_device == "cuda"
    if cuda and not torch.cuda.is_available():
        raise PeerError("no CUDA device visible to torch; run this on the GPU machine "
                        "(--torch-device cpu smoke-tests this script)")
    os.makedirs(args.model_dir, exist_ok=True)
    env = torch_peers.provenance(args.torch_device)
    systems = list(args.systems)
    if not cuda:
        skipped = [f"torch-{s}" for s in systems if s in CUDA_SYSTEMS]
        systems = ["eager-back-to-back"]
        if not args.in_child:
            print("torch_set_peers: --torch-device cpu is a smoke test: measuring "
                  "torch-eager-back-to-back only, timed by the host clock"
                  + (f"; not measured (they need CUDA): {', '.join(skipped)}" if skipped else ""),
                  flush=True)
    in_process = [s for s in SYSTEMS if s in systems and s != "compile"]
    if args.in_child:  # one compile row, measured here
        precision = args.precisions[0]
        torch_peers.configure_torch(precision)
        measure_compile(args.sets[0], args.batches[0], precision, args, env)
        return 0
    for model_set in args.sets:
        for precision in args.precisions:
            torch_peers.configure_torch(precision)
            for batch in args.batches:
                if in_process:
                    measure_in_process(model_set, batch, precision, in_process, args, env)
    if "compile" in systems:  # last, each compile alone in its own child process
        free_memory(args)
        for model_set in args.sets:
            for precision in args.precisions:
                for batch in args.batches:
                    compile_in_child(model_set, batch, precision, args, env)
    return 0


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--set", dest="set_specs", action="append", required=True,
                        metavar="SPEC",
                        help="one model set: NAME+NAME+...[:shared|:separate] (names may also "
                             "be separated by commas or spaces); may be given several times")
    parser.add_argument("--input-mode", choices=INPUT_MODES,
                        help="the input mode of every --set without a ':MODE' suffix")
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 16],
                        help="default: 1 16")
    parser.add_argument("--precisions", nargs="+", choices=tuple(torch_peers.DTYPES),
                        default=["tf32"],
                        help="tf32 (the default: fp32 storage, TF32 math), fp16, bf16 (members "
                             "and inputs in that dtype, channels-last), fp32 (TF32 off)")
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(DEFAULT_SYSTEMS),
                        help="default: " + " ".join(DEFAULT_SYSTEMS))
    parser.add_argument("--iters", type=int, default=300,
                        help="timed samples per row (default: 300)")
    parser.add_argument("--warmup", type=int, default=50,
                        help="untimed calls before timing (default: 50)")
    parser.add_argument("--out", default="results/raw", help="raw record folder (runs/ inside)")
    parser.add_argument("--compile-budget", type=float, default=300.0,
                        help="wall-clock seconds of one torch-compile row (compile + warm-up + "
                             "timing) before it is killed and recorded as timeout (default: 300)")
    parser.add_argument("--torch-device", choices=("cuda", "cpu"), default="cuda",
                        help="cpu: a smoke test (eager back-to-back only, host-timed)")
    parser.add_argument("--seed", type=int, default=1,
                        help="base seed: member i's weights use seed + i")
    parser.add_argument("--model-dir", default="/tmp/iostune-bench-models",
                        help="exported iostune JSON models and the compile children's logs")
    parser.add_argument("--iostune", help="iostune binary for `iostune export` of nasnet_a_large "
                                          "and randwire (default: $IOSTUNE, build/cli/iostune, "
                                          "PATH)")
    parser.add_argument("--load-iostune-weights", action="store_true",
                        help="interpreted members use iostune's exported weights (seed + i)")
    parser.add_argument("--keep-bn", action="store_true",
                        help="do not fold torchvision batch norms (not like-for-like)")
    parser.add_argument("--in-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.sets = []
    for text in args.set_specs:
        try:
            args.sets.append(parse_set(text, args.input_mode))
        except ValueError as e:
            parser.error(f"--set {text!r}: {e}")
    if any(b <= 0 for b in args.batches) or args.iters <= 0 or args.warmup < 0:
        parser.error("batches and --iters must be positive, --warmup not negative")
    if args.compile_budget <= 0:
        parser.error("--compile-budget must be positive")
    # Remove repeats, keep the order.
    args.systems = list(dict.fromkeys(args.systems))
    args.precisions = list(dict.fromkeys(args.precisions))
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run_all(args) or 0
    except PeerError as e:
        print(f"torch_set_peers: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
