// Graphs and a deterministic cost model shared by the search tests.
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <string>

#include "search/cost_model.h"
#include "src/graph.h"
#include "src/schedule.h"

namespace iostune::test {

inline int conv(Graph& g, int input, int out, int kh, int kw, int ph, int pw, const std::string& name,
                bool relu = true) {
    ConvAttrs a;
    a.out_channels = out;
    a.kernel_h = kh;
    a.kernel_w = kw;
    a.pad_h = ph;
    a.pad_w = pw;
    a.relu = relu;
    return g.add(OpKind::Conv, a, {input}, name);
}

// Inception V3's Mixed_7c (Inception-E), the largest block of the network: 11 ops, width 6.
inline Graph inception_e() {
    Graph g("inception_e", Shape{1, 2048, 8, 8});
    const int b1 = conv(g, kGraphInput, 320, 1, 1, 0, 0, "branch1x1");
    const int b3 = conv(g, kGraphInput, 384, 1, 1, 0, 0, "branch3x3_1");
    const int b3a = conv(g, b3, 384, 1, 3, 0, 1, "branch3x3_2a");
    const int b3b = conv(g, b3, 384, 3, 1, 1, 0, "branch3x3_2b");
    const int d1 = conv(g, kGraphInput, 448, 1, 1, 0, 0, "branch3x3dbl_1");
    const int d2 = conv(g, d1, 384, 3, 3, 1, 1, "branch3x3dbl_2");
    const int d3a = conv(g, d2, 384, 1, 3, 0, 1, "branch3x3dbl_3a");
    const int d3b = conv(g, d2, 384, 3, 1, 1, 0, "branch3x3dbl_3b");
    PoolAttrs pool;
    pool.kernel_h = pool.kernel_w = 3;
    pool.pad_h = pool.pad_w = 1;
    const int p = g.add(OpKind::AvgPool, pool, {kGraphInput}, "branch_pool_avg");
    const int pc = conv(g, p, 192, 1, 1, 0, 0, "branch_pool");
    g.add(OpKind::Concat, ConcatAttrs{}, {b1, b3a, b3b, d3a, d3b, pc}, "concat");
    return g;
}

// The IOS paper's Figure 5: a -> b, and c independent of both.
inline Graph figure5() {
    Graph g("figure5", Shape{1, 8, 8, 8});
    const int a = conv(g, kGraphInput, 8, 3, 3, 1, 1, "a");
    g.add(OpKind::Relu, ReluAttrs{}, {a}, "b");
    conv(g, kGraphInput, 8, 1, 1, 0, 0, "c");
    return g;
}

// A random DAG of `n` ops over 8x8x8 tensors, mixing mergeable convolutions (1x1 and 3x3 with
// centred padding), a non-mergeable one (ReLU flag off), pooling, ReLU and Add.
inline Graph random_dag(uint32_t seed, int n) {
    std::mt19937 rng(seed);
    auto pick = [&](int bound) { return int(rng() % uint32_t(bound)); };
    Graph g("random_" + std::to_string(seed), Shape{1, 8, 8, 8});
    for (int i = 0; i < n; ++i) {
        // Inputs: the graph input or an earlier op, biased towards recent ops.
        auto source = [&] { return i == 0 || pick(4) == 0 ? kGraphInput : i - 1 - pick(std::min(i, 3)); };
        const std::string name = "op" + std::to_string(i);
        switch (pick(6)) {
            case 0: conv(g, source(), 8, 1, 1, 0, 0, name); break;
            case 1: conv(g, source(), 8, 3, 3, 1, 1, name); break;
            case 2: conv(g, source(), 8, 1, 1, 0, 0, name, false); break;
            case 3: {
                PoolAttrs p;
                p.kernel_h = p.kernel_w = 3;
                p.pad_h = p.pad_w = 1;
                g.add(OpKind::MaxPool, p, {source()}, name);
                break;
            }
            case 4: g.add(OpKind::Relu, ReluAttrs{}, {source()}, name); break;
            default: {
                int x = source(), y = source();
                if (x == y) y = i == 0 ? kGraphInput : i - 1;
                g.add(OpKind::Add, AddAttrs{}, {x, y}, name);
                break;
            }
        }
    }
    return g;
}

// Stage cost = a seeded hash of the stage's signature, a whole number of "ms" (so sums are
// exact in any order). Optionally fails one in `fail_one_in` stages of two or more ops.
class HashCostModel : public CostModel {
public:
    explicit HashCostModel(uint64_t seed, int fail_one_in = 0) : seed_(seed), fail_one_in_(fail_one_in) {}

    StageMeasurement measure(const Graph&, const Stage& stage) override {
        const std::string sig = stage_signature(stage);
        seen_.insert(sig);
        ++calls_;
        uint64_t h = 1469598103934665603ull ^ seed_;
        for (char ch : sig) h = (h ^ uint8_t(ch)) * 1099511628211ull;
        h ^= h >> 29;
        size_t ops = 0;
        for (const auto& group : stage.groups) ops += group.size();
        StageMeasurement m;
        m.latency_ms = double(1 + h % 97) + 10.0 * double(ops);
        m.repeats = 1;
        if (fail_one_in_ > 0 && ops > 1 && (h >> 8) % uint64_t(fail_one_in_) == 0) {
            m.ok = false;
            m.error = "injected failure";
        }
        return m;
    }
    std::string name() const override { return "hash"; }
    bool simulated() const override { return true; }

    int calls() const { return calls_; }
    size_t distinct() const { return seen_.size(); }

private:
    uint64_t seed_;
    int fail_one_in_;
    int calls_ = 0;
    std::set<std::string> seen_;
};

}  // namespace iostune::test
