// iostune_replayer: a BatchReplayer (iostune/batch_replayer.h) behind the C API: one CUDA Graph
// per tuned batch size, requests of any size on caller-owned device buffers and stream.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "capi/api_status.h"
#include "capi/model_handle.h"
#include "iostune/batch_replayer.h"
#include "replay/replay_timing.h"
#include "src/precision.h"

using namespace iostune;

struct iostune_replayer {
    BatchReplayer replayer;
};

namespace {

template <class Handle>
Handle& replayer_ref(Handle* r, const char* call) {
    capi::require(r != nullptr,
                  fmt::format("{}: the replayer is NULL; open one with iostune_replayer_open", call));
    return *r;
}

ReplayOptions replay_options(const iostune_replay_options& o) {
    ReplayOptions options;
    options.db_path = capi::or_default(o.db_path, "iostune.db");
    options.precision = capi::or_default(o.precision, "tf32");
    capi::parse_input([&] { return precision_from_string(options.precision); });
    options.native_io = o.native_io != 0;
    options.fallback_sequential = o.fallback_sequential != 0;
    options.device = o.device;
    options.schedule_id = o.schedule_id;
    options.schedule_source = capi::or_default(o.schedule_source, "db");
    capi::require(options.schedule_source == "db" || options.schedule_source == "sequential",
                  fmt::format("unknown schedule source '{}'; use db or sequential",
                              options.schedule_source));
    capi::require(o.device >= 0, fmt::format("device must be a CUDA ordinal >= 0, got {}", o.device));
    capi::require(o.schedule_id >= 0, fmt::format("schedule_id must be >= 0, got {}", o.schedule_id));
    return options;
}

std::vector<int> batch_sizes(const iostune_replay_options& o, const iostune_model& m) {
    if (o.batch_sizes == nullptr || o.batch_size_count == 0) return {m.batch};
    capi::require(o.batch_size_count > 0,
                  fmt::format("batch_size_count must be >= 0, got {}", o.batch_size_count));
    return {o.batch_sizes, o.batch_sizes + o.batch_size_count};
}

nlohmann::json optional_ms(const std::optional<double>& ms) {
    return ms ? nlohmann::json(*ms) : nlohmann::json(nullptr);
}

// One batch item's shape of each input or output: C, H, W.
nlohmann::json item_shapes(const std::vector<std::array<int, 4>>& shapes) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : shapes) out.push_back({d[1], d[2], d[3]});
    return out;
}

nlohmann::json graph_json(const ReplayInfo& info) {
    return {{"batch", info.batch},
            {"schedule_id", info.schedule_id},
            {"strategy", info.strategy},
            {"layout", info.layout},
            {"stages", info.stages},
            {"graph_nodes", info.graph_nodes},
            {"convolutions", info.convolutions},
            {"pinned_convolutions", info.pinned_convolutions},
            {"stored_measured_ms", optional_ms(info.stored_measured_ms)},
            {"sequential_fallback", info.sequential_fallback},
            {"fallback_reason", info.fallback_reason}};
}

nlohmann::json info_json(const BatchReplayer& r) {
    const ReplayInfo& first = r.replayer(r.batch_sizes().front()).info();
    nlohmann::json graphs = nlohmann::json::array();
    for (int b : r.batch_sizes()) graphs.push_back(graph_json(r.replayer(b).info()));
    nlohmann::json input_bytes = nlohmann::json::array(), output_bytes = nlohmann::json::array();
    for (int k = 0; k < r.input_count(); ++k) input_bytes.push_back(r.input_item_bytes(k));
    for (int k = 0; k < r.output_count(); ++k) output_bytes.push_back(r.output_item_bytes(k));
    return {{"model", first.model},
            {"fingerprint", first.fingerprint},
            {"device", first.device},
            {"precision", first.precision},
            {"layout", first.layout},
            {"storage", first.storage},
            {"native_io", first.native_io},
            {"batch_sizes", r.batch_sizes()},
            {"input_shapes", item_shapes(first.input_shapes)},
            {"output_shapes", item_shapes(first.output_shapes)},
            {"output_names", first.output_names},
            {"input_item_bytes", input_bytes},
            {"output_item_bytes", output_bytes},
            {"graphs", graphs},
            {"memory", batch_memory_json(r.memory())}};
}

nlohmann::json timing_json(const ReplayTiming& t, int n, bool graph_only) {
    nlohmann::json j = timing_stats_json(t);
    j["batch"] = n;
    j["graph_only"] = graph_only;
    return j;
}

iostune_status item_bytes(const iostune_replayer* replayer, int index, size_t* bytes, bool input) {
    const char* call =
        input ? "iostune_replayer_input_item_bytes" : "iostune_replayer_output_item_bytes";
    return capi::guarded([&] {
        capi::require(bytes != nullptr, fmt::format("{}: the output pointer is NULL", call));
        const iostune_replayer& r = replayer_ref(replayer, call);
        *bytes = input ? r.replayer.input_item_bytes(index) : r.replayer.output_item_bytes(index);
    });
}

}  // namespace

extern "C" {

void iostune_replay_options_init(iostune_replay_options* options) {
    if (options == nullptr) return;
    *options = iostune_replay_options{};
    options->struct_size = sizeof(iostune_replay_options);
}

iostune_status iostune_replayer_open(const iostune_model* model,
                                     const iostune_replay_options* options,
                                     iostune_replayer** replayer) {
    return capi::guarded([&] {
        capi::require(replayer != nullptr, "iostune_replayer_open: the output pointer is NULL");
        *replayer = nullptr;
        const iostune_model& m = capi::model_ref(model, "iostune_replayer_open");
        capi::require(options != nullptr, "iostune_replayer_open: the options are NULL; pass a "
                                          "struct set by iostune_replay_options_init");
        capi::require_struct_size(options->struct_size, sizeof(iostune_replay_options),
                                  "iostune_replay_options");
        const ReplayOptions replay = replay_options(*options);
        auto opened = std::make_unique<iostune_replayer>(
            iostune_replayer{BatchReplayer(m.spec, batch_sizes(*options, m), replay)});
        *replayer = opened.release();
    });
}

void iostune_replayer_free(iostune_replayer* replayer) { delete replayer; }

int iostune_replayer_input_count(const iostune_replayer* replayer) {
    return replayer != nullptr ? replayer->replayer.input_count() : 0;
}
int iostune_replayer_output_count(const iostune_replayer* replayer) {
    return replayer != nullptr ? replayer->replayer.output_count() : 0;
}

iostune_status iostune_replayer_input_item_bytes(const iostune_replayer* replayer, int index,
                                                 size_t* bytes) {
    return item_bytes(replayer, index, bytes, true);
}
iostune_status iostune_replayer_output_item_bytes(const iostune_replayer* replayer, int index,
                                                  size_t* bytes) {
    return item_bytes(replayer, index, bytes, false);
}

iostune_status iostune_replayer_info_json(const iostune_replayer* replayer, char** json) {
    return capi::guarded([&] {
        capi::require(json != nullptr, "iostune_replayer_info_json: the output pointer is NULL");
        *json = nullptr;
        const iostune_replayer& r = replayer_ref(replayer, "iostune_replayer_info_json");
        *json = capi::new_string(info_json(r.replayer).dump(2));
    });
}

iostune_status iostune_replayer_run(iostune_replayer* replayer, int n, const void* const* inputs,
                                    void* const* outputs, void* stream) {
    return capi::guarded([&] {
        iostune_replayer& r = replayer_ref(replayer, "iostune_replayer_run");
        capi::require(inputs != nullptr && outputs != nullptr,
                      "iostune_replayer_run: the input or output pointer array is NULL");
        for (int k = 0; k < r.replayer.input_count(); ++k)
            capi::require(inputs[k] != nullptr, fmt::format("input {} is a NULL pointer", k));
        for (int k = 0; k < r.replayer.output_count(); ++k)
            capi::require(outputs[k] != nullptr, fmt::format("output {} is a NULL pointer", k));
        r.replayer.run(inputs, outputs, n, static_cast<cudaStream_t>(stream));
    });
}

iostune_status iostune_replayer_submit(iostune_replayer* replayer, int n,
                                       const void* const* inputs, void* stream) {
    return capi::guarded([&] {
        iostune_replayer& r = replayer_ref(replayer, "iostune_replayer_submit");
        capi::require(inputs != nullptr, "iostune_replayer_submit: the input pointer array is NULL");
        for (int k = 0; k < r.replayer.input_count(); ++k)
            capi::require(inputs[k] != nullptr, fmt::format("input {} is a NULL pointer", k));
        r.replayer.submit(inputs, n, static_cast<cudaStream_t>(stream));
    });
}

iostune_status iostune_replayer_collect(iostune_replayer* replayer, void* const* outputs,
                                        void* stream) {
    return capi::guarded([&] {
        iostune_replayer& r = replayer_ref(replayer, "iostune_replayer_collect");
        capi::require(outputs != nullptr,
                      "iostune_replayer_collect: the output pointer array is NULL");
        for (int k = 0; k < r.replayer.output_count(); ++k)
            capi::require(outputs[k] != nullptr, fmt::format("output {} is a NULL pointer", k));
        r.replayer.collect(outputs, static_cast<cudaStream_t>(stream));
    });
}

iostune_status iostune_replayer_benchmark(iostune_replayer* replayer, int n, int iterations,
                                          int warmup, int graph_only, void* stream, char** json) {
    return capi::guarded([&] {
        capi::require(json != nullptr, "iostune_replayer_benchmark: the output pointer is NULL");
        *json = nullptr;
        iostune_replayer& r = replayer_ref(replayer, "iostune_replayer_benchmark");
        capi::require(warmup >= 0, fmt::format("warmup must be >= 0, got {}", warmup));
        const auto s = static_cast<cudaStream_t>(stream);
        const ReplayTiming t = graph_only != 0 ? r.replayer.benchmark_graph(n, iterations, s, warmup)
                                               : r.replayer.benchmark(n, iterations, s, warmup);
        *json = capi::new_string(timing_json(t, n, graph_only != 0).dump(2));
    });
}

}  // extern "C"
