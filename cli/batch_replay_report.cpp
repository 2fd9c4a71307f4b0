#include "cli/batch_replay_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "iostune/batch_replayer.h"
#include "replay/model_spec.h"
#include "replay/replay_timing.h"
#include "replay/replay_validation.h"

namespace iostune::cli {

namespace {

// "b4 (1 padded)", "b16 + b16 + b4 (3 padded)": the graphs a request runs on.
std::string chunks_text(const std::vector<BatchChunk>& chunks) {
    std::vector<std::string> graphs;
    int padded = 0;
    for (const BatchChunk& c : chunks) {
        graphs.push_back(fmt::format("b{}", c.tuned));
        padded += c.padding();
    }
    return fmt::format("{}{}", fmt::join(graphs, " + "),
                       padded > 0 ? fmt::format(" ({} padded)", padded) : std::string());
}

nlohmann::json chunks_json(const std::vector<BatchChunk>& chunks) {
    nlohmann::json out = nlohmann::json::array();
    for (const BatchChunk& c : chunks)
        out.push_back({{"tuned", c.tuned}, {"offset", c.offset}, {"count", c.count},
                       {"padding", c.padding()}});
    return out;
}

nlohmann::json graph_json(const ReplayInfo& info) {
    return {{"batch", info.batch},         {"schedule_id", info.schedule_id},
            {"strategy", info.strategy},   {"stages", info.stages},
            {"graph_nodes", info.graph_nodes}, {"sequential_fallback", info.sequential_fallback}};
}

void print_graphs(const BatchReplayer& replayer, const std::string& db) {
    const ReplayInfo& first = replayer.replayer(replayer.batch_sizes().front()).info();
    fmt::print("model      {} ({}, fingerprint {}): batch sizes {}, one CUDA Graph each\n",
               first.model, first.precision, first.fingerprint,
               fmt::join(replayer.batch_sizes(), ", "));
    fmt::print("engine     {} activations in {}; input/output {}\n", first.storage, first.layout,
               first.native_io ? "in that storage (--native-io)" : "float NCHW");
    fmt::print("device     {}\n", first.device);
    for (int b : replayer.batch_sizes()) {
        const ReplayInfo& info = replayer.replayer(b).info();
        if (info.sequential_fallback)
            fmt::print("graph b{:<4} SEQUENTIAL fallback: {}\n", b, info.fallback_reason);
        else
            fmt::print("graph b{:<4} schedule #{} {} from {}, {} stages, {} nodes\n", b,
                       info.schedule_id, info.strategy, db, info.stages, info.graph_nodes);
    }
    const BatchMemory m = replayer.memory();
    const auto mib = [](std::size_t bytes) { return double(bytes) / (1 << 20); };
    fmt::print("memory     {:.1f} MiB on the device: weights {:.1f} (shared by the sizes), "
               "activations {:.1f} ({}), workspaces {:.1f}\n",
               mib(m.device_memory_bytes), mib(m.weight_bytes), mib(m.activation_bytes),
               m.shared_arena_bytes > 0
                   ? fmt::format("one arena of {:.1f} for every size, and each size's inputs "
                                 "and outputs",
                                 mib(m.shared_arena_bytes))
                   : std::string("each size its own"),
               mib(m.workspace_bytes));
}

void validate_graphs(BatchReplayer& replayer, const BatchReplayRequest& r) {
    for (int b : replayer.batch_sizes()) {
        const ReplayValidation v =
            validate_replay(replayer.replayer(b), load_models({r.model}, b, false));
        fmt::print(r.format == "json" ? stderr : stdout,
                   "Validation b{}: PASSED (max |diff| {:.3g}, tolerance {:.3g})\n", b,
                   v.max_abs_diff, v.tolerance);
    }
}

}  // namespace

void run_batch_replay(const BatchReplayRequest& r) {
    BatchReplayer replayer(r.model, r.batch_sizes, r.options);
    const bool table = r.format == "table";
    if (table) print_graphs(replayer, r.options.db_path);
    if (r.validate) validate_graphs(replayer, r);

    const std::vector<int>& requests = r.requests.empty() ? replayer.batch_sizes() : r.requests;
    nlohmann::json rows = nlohmann::json::array();
    if (table)
        fmt::print("{:<9}{:<28}{:>11}{:>11}{:>14}{:>14}\n", "request", "graphs", "median ms",
                   "p90 ms", "ms per item", "items/s");
    for (int n : requests) {
        const std::vector<BatchChunk> chunks = replayer.plan(n);
        const ReplayTiming t = replayer.benchmark(n, r.iterations, nullptr, r.warmup);
        if (table)
            fmt::print("{:<9}{:<28}{:>11.4f}{:>11.4f}{:>14.4f}{:>14.1f}\n", n, chunks_text(chunks),
                       t.median_ms, t.p90_ms, t.median_ms / n, t.throughput_per_s);
        rows.push_back({{"n", n}, {"chunks", chunks_json(chunks)}, {"median_ms", t.median_ms},
                        {"mean_ms", t.mean_ms}, {"p90_ms", t.p90_ms}, {"p99_ms", t.p99_ms},
                        {"min_ms", t.min_ms}, {"max_ms", t.max_ms}, {"stddev_ms", t.stddev_ms},
                        {"enqueue_median_ms", t.enqueue_median_ms},
                        {"throughput_per_s", t.throughput_per_s}, {"samples_ms", t.latency_ms}});
    }
    if (table) {
        fmt::print("(a request runs on the smallest tuned graph that holds it, padded; above the "
                   "largest, in chunks; times include the copies in and out)\n");
        return;
    }
    nlohmann::json graphs = nlohmann::json::array();
    const BatchReplayer& loaded = replayer;
    for (int b : loaded.batch_sizes()) graphs.push_back(graph_json(loaded.replayer(b).info()));
    const ReplayInfo& first = loaded.replayer(loaded.batch_sizes().front()).info();
    fmt::print("{}\n", nlohmann::json{{"model", first.model},
                                      {"fingerprint", first.fingerprint},
                                      {"precision", first.precision},
                                      {"layout", first.layout},
                                      {"storage", first.storage},
                                      {"native_io", first.native_io},
                                      {"batch_sizes", replayer.batch_sizes()},
                                      {"graphs", graphs},
                                      {"memory", batch_memory_json(replayer.memory())},
                                      {"iterations", r.iterations},
                                      {"warmup", r.warmup},
                                      {"requests", rows}}
                               .dump(1));
}

}  // namespace iostune::cli
