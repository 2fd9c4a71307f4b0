"""Checks of the tensors a replayer runs on: iostune reads and writes device memory as it is,
so a tensor of the wrong device, dtype, shape or memory layout is refused with a message saying
what to pass, never copied silently. PyTorch is imported only when tensors are used."""
from .errors import BadInputError

# ReplayInfo::storage -> the torch dtype of that storage.
_DTYPES = {"float": "float32", "half": "float16", "bfloat16": "bfloat16"}


_torch = None
_raw_stream = None  # torch._C._cuda_getCurrentRawStream where this torch has it


def torch():
    global _torch, _raw_stream
    if _torch is None:
        try:
            import torch as t
        except ImportError as e:
            raise BadInputError("running on tensors needs PyTorch (import torch failed: %s); the "
                                "raw-pointer calls (Replayer.run_pointers) do not" % e) from None
        _raw_stream = getattr(t._C, "_cuda_getCurrentRawStream", None)
        _torch = t
    return _torch


def current_stream_handle(x):
    """The caller's current CUDA stream on x's device, as an int (a cudaStream_t). torch's
    raw-stream query (what torch.compile's generated code calls) builds no Stream object: a
    call's host time comes before the GPU starts on it, so it counts in its latency."""
    t = torch()
    if _raw_stream is not None:
        return _raw_stream(x.get_device())
    return t.cuda.current_stream(x.device).cuda_stream


class TensorSpec:
    """What one input or output is: its dtype, the shape of one batch item, and whether it is
    stored channels-last (the engine's NHWC, with native I/O)."""

    def __init__(self, storage, item_shape, channels_last):
        t = torch()
        self.dtype = getattr(t, _DTYPES[storage])
        self.item_shape = tuple(item_shape)
        self.channels_last = channels_last
        # Only a 4-D tensor has a channels-last form (torch.empty's keyword costs host time).
        self._format = t.channels_last if channels_last and len(self.item_shape) == 3 else None

    def layout_words(self):
        return "channels_last" if self.channels_last else "contiguous (NCHW)"

    def is_laid_out(self, x):
        t = torch()
        if self.channels_last and x.dim() == 4:
            return x.is_contiguous(memory_format=t.channels_last)
        return x.is_contiguous()

    def empty(self, n, device):
        if self._format is None:
            return torch().empty((n,) + self.item_shape, dtype=self.dtype, device=device)
        return torch().empty((n,) + self.item_shape, dtype=self.dtype, device=device,
                             memory_format=self._format)

    def accepts(self, x, n, device):
        """check_tensor's conditions, all met (the fast path of a call: no message built)."""
        return (isinstance(x, torch().Tensor) and x.dtype == self.dtype and x.is_cuda
                and x.shape[1:] == self.item_shape and (x.shape[0] == n if n is not None
                                                        else x.shape[0] >= 1)
                and (device is None or x.get_device() == device) and self.is_laid_out(x))


def check_tensor(what, x, spec, n, device):
    """Raises BadInputError unless `x` is a CUDA tensor on `device` of spec's dtype and layout
    holding n items (n None: any positive count); returns its batch size."""
    if spec.accepts(x, n, device):
        return x.shape[0]
    t = torch()
    if not isinstance(x, t.Tensor):
        raise BadInputError("%s is a %s, not a torch.Tensor" % (what, type(x).__name__))
    if x.dtype != spec.dtype:
        raise BadInputError("%s is %s; this model takes %s and does not convert silently: pass "
                            "x.to(%s)" % (what, x.dtype, spec.dtype, spec.dtype))
    if x.dim() != 1 + len(spec.item_shape) or tuple(x.shape[1:]) != spec.item_shape:
        raise BadInputError("%s has shape %s; the model takes (N, %s)"
                            % (what, tuple(x.shape), ", ".join(map(str, spec.item_shape))))
    if x.shape[0] < 1 or (n is not None and x.shape[0] != n):
        raise BadInputError("%s holds %d items; the request has %s"
                            % (what, x.shape[0], n if n is not None else "at least 1"))
    if not spec.is_laid_out(x):
        raise BadInputError("%s is not %s (strides %s); iostune reads device memory as it is and "
                            "does not copy silently: pass x.contiguous(%s)"
                            % (what, spec.layout_words(), tuple(x.stride()),
                               "memory_format=torch.channels_last" if spec.channels_last else ""))
    # Last, so that the checks above can be tried on the CPU (tests/python).
    if x.device.type != "cuda":
        raise BadInputError("%s is on %s; iostune runs on the GPU and does not copy: pass a CUDA "
                            "tensor (x.cuda())" % (what, x.device))
    if device is not None and x.device.index != device:
        raise BadInputError("%s is on %s, the replayer on cuda:%d" % (what, x.device, device))
    return x.shape[0]
