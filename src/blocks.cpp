#include "src/blocks.h"

#include <algorithm>
#include <functional>

namespace iostune {

namespace {

// reach[i][j]: op ops[j] depends (transitively) on op ops[i], both inside the block.
std::vector<std::vector<bool>> block_reachability(const Graph& graph, const std::vector<int>& ops) {
    const size_t n = ops.size();
    std::vector<int> local(size_t(graph.size()), -1);
    for (size_t i = 0; i < n; ++i) local[size_t(ops[i])] = int(i);
    // Ancestors through the whole graph, restricted to block ops, in id (topological) order.
    std::vector<std::vector<bool>> anc(size_t(graph.size()), std::vector<bool>(n, false));
    for (const Op& op : graph.ops()) {
        auto& mine = anc[size_t(op.id)];
        for (int src : op.inputs) {
            if (src == kGraphInput) continue;
            const auto& theirs = anc[size_t(src)];
            for (size_t k = 0; k < n; ++k)
                if (theirs[k]) mine[k] = true;
            if (local[size_t(src)] >= 0) mine[size_t(local[size_t(src)])] = true;
        }
    }
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    for (size_t j = 0; j < n; ++j)
        for (size_t i = 0; i < n; ++i)
            if (anc[size_t(ops[j])][i]) reach[i][j] = true;
    return reach;
}

}  // namespace

int antichain_width(const Graph& graph, const std::vector<int>& ops) {
    const auto reach = block_reachability(graph, ops);
    const int n = int(ops.size());
    std::vector<int> match_right(size_t(n), -1);
    std::function<bool(int, std::vector<bool>&)> augment = [&](int u, std::vector<bool>& seen) {
        for (int v = 0; v < n; ++v) {
            if (!reach[size_t(u)][size_t(v)] || seen[size_t(v)]) continue;
            seen[size_t(v)] = true;
            if (match_right[size_t(v)] < 0 || augment(match_right[size_t(v)], seen)) {
                match_right[size_t(v)] = u;
                return true;
            }
        }
        return false;
    };
    int matching = 0;
    for (int u = 0; u < n; ++u) {
        std::vector<bool> seen(size_t(n), false);
        if (augment(u, seen)) ++matching;
    }
    return n - matching;
}

std::vector<Block> partition_blocks(const Graph& graph) {
    const int n = graph.size();
    // last_use[t]: the last op reading tensor t (graph input at index n).
    std::vector<int> last_use(size_t(n) + 1, -1);
    for (const Op& op : graph.ops())
        for (int src : op.inputs) last_use[src == kGraphInput ? size_t(n) : size_t(src)] = op.id;

    std::vector<Block> blocks;
    Block current;
    int live_beyond = last_use[size_t(n)];  // furthest reader of any tensor produced so far
    for (int i = 0; i < n; ++i) {
        current.ops.push_back(i);
        const bool last = i == n - 1;
        // Tensors other than op i's output that are still needed after op i.
        const bool single_tensor_cut = live_beyond <= i;
        const bool cell_change = !last && graph.op(i).cell != graph.op(i + 1).cell;
        if (last || single_tensor_cut || cell_change) {
            current.index = int(blocks.size());
            current.width = antichain_width(graph, current.ops);
            blocks.push_back(std::move(current));
            current = Block{};
        }
        live_beyond = std::max(live_beyond, last_use[size_t(i)]);
    }
    return blocks;
}

}  // namespace iostune
