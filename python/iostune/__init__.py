"""iostune from Python: tune a CNN for this GPU and run its schedule as CUDA Graphs on CUDA
tensors (docs/python.md).

    import torch, torchvision, iostune
    model = torchvision.models.inception_v3(weights=None).eval().cuda()
    fast = iostune.compile(model, torch.randn(1, 3, 299, 299, device="cuda"), precision="fp16")
    y = fast(x)

    iostune.search("resnet50", batch=1, cost="sim", db="my.db")   # -> SearchResult
    iostune.report("my.db")                                       # -> [dict, ...]
    iostune.Replayer("resnet50", [1, 4, 16], db="my.db")          # explicit control

A ctypes binding of the C API (include/iostune/iostune.h, libiostune.so): it loads under any
Python 3 with nothing compiled against it, and imports PyTorch only where tensors are used.
"""
from . import _lib
from ._model import Model
from .compile import CompiledModel, compile, export_onnx
from .errors import BadInputError, Error, InternalError, MissingScheduleError, NoGPUError
from .replayer import Replayer
from .search import SearchResult, lookup, report, search

__all__ = [
    "compile", "search", "report", "lookup", "Replayer", "Model", "CompiledModel", "SearchResult",
    "export_onnx", "Error", "BadInputError", "MissingScheduleError", "NoGPUError", "InternalError",
    "version", "gpu_available", "has_feature",
]


def version():
    """The library's version: "0.1.0 (commit abc1234, Release build)"."""
    return _lib.lib().iostune_version().decode()


def has_feature(name):
    """Whether this build has an optional feature: "time_budget" (search honours time_budget)."""
    return bool(_lib.lib().iostune_has_feature(_lib.text(name)))


def gpu_available():
    """(True, "") when a CUDA device can be used, else (False, why)."""
    lib = _lib.lib()
    if lib.iostune_gpu_check() == 0:
        return True, ""
    return False, lib.iostune_last_error().decode()
