// The trtexec-style timing report of a replay (ReplayTiming, iostune/replay.h) from the engine's
// latency statistics: one conversion for Replayer::benchmark and BatchReplayer::benchmark, so
// both report the same fields the same way.
#pragma once

#include "iostune/replay.h"
#include "src/engine/timing.h"

namespace iostune {

// `items`: batch items each timed launch or request runs (for the throughput).
ReplayTiming to_replay_timing(const LatencyStats& stats, int iterations, int items);

}  // namespace iostune
