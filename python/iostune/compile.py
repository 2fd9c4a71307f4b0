"""iostune.compile(): a PyTorch module (or an ONNX file) as a callable that runs its stored
iostune schedule's CUDA Graph on CUDA tensors, searching the schedule first when this GPU has
none."""
import copy
import inspect
import math
import os
import tempfile
import warnings

from . import _lib
from ._model import Model
from ._tensors import torch
from .errors import BadInputError, MissingScheduleError
from .replayer import Replayer
from .search import lookup, search as run_search

ONNX_OPSET = 17
_STORAGE_DTYPE = {"fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def _as_tuple(example_inputs):
    t = torch()
    examples = (example_inputs,) if isinstance(example_inputs, t.Tensor) else tuple(example_inputs)
    if not examples or not all(isinstance(x, t.Tensor) for x in examples):
        raise BadInputError("example_inputs must be a tensor or a tuple of tensors, got %r"
                            % (type(example_inputs).__name__,))
    if any(x.dim() != 4 for x in examples):
        raise BadInputError("iostune runs CNNs on NCHW images: every example input must be 4-D "
                            "(N, C, H, W), got shapes %s" % [tuple(x.shape) for x in examples])
    return examples


def _outputs_of(result):
    t = torch()
    if isinstance(result, t.Tensor):
        return [result]
    if isinstance(result, (list, tuple)) and all(isinstance(r, t.Tensor) for r in result):
        return list(result)
    raise BadInputError("the module returns %s; iostune.compile takes modules returning a tensor "
                        "or a tuple of tensors" % type(result).__name__)


def export_onnx(module, examples, path, opset=ONNX_OPSET):
    """Exports `module` (evaluated on `examples`) to ONNX at `path` with PyTorch's TorchScript
    exporter, in float32 with a symbolic batch dimension, and returns the shapes of one batch
    item of each of the module's outputs (from running it once)."""
    t = torch()
    floats = tuple(x.float() for x in examples)
    float_module = module
    if any(p.dtype != t.float32 for p in list(module.parameters()) + list(module.buffers())
           if p.is_floating_point()):
        float_module = copy.deepcopy(module).float()  # the importer reads float32 weights
    with t.no_grad():
        item_shapes = [tuple(y.shape[1:]) for y in _outputs_of(float_module(*floats))]
    names = ["input_%d" % k for k in range(len(floats))]
    outputs = ["output_%d" % k for k in range(len(item_shapes))]
    kwargs = {}
    # torch >= 2.9 defaults to the dynamo exporter; the importer is tested on the TorchScript
    # exporter's files (tests/fixtures/export_torchvision.py does the same).
    if "dynamo" in inspect.signature(t.onnx.export).parameters:
        kwargs["dynamo"] = False
    with t.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t.onnx.export(float_module, floats, path, opset_version=opset, input_names=names,
                      output_names=outputs,
                      dynamic_axes={n: {0: "batch"} for n in names + outputs}, **kwargs)
    return item_shapes


class CompiledModel:
    """What iostune.compile returns: call it like the module, on CUDA tensors. `replayer` is the
    iostune.Replayer behind it; `schedules` the stored schedule of each tuned batch size."""

    def __init__(self, replayer, output_item_shapes, schedules, onnx_path):
        self.replayer = replayer
        self.schedules = schedules
        self.onnx_path = onnx_path
        self.batch_sizes = replayer.batch_sizes
        self._views = self._output_views(output_item_shapes)

    def _output_views(self, module_shapes):
        """Per output, the module's item shape when it differs from iostune's 4-D one (a
        classifier's (1000,) for iostune's (1000, 1, 1)); None: returned as iostune has it."""
        ours = self.replayer.info["output_shapes"]
        if module_shapes is None:
            return [None] * len(ours)
        if len(module_shapes) != len(ours):
            raise BadInputError("the module returns %d output(s), the exported model %d"
                                % (len(module_shapes), len(ours)))
        views = []
        for mine, theirs in zip(module_shapes, ours):
            if math.prod(mine) != math.prod(theirs):
                raise BadInputError("an output of the module has item shape %s, iostune's %s"
                                    % (mine, tuple(theirs)))
            views.append(None if tuple(mine) == tuple(theirs) else tuple(mine))
        return views

    def __call__(self, *inputs, out=None):
        result = self.replayer(*inputs, out=out)
        if out is not None:
            return out
        outputs = [result] if not isinstance(result, tuple) else list(result)
        shaped = [y if v is None else y.view((y.shape[0],) + v) for y, v in zip(outputs, self._views)]
        return shaped[0] if len(shaped) == 1 else tuple(shaped)

    def __repr__(self):
        return "iostune.CompiledModel(%r, batch_sizes=%s, schedules=%s)" % (
            self.replayer.model.name, self.batch_sizes, [s["schedule_id"] for s in self.schedules])


def _io_mode(example, precision, layouts):
    """native_io for the example's dtype and memory format: float32 NCHW runs with float I/O
    (converted in the graph); the schedule's own storage in its layout runs natively."""
    t = torch()
    if example.dtype == t.float32 and example.is_contiguous():
        return False
    storage = getattr(t, _STORAGE_DTYPE[precision])
    if len(set(layouts)) == 1 and example.dtype == storage:
        channels_last = layouts[0] == "nhwc"
        fmt = t.channels_last if channels_last else t.contiguous_format
        if example.is_contiguous(memory_format=fmt):
            return True
    raise BadInputError(
        "the example input is %s %s; a %s schedule stored in layout%s %s runs on float32 NCHW "
        "(contiguous) tensors, or natively on %s in that layout (channels_last for nhwc): pass "
        "one of those" % (example.dtype, "channels_last" if example.is_contiguous(
            memory_format=t.channels_last) else "contiguous" if example.is_contiguous() else
            "non-contiguous", precision, "s" if len(set(layouts)) > 1 else "",
            "/".join(sorted(set(layouts))), storage))


def _schedule_for(model, batch, precision, db, device, do_search, search_options):
    try:
        return lookup(model, batch, precision, db, device)
    except MissingScheduleError:
        if not do_search:
            raise
    run_search(model, batch, precision, db=db, **search_options)
    return lookup(model, batch, precision, db, device)


def compile(module_or_onnx_path, example_inputs, *, precision="tf32", batch_sizes=None, db=None,
            search=True, time_budget=None, cost="auto", progress=True, search_options=None,
            keep_onnx=None):
    """Returns a callable that runs `module_or_onnx_path` (a torch.nn.Module, exported to ONNX
    opset 17 here, or an .onnx file) with its stored iostune schedule on this GPU, one CUDA Graph
    per batch size of `batch_sizes` (default: the example's batch), on CUDA tensors without a
    host round trip, on the caller's current CUDA stream. A batch size with no schedule for this
    GPU is searched first when `search` (cost "auto": measured), else MissingScheduleError.
    The example input's dtype and memory format choose the I/O: float32 NCHW (contiguous), or
    the precision's storage dtype in the schedule's layout (torch.float16 channels_last for
    fp16), run without conversion. Calls then take inputs of that dtype and layout and any batch
    size; anything else raises BadInputError (nothing is copied silently). search_options: more
    keyword arguments of iostune.search (strategy, r, s, layout, contenders, notice). keep_onnx:
    a path to keep the exported ONNX file at (default: a temporary file, removed once loaded)."""
    examples = _as_tuple(example_inputs)
    if precision not in _STORAGE_DTYPE:
        raise BadInputError("unknown precision '%s'; use fp32, tf32, fp16 or bf16" % (precision,))
    sizes = sorted(set(batch_sizes or [examples[0].shape[0]]))
    if not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in sizes):
        raise BadInputError("batch_sizes must be positive integers, got %r" % (batch_sizes,))
    given_path = isinstance(module_or_onnx_path, (str, os.PathLike))
    if not given_path and not isinstance(module_or_onnx_path, torch().nn.Module):
        raise BadInputError("iostune.compile takes a torch.nn.Module or an .onnx path, got %s"
                            % type(module_or_onnx_path).__name__)
    options = dict(search_options or {}, cost=cost, time_budget=time_budget, progress=progress)
    with tempfile.TemporaryDirectory(prefix="iostune-") as folder:
        if given_path:
            path, item_shapes = os.fspath(module_or_onnx_path), None
        else:
            name = type(module_or_onnx_path).__name__.lower()
            path = os.fspath(keep_onnx) if keep_onnx else os.path.join(folder, name + ".onnx")
            item_shapes = export_onnx(module_or_onnx_path, examples, path)
        model = Model(path, sizes[0])
        _lib.check(_lib.lib().iostune_gpu_check())
        device = (examples[0].device.index or 0) if examples[0].is_cuda else 0
        schedules = [_schedule_for(model, b, precision, db, device, search, options)
                     for b in sizes]
        native = _io_mode(examples[0], precision, [s["layout"] for s in schedules])
        replayer = Replayer(model, sizes, precision=precision, db=db, native_io=native,
                            device=device)
    return CompiledModel(replayer, item_shapes, schedules,
                         path if keep_onnx or given_path else None)

