#include "search/nimble_scheduler.h"

#include <functional>

#include "search/block_dag.h"

namespace iostune {

StreamAssignment nimble_streams(const Graph& graph, const std::vector<int>& block_ops) {
    const BlockDag dag = BlockDag::of(graph, block_ops);
    const size_t n = size_t(dag.size());
    std::vector<std::vector<int>> meg(n);
    int meg_edges = 0;
    for (const auto& [u, v] : dag.transitive_reduction()) {
        meg[size_t(u)].push_back(v);
        ++meg_edges;
    }

    // Maximum bipartite matching by augmenting paths (Kuhn); paths are at most n long.
    std::vector<int> matched_from(n, -1);  // y_v -> x_u
    std::function<bool(int, std::vector<bool>&)> augment = [&](int u, std::vector<bool>& seen) {
        for (int v : meg[size_t(u)]) {
            if (seen[size_t(v)]) continue;
            seen[size_t(v)] = true;
            if (matched_from[size_t(v)] < 0 || augment(matched_from[size_t(v)], seen)) {
                matched_from[size_t(v)] = u;
                return true;
            }
        }
        return false;
    };
    int matching = 0;
    for (size_t u = 0; u < n; ++u) {
        std::vector<bool> seen(n, false);
        if (augment(int(u), seen)) ++matching;
    }

    std::vector<int> matched_to(n, -1);  // x_u -> y_v
    for (size_t v = 0; v < n; ++v)
        if (matched_from[v] >= 0) matched_to[size_t(matched_from[v])] = int(v);

    StreamAssignment result;
    for (size_t start = 0; start < n; ++start) {
        if (matched_from[start] >= 0) continue;  // not the head of its path
        std::vector<int> stream;
        for (int u = int(start); u >= 0; u = matched_to[size_t(u)]) stream.push_back(dag.ops[size_t(u)]);
        result.streams.push_back(std::move(stream));
    }
    result.syncs = meg_edges - matching;
    return result;
}

std::vector<Stage> nimble_block_stages(const Graph& graph, const Block& block) {
    return stages_from_streams(graph, block.ops, nimble_streams(graph, block.ops).streams);
}

Schedule nimble_schedule(const Graph& graph) {
    Schedule schedule;
    for (const Block& block : partition_blocks(graph))
        schedule.blocks.push_back(nimble_block_stages(graph, block));
    return schedule;
}

}  // namespace iostune
