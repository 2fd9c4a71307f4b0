// Plain rows of the schedule store. The store knows nothing of CUDA, graphs or schedules: the
// callers fill in strings, numbers and JSON documents; ids and timestamps are set by the store.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace iostune::db {

// The GPU and software stack a number was measured on; rows are unique on all of these fields,
// so a driver or cuDNN upgrade makes a new device (old measurements are not reused).
struct DeviceRecord {
    std::int64_t id = 0;  // set by the store
    std::string name;     // e.g. "NVIDIA H100 80GB HBM3"
    int cc_major = 0;     // compute capability
    int cc_minor = 0;
    int sm_count = 0;
    std::string driver_version;
    std::string cuda_version;
    std::string cudnn_version;
};

struct ModelRecord {
    std::int64_t id = 0;      // set by the store
    std::string name;         // e.g. "inception_v3"
    std::string fingerprint;  // the graph's canonical fingerprint; unique
    nlohmann::json graph;     // the graph in iostune's model JSON
};

// One searched schedule. Several may exist per (model, device, batch, precision): different
// strategies, pruning settings or tool versions; the best is chosen by measured latency.
struct ScheduleRecord {
    std::int64_t id = 0;  // set by the store
    std::int64_t model_id = 0;
    std::int64_t device_id = 0;
    int batch = 1;
    std::string precision;  // e.g. "fp32", "tf32", "fp16"
    std::string layout = "nchw";  // the engine's activation layout: "nchw" or "nhwc"
    std::string strategy;   // e.g. "ios-both", "ios-merge", "ios-parallel", "sequential", "greedy"
    int r = 0;              // pruning: max operators per group
    int s = 0;              // pruning: max groups per stage
    std::optional<double> predicted_ms;   // sum of the schedule's stage latencies
    std::optional<double> measured_ms;    // measured end to end (replayed as a CUDA Graph)
    std::optional<double> sequential_ms;  // measured end to end, sequential schedule, same run
    nlohmann::json search_stats = nlohmann::json::object();  // search cost: time, stages measured
    nlohmann::json schedule;                                 // the schedule's JSON
    // The engine's convolution choices when it was measured (src/conv_choices.h); {} for none.
    nlohmann::json conv_choices = nlohmann::json::object();
    // Bytes of the schedule's memory plan (activations, scratch, inputs and outputs) in its
    // precision and layout; none for rows stored before the store kept it.
    std::optional<std::int64_t> arena_bytes;
    std::string tool_version;  // empty: stamped with this build's version
    std::string git_commit;    // empty: stamped with this build's commit
    std::string created_at;    // set by the store: UTC, ISO 8601
};

// One cached stage latency (the cost cache); unique on (device_id, batch, precision, layout,
// stage_key).
struct StageRecord {
    std::int64_t device_id = 0;
    int batch = 1;
    std::string precision;
    std::string layout = "nchw";
    std::string stage_key;   // caller's canonical key, e.g. graph fingerprint + stage signature
    double latency_ms = 0.0; // median over repeats
    double spread_ms = 0.0;  // p90 - p10 of the repeats
    int repeats = 0;
    bool ok = true;          // false: the stage failed to run; `error` says why
    std::string error;
    bool simulated = false;  // an analytic estimate, not a measurement
    std::string tool_version;  // empty: stamped with this build's version
    std::string measured_at;   // set by the store: UTC, ISO 8601
};

// A (model, device, batch, precision) for which schedules exist: what the store can answer.
struct ScheduleKey {
    std::string model_name;
    std::string fingerprint;
    std::int64_t device_id = 0;
    std::string device_name;
    int batch = 1;
    std::string precision;
    int schedules = 0;  // rows for this key
    int measured = 0;   // rows with a measured latency (candidates for best_schedule)
};

// The best measured schedule of one key, with what reports show beside it.
struct ReportRow {
    ScheduleRecord schedule;
    std::string model_name;
    std::string fingerprint;
    DeviceRecord device;
    std::optional<double> speedup;           // sequential_ms / measured_ms
    std::optional<double> prediction_error;  // predicted_ms / measured_ms - 1
    std::optional<double> search_seconds;    // the key's search time (report_rows.h)
};

// Whether one stored convolution choice was made in a hurry ("quick": by a search that ran short
// of its time budget, src/conv_choices.h): a later search times it in full.
inline bool is_quick_choice(const nlohmann::json& choice) {
    return choice.is_object() && choice.contains("quick") && choice["quick"] == true;
}

}  // namespace iostune::db
