"""iostune.Replayer: stored schedules as CUDA Graphs, one per tuned batch size, run on CUDA
tensors (or raw device pointers) on the caller's stream, at any batch size."""
import ctypes
import json

from . import _lib
from ._model import as_model
from ._tensors import TensorSpec, check_tensor, current_stream_handle
from .errors import BadInputError


class Replayer:
    """Opens the best stored schedule of `model` (zoo name, .json/.onnx path or iostune.Model)
    for this GPU at each of `batch_sizes` (default: [model's batch] or [1]) and `precision`, as
    one CUDA Graph each. A request of n items runs on the smallest tuned size >= n (input padded,
    output trimmed); above the largest, in chunks. native_io=False: inputs and outputs are
    float32 NCHW (converted inside the graph); True: the engine's own storage and layout
    (`storage`, `layout`: fp16/bf16 channels_last for 16-bit schedules), with no conversion.
    Raises MissingScheduleError when a size has no schedule on this GPU, NoGPUError without one.
    One replayer owns one set of device buffers: calls on different streams must be ordered by
    the caller."""

    def __init__(self, model, batch_sizes=None, *, precision="tf32", db=None, native_io=False,
                 device=0, schedule_id=0, fallback_sequential=False, schedule_source="db"):
        sizes = list(batch_sizes) if batch_sizes else None
        m = as_model(model, min(sizes) if sizes else 1)
        sizes = sizes or [m.batch]
        lib = _lib.lib()
        options = _lib.ReplayOptions()
        lib.iostune_replay_options_init(ctypes.byref(options))
        options.db_path = _lib.text(db)
        options.precision = _lib.text(precision)
        array = (ctypes.c_int * len(sizes))(*[int(b) for b in sizes])
        options.batch_sizes = array
        options.batch_size_count = len(sizes)
        options.native_io = int(bool(native_io))
        options.fallback_sequential = int(bool(fallback_sequential))
        options.device = device
        options.schedule_id = schedule_id
        options.schedule_source = _lib.text(schedule_source)
        handle = ctypes.c_void_p()
        _lib.check(lib.iostune_replayer_open(m.handle, ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle
        self.model = m
        self.device = device
        out = ctypes.c_void_p()
        _lib.check(lib.iostune_replayer_info_json(handle, ctypes.byref(out)))
        self.info = json.loads(_lib.take_string(out))
        self.batch_sizes = self.info["batch_sizes"]
        self.input_count = lib.iostune_replayer_input_count(handle)
        self.output_count = lib.iostune_replayer_output_count(handle)
        self._run = lib.iostune_replayer_run
        self._submit = lib.iostune_replayer_submit
        self._collect = lib.iostune_replayer_collect
        self._largest = max(self.batch_sizes)
        self._inputs_type = ctypes.c_void_p * self.input_count
        self._outputs_type = ctypes.c_void_p * self.output_count
        self._specs = None

    @property
    def native_io(self):
        return self.info["native_io"]

    @property
    def storage(self):
        return self.info["storage"]

    @property
    def layout(self):
        return self.info["layout"]

    def _handle_or_raise(self):
        if self._handle is None:
            raise BadInputError("this Replayer was closed")
        return self._handle

    def item_bytes(self):
        """Bytes of one batch item of each input and each output."""
        return self.info["input_item_bytes"], self.info["output_item_bytes"]

    def run_pointers(self, n, inputs, outputs, stream=0):
        """A request of `n` items on raw device pointers (ints): inputs[k] holds n items of
        input k, outputs[k] receives n items of output k; enqueued on `stream` (a cudaStream_t
        as an int, 0: the legacy default stream); returns without waiting."""
        if len(inputs) != self.input_count or len(outputs) != self.output_count:
            raise BadInputError("the model takes %d input(s) and returns %d output(s); got %d and "
                                "%d pointers" % (self.input_count, self.output_count, len(inputs),
                                                 len(outputs)))
        _lib.check(self._run(self._handle_or_raise(), n, self._inputs_type(*inputs),
                             self._outputs_type(*outputs), ctypes.c_void_p(stream or None)))

    def tensor_specs(self):
        """(input specs, output specs): dtype, item shape and layout each tensor must have."""
        if self._specs is None:
            storage = self.storage if self.native_io else "float"
            channels_last = self.native_io and self.layout == "nhwc"
            self._specs = ([TensorSpec(storage, s, channels_last) for s in self.info["input_shapes"]],
                           [TensorSpec(storage, s, channels_last) for s in self.info["output_shapes"]])
        return self._specs

    def __call__(self, *inputs, out=None):
        """Runs on CUDA tensors (one per input, N items each, the dtype and layout of
        tensor_specs()) on the current CUDA stream of their device, without a host round trip;
        returns the output tensor (a tuple for several), or fills `out`."""
        in_specs, out_specs = self.tensor_specs()
        if len(inputs) != len(in_specs):
            raise BadInputError("the model takes %d input(s), got %d" % (len(in_specs), len(inputs)))
        n = None
        for k, (x, spec) in enumerate(zip(inputs, in_specs)):
            n = check_tensor("input %d" % k, x, spec, n, self.device)
        handle = self._handle_or_raise()
        stream = current_stream_handle(inputs[0])
        in_ptrs = self._inputs_type(*[x.data_ptr() for x in inputs])
        if out is None and n <= self._largest:
            # The GPU starts as early as it can: the request is submitted first, and the outputs
            # are allocated (on the same stream) while it runs. The host time of a call before
            # its launch is what a caller timing one request on an idle GPU sees.
            _lib.check(self._submit(handle, n, in_ptrs, stream))
            outputs = [spec.empty(n, inputs[0].device) for spec in out_specs]
            _lib.check(self._collect(handle, self._outputs_type(*[y.data_ptr() for y in outputs]),
                                     stream))
        else:
            outputs = self._outputs(out, out_specs, n, inputs[0].device)
            _lib.check(self._run(handle, n, in_ptrs,
                                 self._outputs_type(*[y.data_ptr() for y in outputs]), stream))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _outputs(self, out, specs, n, device):
        if out is None:
            return [spec.empty(n, device) for spec in specs]
        outputs = [out] if not isinstance(out, (list, tuple)) else list(out)
        if len(outputs) != len(specs):
            raise BadInputError("the model returns %d output(s), out= holds %d"
                                % (len(specs), len(outputs)))
        for k, (y, spec) in enumerate(zip(outputs, specs)):
            check_tensor("out[%d]" % k, y, spec, n, self.device)
        return outputs

    def benchmark(self, n, iterations=200, warmup=20, graph_only=False, stream=0):
        """Times `iterations` requests of `n` items in the library (as `iostune replay`: each
        alone between CUDA events), on buffers of its own; graph_only: the tuned graph of batch
        n alone, without the copies in and out. Returns a dict (median_ms, p90_ms, ...)."""
        out = ctypes.c_void_p()
        _lib.check(_lib.lib().iostune_replayer_benchmark(
            self._handle_or_raise(), n, iterations, warmup, int(bool(graph_only)),
            ctypes.c_void_p(stream or None), ctypes.byref(out)))
        return json.loads(_lib.take_string(out))

    def close(self):
        if getattr(self, "_handle", None) is not None:
            _lib.lib().iostune_replayer_free(self._handle)
            self._handle = None

    def __del__(self):
        # At interpreter exit the modules may be gone already; the process frees everything.
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "iostune.Replayer(%r, batch_sizes=%s, %s, %s %s)" % (
            self.model.name, self.batch_sizes, self.info["precision"], self.storage, self.layout)
