#include "replay/replay_timing.h"

namespace iostune {

ReplayTiming to_replay_timing(const LatencyStats& stats, int iterations, int items) {
    ReplayTiming timing;
    timing.iterations = iterations;
    timing.latency_ms = stats.samples_ms;
    timing.enqueue_ms = stats.enqueue_ms;
    timing.min_ms = stats.min_ms;
    timing.mean_ms = stats.mean_ms;
    timing.median_ms = stats.median_ms;
    timing.p90_ms = stats.p90_ms;
    timing.p95_ms = stats.p95_ms;
    timing.p99_ms = stats.p99_ms;
    timing.max_ms = stats.max_ms;
    timing.stddev_ms = stats.stddev_ms;
    timing.enqueue_median_ms = stats.enqueue_median_ms;
    for (double ms : stats.samples_ms) timing.total_gpu_ms += ms;
    if (stats.median_ms > 0) timing.throughput_per_s = double(items) * 1000.0 / stats.median_ms;
    return timing;
}

nlohmann::json timing_stats_json(const ReplayTiming& t) {
    return {{"iterations", t.iterations},
            {"median_ms", t.median_ms},
            {"mean_ms", t.mean_ms},
            {"min_ms", t.min_ms},
            {"max_ms", t.max_ms},
            {"p90_ms", t.p90_ms},
            {"p95_ms", t.p95_ms},
            {"p99_ms", t.p99_ms},
            {"stddev_ms", t.stddev_ms},
            {"enqueue_median_ms", t.enqueue_median_ms},
            {"throughput_per_s", t.throughput_per_s},
            {"samples_ms", t.latency_ms}};
}

nlohmann::json batch_memory_json(const BatchMemory& m) {
    return {{"weight_bytes", m.weight_bytes},
            {"activation_bytes", m.activation_bytes},
            {"shared_arena_bytes", m.shared_arena_bytes},
            {"workspace_bytes", m.workspace_bytes},
            {"device_memory_bytes", m.device_memory_bytes}};
}

}  // namespace iostune
