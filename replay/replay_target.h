// What a Replayer runs, resolved before the GPU holds anything for it: the graph at its batch
// size, the schedule (the stored one, a baseline or the sequential fallback), the engine's
// options (precision, layout, the stored convolution choices) and its ReplayInfo so far.
// Resolving first lets a BatchReplayer size one arena for all its tuned sizes
// (Replayer::sharing_memory) before any of their engines allocates.
#pragma once

#include <string>
#include <vector>

#include "iostune/replay.h"
#include "src/engine/engine.h"
#include "src/graph.h"
#include "src/schedule.h"

namespace iostune {

struct ReplayTarget {
    Graph graph;
    Schedule schedule;
    ReplayInfo info;
    EngineOptions engine_options;
};

// Everything Replayer(models, options) checks and looks up (store, model, schedule, GPU), with
// the same errors; nothing allocated on the GPU.
ReplayTarget resolve_replay(const std::vector<std::string>& models, const ReplayOptions& options);

}  // namespace iostune
