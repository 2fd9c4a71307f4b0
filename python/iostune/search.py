"""iostune.search(), iostune.report() and iostune.lookup(): the tuning job and the schedule
database, as `iostune search` and `iostune report` run them."""
import ctypes
import json
import sys
from dataclasses import dataclass, field

from . import _lib
from ._model import as_model
from .errors import BadInputError


@dataclass
class SearchResult:
    """What a search stored. `schedule_id` is the schedule replay will run (the search's own, or
    a baseline that measured faster on this GPU), `latency_ms` its latency: measured end to end,
    or, when `simulated`, the simulated cost model's estimate. `summary` holds every field of
    `iostune search --format json`."""
    schedule_id: int
    latency_ms: float
    strategy: str
    simulated: bool
    summary: dict = field(repr=False, default_factory=dict)


def _positive(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise BadInputError("%s must be a positive integer, got %r" % (name, value))
    return value


def _stderr_notice(line):
    print(line, file=sys.stderr, flush=True)


def search(model, batch=1, precision="tf32", cost="auto", db=None, *, strategy="ios-both", r=3,
           s=8, no_prune=False, layout="auto", contenders=("greedy", "nimble"),
           time_budget=None, progress=True, notice=None, memory_limit=None):
    """Searches, validates and stores a schedule for `model` (a zoo name, .json or .onnx path, or
    an iostune.Model) at `batch` and `precision`, as `iostune search` does; returns a
    SearchResult. cost: "auto" (measured on a GPU, else the simulated cost model, with a
    notice), "measured" or "sim". db: the schedule database (default iostune.db, created if
    missing). time_budget: seconds the search may take, passed to the search where the library
    has a time budget (otherwise a notice says it is ignored). notice: called with each line
    the user should see (default: printed on stderr). memory_limit: every schedule's activation
    arena within this many times the sequential liveness bound (e.g. 1.3; None or 0: no limit,
    the library's default)."""
    _positive("batch", batch)
    if time_budget is not None and (not isinstance(time_budget, (int, float)) or time_budget < 0):
        raise BadInputError("time_budget must be a number of seconds >= 0, got %r" % (time_budget,))
    if memory_limit is not None and (not isinstance(memory_limit, (int, float)) or memory_limit < 0):
        raise BadInputError("memory_limit must be a number >= 0 (0: no limit), got %r"
                            % (memory_limit,))
    if isinstance(contenders, str):
        contenders = [contenders]
    m = as_model(model, batch)
    lib = _lib.lib()
    options = _lib.SearchOptions()
    lib.iostune_search_options_init(ctypes.byref(options))
    options.batch = batch
    options.precision = _lib.text(precision)
    options.cost = _lib.text(cost)
    options.db_path = _lib.text(db)
    options.strategy = _lib.text(strategy)
    options.r, options.s, options.no_prune = r, s, int(bool(no_prune))
    options.layout = _lib.text(layout)
    options.contenders = _lib.text(",".join(contenders) if contenders else "none")
    options.time_budget_s = float(time_budget or 0)
    if memory_limit is not None:
        options.memory_limit = float(memory_limit)
    options.progress = int(bool(progress))
    sink = notice or _stderr_notice
    callback = _lib.NOTICE_FN(lambda line, _user: sink(line.decode("utf-8", "replace")))
    options.notice = callback
    result = ctypes.c_void_p()
    _lib.check(lib.iostune_search(m.handle, ctypes.byref(options), ctypes.byref(result)))
    try:
        return SearchResult(
            schedule_id=lib.iostune_search_result_schedule_id(result),
            latency_ms=lib.iostune_search_result_latency_ms(result),
            strategy=lib.iostune_search_result_strategy(result).decode(),
            simulated=bool(lib.iostune_search_result_simulated(result)),
            summary=json.loads(lib.iostune_search_result_json(result).decode()))
    finally:
        lib.iostune_search_result_free(result)


def report(db=None):
    """Every stored key's best schedule, as `iostune report --format json` lists them: a list of
    dicts (schedule_id, model, device, batch, tuned_batches, precision, layout, strategy,
    simulated, measured_ms, origin, ...)."""
    out = ctypes.c_void_p()
    _lib.check(_lib.lib().iostune_report_json(_lib.text(db), ctypes.byref(out)))
    return json.loads(_lib.take_string(out))


def lookup(model, batch=1, precision="tf32", db=None, device=0):
    """The stored schedule a replay of `model` at `batch` and `precision` would run on CUDA
    device `device` (a dict: schedule_id, strategy, layout, measured_ms, ...), without building
    anything. Raises MissingScheduleError when there is none, NoGPUError without a GPU."""
    _positive("batch", batch)
    m = as_model(model, batch)
    out = ctypes.c_void_p()
    _lib.check(_lib.lib().iostune_schedule_lookup(m.handle, _lib.text(db), batch,
                                                  _lib.text(precision), device, ctypes.byref(out)))
    return json.loads(_lib.take_string(out))
