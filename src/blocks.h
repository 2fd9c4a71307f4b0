// Cutting a graph into blocks that the search handles one at a time.
//
// A boundary falls after op i (in id order) when op i's output is the only tensor that crosses
// it (a single-tensor cut point, as IOS cuts), or where the model's natural cell changes
// (Op::cell; NASNet cells read the two previous cells' outputs, so they have few cut points).
//
// A model set (model_set.h) has no such cut between its members, which run side by side, so
// cutting it alone would make each whole model (or, with a shared input, all of them) one
// block: far too large for the DP. Instead each member is cut on its own, and the members'
// blocks are aligned into super-blocks by cumulative latency: the member with the most blocks
// paces the set (its blocks' ends, as fractions of its total latency, are the super-blocks'
// boundaries), and block b of another member goes to the super-block in which its middle falls
// (as a fraction of that member's latency). Members of one set then advance at the same pace,
// one super-block (a barrier) at a time, and the DP searches each super-block's union of member
// blocks, in which one stage may hold ops of several members. The latency per op comes from the
// caller (the search passes its cost model's single-op costs); without one, a roofline proxy of
// FLOPs and bytes at nominal H100 rates plus a launch cost is used (alignment only).
#pragma once

#include <functional>
#include <vector>

#include "src/graph.h"

namespace iostune {

struct Block {
    int index = 0;
    std::vector<int> ops;  // op ids, ascending (a topological order)
    int width = 0;         // size of the largest antichain (ops that may all run at once)
};

// Latency (any unit) of running op `id` alone; used to align a model set's members.
using OpLatency = std::function<double(int id)>;

std::vector<Block> partition_blocks(const Graph& graph, const OpLatency& latency = {});

// The proxy latency used when partition_blocks gets none (microseconds, nominal; alignment only).
double proxy_op_latency_us(const Graph& graph, int id);

// Largest antichain of the sub-DAG induced by `ops` (ids, ascending), with reachability taken
// through the whole graph. Dilworth: n minus a maximum matching on the transitive closure.
int antichain_width(const Graph& graph, const std::vector<int>& ops);

}  // namespace iostune
