"""ctypes bindings of the C API (include/iostune/iostune.h, libiostune.so).

ctypes rather than a compiled extension: the same files load under Debian's Python 3.11 and the
GPU machine's Python 3.12 with its PyTorch, with nothing compiled against either interpreter
(docs/python.md). The library is found, in order, at $IOSTUNE_LIBRARY, beside this package (the
build folder's copy), in the lib folder of an installed prefix, and through the system loader.
"""
import ctypes
import os
import sys
import threading

from .errors import BY_STATUS, Error

API_VERSION = 1
_SONAMES = ("libiostune.so.1", "libiostune.so")

c_int, c_int64, c_size_t, c_double = ctypes.c_int, ctypes.c_int64, ctypes.c_size_t, ctypes.c_double
c_char_p, c_void_p = ctypes.c_char_p, ctypes.c_void_p
NOTICE_FN = ctypes.CFUNCTYPE(None, c_char_p, c_void_p)


class SearchOptions(ctypes.Structure):
    """iostune_search_options."""
    _fields_ = [
        ("struct_size", c_size_t), ("batch", c_int), ("precision", c_char_p), ("cost", c_char_p),
        ("db_path", c_char_p), ("strategy", c_char_p), ("r", c_int), ("s", c_int),
        ("no_prune", c_int), ("layout", c_char_p), ("contenders", c_char_p),
        ("sim_device", c_char_p), ("time_budget_s", c_double), ("progress", c_int),
        ("notice", NOTICE_FN), ("notice_user_data", c_void_p), ("memory_limit", c_double),
    ]


class ReplayOptions(ctypes.Structure):
    """iostune_replay_options."""
    _fields_ = [
        ("struct_size", c_size_t), ("db_path", c_char_p), ("precision", c_char_p),
        ("batch_sizes", ctypes.POINTER(c_int)), ("batch_size_count", c_int), ("native_io", c_int),
        ("fallback_sequential", c_int), ("device", c_int), ("schedule_id", c_int64),
        ("schedule_source", c_char_p),
    ]


_P = ctypes.POINTER
_PROTOTYPES = {
    # name: (restype, argtypes)
    "iostune_api_version": (c_int, []),
    "iostune_version": (c_char_p, []),
    "iostune_last_error": (c_char_p, []),
    "iostune_status_name": (c_char_p, [c_int]),
    "iostune_free_string": (None, [c_void_p]),
    "iostune_gpu_check": (c_int, []),
    "iostune_has_feature": (c_int, [c_char_p]),
    "iostune_model_load": (c_int, [c_char_p, c_int, _P(c_void_p)]),
    "iostune_model_free": (None, [c_void_p]),
    "iostune_model_name": (c_char_p, [c_void_p]),
    "iostune_model_fingerprint": (c_char_p, [c_void_p]),
    "iostune_model_batch": (c_int, [c_void_p]),
    "iostune_model_input_count": (c_int, [c_void_p]),
    "iostune_model_output_count": (c_int, [c_void_p]),
    "iostune_model_input_shape": (c_int, [c_void_p, c_int, _P(c_int)]),
    "iostune_model_output_shape": (c_int, [c_void_p, c_int, _P(c_int)]),
    "iostune_search_options_init": (None, [_P(SearchOptions)]),
    "iostune_search": (c_int, [c_void_p, _P(SearchOptions), _P(c_void_p)]),
    "iostune_search_result_free": (None, [c_void_p]),
    "iostune_search_result_schedule_id": (c_int64, [c_void_p]),
    "iostune_search_result_latency_ms": (c_double, [c_void_p]),
    "iostune_search_result_strategy": (c_char_p, [c_void_p]),
    "iostune_search_result_simulated": (c_int, [c_void_p]),
    "iostune_search_result_json": (c_char_p, [c_void_p]),
    "iostune_report_json": (c_int, [c_char_p, _P(c_void_p)]),
    "iostune_schedule_lookup": (c_int, [c_void_p, c_char_p, c_int, c_char_p, c_int, _P(c_void_p)]),
    "iostune_replay_options_init": (None, [_P(ReplayOptions)]),
    "iostune_replayer_open": (c_int, [c_void_p, _P(ReplayOptions), _P(c_void_p)]),
    "iostune_replayer_free": (None, [c_void_p]),
    "iostune_replayer_input_count": (c_int, [c_void_p]),
    "iostune_replayer_output_count": (c_int, [c_void_p]),
    "iostune_replayer_input_item_bytes": (c_int, [c_void_p, c_int, _P(c_size_t)]),
    "iostune_replayer_output_item_bytes": (c_int, [c_void_p, c_int, _P(c_size_t)]),
    "iostune_replayer_info_json": (c_int, [c_void_p, _P(c_void_p)]),
    "iostune_replayer_run": (c_int, [c_void_p, c_int, _P(c_void_p), _P(c_void_p), c_void_p]),
    "iostune_replayer_submit": (c_int, [c_void_p, c_int, _P(c_void_p), c_void_p]),
    "iostune_replayer_collect": (c_int, [c_void_p, _P(c_void_p), c_void_p]),
    "iostune_replayer_benchmark": (c_int, [c_void_p, c_int, c_int, c_int, c_int, c_void_p,
                                           _P(c_void_p)]),
}

_lock = threading.Lock()
_lib = None


def _candidates():
    explicit = os.environ.get("IOSTUNE_LIBRARY")
    if explicit:
        return [explicit]
    here = os.path.dirname(os.path.abspath(__file__))
    # Beside the package (build folder, device pack); <prefix>/lib/python/iostune -> <prefix>/lib;
    # <prefix>/lib/python3.X/site-packages/iostune -> <prefix>/lib.
    folders = [here, os.path.join(here, "..", ".."), os.path.join(here, "..", "..", "..")]
    found = [os.path.normpath(os.path.join(d, n)) for d in folders for n in _SONAMES]
    return [p for p in found if os.path.exists(p)] + [_SONAMES[0]]


def _open(paths):
    failures = []
    for path in paths:
        try:
            return ctypes.CDLL(path), failures
        except OSError as e:
            failures.append(str(e))
    return None, failures


def _load():
    paths = _candidates()
    lib, failures = _open(paths)
    if lib is None and "torch" not in sys.modules and any(
            "libcu" in f or "libnv" in f for f in failures):
        # The CUDA and cuDNN libraries may come with PyTorch's wheels: importing torch loads
        # them into the process, where libiostune's dependencies then resolve.
        try:
            import torch  # noqa: F401
            lib, more = _open(paths)
            failures += more
        except ImportError:
            pass
    if lib is None:
        raise Error("cannot load the iostune library (libiostune.so.1): " + "; ".join(failures) +
                    ". Build it (cmake --build build --target iostune_c), set IOSTUNE_LIBRARY to "
                    "its path, and make CUDA's and cuDNN's libraries reachable (LD_LIBRARY_PATH)")
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    if lib.iostune_api_version() != API_VERSION:
        raise Error("the iostune library at %s has C API version %d, this package needs %d: "
                    "use the package and the library of one build"
                    % (lib._name, lib.iostune_api_version(), API_VERSION))
    return lib


def lib():
    """The loaded library (loaded on first use)."""
    global _lib
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib = _load()
    return _lib


def check(status):
    """Raises the exception of a failed call's status with the library's message."""
    if status != 0:
        message = lib().iostune_last_error().decode("utf-8", "replace")
        raise BY_STATUS.get(status, Error)(message)


def take_string(pointer):
    """The text of a `char**` result, freed."""
    try:
        return ctypes.string_at(pointer.value).decode("utf-8")
    finally:
        lib().iostune_free_string(pointer)


def text(value):
    """bytes for a `const char*` argument; None stays NULL (the library's default)."""
    return None if value is None else os.fsencode(value) if isinstance(value, os.PathLike) \
        else str(value).encode("utf-8")
