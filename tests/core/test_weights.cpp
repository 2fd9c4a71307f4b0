// Seeded-random weights and inputs: reproducible, shaped as param_shapes() says, He-scaled, and
// keeping activations of deep zoo models at unit scale through the CPU reference.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>

#include "src/graph.h"
#include "src/operator_info.h"
#include "src/reference/reference.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"

using namespace iostune;

namespace {

double second_moment(const std::vector<float>& values) {
    double sum = 0.0;
    for (float v : values) sum += double(v) * v;
    return sum / double(values.size());
}

}  // namespace

TEST_CASE("seeded weights are deterministic per seed and match param_shapes", "[weights]") {
    Graph a = build_squeezenet1_1(1);
    Graph b = build_squeezenet1_1(1);
    Graph c = build_squeezenet1_1(1);
    CHECK(a.weights_state() == WeightsState::Absent);
    init_random_weights(a, 42);
    init_random_weights(b, 42);
    init_random_weights(c, 43);
    CHECK(a.weights_state() == WeightsState::SeededRandom);
    REQUIRE(a.params().size() == size_t(a.size()));

    for (const Op& op : a.ops()) {
        INFO(op.name);
        const auto shapes = param_shapes(a, op.id);
        const auto& pa = a.params_of(op.id);
        REQUIRE(pa.size() == shapes.size());
        for (size_t i = 0; i < pa.size(); ++i) {
            CHECK(pa[i].dims == shapes[i]);
            CHECK(int64_t(pa[i].values.size()) ==
                  std::accumulate(shapes[i].begin(), shapes[i].end(), int64_t(1),
                                  std::multiplies<int64_t>()));
            CHECK(pa[i].values == b.params_of(op.id)[i].values);
            // A different seed changes every tensor, not just some.
            CHECK(pa[i].values != c.params_of(op.id)[i].values);
        }
    }
}

TEST_CASE("seeded weights survive with_batch", "[weights]") {
    Graph g = build_squeezenet1_1(1);
    init_random_weights(g, 7);
    const Graph g4 = g.with_batch(4);
    CHECK(g4.weights_state() == WeightsState::SeededRandom);
    REQUIRE(g4.params().size() == g.params().size());
    for (const Op& op : g.ops())
        for (size_t i = 0; i < g.params_of(op.id).size(); ++i)
            CHECK(g4.params_of(op.id)[i].values == g.params_of(op.id)[i].values);
}

TEST_CASE("weights of a conv reading a ReLU use He's uniform bound", "[weights]") {
    Graph g = build_googlenet(1);
    init_random_weights(g, 1);
    for (const char* name : {"conv3", "inception4a.branch1"}) {
        INFO(name);
        const Op* op = nullptr;
        for (const Op& o : g.ops())
            if (o.name == name) op = &o;
        REQUIRE(op != nullptr);
        // conv3 reads conv2 (ReLU); inception4a reads a max pool over ReLU outputs, whose
        // larger second moment gives a smaller bound.
        const auto& w = g.params_of(op->id)[0];
        const double fan_in = double(w.dims[1]) * w.dims[2] * w.dims[3];
        const double he = std::sqrt(6.0 / fan_in);
        double largest = 0.0;
        for (float v : w.values) largest = std::max(largest, double(std::abs(v)));
        CHECK(largest <= he);
        CHECK(largest >= (std::string(name) == "conv3" ? 0.99 : 0.5) * he);
        // Biases are small.
        for (float v : g.params_of(op->id)[1].values) CHECK(std::abs(v) <= 0.1f);
    }
}

TEST_CASE("random_input is seeded and uniform in [-1, 1)", "[weights]") {
    const Shape shape{2, 3, 16, 16};
    const HostTensor x = random_input(shape, 5);
    CHECK(x.shape == shape);
    REQUIRE(x.data.size() == size_t(shape.elements()));
    CHECK(x.data == random_input(shape, 5).data);
    CHECK(x.data != random_input(shape, 6).data);
    double mean = 0.0;
    for (float v : x.data) {
        CHECK(v >= -1.0f);
        CHECK(v < 1.0f);
        mean += v;
    }
    mean /= double(x.data.size());
    CHECK(std::abs(mean) < 0.05);
    CHECK(second_moment(x.data) == Approx(1.0 / 3.0).epsilon(0.1));
}

TEST_CASE("seeded weights keep every activation of resnet50 at unit scale", "[weights]") {
    // 50+ layers with 16 residual sums: a fan-in scaling that is off by a constant factor per
    // layer would drift by orders of magnitude here.
    Graph g = build_resnet50(1);
    init_random_weights(g, 3);
    const auto outputs = reference_run_all(g, random_input(g.input_shape(), 4));
    REQUIRE(outputs.size() == size_t(g.size()));
    for (const Op& op : g.ops()) {
        INFO(op.name);
        const double m = second_moment(outputs[size_t(op.id)].data);
        CHECK(m > 0.1);
        CHECK(m < 10.0);
    }
}
