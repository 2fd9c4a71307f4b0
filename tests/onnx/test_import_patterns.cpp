// How node patterns that exporters other than torchvision's emit map onto the IR (models built
// node by node, values checked on the CPU reference): input normalisation constants, a
// keepdims squeeze-excitation, Clip as ReLU and ReLU6.
#include <catch2/catch.hpp>
#include <cmath>

#include "src/error.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;

HostTensor filled(Shape shape, float value) { return HostTensor(shape, value); }

}  // namespace

TEST_CASE("input normalisation (x - mean) / std becomes one channel affine map",
          "[onnx][patterns]") {
    ModelBuilder b(1, 2, 2, 2);
    b.initializer("mean", {1, 2, 1, 1}, {0.5f, 0.25f});
    b.initializer("std", {2, 1, 1}, {2.0f, 0.5f});
    b.node("Sub", {"x", "mean"}, "centred");
    b.node("Div", {"centred", "std"}, "y");
    const Graph g = import_onnx_bytes(b.bytes(), "norm.onnx");
    // Sub then Div: two affine maps on the graph input (nothing to fold into).
    REQUIRE(g.size() == 2);
    CHECK(g.op(0).kind == OpKind::ChannelAffine);
    const HostTensor y = reference_run(g, filled(g.input_shape(), 1.5f));
    CHECK(y.at(0, 0, 1, 1) == Approx((1.5f - 0.5f) / 2.0f));
    CHECK(y.at(0, 1, 0, 1) == Approx((1.5f - 0.25f) / 0.5f));
}

TEST_CASE("ReduceMean with keepdims and a broadcast Mul is a squeeze-excitation gate",
          "[onnx][patterns]") {
    ModelBuilder b(1, 2, 2, 2);
    auto& mean = b.node("ReduceMean", {"x"}, "pooled");
    ModelBuilder::ints(mean, "axes", {2, 3});
    ModelBuilder::integer(mean, "keepdims", 1);
    b.node("Sigmoid", {"pooled"}, "gate");
    b.node("Mul", {"x", "gate"}, "y");
    const Graph g = import_onnx_bytes(b.bytes(), "se.onnx");
    REQUIRE(g.size() == 3);
    CHECK(g.op(0).kind == OpKind::AvgPool);
    CHECK(g.op(0).as<PoolAttrs>().global);
    CHECK(g.op(2).kind == OpKind::Binary);
    HostTensor x(g.input_shape());
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = float(i);  // channel means 1.5, 5.5
    const HostTensor y = reference_run(g, x);
    CHECK(y.at(0, 0, 1, 1) == Approx(3.0f / (1.0f + std::exp(-1.5f))));
    CHECK(y.at(0, 1, 0, 0) == Approx(4.0f / (1.0f + std::exp(-5.5f))));
}

TEST_CASE("Clip from 0 is a ReLU fused into the conv; Clip(0, 6) is ReLU6", "[onnx][patterns]") {
    for (const bool six : {false, true}) {
        ModelBuilder b(1, 1, 2, 2);
        b.initializer("w", {1, 1, 1, 1}, {2.0f});
        b.initializer("low", {}, {0.0f});
        b.initializer("high", {}, {6.0f});
        b.node("Conv", {"x", "w"}, "c");
        b.node("Clip", six ? std::vector<std::string>{"c", "low", "high"}
                           : std::vector<std::string>{"c", "low"},
               "y");
        const Graph g = import_onnx_bytes(b.bytes(), "clip.onnx");
        if (!six) {
            REQUIRE(g.size() == 1);
            CHECK(g.op(0).as<ConvAttrs>().relu);
            continue;
        }
        REQUIRE(g.size() == 2);
        CHECK(g.op(1).as<ActivationAttrs>().function == ActivationFunction::Clip);
        HostTensor x(g.input_shape());
        x.data = {-1.0f, 1.0f, 2.5f, 4.0f};
        CHECK(reference_run(g, x).data == std::vector<float>{0.0f, 2.0f, 5.0f, 6.0f});
    }
}
