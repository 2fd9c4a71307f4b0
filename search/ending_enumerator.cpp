#include "search/ending_enumerator.h"

#include <fmt/format.h>

#include <bit>

#include "src/error.h"

namespace iostune {

PartDag make_part_dag(const Graph& graph, const std::vector<int>& ops) {
    if (ops.size() > size_t(kMaxPartOps))
        throw Error(fmt::format("search: a part of graph '{}' has {} ops; the DP handles at most {} "
                                "(split the block first)",
                                graph.name(), ops.size(), kMaxPartOps));
    PartDag dag;
    dag.ops = ops;
    dag.preds.assign(ops.size(), 0);
    dag.succs.assign(ops.size(), 0);
    std::vector<int> local(size_t(graph.size()), -1);
    for (size_t i = 0; i < ops.size(); ++i) local[size_t(ops[i])] = int(i);
    for (size_t i = 0; i < ops.size(); ++i) {
        for (int src : graph.op(ops[i]).inputs) {
            if (is_graph_input(src) || local[size_t(src)] < 0) continue;
            const int j = local[size_t(src)];
            dag.preds[i] |= uint64_t(1) << j;
            dag.succs[size_t(j)] |= uint64_t(1) << i;
        }
    }
    return dag;
}

std::vector<uint64_t> components(const PartDag& dag, uint64_t ops) {
    std::vector<uint64_t> result;
    uint64_t left = ops;
    while (left) {
        uint64_t comp = left & -left;
        uint64_t frontier = comp;
        while (frontier) {
            const int u = std::countr_zero(frontier);
            frontier &= frontier - 1;
            const uint64_t next = (dag.preds[size_t(u)] | dag.succs[size_t(u)]) & ops & ~comp;
            comp |= next;
            frontier |= next;
        }
        result.push_back(comp);
        left &= ~comp;
    }
    return result;
}

namespace {

class Enumerator {
public:
    Enumerator(const PartDag& dag, uint64_t state, const EndingLimits& limits,
               const std::function<void(const Ending&)>& visit)
        : dag_(dag), state_(state), limits_(limits), visit_(visit) {
        // Deciding ops from the last (a sink) backwards, an op may join only once all its
        // consumers in S have joined: that keeps every partial choice closed under successors.
        for (int u = dag.size() - 1; u >= 0; --u)
            if (state >> u & 1) order_.push_back(u);
        comps_.assign((order_.size() + 1) * order_.size() + 1, 0);
    }

    void run() { step(0, 0, 0); }

private:
    // comps_ row `depth` holds the components of the ops chosen so far.
    uint64_t* row(size_t depth) { return comps_.data() + depth * order_.size(); }

    void step(size_t depth, uint64_t chosen, size_t ncomps) {
        if (depth == order_.size()) {
            emit(chosen, ncomps, row(depth));
            return;
        }
        uint64_t* here = row(depth);
        uint64_t* next = row(depth + 1);
        // Leave the op out.
        std::copy(here, here + ncomps, next);
        step(depth + 1, chosen, ncomps);

        const int u = order_[depth];
        const uint64_t bit = uint64_t(1) << u;
        if (dag_.succs[size_t(u)] & state_ & ~chosen) return;  // a consumer stays behind
        // Take it: it joins every component holding one of its consumers.
        uint64_t joined = bit;
        size_t kept = 0;
        for (size_t i = 0; i < ncomps; ++i) {
            if (here[i] & dag_.succs[size_t(u)])
                joined |= here[i];
            else
                next[kept++] = here[i];
        }
        // Components only grow as predecessors join, so an oversized one stays oversized.
        if (std::popcount(joined) > limits_.max_group_ops) return;
        next[kept++] = joined;
        step(depth + 1, chosen | bit, kept);
    }

    void emit(uint64_t chosen, size_t ncomps, const uint64_t* comps) {
        if (!chosen || int(ncomps) > limits_.max_groups) return;
        if (limits_.single_source_groups) {
            for (size_t i = 0; i < ncomps; ++i) {
                int sources = 0;
                for (uint64_t m = comps[i]; m; m &= m - 1)
                    if (!(dag_.preds[size_t(std::countr_zero(m))] & comps[i])) ++sources;
                if (sources != 1) return;
            }
        }
        visit_(Ending{chosen, std::span<const uint64_t>(comps, ncomps)});
    }

    const PartDag& dag_;
    uint64_t state_;
    const EndingLimits& limits_;
    const std::function<void(const Ending&)>& visit_;
    std::vector<int> order_;
    std::vector<uint64_t> comps_;
};

}  // namespace

void enumerate_endings(const PartDag& dag, uint64_t state, const EndingLimits& limits,
                       const std::function<void(const Ending&)>& visit) {
    if (!state) return;
    Enumerator(dag, state, limits, visit).run();
}

int64_t count_states(const PartDag& dag, int64_t cap) {
    // Ops in topological order; one may join once all its producers have.
    int64_t count = 0;
    const int n = dag.size();
    std::function<void(int, uint64_t)> walk = [&](int u, uint64_t chosen) {
        if (count > cap) return;
        if (u == n) {
            ++count;
            return;
        }
        walk(u + 1, chosen);
        if ((dag.preds[size_t(u)] & ~chosen) == 0) walk(u + 1, chosen | uint64_t(1) << u);
    };
    walk(0, 0);
    return count;
}

}  // namespace iostune
