// Blocks of the zoo CNNs: a partition of the ops into contiguous id ranges cut at single-tensor
// points, with the sizes and widths the IOS paper reports (Table 1: the largest Inception V3
// block has n = 11 operators and width d = 6).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "src/blocks.h"
#include "src/zoo/zoo.h"

using namespace iostune;

namespace {

const char* const kModels[] = {"inception_v3", "googlenet", "squeezenet1_1", "resnet50"};

// The paper's upper bound on DP transitions of a block, binom(n/d + 2, 2)^d.
double transition_bound(const Block& b) {
    const double r = double(b.ops.size()) / b.width;
    return std::pow((r + 2) * (r + 1) / 2, b.width);
}

const Block& block_ending_with(const Graph& g, const std::vector<Block>& blocks,
                               const std::string& name) {
    const auto it = std::find_if(blocks.begin(), blocks.end(),
                                 [&](const Block& b) { return g.op(b.ops.back()).name == name; });
    INFO("block ending with " << name);
    REQUIRE(it != blocks.end());
    return *it;
}

}  // namespace

TEST_CASE("zoo blocks partition the ops into contiguous single-tensor-cut ranges", "[blocks]") {
    for (const char* name : kModels) {
        INFO(name);
        const Graph g = build_zoo_model(name);
        const auto blocks = partition_blocks(g);
        REQUIRE_FALSE(blocks.empty());
        int next = 0;
        for (size_t i = 0; i < blocks.size(); ++i) {
            const Block& b = blocks[i];
            CHECK(b.index == int(i));
            REQUIRE_FALSE(b.ops.empty());
            for (int id : b.ops) CHECK(id == next++);  // each op once, in order, no gaps
            CHECK(b.width >= 1);
            CHECK(b.width <= int(b.ops.size()));
            // Only the block's last output is read after the block.
            for (const Op& later : g.ops()) {
                if (later.id <= b.ops.back()) continue;
                for (int src : later.inputs) CHECK((src == b.ops.back() || src > b.ops.back()));
            }
        }
        CHECK(next == g.size());
    }
}

TEST_CASE("inception_v3's largest block is Inception-E with n = 11, d = 6", "[blocks]") {
    const Graph g = build_inception_v3(1);
    const auto blocks = partition_blocks(g);
    const auto widest = std::max_element(blocks.begin(), blocks.end(),
        [](const Block& a, const Block& b) { return a.width < b.width; });
    CHECK(widest->ops.size() == 11);
    CHECK(widest->width == 6);
    CHECK(g.op(widest->ops.back()).name == "Mixed_7b.cat");
    // "Largest" in the paper's sense: the most DP transitions, about 2.6e4.
    const auto most_transitions = std::max_element(blocks.begin(), blocks.end(),
        [](const Block& a, const Block& b) { return transition_bound(a) < transition_bound(b); });
    CHECK(most_transitions->index == widest->index);
    CHECK(transition_bound(*widest) == Approx(2.6e4).epsilon(0.02));

    CHECK(block_ending_with(g, blocks, "Mixed_7c.cat").ops.size() == 11);
    const Block& a = block_ending_with(g, blocks, "Mixed_5b.cat");
    CHECK(a.ops.size() == 9);
    CHECK(a.width == 4);
    const Block& c = block_ending_with(g, blocks, "Mixed_6b.cat");
    CHECK(c.ops.size() == 12);
    CHECK(c.width == 4);
    const Block& d = block_ending_with(g, blocks, "Mixed_7a.cat");
    CHECK(d.ops.size() == 8);
    CHECK(d.width == 3);
    // Every Inception module is exactly one block.
    CHECK(std::count_if(blocks.begin(), blocks.end(), [&](const Block& b) {
              return g.op(b.ops.back()).kind == OpKind::Concat;
          }) == 11);
}

TEST_CASE("googlenet and squeezenet modules are single blocks", "[blocks]") {
    const Graph googlenet = build_googlenet(1);
    const auto gb = partition_blocks(googlenet);
    int modules = 0;
    for (const Block& b : gb) {
        if (googlenet.op(b.ops.back()).kind != OpKind::Concat) continue;
        ++modules;
        CHECK(b.ops.size() == 8);
        CHECK(b.width == 4);
    }
    CHECK(modules == 9);

    const Graph squeezenet = build_squeezenet1_1(1);
    const auto sb = partition_blocks(squeezenet);
    int fires = 0;
    for (const Block& b : sb) {
        if (squeezenet.op(b.ops.back()).kind != OpKind::Concat) continue;
        ++fires;
        CHECK(b.ops.size() == 3);  // expand1x1, expand3x3, cat: the squeeze output is a cut point
        CHECK(b.width == 2);
    }
    CHECK(fires == 8);
}

TEST_CASE("resnet50 has one block per bottleneck, width 2 where it downsamples", "[blocks]") {
    const Graph g = build_resnet50(1);
    const auto blocks = partition_blocks(g);
    int bottlenecks = 0;
    for (const Block& b : blocks) {
        if (g.op(b.ops.back()).kind != OpKind::Add) continue;
        ++bottlenecks;
        const bool downsamples = b.ops.size() == 5;
        INFO(g.op(b.ops.back()).name);
        CHECK((b.ops.size() == 4 || downsamples));
        CHECK(b.width == (downsamples ? 2 : 1));
    }
    CHECK(bottlenecks == 16);
}
