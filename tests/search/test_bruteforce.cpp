// The DP against brute force: on small random DAGs, enumerate EVERY schedule (all stage
// sequences, built front to back, independently of the DP's back-to-front endings) and check
// that the DP finds the cheapest one and counts the same number of schedules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include "search/ending_enumerator.h"
#include "search/ios_search.h"
#include "src/blocks.h"
#include "tests/search/search_fixtures.h"

using namespace iostune;

namespace {

struct Family {
    SearchStrategy strategy = SearchStrategy::IosBoth;
    int r = std::numeric_limits<int>::max();
    int s = std::numeric_limits<int>::max();
};

// Weakly connected components of `ops` (global ids), each ascending, ordered by first op.
std::vector<std::vector<int>> weak_components(const Graph& g, const std::vector<int>& ops) {
    std::vector<int> parent(ops.size());
    std::iota(parent.begin(), parent.end(), 0);
    std::function<int(int)> root = [&](int x) {
        return parent[size_t(x)] == x ? x : parent[size_t(x)] = root(parent[size_t(x)]);
    };
    for (size_t i = 0; i < ops.size(); ++i)
        for (int src : g.op(ops[i]).inputs)
            for (size_t j = 0; j < ops.size(); ++j)
                if (ops[j] == src) parent[size_t(root(int(i)))] = root(int(j));
    std::vector<std::vector<int>> comps;
    std::vector<int> index(ops.size(), -1);
    for (size_t i = 0; i < ops.size(); ++i) {
        const int r = root(int(i));
        if (index[size_t(r)] < 0) {
            index[size_t(r)] = int(comps.size());
            comps.emplace_back();
        }
        comps[size_t(index[size_t(r)])].push_back(ops[i]);
    }
    return comps;
}

// The stages the family allows for running exactly `ops` as one stage.
std::vector<Stage> stage_options(const Graph& g, const std::vector<int>& ops, const Family& f) {
    const auto comps = weak_components(g, ops);
    if (int(comps.size()) > f.s) return {};
    for (const auto& c : comps)
        if (int(c.size()) > f.r) return {};
    std::vector<Stage> options;
    const bool single = ops.size() == 1;
    if (f.strategy != SearchStrategy::IosMerge || single)
        options.push_back(Stage{StageStrategy::Concurrent, comps});
    if (f.strategy != SearchStrategy::IosParallel && !single && can_merge(g, ops))
        options.push_back(Stage{StageStrategy::Merge, {ops}});
    return options;
}

struct Outcome {
    double best = std::numeric_limits<double>::infinity();
    double count = 0;
};

// Every sequence of stages for the ops of `block` not in `done`: the next stage is any
// non-empty set of remaining ops whose producers (inside the block) are done or in the set.
void enumerate(const Graph& g, const std::vector<int>& block, std::set<int>& done, double so_far,
               const Family& f, CostModel& model, Outcome& out) {
    std::vector<int> ready_pool;
    for (int id : block)
        if (!done.count(id)) ready_pool.push_back(id);
    if (ready_pool.empty()) {
        out.count += 1;
        out.best = std::min(out.best, so_far);
        return;
    }
    const int m = int(ready_pool.size());
    for (uint32_t pick = 1; pick < (1u << m); ++pick) {
        std::vector<int> ops;
        for (int i = 0; i < m; ++i)
            if (pick >> i & 1) ops.push_back(ready_pool[size_t(i)]);
        const bool closed = std::all_of(ops.begin(), ops.end(), [&](int id) {
            return std::all_of(g.op(id).inputs.begin(), g.op(id).inputs.end(), [&](int src) {
                const bool outside = std::find(block.begin(), block.end(), src) == block.end();
                return src == kGraphInput || outside || done.count(src) ||
                       std::find(ops.begin(), ops.end(), src) != ops.end();
            });
        });
        if (!closed) continue;
        for (const Stage& stage : stage_options(g, ops, f)) {
            const auto m_cost = model.measure(g, stage);
            for (int id : ops) done.insert(id);
            // A failed stage still counts as a schedule of the space, but never as the best.
            enumerate(g, block, done, m_cost.ok ? so_far + m_cost.latency_ms
                                                : std::numeric_limits<double>::infinity(),
                      f, model, out);
            for (int id : ops) done.erase(id);
        }
    }
}

Outcome brute_force(const Graph& g, const Family& f, CostModel& model) {
    Outcome total{0, 1};
    for (const Block& block : partition_blocks(g)) {
        Outcome out;
        std::set<int> done;
        enumerate(g, block.ops, done, 0, f, model, out);
        total.best += out.best;
        total.count *= out.count;
    }
    return total;
}

}  // namespace

TEST_CASE("the DP's optimum equals brute force over all schedules", "[search][bruteforce]") {
    struct Setting {
        SearchStrategy strategy;
        bool prune;
        int r, s;
    };
    const Setting settings[] = {
        {SearchStrategy::IosParallel, false, 0, 0}, {SearchStrategy::IosBoth, false, 0, 0},
        {SearchStrategy::IosMerge, false, 0, 0},    {SearchStrategy::IosParallel, true, 2, 2},
        {SearchStrategy::IosBoth, true, 1, 3},      {SearchStrategy::IosMerge, true, 3, 2},
    };
    int compared = 0, with_merges = 0;
    for (uint32_t seed = 100; seed < 124; ++seed) {
        const int n = 4 + int(seed % 5);  // 4..8 ops
        const Graph g = test::random_dag(seed, n);
        for (const Setting& setting : settings) {
            Family f;
            f.strategy = setting.strategy;
            SearchOptions o;
            o.strategy = setting.strategy;
            o.prune = setting.prune;
            o.progress = false;
            if (setting.prune) {
                f.r = o.max_group_ops = setting.r;
                f.s = o.max_groups = setting.s;
            }
            test::HashCostModel dp_model(seed, 7), bf_model(seed, 7);
            const auto result = ios_search(g, dp_model, o);
            const auto expected = brute_force(g, f, bf_model);
            INFO("seed " << seed << " n " << n << " " << to_string(setting.strategy) << " prune "
                         << setting.prune);
            CHECK(result.latency_ms == expected.best);
            CHECK(result.stats.totals().schedules == expected.count);
            CHECK_NOTHROW(validate(g, result.schedule));
            // The schedule's stages really cost what the DP says.
            double recost = 0;
            for (const Stage& stage : result.schedule.flat_stages())
                recost += bf_model.measure(g, stage).latency_ms;
            CHECK(recost == result.latency_ms);
            ++compared;
            for (const Stage& stage : result.schedule.flat_stages())
                if (stage.strategy == StageStrategy::Merge) ++with_merges;
        }
    }
    CHECK(compared == 24 * 6);
    CHECK(with_merges > 0);  // the random DAGs do exercise merge stages
}

TEST_CASE("ending enumeration is complete", "[search][bruteforce]") {
    // Against filtering every subset of every state.
    for (uint32_t seed = 200; seed < 210; ++seed) {
        const Graph g = test::random_dag(seed, 9);
        std::vector<int> ops(size_t(g.size()));
        std::iota(ops.begin(), ops.end(), 0);
        const PartDag dag = make_part_dag(g, ops);
        for (const EndingLimits limits : {EndingLimits{}, EndingLimits{2, 2, false},
                                          EndingLimits{3, 8, false}, EndingLimits{9, 9, true}}) {
            for (uint64_t state = 1; state <= dag.all(); ++state) {
                bool closed = true;  // a state holds the producers of its ops
                for (int u = 0; u < dag.size(); ++u)
                    if ((state >> u & 1) && (dag.preds[size_t(u)] & ~state)) closed = false;
                if (!closed) continue;
                std::set<uint64_t> expected;
                for (uint64_t sub = state; sub; sub = (sub - 1) & state) {
                    bool ending = true;
                    for (int u = 0; u < dag.size(); ++u)
                        if ((sub >> u & 1) && (dag.succs[size_t(u)] & state & ~sub)) ending = false;
                    if (!ending) continue;
                    std::vector<int> members;
                    for (int u = 0; u < dag.size(); ++u)
                        if (sub >> u & 1) members.push_back(u);
                    const auto comps = weak_components(g, members);
                    bool fits = int(comps.size()) <= limits.max_groups;
                    for (const auto& c : comps) {
                        fits = fits && int(c.size()) <= limits.max_group_ops;
                        if (limits.single_source_groups) {
                            int sources = 0;
                            for (int u : c) {
                                const auto& in = g.op(u).inputs;
                                if (std::none_of(in.begin(), in.end(), [&](int p) {
                                        return std::find(c.begin(), c.end(), p) != c.end();
                                    }))
                                    ++sources;
                            }
                            fits = fits && sources == 1;
                        }
                    }
                    if (fits) expected.insert(sub);
                }
                std::set<uint64_t> got;
                size_t visits = 0;
                enumerate_endings(dag, state, limits, [&](const Ending& e) {
                    got.insert(e.ops);
                    ++visits;
                    uint64_t joined = 0;
                    for (uint64_t c : e.groups) joined |= c;
                    CHECK(joined == e.ops);
                    CHECK(components(dag, e.ops).size() == e.groups.size());
                });
                CHECK(visits == got.size());
                REQUIRE(got == expected);
            }
        }
    }
}
