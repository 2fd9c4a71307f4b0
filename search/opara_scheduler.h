// Opara (Chen et al., 2023), per block:
//   stream allocation (Algorithm 1): in topological order, an op continues the stream of its
//     first producer whose stream no other consumer has continued yet, else opens a new stream
//     (as the reference implementation does: a producer hands its stream to one consumer only,
//     so every stream is a dependency path);
//   launch order (Algorithm 2): of the ops whose producers are launched, alternately take a
//     compute-bound and a memory-bound one, each time the one with the smallest resource demand
//     (the SM share of one thread block, then its grid size), so compute- and memory-intensive
//     kernels overlap and small kernels do not queue behind large ones.
// Resource demands come from an OpResourceTable: profiled on the GPU, or the analytic estimates.
// The schedule turns the streams into stages with stages_from_streams(), launch order deciding
// the order of ops in each stream and of groups in each stage.
#pragma once

#include <vector>

#include "search/op_resources.h"
#include "search/stream_assignment.h"
#include "src/blocks.h"

namespace iostune {

StreamAssignment opara_streams(const Graph& graph, const std::vector<int>& block_ops);
// The block's ops in Opara's launch order (a topological order).
std::vector<int> opara_launch_order(const Graph& graph, const std::vector<int>& block_ops,
                                    const OpResourceTable& resources);
std::vector<Stage> opara_block_stages(const Graph& graph, const Block& block,
                                      const OpResourceTable& resources);
Schedule opara_schedule(const Graph& graph, const OpResourceTable& resources);

}  // namespace iostune
