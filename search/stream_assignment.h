// A stream assignment (Nimble, Opara): each op of a block on one stream, streams run at once,
// cross-stream dependencies enforced by events. And its translation into our stages.
//
// Our Stage cannot express an edge between two of its groups: groups of a stage are independent
// and stages are separated by a join. So a stream assignment becomes the fewest stages whose
// groups are independent: each stage takes, from every stream, the longest next run of ops whose
// producers are finished or earlier in that same run; a cross-stream edge thus becomes a stage
// boundary in place of an event. A stream's ops stay together and in order in each stage, so the
// assignment's concurrency is kept; what is lost is only overlap across a boundary.
#pragma once

#include <vector>

#include "src/graph.h"
#include "src/schedule.h"

namespace iostune {

struct StreamAssignment {
    std::vector<std::vector<int>> streams;  // op ids of each stream, in execution order
    int syncs = 0;                          // dependencies that cross streams (events needed)
};

// Stages of one block from a stream assignment of all its ops (see above). Groups of a stage are
// ordered by `launch_rank` of their first op (indexed by op id; empty: by op id).
// Throws iostune::Error if an op is missing or repeated, or a stream's order breaks a dependency.
std::vector<Stage> stages_from_streams(const Graph& graph, const std::vector<int>& block_ops,
                                       const std::vector<std::vector<int>>& streams,
                                       const std::vector<int>& launch_rank = {});

}  // namespace iostune
