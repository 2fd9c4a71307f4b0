// Cutting a graph into blocks that the search handles one at a time.
//
// A boundary falls after op i (in id order) when op i's output is the only tensor that crosses
// it (a single-tensor cut point, as IOS cuts), or where the model's natural cell changes
// (Op::cell; NASNet cells read the two previous cells' outputs, so they have few cut points).
#pragma once

#include <vector>

#include "src/graph.h"

namespace iostune {

struct Block {
    int index = 0;
    std::vector<int> ops;  // op ids, ascending (a topological order)
    int width = 0;         // size of the largest antichain (ops that may all run at once)
};

std::vector<Block> partition_blocks(const Graph& graph);

// Largest antichain of the sub-DAG induced by `ops` (ids, ascending), with reachability taken
// through the whole graph. Dilworth: n minus a maximum matching on the transitive closure.
int antichain_width(const Graph& graph, const std::vector<int>& ops);

}  // namespace iostune
