"""The raw benchmark record: one JSON file per measured (model, batch, precision, system) run,
packed at the end of a session into one JSON Lines file per folder (pack_records), so that
results/raw holds a few files, not thousands.

  python3 scripts/bench/bench_record.py pack results/raw session-2026-11-29

Every producer (torch_peers.py, record_iostune.py) writes records through this module and
summarize.py reads them through it, so the schema (documented in results/README.md) lives in one
place. Pure standard library: it runs on the GPU machine and here alike.
"""

import datetime
import json
import lzma
import math
import os
import re

RUN_SCHEMA = "iostune-bench-run/1"
PROFILE_SCHEMA = "iostune-bench-profile/1"
STATUSES = ("ok", "failed", "timeout", "skipped")
RUNS_DIR = "runs"
PROFILES_DIR = "profiles"
# iostune's --precision names. A record without a string "precision" (written before fp16/bf16,
# when the field was the object {"storage": "fp32", "math": "tf32"}) was measured in TF32.
PRECISIONS = ("tf32", "fp16", "bf16", "fp32")
DEFAULT_PRECISION = "tf32"
# What each precision stores and computes in, kept beside the name as the records always had it.
NUMERICS = {"tf32": {"storage": "fp32", "math": "tf32"},
            "fp32": {"storage": "fp32", "math": "fp32"},
            "fp16": {"storage": "fp16", "math": "fp16 tensor cores, fp32 accumulation"},
            "bf16": {"storage": "bf16", "math": "bf16 tensor cores, fp32 accumulation"}}


class RecordError(Exception):
    """A raw file that does not follow the schema; the message names the file and the field."""


def utc_now():
    """ISO-8601 UTC timestamp with seconds, e.g. 2025-01-31T12:00:00Z (sorts as text)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def percentile(sorted_values, q):
    """Linear-interpolated percentile (numpy's default method) of an ascending list, q in [0, 1]."""
    if not sorted_values:
        raise ValueError("percentile of no samples")
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def sample_stats(samples_ms):
    """Median, p90, p10, min, max, mean and population standard deviation of the samples."""
    values = sorted(float(v) for v in samples_ms)
    if not values:
        raise ValueError("no samples")
    mean = sum(values) / len(values)
    return {
        "median_ms": percentile(values, 0.5),
        "p90_ms": percentile(values, 0.9),
        "p10_ms": percentile(values, 0.1),
        "min_ms": values[0],
        "max_ms": values[-1],
        "mean_ms": mean,
        "std_ms": math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)),
        "count": len(values),
    }


def precision_of(record):
    """The precision a record was measured in; older records without the field are TF32."""
    value = record.get("precision")
    return value if isinstance(value, str) else DEFAULT_PRECISION


def make_run(model, batch, system, *, command, device, software, precision=DEFAULT_PRECISION,
             samples_ms=None, status="ok", error=None, measurement=None, search_or_compile_s=None,
             critical_path_ms=None, details=None, date=None):
    """A run record; stats are computed from the samples so they always agree with them."""
    record = {
        "schema": RUN_SCHEMA,
        "model": model,
        "batch": int(batch),
        "system": system,
        "status": status,
        "date": date or utc_now(),
        "command": command,
        "device": device,
        "software": software,
        "precision": precision,
        "numerics": NUMERICS.get(precision, {}),
        "measurement": measurement or {},
        "samples_ms": [float(v) for v in (samples_ms or [])],
        "search_or_compile_s": search_or_compile_s,
        "details": details or {},
    }
    if record["samples_ms"]:
        record["stats"] = sample_stats(record["samples_ms"])
    if error:
        record["error"] = error
    if critical_path_ms is not None:
        record["critical_path_ms"] = float(critical_path_ms)
    validate_run(record, "<new record>")
    return record


def make_profile(model, batch, *, command, device, software, critical_path_ms, op_sum_ms,
                 span_ms=None, precision=DEFAULT_PRECISION, layout=None, date=None):
    """The critical-path bound of a model: the longest dependency path weighted by each
    operator's isolated kernel time (from `iostune profile`)."""
    record = {
        "schema": PROFILE_SCHEMA,
        "model": model,
        "batch": int(batch),
        "precision": precision,
        "date": date or utc_now(),
        "command": command,
        "device": device,
        "software": software,
        "critical_path_ms": float(critical_path_ms),
        "op_sum_ms": float(op_sum_ms),
        "span_ms": None if span_ms is None else float(span_ms),
    }
    if layout:
        record["layout"] = layout
    validate_profile(record, "<new record>")
    return record


def _require(record, source, key, kinds):
    if key not in record:
        raise RecordError(f"{source}: missing field '{key}'")
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    value = record[key]
    # bool is an int in Python; a true/false where a number belongs is still a schema error.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise RecordError(f"{source}: field '{key}' has type {type(value).__name__}, "
                          f"expected {' or '.join(k.__name__ for k in kinds)}")
    return value


def _validate_common(record, source):
    _require(record, source, "model", str)
    batch = _require(record, source, "batch", int)
    if batch <= 0:
        raise RecordError(f"{source}: batch must be positive, got {batch}")
    _require(record, source, "date", str)
    try:
        parse_date(record["date"])
    except ValueError:
        raise RecordError(f"{source}: date '{record['date']}' is not ISO-8601 "
                          "(like 2025-01-31T12:00:00Z)") from None
    _require(record, source, "command", str)
    device = _require(record, source, "device", dict)
    if not isinstance(device.get("name"), str) or not device["name"]:
        raise RecordError(f"{source}: device.name is missing")
    _require(record, source, "software", dict)
    precision = record.get("precision")
    # Older records hold an object here (and are TF32); a name must be one iostune knows.
    if isinstance(precision, str):
        if precision not in PRECISIONS:
            raise RecordError(f"{source}: precision '{precision}' is not one of "
                              f"{', '.join(PRECISIONS)}")
    elif precision is not None and not isinstance(precision, dict):
        raise RecordError(f"{source}: field 'precision' has type {type(precision).__name__}, "
                          "expected str (or the older object)")


def validate_run(record, source):
    """Raises RecordError unless `record` is a well-formed run record."""
    if record.get("schema") != RUN_SCHEMA:
        raise RecordError(f"{source}: schema is {record.get('schema')!r}, expected {RUN_SCHEMA!r}")
    _validate_common(record, source)
    _require(record, source, "system", str)
    status = _require(record, source, "status", str)
    if status not in STATUSES:
        raise RecordError(f"{source}: status '{status}' is not one of {', '.join(STATUSES)}")
    samples = _require(record, source, "samples_ms", list)
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0
           for v in samples):
        raise RecordError(f"{source}: samples_ms must hold positive finite numbers")
    if status == "ok" and not samples:
        raise RecordError(f"{source}: status ok but no samples_ms")
    if status != "ok" and not record.get("error"):
        raise RecordError(f"{source}: status {status} needs an 'error' message")
    cost = record.get("search_or_compile_s")
    if cost is not None and (not isinstance(cost, (int, float)) or cost < 0):
        raise RecordError(f"{source}: search_or_compile_s must be a non-negative number or null")


def validate_profile(record, source):
    """Raises RecordError unless `record` is a well-formed profile record."""
    if record.get("schema") != PROFILE_SCHEMA:
        raise RecordError(f"{source}: schema is {record.get('schema')!r}, "
                          f"expected {PROFILE_SCHEMA!r}")
    _validate_common(record, source)
    bound = _require(record, source, "critical_path_ms", (int, float))
    if not bound > 0:
        raise RecordError(f"{source}: critical_path_ms must be positive, got {bound}")


def parse_date(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _safe(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text))


def write_record(raw_dir, record):
    """Writes the record under raw_dir/runs or raw_dir/profiles with a unique name; returns it.
    Names hold the precision unless it is TF32 (the only one before fp16/bf16), so runs of
    several precisions in one second get telling names, not _2 suffixes."""
    is_run = record["schema"] == RUN_SCHEMA
    folder = os.path.join(raw_dir, RUNS_DIR if is_run else PROFILES_DIR)
    os.makedirs(folder, exist_ok=True)
    stamp = record["date"].replace("-", "").replace(":", "")
    parts = [record["model"], f"b{record['batch']}"]
    if precision_of(record) != DEFAULT_PRECISION:
        parts.append(precision_of(record))
    if is_run:
        parts.append(record["system"])
    base = "_".join(_safe(p) for p in parts + [stamp])
    path = os.path.join(folder, base + ".json")
    n = 1
    while os.path.exists(path):
        n += 1
        path = os.path.join(folder, f"{base}_{n}.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(record, out, indent=1)
        out.write("\n")
    os.replace(tmp, path)
    return path


# Packs are xz-compressed JSON lines: the records are mostly sample lists, which xz shrinks about
# fivefold, and the tracked tree travels with every device call under a 64 MiB limit. Packs
# written before 2026-11-29 are plain .jsonl; both are read.
PACK_SUFFIX = ".jsonl.xz"
PLAIN_PACK_SUFFIX = ".jsonl"
PACK_SUFFIXES = (PACK_SUFFIX, PLAIN_PACK_SUFFIX)


def _read_json(text, source):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"{source}: malformed JSON: {e}") from None
    if not isinstance(value, dict):
        raise RecordError(f"{source}: expected a JSON object")
    return value


def _open_text(path, mode="r"):
    """A record file or pack as text; an .xz pack through lzma (appending adds an xz stream,
    which reading takes as one file)."""
    if path.endswith(".xz"):
        return lzma.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def _file_records(path):
    """(name, record) of a record file, or of each line of a pack ({"file", "record"})."""
    with _open_text(path) as f:
        if not path.endswith(PACK_SUFFIXES):
            return [(os.path.basename(path), _read_json(f.read(), path))]
        entries = []
        for number, line in enumerate(f, 1):
            if line.strip():
                entry = _read_json(line, f"{path}:{number}")
                if not isinstance(entry.get("file"), str) or not isinstance(entry.get("record"),
                                                                            dict):
                    raise RecordError(f"{path}:{number}: expected {{\"file\": name, "
                                      f"\"record\": object}}")
                entries.append((entry["file"], entry["record"]))
        return entries


def load_records(raw_dir):
    """(runs, profiles): every record under raw_dir, loose or packed, each with the path of its
    own file in '_path' (a packed one: the path it had before packing). A record found twice
    (a tag unpacked again after its records were packed) is an error."""
    runs, profiles = [], []
    for folder, kind, validate in ((RUNS_DIR, runs, validate_run),
                                   (PROFILES_DIR, profiles, validate_profile)):
        root = os.path.join(raw_dir, folder)
        if not os.path.isdir(root):
            continue
        seen = set()
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                if not name.endswith((".json",) + PACK_SUFFIXES):
                    continue
                for record_name, record in _file_records(os.path.join(dirpath, name)):
                    path = os.path.join(dirpath, record_name)
                    if path in seen:
                        raise RecordError(f"{path}: the record is there twice (loose and "
                                          "packed, or in two packs)")
                    seen.add(path)
                    validate(record, path)
                    record["_path"] = path
                    kind.append(record)
    return runs, profiles


def pack_records(raw_dir, name):
    """Moves the loose record files of raw_dir's runs/ and profiles/ into <folder>/NAME.jsonl.xz,
    a line each ({"file": its name, "record": it}); load_records reads them as before. Returns
    how many it packed."""
    packed = 0
    for folder in (RUNS_DIR, PROFILES_DIR):
        root = os.path.join(raw_dir, folder)
        names = sorted(n for n in os.listdir(root) if n.endswith(".json")) \
            if os.path.isdir(root) else []
        if not names:
            continue
        lines = [json.dumps({"file": n, "record": _file_records(os.path.join(root, n))[0][1]},
                            separators=(",", ":")) for n in names]
        with _open_text(os.path.join(root, name + PACK_SUFFIX), "a") as out:
            out.write("\n".join(lines) + "\n")
        for n in names:
            os.remove(os.path.join(root, n))
        packed += len(names)
    return packed


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 4 or sys.argv[1] != "pack":
        sys.exit("usage: bench_record.py pack RAW_DIR NAME   (e.g. results/raw session-2026-11-29)")
    print(f"{pack_records(sys.argv[2], sys.argv[3])} records packed into "
          f"{sys.argv[2]}/{{{RUNS_DIR},{PROFILES_DIR}}}/{sys.argv[3]}{PACK_SUFFIX}")
