// The dependency DAG of one block's ops, in local indices, for the baseline schedulers.
//
// Blocks are contiguous id ranges (blocks.h), so every path between two ops of a block stays in
// the block and block-local reachability is the graph's. Inputs from earlier blocks are already
// computed when a block starts and are not edges here.
#pragma once

#include <utility>
#include <vector>

#include "src/graph.h"

namespace iostune {

struct BlockDag {
    std::vector<int> ops;                  // op ids, ascending (a topological order)
    std::vector<std::vector<int>> preds;   // distinct in-block producers, in the op's input order
    std::vector<std::vector<int>> succs;   // distinct in-block consumers, ascending

    static BlockDag of(const Graph& graph, const std::vector<int>& ops);
    int size() const { return int(ops.size()); }
    // Local index of an op id; throws iostune::Error when the op is not in the block.
    int local(int op_id) const;

    // reach[u][v]: v depends (transitively) on u.
    std::vector<std::vector<bool>> reachability() const;
    // Minimum equivalent graph (transitive reduction): the edges (u, v), local indices, that no
    // longer path implies.
    std::vector<std::pair<int, int>> transitive_reduction() const;

private:
    std::vector<int> local_of_;  // by op id - ops.front(); -1 outside the block
};

}  // namespace iostune
