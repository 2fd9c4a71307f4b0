// The trtexec-style timing report of a replay (ReplayTiming, iostune/replay.h) from the engine's
// latency statistics: one conversion for Replayer::benchmark and BatchReplayer::benchmark, so
// both report the same fields the same way.
#pragma once

#include <nlohmann/json.hpp>

#include "iostune/batch_replayer.h"
#include "iostune/replay.h"
#include "src/engine/timing.h"

namespace iostune {

// `items`: batch items each timed launch or request runs (for the throughput).
ReplayTiming to_replay_timing(const LatencyStats& stats, int iterations, int items);

// Its statistics as JSON (iterations, median_ms ... throughput_per_s, samples_ms), the fields
// `replay --format json` and the C API's benchmark report share.
nlohmann::json timing_stats_json(const ReplayTiming& t);

// A BatchReplayer's device memory as JSON (weight_bytes, activation_bytes, shared_arena_bytes,
// workspace_bytes, device_memory_bytes), as `replay --batch-sizes --format json` and the C API
// report it.
nlohmann::json batch_memory_json(const BatchMemory& m);

}  // namespace iostune
