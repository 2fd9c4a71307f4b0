// RandWire-WS, the "large" model of the IOS paper (mit-han-lab/inter-operator-scheduler,
// python/ios/models/randwire.py: randwire_large), which is the regular regime of "Exploring
// Randomly Wired Neural Networks" with C = 154 at 224x224:
//   conv1   3x3 conv stride 2, C/2 channels (batch norm folded, no activation)
//   conv2   random stage WS(16, 4, 0.75), C channels       56x56
//   conv3   random stage WS(32, 4, 0.75), 2C channels      28x28
//   conv4   random stage WS(32, 4, 0.75), 4C channels      14x14
//   conv5   random stage WS(32, 4, 0.75), 8C channels       7x7
//   classifier  ReLU -> 1x1 conv 1280 -> global average pool -> linear 1000
// IOS stops at the pooled 1280 features; the linear layer is the paper's classifier.
//
// In a stage, WS edges point from the lower to the higher node index. As in the paper, a unique
// input node feeds every node without predecessors (here: the stage input tensor itself, read
// by a stride-2 node) and a unique output node aggregates every node without successors (a sum,
// as IOS does, or the single such node directly). Each node sums its inputs when it has more
// than one, then applies ReLU -> 3x3 separable conv -> batch norm (folded into the bias).
// The four WS graphs are drawn in order from one mt19937 seeded with the model seed.
#include <fmt/format.h>

#include <random>
#include <vector>

#include "src/zoo/cell_builder.h"
#include "src/zoo/watts_strogatz.h"
#include "src/zoo/zoo.h"

namespace iostune {

namespace {

using zoo_cells::CellBuilder;

constexpr int kInputSize = 224;
constexpr int kBaseChannels = 154;  // C
constexpr int kNeighbors = 4;       // K
constexpr double kRewireProbability = 0.75;
constexpr int kClassifierChannels = 1280;
constexpr int kClasses = 1000;

// One random stage: returns the id of its output tensor.
int random_stage(CellBuilder& b, int input, int channels, int nodes, std::mt19937& rng) {
    const auto edges = watts_strogatz(nodes, kNeighbors, kRewireProbability, rng);
    std::vector<std::vector<int>> predecessors(static_cast<size_t>(nodes));
    std::vector<bool> has_successor(size_t(nodes), false);
    for (const auto& [u, v] : edges) {  // u < v: the DAG's orientation
        predecessors[size_t(v)].push_back(u);
        has_successor[size_t(u)] = true;
    }
    std::vector<int> output(size_t(nodes), -1);  // op id of each node's result
    std::vector<int> sinks;
    for (int node = 0; node < nodes; ++node) {  // index order is topological
        const auto& preds = predecessors[size_t(node)];
        const std::string name = fmt::format("node{}", node);
        int x = input;
        int stride = 2;
        if (!preds.empty()) {
            stride = 1;
            std::vector<int> ins;
            for (int pred : preds) ins.push_back(output[size_t(pred)]);
            x = ins.size() == 1 ? ins.front() : b.sum(ins, name + ".aggregate");
        }
        output[size_t(node)] = b.sep_conv(x, channels, 3, stride, name);
        if (!has_successor[size_t(node)]) sinks.push_back(output[size_t(node)]);
    }
    return sinks.size() == 1 ? sinks.front() : b.sum(sinks, "output");
}

}  // namespace

Graph build_randwire(int batch, unsigned seed) {
    Graph g("randwire", {batch, 3, kInputSize, kInputSize});
    CellBuilder b(g);
    std::mt19937 rng(seed);

    b.begin_cell("conv1");
    int x = b.conv(kGraphInput, kBaseChannels / 2, 3, 2, 1, "conv");

    const int stage_nodes[] = {16, 32, 32, 32};
    int channels = kBaseChannels;
    for (int stage = 0; stage < 4; ++stage) {
        b.begin_cell(fmt::format("conv{}", stage + 2));
        x = random_stage(b, x, channels, stage_nodes[stage], rng);
        channels *= 2;
    }

    b.begin_cell("classifier");
    x = b.relu(x, "act");
    x = b.conv(x, kClassifierChannels, 1, 1, 0, "conv");
    x = b.global_avg_pool(x, "global_pool");
    b.linear(x, kClasses, "fc");
    return g;
}

}  // namespace iostune
