// The CPU side of a job on a large model stays near-linear in its ops: graphs of over 1,000 ops
// (a DenseNet-like one, where every layer reads the concat of all earlier features as
// torchvision's DenseNet exports, and a chain of Inception-like cells of width 4) go through
// everything search and replay do besides measuring. densenet121's 250 ops take 0.1 s of this;
// its slow search and replay --validate on the H100 were convolution timing, not this side
// (docs/cli.md). The bound is generous (both graphs take 0.2 s on a CI core); a step
// quadratic in the ops with a real constant, or cubic, would not meet it.
#include <catch2/catch.hpp>

#include <chrono>

#include "search/ios_search.h"
#include "search/sim_cost_model.h"
#include "src/blocks.h"
#include "src/model_json.h"
#include "src/schedule.h"
#include "test_graphs.h"

namespace iostune {
namespace {

// `blocks` dense blocks of `layers` layers (concat -> 1x1 conv -> 3x3 conv), a 1x1 transition
// conv between blocks: (3 * layers + 1) * blocks + 1 ops.
Graph dense_graph(int blocks, int layers) {
    Graph g("dense_like", Shape{1, 8, 8, 8});
    int features = g.add(OpKind::Conv, test::conv(8, 3), {kGraphInput}, "stem");
    for (int b = 0; b < blocks; ++b) {
        std::vector<int> grown = {features};
        for (int l = 0; l < layers; ++l) {
            const std::string name = "b" + std::to_string(b) + "l" + std::to_string(l);
            const int in = grown.size() == 1
                               ? grown[0]
                               : g.add(OpKind::Concat, ConcatAttrs{}, grown, name + "_cat");
            const int bottleneck = g.add(OpKind::Conv, test::conv(8, 1), {in}, name + "_1x1");
            grown.push_back(g.add(OpKind::Conv, test::conv(4, 3), {bottleneck}, name + "_3x3"));
        }
        features = g.add(OpKind::Conv, test::conv(8, 1),
                         {g.add(OpKind::Concat, ConcatAttrs{}, grown, "b" + std::to_string(b) + "_out")},
                         "transition" + std::to_string(b));
    }
    return g;
}

// `cells` Inception-like cells of four branches (width 4, 8 ops each) one after another.
Graph inception_chain(int cells) {
    Graph g("inception_chain", Shape{1, 16, 8, 8});
    int x = kGraphInput;
    for (int c = 0; c < cells; ++c) {
        const std::string p = "c" + std::to_string(c) + "_";
        const int b1 = g.add(OpKind::Conv, test::conv(4, 1), {x}, p + "b1");
        const int b2 = g.add(OpKind::Conv, test::conv(4, 3),
                             {g.add(OpKind::Conv, test::conv(4, 1), {x}, p + "b2a")}, p + "b2");
        const int b3a = g.add(OpKind::Conv, test::conv(4, 1), {x}, p + "b3a");
        const int b3 = g.add(OpKind::Conv, test::conv(4, 3),
                             {g.add(OpKind::Conv, test::conv(4, 3), {b3a}, p + "b3b")}, p + "b3");
        const int b4 = g.add(OpKind::Conv, test::conv(4, 1), {x}, p + "b4");
        x = g.add(OpKind::Concat, ConcatAttrs{}, {b1, b2, b3, b4}, p + "cat");
    }
    return g;
}

double seconds_since(std::chrono::steady_clock::time_point begin) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

}  // namespace

TEST_CASE("1,000-op graphs: blocks, validation, JSON, fingerprint, sim search",
          "[search][scaling]") {
    const Graph graph = dense_graph(4, 84);
    REQUIRE(graph.size() > 1000);
    const auto begin = std::chrono::steady_clock::now();

    const Graph again = graph_from_json(graph_to_json(graph), "the round trip");
    CHECK(fingerprint(again) == fingerprint(graph));
    const Schedule sequential = sequential_schedule(graph);
    validate(graph, sequential);
    CHECK(sequential.flat_stages().size() == size_t(graph.size()));
    CHECK(schedule_from_json(schedule_to_json(sequential)).flat_stages().size() ==
          size_t(graph.size()));

    SimCostModel cost;
    const SearchResult result = ios_search(graph, cost, SearchOptions{});
    validate(graph, result.schedule);
    CHECK(result.latency_ms > 0);

    // Wide blocks one after another: the DP's work grows with the number of blocks.
    const Graph wide = inception_chain(126);
    REQUIRE(wide.size() > 1000);
    const SearchResult wide_result = ios_search(wide, cost, SearchOptions{});
    validate(wide, wide_result.schedule);
    CHECK(wide_result.schedule.blocks.size() == 126);

    const double took = seconds_since(begin);
    INFO("the CPU side of a job on " << graph.size() << " ops took " << took << " s");
    CHECK(took < 60.0);
}

}  // namespace iostune
