// Nimble's stream assignment (Kwon et al., NeurIPS 2020, Algorithm 1), per block:
//   1. the minimum equivalent graph G' (transitive reduction) of the block's DAG;
//   2. the bipartite graph B with an edge (x_u, y_v) for every edge (u, v) of G';
//   3. a maximum matching M of B;
//   4./5. ops joined by matched edges share a stream: every stream is a path of G'.
// This gives maximum logical concurrency (independent ops never share a stream) with the fewest
// cross-stream synchronisations, |E'| - |M|. The stream count is a minimum path cover of G': the
// block's width (Dilworth) when chains need not skip over ops, more otherwise.
// The schedule turns the streams into stages with stages_from_streams() (see there why).
#pragma once

#include <vector>

#include "search/stream_assignment.h"
#include "src/blocks.h"

namespace iostune {

StreamAssignment nimble_streams(const Graph& graph, const std::vector<int>& block_ops);
std::vector<Stage> nimble_block_stages(const Graph& graph, const Block& block);
Schedule nimble_schedule(const Graph& graph);

}  // namespace iostune
