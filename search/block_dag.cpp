#include "search/block_dag.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"

namespace iostune {

BlockDag BlockDag::of(const Graph& graph, const std::vector<int>& ops) {
    BlockDag dag;
    dag.ops = ops;
    if (ops.empty()) return dag;
    if (!std::is_sorted(ops.begin(), ops.end()) ||
        std::adjacent_find(ops.begin(), ops.end()) != ops.end())
        throw Error("block ops must be distinct op ids in ascending order");
    dag.local_of_.assign(size_t(ops.back() - ops.front() + 1), -1);
    for (size_t i = 0; i < ops.size(); ++i) dag.local_of_[size_t(ops[i] - ops.front())] = int(i);
    dag.preds.resize(ops.size());
    dag.succs.resize(ops.size());
    for (size_t v = 0; v < ops.size(); ++v) {
        for (int input : graph.op(ops[v]).inputs) {
            if (input < ops.front() || input > ops.back()) continue;
            const int u = dag.local_of_[size_t(input - ops.front())];
            if (u < 0) continue;
            auto& p = dag.preds[v];
            if (std::find(p.begin(), p.end(), u) == p.end()) p.push_back(u);
        }
        for (int u : dag.preds[v]) dag.succs[size_t(u)].push_back(int(v));
    }
    return dag;  // succs are ascending: v is visited in ascending order
}

int BlockDag::local(int op_id) const {
    if (!ops.empty() && op_id >= ops.front() && op_id <= ops.back()) {
        const int l = local_of_[size_t(op_id - ops.front())];
        if (l >= 0) return l;
    }
    throw Error(fmt::format("op {} is not in this block", op_id));
}

std::vector<std::vector<bool>> BlockDag::reachability() const {
    const size_t n = ops.size();
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    for (size_t u = n; u-- > 0;)
        for (int s : succs[u]) {
            reach[u][size_t(s)] = true;
            for (size_t w = 0; w < n; ++w)
                if (reach[size_t(s)][w]) reach[u][w] = true;
        }
    return reach;
}

std::vector<std::pair<int, int>> BlockDag::transitive_reduction() const {
    const auto reach = reachability();
    std::vector<std::pair<int, int>> edges;
    for (int u = 0; u < size(); ++u)
        for (int v : succs[size_t(u)]) {
            const bool implied = std::any_of(succs[size_t(u)].begin(), succs[size_t(u)].end(),
                                             [&](int w) { return w != v && reach[size_t(w)][size_t(v)]; });
            if (!implied) edges.emplace_back(u, v);
        }
    return edges;
}

}  // namespace iostune
