// The irregular zoo models: NASNet-A Large (cells) and RandWire (seeded Watts-Strogatz wiring),
// and the Watts-Strogatz generator behind RandWire.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/blocks.h"
#include "src/error.h"
#include "src/operator_info.h"
#include "src/zoo/watts_strogatz.h"
#include "src/zoo/zoo.h"

using namespace iostune;

namespace {

const Op& op_named(const Graph& g, const std::string& name) {
    const auto it = std::find_if(g.ops().begin(), g.ops().end(),
                                 [&](const Op& op) { return op.name == name; });
    INFO("op " << name);
    REQUIRE(it != g.ops().end());
    return *it;
}

// Every op in exactly one block, blocks contiguous in id order, widths within [1, size].
void check_blocks(const Graph& g, const std::vector<Block>& blocks) {
    int next = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const Block& b = blocks[i];
        CHECK(b.index == int(i));
        REQUIRE_FALSE(b.ops.empty());
        for (int id : b.ops) REQUIRE(id == next++);
        CHECK(b.width >= 1);
        CHECK(b.width <= int(b.ops.size()));
    }
    CHECK(next == g.size());
}

// Cell tags are set on every op and never decrease in id order, so each cell is contiguous.
void check_cells_contiguous(const Graph& g) {
    for (const Op& op : g.ops()) {
        REQUIRE(op.cell >= 0);
        if (op.id > 0) REQUIRE(op.cell >= g.op(op.id - 1).cell);
    }
}

// What a fingerprint sees: kinds, attributes, wiring, names, cells.
bool same_structure(const Graph& a, const Graph& b) {
    if (a.size() != b.size() || !(a.input_shape() == b.input_shape())) return false;
    for (int i = 0; i < a.size(); ++i) {
        const Op& x = a.op(i);
        const Op& y = b.op(i);
        if (x.kind != y.kind || !(x.attrs == y.attrs) || x.inputs != y.inputs || x.name != y.name ||
            x.cell != y.cell || !(x.output == y.output))
            return false;
    }
    return true;
}

bool is_ring_lattice_edge(int u, int v, int n, int k) {
    const int d = std::abs(u - v);
    return std::min(d, n - d) <= k / 2;
}

}  // namespace

TEST_CASE("NASNet-A Large matches timm's nasnetalarge shapes", "[zoo]") {
    const Graph g = build_zoo_model("nasnet_a_large", 1);
    CHECK(g.input_shape() == Shape{1, 3, 331, 331});
    CHECK(g.output_shape() == Shape{1, 1000, 1, 1});

    // Cell outputs of timm's forward_features at 331x331.
    CHECK(op_named(g, "conv0.conv").output == Shape{1, 96, 165, 165});
    CHECK(op_named(g, "cell_stem_0.cat").output == Shape{1, 168, 83, 83});
    CHECK(op_named(g, "cell_stem_1.cat").output == Shape{1, 336, 42, 42});
    for (int i = 0; i < 6; ++i)
        CHECK(op_named(g, "cell_" + std::to_string(i) + ".cat").output == Shape{1, 1008, 42, 42});
    CHECK(op_named(g, "reduction_cell_0.cat").output == Shape{1, 1344, 21, 21});
    for (int i = 6; i < 12; ++i)
        CHECK(op_named(g, "cell_" + std::to_string(i) + ".cat").output == Shape{1, 2016, 21, 21});
    CHECK(op_named(g, "reduction_cell_1.cat").output == Shape{1, 2688, 11, 11});
    for (int i = 12; i < 18; ++i)
        CHECK(op_named(g, "cell_" + std::to_string(i) + ".cat").output == Shape{1, 4032, 11, 11});

    // FirstCell halves the previous-previous cell with the factorized reduction.
    CHECK(op_named(g, "cell_6.final_path").output == Shape{1, 336, 21, 21});
    CHECK(op_named(g, "cell_12.path_2.avgpool").output == Shape{1, 2016, 11, 11});
    // The stem's wide-input branches go 96 -> 42 in their first separable conv.
    CHECK(op_named(g, "cell_stem_0.comb_iter_0_right.separable_1").output == Shape{1, 42, 83, 83});

    CHECK(build_zoo_model("nasnet_a_large", 2).output_shape() == Shape{2, 1000, 1, 1});
}

TEST_CASE("NASNet-A Large has timm's parameter count with batch norms folded", "[zoo]") {
    const Graph g = build_nasnet_a_large(1);
    const GraphTotals t = totals(g);
    // timm nasnetalarge (1000 classes) has 88,753,150 parameters, 98,334 of its batch-norm
    // channels each holding a weight and a bias. Folding a BN into the preceding bias-free
    // convolution leaves one bias per channel: 88,753,150 - 98,334. (Counted by hand from a
    // PyTorch re-statement of timm/models/nasnet.py.)
    CHECK(t.params == 88'753'150 - 98'334);
    // Published: 23.8 G multiply-adds at 331x331; FLOPs count 2 per multiply-add, plus the
    // ReLU, bias, pool and add work.
    CHECK(t.flops > int64_t(47.0e9));
    CHECK(t.flops < int64_t(48.5e9));
}

TEST_CASE("NASNet-A Large blocks follow its cells", "[zoo]") {
    const Graph g = build_nasnet_a_large(1);
    check_cells_contiguous(g);
    // conv0, two stem cells, 18 normal + 2 reduction cells, the classifier head.
    CHECK(g.ops().back().cell == 23);

    const auto blocks = partition_blocks(g);
    check_blocks(g, blocks);
    for (const Block& b : blocks)
        CHECK(g.op(b.ops.front()).cell == g.op(b.ops.back()).cell);
    // A cell reads two earlier cells, so it has no single-tensor cut inside: one block per cell,
    // except the head (ReLU -> pool -> linear), a chain of three.
    CHECK(blocks.size() == 24 + 2);
    int widest = 0;
    for (const Block& b : blocks) widest = std::max(widest, b.width);
    CHECK(widest >= 5);  // five comb_iter branches run side by side
}

TEST_CASE("RandWire follows the IOS large model", "[zoo]") {
    const Graph g = build_zoo_model("randwire", 1);
    CHECK(g.input_shape() == Shape{1, 3, 224, 224});
    CHECK(g.output_shape() == Shape{1, 1000, 1, 1});
    check_cells_contiguous(g);
    CHECK(g.ops().back().cell == 5);  // conv1, four random stages, classifier

    // The last op of each stage is its output, at C x 2^s channels and half the resolution.
    const std::vector<Shape> stage_out{{1, 154, 56, 56}, {1, 308, 28, 28}, {1, 616, 14, 14},
                                       {1, 1232, 7, 7}};
    for (int stage = 1; stage <= 4; ++stage) {
        int last = -1;
        for (const Op& op : g.ops())
            if (op.cell == stage) last = op.id;
        REQUIRE(last >= 0);
        CHECK(g.op(last).output == stage_out[size_t(stage - 1)]);
    }

    // Random nodes are ReLU-SepConv 3x3; stride 2 exactly where they read the stage input.
    const auto consumers = g.consumers();
    int nodes = 0;
    for (const Op& op : g.ops()) {
        if (op.kind != OpKind::SepConv) continue;
        ++nodes;
        const auto& a = op.as<SepConvAttrs>();
        CHECK(a.kernel == 3);
        CHECK(a.pre_relu);
        REQUIRE(op.inputs.size() == 1);
        const int src = op.inputs.front();
        const bool reads_stage_input = g.op(src).cell != op.cell;
        CHECK(a.stride == (reads_stage_input ? 2 : 1));
    }
    CHECK(nodes == 16 + 32 + 32 + 32);

    // The RandWire paper's regular regime at C=154: 61.5M parameters, 7.9 G multiply-adds; the
    // wiring is random, so only the neighbourhood is fixed.
    const GraphTotals t = totals(g);
    CHECK(t.params > 55'000'000);
    CHECK(t.params < 68'000'000);
    CHECK(t.flops > int64_t(14.0e9));
    CHECK(t.flops < int64_t(18.0e9));

    const auto blocks = partition_blocks(g);
    check_blocks(g, blocks);
    for (const Block& b : blocks)
        CHECK(g.op(b.ops.front()).cell == g.op(b.ops.back()).cell);
}

TEST_CASE("RandWire wiring is a function of its seed", "[zoo]") {
    const Graph one = build_randwire(1, 1);
    CHECK(same_structure(one, build_randwire(1, 1)));
    CHECK(same_structure(one, build_zoo_model("randwire_seed1", 1)));
    for (unsigned seed : {2u, 3u, 12345u}) {
        const Graph other = build_zoo_model("randwire_seed" + std::to_string(seed), 1);
        CHECK(other.name() == "randwire_seed" + std::to_string(seed));
        CHECK(other.output_shape() == Shape{1, 1000, 1, 1});
        CHECK_FALSE(same_structure(one, other));
    }
}

TEST_CASE("Watts-Strogatz graphs are small-world rewirings of a ring lattice", "[zoo]") {
    SECTION("p = 0 keeps the ring lattice") {
        std::mt19937 rng(3);
        const auto edges = watts_strogatz(10, 4, 0.0, rng);
        CHECK(edges.size() == 20);
        for (const auto& [u, v] : edges) CHECK(is_ring_lattice_edge(u, v, 10, 4));
    }
    SECTION("rewiring keeps the edge count and makes a simple graph") {
        for (unsigned seed : {1u, 2u, 3u, 4u}) {
            std::mt19937 rng(seed);
            const auto edges = watts_strogatz(32, 4, 0.75, rng);
            CHECK(edges.size() == 64);
            CHECK(std::is_sorted(edges.begin(), edges.end()));
            std::set<std::pair<int, int>> unique(edges.begin(), edges.end());
            CHECK(unique.size() == edges.size());
            int rewired = 0;
            for (const auto& [u, v] : edges) {
                REQUIRE(0 <= u);
                REQUIRE(u < v);
                REQUIRE(v < 32);
                if (!is_ring_lattice_edge(u, v, 32, 4)) ++rewired;
            }
            CHECK(rewired > 16);  // about 3/4 of 64 edges move, most off the lattice
        }
    }
    SECTION("the same seed gives the same graph on every platform") {
        // Cross-checked with an independent Python implementation over numpy's MT19937.
        std::mt19937 rng(7);
        const std::vector<std::pair<int, int>> expected{
            {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 7}, {1, 2}, {1, 4},
            {1, 5}, {1, 6}, {1, 7}, {2, 6}, {3, 6}, {3, 7}, {4, 6}, {4, 7}};
        CHECK(watts_strogatz(8, 4, 0.75, rng) == expected);
    }
    SECTION("different seeds give different graphs") {
        std::mt19937 a(1), b(2);
        CHECK(watts_strogatz(32, 4, 0.75, a) != watts_strogatz(32, 4, 0.75, b));
    }
    SECTION("bad parameters are refused") {
        std::mt19937 rng(1);
        CHECK_THROWS_AS(watts_strogatz(8, 3, 0.5, rng), Error);
        CHECK_THROWS_AS(watts_strogatz(4, 4, 0.5, rng), Error);
        CHECK_THROWS_AS(watts_strogatz(8, 4, 1.5, rng), Error);
    }
}

TEST_CASE("Seeded uniform draws stay in range", "[zoo]") {
    std::mt19937 rng(11);
    std::vector<int> hits(7, 0);
    for (int i = 0; i < 7000; ++i) {
        const double u = uniform_unit(rng);
        REQUIRE(u >= 0.0);
        REQUIRE(u < 1.0);
        const int k = uniform_index(rng, 7);
        REQUIRE(k >= 0);
        REQUIRE(k < 7);
        ++hits[size_t(k)];
    }
    for (int h : hits) CHECK(h > 800);  // 1000 expected each
    CHECK_THROWS_AS(uniform_index(rng, 0), Error);
}
