"""The deployed models' table (issues 14 and 28) from the raw records and validate.jsonl that
scripts/bench/deployed_models.sh writes: per (model, batch, precision), iostune's sequential
schedule, iostune's best (the DB's best after the search's contest, with the strategy it kept),
whether the replayed best passed --validate, PyTorch eager, its CUDA graph and torch.compile, and
the best peer's median over iostune's best (above 1: iostune is faster).

    deployed_table.py --raw RAW --validations validate.jsonl --models M... --batches B...
                      --precisions P... --out deployed.md [--note TEXT]

Medians in ms. A row with no record says "not run"; a failed one its status. When a system was
recorded more than once, the latest record counts.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_record  # noqa: E402

PEERS = ("torch-eager", "torch-cudagraph", "torch-compile")
COLUMNS = ("model", "batch", "precision", "iostune sequential", "iostune best (kept strategy)",
           "validate", "torch eager", "torch cudagraph", "torch.compile", "best vs best peer")


def latest_records(raw_dir):
    """(model, batch, precision, system) -> the newest run record."""
    runs, _ = bench_record.load_records(raw_dir)
    chosen = {}
    for record in runs:
        key = (record["model"], record["batch"], bench_record.precision_of(record),
               record["system"])
        if key not in chosen or record["date"] >= chosen[key]["date"]:
            chosen[key] = record
    return chosen


def latest_validations(path):
    """(model, batch, precision) -> the last validate.jsonl entry."""
    found = {}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    entry = json.loads(line)
                    found[(entry["model"], entry["batch"], entry["precision"])] = entry
    return found


def median(record):
    if record is None:
        return None
    return record["stats"]["median_ms"] if record["status"] == "ok" else None


def cell(record):
    if record is None:
        return "not run"
    if record["status"] != "ok":
        return record["status"]
    return f"{record['stats']['median_ms']:.3f}"


def best_cell(record):
    text = cell(record)
    if record is None or record["status"] != "ok":
        return text
    kept = record["details"].get("kept_strategy")
    return f"{text} ({kept})" if kept else text


def validate_cell(entry):
    if entry is None:
        return "not run"
    return {"passed": "passed", "failed": "FAILED"}.get(entry["status"], entry["status"])


def table_rows(records, validations, models, batches, precisions):
    rows = []
    for precision in precisions:
        for batch in batches:
            for model in models:
                get = lambda system: records.get((model, batch, precision, system))  # noqa: E731
                best = get("iostune-ios-both")
                peers = [m for m in (median(get(p)) for p in PEERS) if m is not None]
                ratio = (f"{min(peers) / median(best):.2f}x"
                         if peers and median(best) is not None else "-")
                rows.append([model, str(batch), precision, cell(get("iostune-sequential")),
                             best_cell(best), validate_cell(validations.get((model, batch,
                                                                             precision))),
                             *(cell(get(p)) for p in PEERS), ratio])
    return rows


def markdown(rows, records, validations, note):
    lines = ["# Deployed models: iostune against PyTorch", ""]
    # Failure records without an iostune JSON name the device "unknown" (no nvidia-smi).
    devices = sorted({r["device"].get("name", "unknown") for r in records.values()} - {"unknown"})
    lines.append(f"Device: {', '.join(devices) or 'no records'}. Medians in ms; "
                 "best vs best peer = min(torch eager, cudagraph, torch.compile) / iostune best "
                 "(above 1: iostune is faster). fp16/bf16 iostune replays use --native-io; "
                 "validation replays use float I/O.")
    if note:
        lines += ["", note]
    lines += ["", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    problems = [f"- {m} b{b} {p}: validation {e['status']}: {e['message']}"
                for (m, b, p), e in sorted(validations.items()) if e["status"] != "passed"]
    if problems:
        lines += ["", "Validation problems:", ""] + problems
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--raw", required=True)
    parser.add_argument("--validations", required=True)
    parser.add_argument("--models", nargs="+", required=True)
    parser.add_argument("--batches", nargs="+", type=int, required=True)
    parser.add_argument("--precisions", nargs="+", required=True)
    parser.add_argument("--note", default="")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        records = latest_records(args.raw)
    except bench_record.RecordError as e:
        raise SystemExit(f"deployed_table: error: {e}")
    validations = latest_validations(args.validations)
    rows = table_rows(records, validations, args.models, args.batches, args.precisions)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(markdown(rows, records, validations, args.note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
