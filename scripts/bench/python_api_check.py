#!/usr/bin/env python3
"""iostune from Python on the GPU (issue 26): iostune.compile of torchvision Inception V3,
GoogLeNet and ResNet-50 in TF32 and fp16, checked and timed in one device call.

    python3 scripts/bench/python_api_check.py --pack .devpack [--models M ...]
        [--precisions "tf32 fp16"] [--batch-sizes 1,4] [--padded 3] [--iters 300]
        [--search-args "r=2 s=4 layout=nhwc"] [--no-compile] [--compile-budget-s 240]
        [--deadline S] [--out DIR] [--tag NAME] [--small]
    python3 scripts/bench/python_api_check.py --dry-run --small --iostune build/cli/iostune
    python3 scripts/bench/python_api_check.py --self-test

Per (model, precision), the module (torchvision's, seeded weights and calibrated batch-norm
statistics: tests/fixtures/export_torchvision.py) goes through iostune.compile with
batch_sizes [1, 4] (searched on this GPU with --search-args when the DB has no schedule; the
export is kept for the CLI), then:
  checks  PyTorch's output in the precision and iostune's, each against PyTorch's strict fp32
          output (relative max error); iostune passes within max(3x PyTorch's error, 1e-3).
          The Python call's output equals `iostune run --backend gpu --schedule best` (the CLI
          replay of the same schedule) on the same input. A padded request (3 items on the
          batch-4 graph) equals the first 3 items of the full request of 4.
  timing  median ms of 300 calls, each alone between CUDA events on an idle stream (as
          `iostune replay` times): `iostune replay --native-io --schedule-id S` (the CLI),
          the Python call on the engine's own storage and layout (float32 or fp16 channels_last:
          what --native-io times), the Python call on float32 NCHW (converted in the graph),
          the Python call back to back (200 calls between two events), the padded request of 3,
          and torch.compile(mode="reduce-overhead") of the same architecture at batch 1
          (scripts/bench/torch_peers.py in a child process with its time budget).
          Target: the Python call within 5% of the CLI's --native-io replay.
Outputs in --out (default $OUT or ./python-api-out): python_api[_TAG].md (the table),
python_api[_TAG].json (every row, the device and software), .log, and raw/runs/*.json bench
records (systems iostune-python, iostune-python-float-io, iostune-python-padded,
iostune-cli-native-io, torch-compile) for scripts/bench/unpack_results.sh. Rows are written as
they finish, so a call cut off by --deadline or SIGTERM keeps what it did.

--pack DIR: the folder scripts/pack_for_device.sh build python fills (iostune,
libiostune.so.1, libprotobuf-lite.so.32; gunzipped here when they arrive as .gz); the library
path is set for the device (CUDA's libraries, cuDNN from PyTorch's wheels) and the script
re-executes itself once with it. --dry-run (no GPU, CI): the same models at the fixtures' small
sizes are exported by iostune.export_onnx, loaded by the library, searched with cost="sim" at
every tuned size (iostune.report lists them), and `iostune run --backend cpu` of the export is
checked against PyTorch's fp32 output (L2 relative error <= 1e-4); the GPU columns read "-".
--self-test checks the script's own arithmetic and table on canned rows.
"""
import argparse
import gc
import glob
import gzip
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS = ("inception_v3", "googlenet", "resnet50")
FLOOR = 1e-3          # relative error any precision may have against strict fp32
TORCH_FACTOR = 3.0    # ... or this many times PyTorch's own error in that precision
TARGET_RATIO = 1.05   # the Python call against `iostune replay --native-io`
L2_TARGET = 1e-4      # --dry-run: iostune's CPU reference against PyTorch
STARTED = time.monotonic()


class Interrupted(BaseException):
    """SIGTERM: stop starting work, write what there is (not an Exception, so a row's own
    failure handling does not swallow it)."""


def elapsed():
    return time.monotonic() - STARTED


# ---- arithmetic and the table (pure: --self-test checks them) ----

def relative_error(got, want):
    """max |got - want| / max(1, max |want|), on lists or tensors (as floats)."""
    got, want = [float(v) for v in got], [float(v) for v in want]
    if len(got) != len(want):
        raise ValueError("sizes differ: %d vs %d" % (len(got), len(want)))
    scale = max([1.0] + [abs(v) for v in want])
    worst = max([0.0] + [abs(a - b) for a, b in zip(got, want)])
    return worst / scale if all(map(math.isfinite, got)) else math.inf


def within_tolerance(iostune_error, torch_error):
    """iostune's error against fp32 may be PyTorch's own in the precision, times a margin."""
    return iostune_error <= max(TORCH_FACTOR * torch_error, FLOOR)


def l2_relative(got, want):
    num = math.sqrt(sum((float(a) - float(b)) ** 2 for a, b in zip(got, want)))
    den = math.sqrt(sum(float(b) ** 2 for b in want)) or 1.0
    return num / den


def ratio(a, b):
    return a / b if a is not None and b else None


def cell(value, digits=3):
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return "%.*f" % (digits, value) if abs(value) >= 1e-3 or value == 0 else "%.1e" % value
    return str(value)


COLUMNS = (
    ("model", lambda r: r["model"]),
    ("prec", lambda r: r["precision"]),
    ("schedule b1", lambda r: r.get("schedule_b1")),
    ("CLI --native-io", lambda r: r["timing"].get("cli_native_ms")),
    ("python", lambda r: r["timing"].get("python_ms")),
    ("python / CLI", lambda r: r.get("python_vs_cli")),
    ("python b2b", lambda r: r["timing"].get("python_b2b_ms")),
    ("float32 NCHW", lambda r: r["timing"].get("python_float_ms")),
    ("padded 3 on 4", lambda r: r["timing"].get("padded_python_ms")),
    ("b4", lambda r: r["timing"].get("python_b4_ms")),
    ("torch.compile", lambda r: r["timing"].get("torch_compile_ms")),
    ("vs compile", lambda r: r.get("vs_compile")),
    ("err torch", lambda r: r["checks"].get("torch_error")),
    ("err iostune", lambda r: r["checks"].get("iostune_error")),
    ("= CLI", lambda r: r["checks"].get("equals_cli")),
    ("padded ok", lambda r: r["checks"].get("padded_equal")),
    ("CPU ref L2", lambda r: r["checks"].get("cpu_l2_relative")),
    ("status", lambda r: r["status"]),
)


def table(rows):
    """The Markdown table of the rows (ms: medians; ratios as x)."""
    lines = ["| " + " | ".join(name for name, _ in COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = []
        for name, get in COLUMNS:
            value = get(row)
            cells.append(("%.3fx" % value) if name in ("python / CLI", "vs compile") and
                         isinstance(value, float) else cell(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summarize_row(row):
    """Derived fields and the row's status from its checks and timings."""
    t, c = row["timing"], row["checks"]
    baseline = t.get("cli_native_ms") or t.get("lib_graph_ms")
    row["python_vs_cli"] = ratio(t.get("python_ms"), baseline)
    row["target_met"] = (row["python_vs_cli"] <= TARGET_RATIO
                         if row["python_vs_cli"] is not None else None)
    row["vs_compile"] = ratio(t.get("torch_compile_ms"), t.get("python_ms"))
    failed = [k for k in ("within_tolerance", "equals_cli", "padded_equal", "cpu_reference_ok",
                          "reported_ok") if c.get(k) is False]
    if row["status"] in ("ok", "dry-run") and failed:
        row["status"] = "failed: " + ", ".join(failed)
    return row


# ---- the run's state ----

class Run:
    def __init__(self, args):
        self.args = args
        base = "python_api" + ("_" + args.tag if args.tag else "")
        os.makedirs(args.out, exist_ok=True)
        self.md = os.path.join(args.out, base + ".md")
        self.json = os.path.join(args.out, base + ".json")
        self.log = open(os.path.join(args.out, base + ".log"), "w", encoding="utf-8")
        self.raw = os.path.join(args.out, "raw")
        self.work = tempfile.mkdtemp(prefix="iostune-python-api-")
        self.db = args.db or os.path.join(self.work, "iostune.db")
        self.rows = []
        self.models = {}  # --dry-run: name -> {batch: iostune.Model}
        self.meta = {"command": shlex.join(sys.argv), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                          time.gmtime())}

    def say(self, text):
        line = "[%7.1fs] %s" % (elapsed(), text)
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def past_deadline(self):
        return self.args.deadline > 0 and elapsed() >= self.args.deadline

    def write(self):
        with open(self.json, "w", encoding="utf-8") as f:
            json.dump({"meta": self.meta, "rows": self.rows}, f, indent=1)
        notes = [
            "Target: the Python call within %.0f%% of `iostune replay --native-io` of the same "
            "schedule (python / CLI <= %.2f): %s." % (
                (TARGET_RATIO - 1) * 100, TARGET_RATIO,
                ", ".join("%s %s %s" % (r["model"], r["precision"],
                                        {True: "met", False: "MISSED", None: "-"}[r.get("target_met")])
                          for r in self.rows) or "no rows"),
            "ms: median of each call alone between CUDA events; python b2b: 200 calls back to "
            "back / 200; padded: a request of 3 on the batch-4 graph; errors: relative max error "
            "against PyTorch's strict fp32 output; iostune passes within max(%gx PyTorch's, %g)."
            % (TORCH_FACTOR, FLOOR),
        ]
        with open(self.md, "w", encoding="utf-8") as f:
            f.write("# iostune from Python (%s)\n\n%s\n\n%s\n" % (
                self.meta.get("device", "no GPU"), table(self.rows), "\n".join("- " + n for n in notes)))

    def command(self, cmd, timeout=600):
        began = time.monotonic()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as e:
            code, out, err = "timeout", e.stdout or "", e.stderr or ""
        self.log.write("$ %s\n# exit %s, %.2f s\n%s%s\n" % (shlex.join(cmd), code,
                                                           time.monotonic() - began, out, err))
        return code, out if isinstance(out, str) else out.decode(), \
            err if isinstance(err, str) else err.decode()


def new_row(model, precision, sizes):
    return {"model": model, "precision": precision, "batch_sizes": sizes, "status": "ok",
            "checks": {}, "timing": {}, "schedules": {}}


# ---- models and inputs ----

def fixtures():
    sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
    import export_torchvision
    return export_torchvision


def build(name, small):
    fx = fixtures()
    _, small_size, full_size = fx.TORCHVISION[name]
    size = small_size if small else full_size
    return fx.torchvision_model(name, size), size, fx


def inputs(fx, size, count, seed=7):
    return fx.seeded_input((count, 3, size, size), seed)


# ---- one (model, precision) on the GPU ----

def precision_module(torch, module, precision):
    """PyTorch in that precision: fp32 weights with TF32 allowed, or the model converted to fp16
    channels_last (as torch_peers.py runs it)."""
    if precision == "fp16":
        import copy
        return copy.deepcopy(module).half().to(memory_format=torch.channels_last)
    return module


def native_input(torch, x, precision):
    """The engine's own storage and layout (channels-last in TF32 and fp16)."""
    dtype = torch.float16 if precision == "fp16" else torch.float32
    return x.to(dtype).contiguous(memory_format=torch.channels_last)


def per_call_ms(torch, fn, iters, warmup=30):
    """Each call alone between CUDA events on an idle device, as `iostune replay` times (and
    warmed up as it is: at least 300 ms of calls, so the GPU's clocks settle)."""
    began = time.monotonic()
    n = 0
    while n < warmup or time.monotonic() - began < 0.3:
        fn()
        n += 1
        if n % 16 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    gc.disable()
    try:
        for _ in range(iters):
            torch.cuda.synchronize()
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end))
    finally:
        gc.enable()
    return samples


def back_to_back_ms(torch, fn, calls=200):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def median(samples):
    s = sorted(samples)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2 if s else None


def search_options(args):
    options = {}
    for item in shlex.split(args.search_args):
        key, _, value = item.partition("=")
        options[key] = int(value) if value.isdigit() else value
    return options


def check_outputs(run, torch, iostune, row, module, fast, x, precision):
    """iostune and PyTorch in the precision, each against PyTorch's strict fp32 output."""
    with torch.no_grad():
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
        reference = module(x.float())
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
        peer = precision_module(torch, module, precision)
        theirs = peer(native_input(torch, x, precision) if precision == "fp16" else x)
    ours = fast(native_input(torch, x, precision))
    c = row["checks"]
    c["torch_error"] = relative_error(theirs.float().flatten().tolist(), reference.flatten().tolist())
    c["iostune_error"] = relative_error(ours.float().flatten().tolist(), reference.flatten().tolist())
    c["within_tolerance"] = within_tolerance(c["iostune_error"], c["torch_error"])
    return ours


def check_padded(torch, row, fast, x4, precision, n):
    full = fast(native_input(torch, x4, precision))
    part = fast(native_input(torch, x4[:n], precision))
    row["checks"]["padded_equal"] = bool(torch.equal(part, full[:n]))
    row["checks"]["padded_max_diff"] = (part.float() - full[:n].float()).abs().max().item()


def check_cli_output(run, torch, row, fast_float, onnx, x1, precision):
    """The Python call against `iostune run --schedule best` (the CLI replay) on the same input."""
    if not run.args.iostune:
        row["checks"]["equals_cli"] = None
        return
    raw_in, raw_out = os.path.join(run.work, "in.bin"), os.path.join(run.work, "out.bin")
    x1.float().contiguous().cpu().numpy().astype("<f4").tofile(raw_in)
    code, _, err = run.command([run.args.iostune, "run", "--backend", "gpu", "--schedule", "best",
                                "--model", onnx, "--batch", "1", "--precision", precision,
                                "--db", run.db, "--input", raw_in, "--output", raw_out])
    if code != 0:
        row["checks"]["equals_cli"] = False
        row["checks"]["cli_error"] = (err.strip().splitlines() or ["exit %s" % code])[-1]
        return
    import numpy
    cli = torch.from_numpy(numpy.fromfile(raw_out, dtype="<f4"))
    ours = fast_float(x1.float().contiguous()).flatten().cpu()
    diff = (cli - ours).abs().max().item() if cli.numel() == ours.numel() else math.inf
    row["checks"]["cli_max_diff"] = diff
    row["checks"]["equals_cli"] = diff == 0.0


def cli_native_samples(run, onnx, precision, schedule_id, iters):
    """`iostune replay --native-io` of the schedule: its per-launch samples (ms)."""
    if not run.args.iostune:
        return []
    code, out, err = run.command([run.args.iostune, "replay", "--model", onnx, "--batch", "1",
                                  "--precision", precision, "--db", run.db, "--native-io",
                                  "--schedule-id", str(schedule_id), "--iters", str(iters),
                                  "--format", "json"])
    if code != 0:
        run.say("  iostune replay --native-io failed (exit %s): %s" % (code, err.strip()[-300:]))
        return []
    return json.loads(out)["samples_ms"]


def torch_compile_ms(run, name, precision):
    """torch.compile(mode="reduce-overhead") at batch 1 by torch_peers.py in a child process."""
    if not run.args.compile:
        return None
    out = os.path.join(run.work, "peers_%s_%s" % (name, precision))
    code, _, err = run.command(
        [sys.executable, os.path.join(HERE, "torch_peers.py"), "--models", name, "--batches", "1",
         "--systems", "compile", "--precision", precision, "--out", out,
         "--compile-budget-s", str(run.args.compile_budget_s), "--runs", str(run.args.iters),
         "--min-runs", "100"] + (["--small"] if run.args.small else []),
        timeout=run.args.compile_budget_s + 120)
    records = sorted(glob.glob(os.path.join(out, "runs", "*.json")))
    for path in records:
        record = json.load(open(path))
        if record.get("status") == "ok" and record.get("stats"):
            shutil.copy(path, os.path.join(run.raw, "runs"))
            return record["stats"]["median_ms"]
    run.say("  torch.compile gave no timing (exit %s): %s" % (code, err.strip()[-300:]))
    return None


def record(run, row, system, samples, batch, details=None):
    """A bench record (scripts/bench/bench_record.py) of one timed system."""
    if not samples:
        return
    sys.path.insert(0, HERE)
    import bench_record
    rec = bench_record.make_run(
        row["model"], batch, system, command=run.meta["command"],
        device=run.meta.get("device_record", {}), software=run.meta.get("software", {}),
        precision=row["precision"], samples_ms=samples,
        search_or_compile_s=row.get("compile_s"),
        details=dict(details or {}, schedules=row["schedules"], batch_sizes=row["batch_sizes"]),
        measurement={"method": "cuda-events per call, device synchronised before each call",
                     "timed_runs": len(samples)})
    bench_record.write_record(run.raw, rec)


def gpu_row(run, torch, iostune, name, precision):
    args = run.args
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    row = new_row(name, precision, sizes)
    module, size, fx = build(name, args.small)
    module = module.cuda()
    x4 = inputs(fx, size, max(sizes)).cuda()
    x1 = x4[:1].contiguous()
    onnx = os.path.join(run.work, "%s_%s.onnx" % (name, precision))
    began = time.monotonic()
    fast = iostune.compile(module, native_input(torch, x1, precision), precision=precision,
                           batch_sizes=sizes, db=run.db, keep_onnx=onnx, progress=False,
                           search_options=dict(search_options(args), notice=run.say))
    row["compile_s"] = time.monotonic() - began
    row["schedules"] = {str(s["batch"]): {k: s[k] for k in ("schedule_id", "strategy", "layout",
                                                            "measured_ms")} for s in fast.schedules}
    row["schedule_b1"] = "#%d %s" % (fast.schedules[0]["schedule_id"], fast.schedules[0]["strategy"])
    row["io"] = "native" if fast.replayer.native_io else "float"
    fast_float = iostune.compile(onnx, x1.float().contiguous(), precision=precision,
                                 batch_sizes=sizes, db=run.db, search=False, progress=False)
    check_outputs(run, torch, iostune, row, module, fast, x1, precision)
    check_padded(torch, row, fast, x4, precision, args.padded)
    check_cli_output(run, torch, row, fast_float, onnx, x1, precision)
    time_row(run, torch, row, fast, fast_float, x1, x4, precision, onnx, name)
    return row


def time_row(run, torch, row, fast, fast_float, x1, x4, precision, onnx, name):
    args, t = run.args, row["timing"]
    xn, xf = native_input(torch, x1, precision), x1.float().contiguous()
    x_pad = native_input(torch, x4[:args.padded], precision)
    x_b4 = native_input(torch, x4, precision)
    cli = cli_native_samples(run, onnx, precision, fast.schedules[0]["schedule_id"], args.iters)
    t["cli_native_ms"] = median(cli)
    record(run, row, "iostune-cli-native-io", cli, 1, {"schedule_id": fast.schedules[0]["schedule_id"]})
    t["lib_graph_ms"] = fast.replayer.benchmark(1, args.iters, graph_only=True)["median_ms"]
    timed = {"iostune-python": (lambda: fast(xn), 1),
             "iostune-python-float-io": (lambda: fast_float(xf), 1),
             "iostune-python-padded": (lambda: fast(x_pad), args.padded),
             "iostune-python-b4": (lambda: fast(x_b4), x_b4.shape[0])}
    samples = {system: per_call_ms(torch, fn, args.iters) for system, (fn, _) in timed.items()}
    t["python_ms"] = median(samples["iostune-python"])
    t["python_float_ms"] = median(samples["iostune-python-float-io"])
    t["padded_python_ms"] = median(samples["iostune-python-padded"])
    t["python_b4_ms"] = median(samples["iostune-python-b4"])
    t["python_b2b_ms"] = back_to_back_ms(torch, lambda: fast(xn))
    t["padded_lib_ms"] = fast.replayer.benchmark(args.padded, args.iters)["median_ms"]
    for system, (_, batch) in timed.items():
        record(run, row, system, samples[system], batch, {"io": row["io"]})
    t["torch_compile_ms"] = torch_compile_ms(run, name, precision)


# ---- --overhead: where the Python call's host time goes ----

def overhead(run, iostune):
    """Host microseconds of each step of Replayer.__call__ (GoogLeNet's sequential schedule, no
    search), each the median of 2000 calls with the device idle in between: what a call spends
    before the GPU starts on it, which an idle-GPU latency measurement counts."""
    import torch
    from iostune._tensors import check_tensor
    precision = run.args.precisions.split()[0]
    name = run.args.models[0]
    module, size, fx = build(name, run.args.small)
    x1 = inputs(fx, size, 1).cuda()
    onnx = os.path.join(run.work, "%s.onnx" % name)
    iostune.export_onnx(module, (x1.cpu(),), onnx)
    r = iostune.Replayer(onnx, [1], precision=precision, native_io=True,
                         schedule_source="sequential", db=run.db)
    x = native_input(torch, x1, precision)
    (spec,), (out_spec,) = r.tensor_specs()
    y = out_spec.empty(1, x.device)
    stream = torch.cuda.current_stream().cuda_stream
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    steps = {
        "whole call r(x)": lambda: r(x),
        "check_tensor": lambda: check_tensor("input 0", x, spec, None, 0),
        "output torch.empty": lambda: out_spec.empty(1, x.device),
        "torch.cuda.current_stream().cuda_stream": lambda: torch.cuda.current_stream(
            x.device).cuda_stream,
        "torch._C._cuda_getCurrentRawStream": (lambda: raw(0)) if raw else None,
        "run_pointers (ctypes + C API enqueue)": lambda: r.run_pointers(1, [x.data_ptr()],
                                                                        [y.data_ptr()], stream),
        # What __call__ does before its launch: the request submitted (the graph copies the
        # input itself); the output is allocated and collected after it.
        "submit (ctypes + C API, up to the launch)": lambda: r._submit(
            r._handle, 1, r._inputs_type(x.data_ptr()), stream),
    }
    rows = {}
    for label, fn in steps.items():
        if fn is None:
            continue
        times = []
        for i in range(2200):
            torch.cuda.synchronize()
            began = time.perf_counter_ns()
            fn()
            times.append((time.perf_counter_ns() - began) / 1000.0)
        rows[label] = median(times[200:])
        run.say("  %-44s %8.2f us" % (label, rows[label]))
    with open(run.json[:-len(".json")] + "_overhead.json", "w") as f:
        json.dump({"model": name, "precision": precision, "host_us": rows,
                   "device": run.meta.get("device")}, f, indent=1)


# ---- --dry-run: the CPU parts ----

def dry_row(run, iostune, name, precision):
    """Export, load, simulated searches and the CPU reference against PyTorch's output."""
    import torch
    sizes = [int(b) for b in run.args.batch_sizes.split(",")]
    row = new_row(name, precision, sizes)
    row["status"] = "dry-run"
    module, size, fx = build(name, run.args.small)
    x = inputs(fx, size, 1)
    onnx = os.path.join(run.work, "%s.onnx" % name)
    if not os.path.exists(onnx):
        iostune.export_onnx(module, (x,), onnx)
    # One import per batch size for every precision: a large model's weights take seconds.
    models = run.models.setdefault(name, {b: iostune.Model(onnx, b) for b in sizes})
    for b in sizes:
        result = iostune.search(models[b], batch=b, precision=precision, db=run.db,
                                progress=False, notice=lambda line: None,
                                **dict(search_options(run.args), cost="sim"))
        row["schedules"][str(b)] = {"schedule_id": result.schedule_id,
                                    "strategy": result.strategy, "simulated": result.simulated}
    listed = [r for r in iostune.report(run.db)
              if r["model"] == models[sizes[0]].name and r["precision"] == precision]
    row["checks"]["reported_sizes"] = sorted({r["batch"] for r in listed})
    row["checks"]["reported_ok"] = row["checks"]["reported_sizes"] == sorted(set(sizes)) and all(
        r["tuned_batches"] == sorted(set(sizes)) for r in listed)
    row["schedule_b1"] = "#%d %s (est)" % (row["schedules"][str(sizes[0])]["schedule_id"],
                                           row["schedules"][str(sizes[0])]["strategy"])
    if precision == run.args.precisions.split()[0]:
        cpu_reference(run, torch, row, module, onnx, x)
    return row


def cpu_reference(run, torch, row, module, onnx, x):
    if not run.args.iostune:
        return
    raw_in, raw_out = os.path.join(run.work, "in.bin"), os.path.join(run.work, "out.bin")
    x.float().contiguous().numpy().astype("<f4").tofile(raw_in)
    code, _, err = run.command([run.args.iostune, "run", "--backend", "cpu", "--model", onnx,
                                "--input", raw_in, "--output", raw_out])
    if code != 0:
        row["checks"]["cpu_reference_ok"] = False
        row["checks"]["cli_error"] = err.strip()[-300:]
        return
    import numpy
    with torch.no_grad():
        want = module(x).flatten().tolist()
    got = numpy.fromfile(raw_out, dtype="<f4").tolist()
    row["checks"]["cpu_l2_relative"] = l2_relative(got, want) if len(got) == len(want) else math.inf
    row["checks"]["cpu_reference_ok"] = row["checks"]["cpu_l2_relative"] <= L2_TARGET


# ---- set-up ----

def unpack(pack):
    """The device pack's files, gunzipped where they arrived as .gz; returns (cli, library)."""
    for path in glob.glob(os.path.join(pack, "*.gz")):
        with gzip.open(path, "rb") as src, open(path[:-3], "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.chmod(path[:-3], 0o755)
        os.remove(path)
    cli = os.path.join(pack, "iostune")
    lib = os.path.join(pack, "libiostune.so.1")
    return (cli if os.path.exists(cli) else None), (lib if os.path.exists(lib) else None)


def library_path_dirs():
    return ["/usr/local/cuda/lib64"] + sorted(glob.glob(
        "/opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib"))


def reexec_with_library_path():
    """The loader reads LD_LIBRARY_PATH once, at start: set it (CUDA, cuDNN from PyTorch's
    wheels, as deployed_models.sh does) and start again, once."""
    have = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    missing = [d for d in library_path_dirs() if os.path.isdir(d) and d not in have]
    if missing and not os.environ.get("IOSTUNE_PY_CHECK_REEXEC"):
        os.environ["LD_LIBRARY_PATH"] = ":".join(missing + have)
        os.environ["IOSTUNE_PY_CHECK_REEXEC"] = "1"
        os.execv(sys.executable, [sys.executable] + sys.argv)


def import_iostune(args):
    if args.lib:
        os.environ["IOSTUNE_LIBRARY"] = os.path.abspath(args.lib)
    build_python = os.path.join(REPO, "build", "python")
    sys.path.insert(0, args.package or (build_python if not args.lib and os.path.isdir(
        build_python) else os.path.join(REPO, "python")))
    import iostune
    return iostune


def describe(run, torch, iostune):
    run.meta["iostune"] = iostune.version()
    run.meta["torch"] = torch.__version__ if torch else None
    run.meta["python"] = sys.version.split()[0]
    if torch is not None and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        run.meta["device"] = "%s (cc %d.%d)" % (props.name, props.major, props.minor)
        run.meta["device_record"] = {"name": props.name, "cc": "%d.%d" % (props.major, props.minor)}
    run.meta["software"] = {"iostune": run.meta["iostune"], "torch": run.meta["torch"],
                            "python": run.meta["python"]}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    p.add_argument("--precisions", default="tf32 fp16")
    p.add_argument("--batch-sizes", default="1,4", help="tuned sizes (the first is the headline)")
    p.add_argument("--padded", type=int, default=3, help="the padded request's size")
    p.add_argument("--iters", type=int, default=300)
    p.add_argument("--search-args", default="r=2 s=4 layout=nhwc",
                   help="iostune.search keyword arguments for a search compile() starts")
    p.add_argument("--compile", dest="compile", action="store_true", default=True)
    p.add_argument("--no-compile", dest="compile", action="store_false")
    p.add_argument("--compile-budget-s", type=float, default=240)
    p.add_argument("--deadline", type=float, default=0, help="start no model after S seconds")
    p.add_argument("--pack", help="device pack folder (iostune, libiostune.so.1, ...)")
    p.add_argument("--iostune", help="the iostune CLI (default: the pack's, or build/cli/iostune)")
    p.add_argument("--lib", help="libiostune.so.1 (default: the pack's, or the build folder's)")
    p.add_argument("--package", help="folder holding the iostune package (default: build/python)")
    p.add_argument("--db", help="schedule database (default: a fresh one)")
    p.add_argument("--out", default=os.environ.get("OUT", "python-api-out"))
    p.add_argument("--tag", default="")
    p.add_argument("--small", action="store_true", help="the fixtures' small image sizes")
    p.add_argument("--dry-run", action="store_true", help="the CPU parts only (CI)")
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--overhead", action="store_true",
                   help="only the host time of each step of a Python call (GPU)")
    args = p.parse_args(argv)
    if args.pack:
        cli, lib = unpack(args.pack)
        args.iostune, args.lib = args.iostune or cli, args.lib or lib
    if not args.iostune and os.path.exists(os.path.join(REPO, "build", "cli", "iostune")):
        args.iostune = os.path.join(REPO, "build", "cli", "iostune")
    return args


def run_all(run, iostune):
    torch = None
    try:
        import torch
    except ImportError as e:
        raise SystemExit("python_api_check.py needs PyTorch: %s" % e)
    describe(run, torch, iostune)
    gpu = iostune.gpu_available()[0] and torch.cuda.is_available()
    if not gpu and not run.args.dry_run:
        raise SystemExit("no GPU (%s); --dry-run runs the CPU parts" % iostune.gpu_available()[1])
    os.makedirs(os.path.join(run.raw, "runs"), exist_ok=True)
    for name in run.args.models:
        for precision in run.args.precisions.split():
            if run.past_deadline():
                run.say("deadline: %s %s not run" % (name, precision))
                continue
            run.say("%s %s" % (name, precision))
            try:
                row = dry_row(run, iostune, name, precision) if run.args.dry_run else \
                    gpu_row(run, torch, iostune, name, precision)
            except Exception as e:  # one row's failure is recorded; the others still run
                run.log.write(traceback.format_exc())
                row = new_row(name, precision, run.args.batch_sizes.split(","))
                row["status"] = "failed: %s: %s" % (type(e).__name__,
                                                    (str(e).splitlines() or [""])[0][:200])
            finally:
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
            run.rows.append(summarize_row(row))
            run.say("  " + row["status"])
            run.write()


def self_test():
    assert relative_error([1.0, 2.0], [1.0, 2.5]) == 0.5 / 2.5
    assert relative_error([0.1], [0.0]) == 0.1
    assert relative_error([float("nan")], [1.0]) == math.inf
    assert within_tolerance(2e-3, 1e-3) and not within_tolerance(4e-3, 1e-3)
    assert within_tolerance(9e-4, 0.0) and not within_tolerance(2e-3, 0.0)
    assert abs(l2_relative([3.0, 4.0], [3.0, 4.0])) == 0
    row = new_row("resnet50", "fp16", [1, 4])
    row["timing"].update(cli_native_ms=0.300, python_ms=0.312, torch_compile_ms=0.6)
    row["checks"].update(within_tolerance=True, equals_cli=True, padded_equal=True)
    summarize_row(row)
    assert abs(row["python_vs_cli"] - 1.04) < 1e-9 and row["target_met"] is True
    assert abs(row["vs_compile"] - 0.6 / 0.312) < 1e-9 and row["status"] == "ok"
    slow = summarize_row(dict(new_row("googlenet", "tf32", [1]), timing={"lib_graph_ms": 0.2,
                                                                         "python_ms": 0.25}))
    assert slow["target_met"] is False and slow["python_vs_cli"] == 1.25
    bad = new_row("inception_v3", "tf32", [1, 4])
    bad["checks"].update(within_tolerance=False, padded_equal=True)
    assert summarize_row(bad)["status"] == "failed: within_tolerance"
    text = table([row, slow, bad])
    assert "| resnet50 | fp16 |" in text and "1.040x" in text and "1.250x" in text, text
    assert text.count("\n") == 4 and "failed: within_tolerance" in text
    print("self-test passed")


def main(argv):
    args = parse_args(argv)
    if args.self_test:
        self_test()
        return 0
    if not args.dry_run:
        reexec_with_library_path()
    run = Run(args)

    def stop(signum, _frame):
        raise Interrupted("signal %d" % signum)
    signal.signal(signal.SIGTERM, stop)
    iostune = import_iostune(args)
    try:
        if args.overhead:
            import torch
            describe(run, torch, iostune)
            overhead(run, iostune)
            return 0
        run_all(run, iostune)
    except Interrupted as e:
        run.say("stopped by %s; writing what there is" % e)
    finally:
        run.write()
        shutil.rmtree(run.work, ignore_errors=True)
    print(open(run.md).read())
    return 0 if all(r["status"] in ("ok", "dry-run") for r in run.rows) and run.rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
