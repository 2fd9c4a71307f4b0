// Weights survive the trip: the imported parameters equal the ONNX initializers, after folding
// batch norm the way PyTorch's own arithmetic says (fixture conv_bn.folded.json), and ReLUs are
// fused where they may be.
#include <catch2/catch.hpp>
#include <fstream>

#include "src/onnx/onnx_import.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;

}  // namespace

TEST_CASE(
    "conv_bn: batch norm folded into convolutions with and without bias and a standalone "
    "BN kept as a depthwise conv give the folded initializers",
    "[onnx][pytorch][weights]") {
    if (!load_manifest()) {
        WARN("PyTorch fixtures were skipped (see onnx_fixtures/status.txt); nothing checked");
        return;
    }
    const Graph graph = import_onnx_file(fixture_path("conv_bn.onnx"));
    std::ifstream file(fixture_path("conv_bn.folded.json"));
    const auto expected =
        nlohmann::json::parse(file).get<std::vector<std::vector<std::vector<float>>>>();

    // conv1+bn1+relu, conv2+bn2, maxpool, bn3 (no conv before it), linear.
    REQUIRE(graph.size() == 5);
    const auto& conv1 = graph.op(0).as<ConvAttrs>();
    CHECK(graph.op(0).kind == OpKind::Conv);
    CHECK(conv1.bias);  // the conv had none; the folded BN shift is its bias now
    CHECK(conv1.relu);
    CHECK(graph.op(1).kind == OpKind::Conv);
    CHECK_FALSE(graph.op(1).as<ConvAttrs>().relu);
    CHECK(graph.op(2).kind == OpKind::MaxPool);
    CHECK(graph.op(3).kind == OpKind::ChannelAffine);  // scale [6], shift [6]
    CHECK(graph.op(4).kind == OpKind::Linear);

    const int with_params[] = {0, 1, 3, 4};
    for (size_t k = 0; k < expected.size(); ++k) {
        const auto& params = graph.params_of(with_params[k]);
        REQUIRE(params.size() == expected[k].size());
        for (size_t t = 0; t < params.size(); ++t) {
            INFO("op " << with_params[k] << " tensor " << t);
            REQUIRE(params[t].values.size() == expected[k][t].size());
            // Folding in double and in float round differently, by a few ulp at most.
            CHECK(relative_error(params[t].values, expected[k][t]) < 1e-6);
        }
    }
    // The Linear layer is not folded: bit-identical to its initializer.
    CHECK(graph.params_of(4)[0].values == std::vector<float>(expected[3][0]));
}

TEST_CASE("initializers become weights bit for bit with Gemm's transB and alpha applied",
          "[onnx][weights]") {
    ModelBuilder b(1, 2, 3, 3);
    b.initializer("w", {3, 2, 1, 1}, ramp(6));
    b.initializer("bias", {3}, {1.0f, -2.0f, 3.0f});
    b.node("Conv", {"x", "w", "bias"}, "c");
    b.node("Relu", {"c"}, "r");
    b.node("Flatten", {"r"}, "f");
    b.initializer("gw", {27, 4}, ramp(108, 0.01f));  // [K, out]: transB = 0
    b.initializer("gb", {4}, {0.5f, 0.25f, 0.0f, -1.0f});
    auto& gemm = b.node("Gemm", {"f", "gw", "gb"}, "y");
    auto* alpha = gemm.add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(onnx::AttributeProto::FLOAT);
    alpha->set_f(2.0f);

    const Graph g = import_onnx_bytes(b.bytes(), "test");
    REQUIRE(g.size() == 2);
    CHECK(g.op(0).as<ConvAttrs>().relu);
    CHECK(g.params_of(0)[0].values == ramp(6));
    CHECK(g.params_of(0)[1].values == std::vector<float>{1.0f, -2.0f, 3.0f});
    const auto& w = g.params_of(1)[0];
    REQUIRE(w.dims == std::vector<int>{4, 27});
    const auto gw = ramp(108, 0.01f);
    for (int o = 0; o < 4; ++o)
        for (int k = 0; k < 27; ++k)
            CHECK(w.values[size_t(o * 27 + k)] == 2.0f * gw[size_t(k * 4 + o)]);
    CHECK(g.params_of(1)[1].values == std::vector<float>{0.5f, 0.25f, 0.0f, -1.0f});
}

TEST_CASE("batch norm and ReLU are not folded into an op that has another consumer",
          "[onnx][weights]") {
    ModelBuilder b(1, 2, 4, 4);
    b.initializer("w", {2, 2, 1, 1}, ramp(4));
    b.node("Conv", {"x", "w"}, "c");
    for (const char* name : {"s", "bb", "m"}) b.initializer(name, {2}, {0.5f, 1.5f});
    b.initializer("v", {2}, {4.0f, 1.0f});
    b.node("BatchNormalization", {"c", "s", "bb", "m", "v"}, "bn");
    b.node("Relu", {"c"}, "r");
    b.node("Add", {"bn", "r"}, "y");
    const Graph g = import_onnx_bytes(b.bytes(), "test");
    REQUIRE(g.size() == 4);
    CHECK_FALSE(g.op(0).as<ConvAttrs>().bias);
    CHECK(g.params_of(0)[0].values == ramp(4));
    CHECK(g.op(1).kind == OpKind::ChannelAffine);  // the BN, as a per-channel affine map
    CHECK(g.op(2).kind == OpKind::Relu);
    CHECK(g.op(3).kind == OpKind::Add);
}
