#include "search/opara_scheduler.h"

#include <algorithm>
#include <tuple>

#include "search/block_dag.h"

namespace iostune {

StreamAssignment opara_streams(const Graph& graph, const std::vector<int>& block_ops) {
    const BlockDag dag = BlockDag::of(graph, block_ops);
    std::vector<int> stream_of(size_t(dag.size()), -1);
    std::vector<bool> handed_on(size_t(dag.size()), false);
    StreamAssignment result;
    for (int v = 0; v < dag.size(); ++v) {
        for (int p : dag.preds[size_t(v)]) {
            if (handed_on[size_t(p)]) continue;
            handed_on[size_t(p)] = true;
            stream_of[size_t(v)] = stream_of[size_t(p)];
            break;
        }
        if (stream_of[size_t(v)] < 0) {
            stream_of[size_t(v)] = int(result.streams.size());
            result.streams.emplace_back();
        }
        result.streams[size_t(stream_of[size_t(v)])].push_back(dag.ops[size_t(v)]);
        for (int p : dag.preds[size_t(v)])
            if (stream_of[size_t(p)] != stream_of[size_t(v)]) ++result.syncs;
    }
    return result;
}

std::vector<int> opara_launch_order(const Graph& graph, const std::vector<int>& block_ops,
                                    const OpResourceTable& resources) {
    const BlockDag dag = BlockDag::of(graph, block_ops);
    std::vector<int> waiting(size_t(dag.size()));
    std::vector<int> compute, memory;  // ready ops, local indices
    const auto enqueue = [&](int u) {
        (resources.at(dag.ops[size_t(u)]).compute_bound ? compute : memory).push_back(u);
    };
    for (int u = 0; u < dag.size(); ++u) {
        waiting[size_t(u)] = int(dag.preds[size_t(u)].size());
        if (waiting[size_t(u)] == 0) enqueue(u);
    }
    const auto demand = [&](int u) {
        const OpResources& r = resources.at(dag.ops[size_t(u)]);
        return std::make_tuple(r.block_sm_share, r.grid_blocks, dag.ops[size_t(u)]);
    };

    std::vector<int> order;
    bool last_was_compute = false;  // so the first pick prefers a compute-bound op
    while (!compute.empty() || !memory.empty()) {
        const bool take_compute = memory.empty() || (!compute.empty() && !last_was_compute);
        auto& list = take_compute ? compute : memory;
        const auto smallest = std::min_element(list.begin(), list.end(),
                                               [&](int a, int b) { return demand(a) < demand(b); });
        const int u = *smallest;
        list.erase(smallest);
        last_was_compute = take_compute;
        order.push_back(dag.ops[size_t(u)]);
        for (int s : dag.succs[size_t(u)])
            if (--waiting[size_t(s)] == 0) enqueue(s);
    }
    return order;
}

std::vector<Stage> opara_block_stages(const Graph& graph, const Block& block,
                                      const OpResourceTable& resources) {
    const std::vector<int> order = opara_launch_order(graph, block.ops, resources);
    std::vector<int> rank(size_t(graph.size()), 0);
    for (size_t i = 0; i < order.size(); ++i) rank[size_t(order[i])] = int(i);
    auto streams = opara_streams(graph, block.ops).streams;
    for (auto& stream : streams)
        std::sort(stream.begin(), stream.end(),
                  [&](int a, int b) { return rank[size_t(a)] < rank[size_t(b)]; });
    return stages_from_streams(graph, block.ops, streams, rank);
}

Schedule opara_schedule(const Graph& graph, const OpResourceTable& resources) {
    Schedule schedule;
    for (const Block& block : partition_blocks(graph))
        schedule.blocks.push_back(opara_block_stages(graph, block, resources));
    return schedule;
}

}  // namespace iostune
