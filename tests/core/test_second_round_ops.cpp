// The second round of deployed-CNN operators (issue 28: prelu, group_norm, radix_softmax,
// strided_slice, depth_to_space, space_to_depth, flatten, and a convolution's fused PReLU): shape
// inference and its errors, the CPU reference against hand-computed values (PyTorch's semantics:
// nn.PReLU, nn.GroupNorm, ResNeSt's rSoftMax, x[..., ::2], F.pixel_shuffle / pixel_unshuffle,
// torch.flatten), the fusion pass, seeded weights, the JSON model format and the fingerprint.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "src/error.h"
#include "src/fusion.h"
#include "src/graph.h"
#include "src/model_json.h"
#include "src/operator_info.h"
#include "src/reference/reference.h"
#include "src/tensor.h"
#include "src/weights.h"
#include "tests/core/run_op.h"

using namespace iostune;
using iostune::test::run_op;

namespace {

HostTensor tensor(Shape shape, std::vector<float> values) {
    HostTensor t(shape);
    REQUIRE(values.size() == t.data.size());
    t.data = std::move(values);
    return t;
}

HostTensor ramp(Shape shape) {
    HostTensor t(shape);
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = float(i);
    return t;
}

void require_values(const HostTensor& got, Shape shape, const std::vector<float>& expected) {
    REQUIRE(got.shape == shape);
    REQUIRE(got.data.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        INFO("element " << i);
        CHECK(got.data[i] == Approx(expected[i]).margin(1e-5));
    }
}

std::string add_error(Graph& g, OpKind kind, OpAttrs attrs) {
    try {
        g.add(kind, std::move(attrs), {kGraphInput}, "bad");
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("the op was accepted");
    return "";
}

ParamTensor vec(std::vector<float> values) {
    return ParamTensor{{int(values.size())}, std::move(values)};
}

// One of each second-round kind, as a face net's, a detection head's, ResNeSt's, YOLO's and a
// super-resolution net's layers would chain them; odd channel counts.
Graph second_round_graph(int batch = 2) {
    Graph g("second_round", {batch, 6, 8, 10});
    const int focus = g.add(OpKind::StridedSlice, StridedSliceAttrs{0, 1, 6, 1, 2, 4, 0, 2, 5},
                            {kGraphInput}, "focus");
    ConvAttrs conv;
    conv.out_channels = 12;
    conv.kernel_h = conv.kernel_w = 3;
    conv.pad_h = conv.pad_w = 1;
    conv.prelu = true;
    const int stem = g.add(OpKind::Conv, conv, {focus}, "stem_prelu");
    const int norm = g.add(OpKind::GroupNorm, GroupNormAttrs{3, 1e-5f}, {stem}, "gn");
    const int prelu = g.add(OpKind::PRelu, PReluAttrs{}, {norm}, "prelu");
    const int attn = g.add(OpKind::RadixSoftmax, RadixSoftmaxAttrs{2, 3}, {prelu}, "rsoftmax");
    const int up = g.add(OpKind::DepthToSpace, DepthSpaceAttrs{2, BlockOrder::Crd}, {attn},
                         "pixel_shuffle");
    const int down = g.add(OpKind::SpaceToDepth, DepthSpaceAttrs{2, BlockOrder::Dcr}, {up},
                           "space_to_depth");
    g.add(OpKind::Flatten, FlattenAttrs{}, {down}, "flatten");
    return g;
}

}  // namespace

TEST_CASE("prelu applies one slope per channel", "[reference][second_round]") {
    const HostTensor x = tensor({1, 2, 1, 3}, {-2, 0, 3, -1, -4, 5});
    require_values(run_op(OpKind::PRelu, PReluAttrs{}, {x}, {vec({0.25f, -0.5f})}), {1, 2, 1, 3},
                   {-0.5f, 0, 3, 0.5f, 2, 5});
    Graph g("p", {1, 3, 2, 2});
    g.add(OpKind::PRelu, PReluAttrs{}, {kGraphInput}, "prelu");
    CHECK(param_shapes(g, 0) == std::vector<std::vector<int>>{{3}});
}

TEST_CASE("group norm normalises each group of channels and pixels, then scales per channel",
          "[reference][second_round]") {
    // Group 0 = channels 0, 1 = {1, 3, 5, 7}: mean 4, variance 5; group 1 = {0, 0, 2, -2}: mean
    // 0, variance 2 (eps 0).
    const HostTensor x = tensor({1, 4, 1, 2}, {1, 3, 5, 7, 0, 0, 2, -2});
    const float a = 1.0f / std::sqrt(5.0f), b = 1.0f / std::sqrt(2.0f);
    require_values(run_op(OpKind::GroupNorm, GroupNormAttrs{2, 0.0f}, {x},
                          {vec({1, 2, 1, 1}), vec({0, 0, 1, 0})}),
                   {1, 4, 1, 2}, {-3 * a, -a, 2 * a, 6 * a, 1, 1, 2 * b, -2 * b});
    // One group per channel: instance norm, each channel to mean 0 and variance 1.
    const HostTensor channels = tensor({1, 4, 1, 2}, {1, 3, 5, 7, 0, 2, 2, -2});
    const HostTensor y = run_op(OpKind::GroupNorm, GroupNormAttrs{4, 0.0f}, {channels},
                                {vec({1, 1, 1, 1}), vec({0, 0, 0, 0})});
    require_values(y, {1, 4, 1, 2}, {-1, 1, -1, 1, -1, 1, 1, -1});

    Graph g("gn", {1, 6, 2, 2});
    CHECK_THAT(add_error(g, OpKind::GroupNorm, GroupNormAttrs{4, 1e-5f}),
               Catch::Contains("shape mismatch") && Catch::Contains("6 channels do not split into "
                                                                    "4 groups"));
    CHECK_THAT(add_error(g, OpKind::GroupNorm, GroupNormAttrs{3, -1.0f}),
               Catch::Contains("invalid attributes") && Catch::Contains("eps"));
}

TEST_CASE("radix softmax takes ResNeSt's [cardinality, radix, r] to [radix, cardinality, r]",
          "[reference][second_round]") {
    const float l3 = std::log(3.0f);
    const HostTensor x = tensor({1, 4, 1, 1}, {0, l3, 0, -l3});
    // Cardinality 1, r = 2: branch k of channel j is k * 2 + j (SKNet's view [N, 2, 2, 1, 1]).
    require_values(run_op(OpKind::RadixSoftmax, RadixSoftmaxAttrs{2, 1}, {x}), {1, 4, 1, 1},
                   {0.5f, 0.9f, 0.5f, 0.1f});
    // Cardinality 2, r = 1: group g's branch k is input g * 2 + k, output k * 2 + g.
    require_values(run_op(OpKind::RadixSoftmax, RadixSoftmaxAttrs{2, 2}, {x}), {1, 4, 1, 1},
                   {0.25f, 0.75f, 0.75f, 0.25f});
    // Per pixel: every branch set sums to 1 at every position.
    const HostTensor y =
        run_op(OpKind::RadixSoftmax, RadixSoftmaxAttrs{3, 2}, {ramp({2, 12, 2, 3})});
    for (int n = 0; n < 2; ++n)
        for (int gj = 0; gj < 4; ++gj)
            for (int p = 0; p < 6; ++p) {
                float sum = 0.0f;
                for (int k = 0; k < 3; ++k) sum += y.at(n, k * 4 + gj, p / 3, p % 3);
                CHECK(sum == Approx(1.0f));
            }
    Graph g("rs", {1, 10, 1, 1});
    CHECK_THAT(add_error(g, OpKind::RadixSoftmax, RadixSoftmaxAttrs{3, 1}),
               Catch::Contains("10 channels do not split into cardinality 1 x radix 3"));
    CHECK_THAT(add_error(g, OpKind::RadixSoftmax, RadixSoftmaxAttrs{0, 1}),
               Catch::Contains("invalid attributes"));
}

TEST_CASE("strided slices read every step-th channel, row and column, backwards too",
          "[reference][second_round]") {
    const HostTensor x = ramp({1, 2, 3, 4});
    // x[:, :, ::2, 1::2]: rows 0, 2; columns 1, 3.
    require_values(run_op(OpKind::StridedSlice, StridedSliceAttrs{0, 1, 2, 0, 2, 2, 1, 2, 2}, {x}),
                   {1, 2, 2, 2}, {1, 3, 9, 11, 13, 15, 21, 23});
    // x[:, 1:, 1, ::-1]: channel 1, row 1, columns reversed.
    require_values(run_op(OpKind::StridedSlice, StridedSliceAttrs{1, 1, 1, 1, 1, 1, 3, -1, 4}, {x}),
                   {1, 1, 1, 4}, {19, 18, 17, 16});
    Graph g("slice", {1, 2, 3, 4});
    CHECK_THAT(add_error(g, OpKind::StridedSlice, StridedSliceAttrs{0, 1, 2, 0, 2, 3, 0, 1, 4}),
               Catch::Contains("height: 3 indices from 0 in steps of 2 leave [0, 3)"));
    CHECK_THAT(add_error(g, OpKind::StridedSlice, StridedSliceAttrs{0, 0, 2, 0, 1, 3, 0, 1, 4}),
               Catch::Contains("invalid attributes") && Catch::Contains("step 0"));
}

TEST_CASE("depth_to_space and space_to_depth in DCR and CRD order, each the other's inverse",
          "[reference][second_round]") {
    const HostTensor x = ramp({1, 8, 1, 1});
    // CRD (torch's pixel_shuffle): channel c's block is channels 4c .. 4c + 3.
    require_values(run_op(OpKind::DepthToSpace, DepthSpaceAttrs{2, BlockOrder::Crd}, {x}),
                   {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    // DCR (ONNX's default): block offset (by, bx) is channels (2 by + bx) * 2 + c.
    require_values(run_op(OpKind::DepthToSpace, DepthSpaceAttrs{2, BlockOrder::Dcr}, {x}),
                   {1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7});
    const HostTensor image = ramp({2, 3, 6, 9});
    for (const BlockOrder order : {BlockOrder::Dcr, BlockOrder::Crd}) {
        const HostTensor packed =
            run_op(OpKind::SpaceToDepth, DepthSpaceAttrs{3, order}, {image});
        CHECK(packed.shape == Shape{2, 27, 2, 3});
        CHECK(run_op(OpKind::DepthToSpace, DepthSpaceAttrs{3, order}, {packed}).data == image.data);
    }
    // pixel_unshuffle of a 2x2 map: channel c * 4 + by * 2 + bx.
    require_values(run_op(OpKind::SpaceToDepth, DepthSpaceAttrs{2, BlockOrder::Crd},
                          {ramp({1, 1, 2, 2})}),
                   {1, 4, 1, 1}, {0, 1, 2, 3});
    Graph g("ds", {1, 6, 3, 4});
    CHECK_THAT(add_error(g, OpKind::DepthToSpace, DepthSpaceAttrs{2, BlockOrder::Dcr}),
               Catch::Contains("6 channels do not divide into blocks of 2x2"));
    CHECK_THAT(add_error(g, OpKind::SpaceToDepth, DepthSpaceAttrs{2, BlockOrder::Dcr}),
               Catch::Contains("a 3x4 map does not divide into 2x2 blocks"));
}

TEST_CASE("flatten makes [N, C*H*W, 1, 1] in NCHW order", "[reference][second_round]") {
    const HostTensor x = ramp({2, 2, 2, 3});
    const HostTensor y = run_op(OpKind::Flatten, FlattenAttrs{}, {x});
    CHECK(y.shape == Shape{2, 12, 1, 1});
    CHECK(y.data == x.data);
}

TEST_CASE("a convolution fuses the PReLU after it; the fused graph computes the same",
          "[fusion][second_round]") {
    Graph g("conv_prelu", {2, 3, 6, 6});
    ConvAttrs a;
    a.out_channels = 5;
    a.kernel_h = a.kernel_w = 3;
    const int conv = g.add(OpKind::Conv, a, {kGraphInput}, "conv");
    const int prelu = g.add(OpKind::PRelu, PReluAttrs{}, {conv}, "prelu");
    a.relu = true;
    const int conv_relu = g.add(OpKind::Conv, a, {prelu}, "conv_relu");
    g.add(OpKind::PRelu, PReluAttrs{}, {conv_relu}, "prelu_after_relu");
    init_random_weights(g, 7);
    const FusedGraph f = fuse_epilogues(g);
    CHECK(f.counts.conv_prelu == 1);
    CHECK(f.counts.conv_relu == 0);
    REQUIRE(f.graph.size() == 3);  // a ReLU convolution keeps its PReLU op
    const auto& fused = f.graph.op(0).as<ConvAttrs>();
    CHECK(fused.prelu);
    CHECK(f.graph.params_of(0).back().values == g.params_of(prelu).at(0).values);
    CHECK(param_shapes(f.graph, 0).back() == std::vector<int>{5});
    const HostTensor x = random_input(g.input_shape(), 3);
    CHECK(reference_run(f.graph, x).data == reference_run(g, x).data);

    // A convolution fuses one of a ReLU, an activation and a PReLU.
    Graph bad("bad", {1, 3, 4, 4});
    ConvAttrs both;
    both.out_channels = 2;
    both.relu = true;
    both.prelu = true;
    CHECK_THAT(add_error(bad, OpKind::Conv, both),
               Catch::Contains("invalid attributes") && Catch::Contains("PReLU"));
}

TEST_CASE("the second-round kinds take seeded weights, run at any batch and round-trip through "
          "the model format",
          "[model_json][second_round]") {
    Graph original = second_round_graph();
    init_random_weights(original, 5);
    for (const ParamTensor& slope : {original.params_of(1).back(), original.params_of(3).at(0)})
        for (float v : slope.values) CHECK((v > 0.0f && v < 0.5f));  // torch's 0.25, spread
    const HostTensor out = reference_run(original, random_input(original.input_shape(), 2));
    CHECK(out.shape == Shape{2, 12 * 4 * 5, 1, 1});
    for (float v : out.data) REQUIRE(std::isfinite(v));
    CHECK(reference_run(original.with_batch(3), random_input({3, 6, 8, 10}, 2)).shape.n == 3);

    const auto doc = graph_to_json(original);
    CHECK(doc["ops"][0]["op"] == "strided_slice");
    CHECK(doc["ops"][0]["attrs"]["h_step"] == 2);
    CHECK(doc["ops"][1]["attrs"]["prelu"] == true);
    CHECK(doc["ops"][5]["attrs"]["order"] == "crd");
    const Graph imported = graph_from_json(doc, "mem.json");
    REQUIRE(imported.size() == original.size());
    for (int i = 0; i < original.size(); ++i) {
        INFO("op " << original.op(i).name);
        CHECK(imported.op(i).kind == original.op(i).kind);
        CHECK(imported.op(i).attrs == original.op(i).attrs);
    }
    CHECK(fingerprint(imported) == fingerprint(original));

    SECTION("a convolution without a PReLU is written as before (no prelu field)") {
        Graph plain("plain", {1, 3, 4, 4});
        ConvAttrs a;
        a.out_channels = 2;
        plain.add(OpKind::Conv, a, {kGraphInput}, "conv");
        CHECK_FALSE(graph_to_json(plain)["ops"][0]["attrs"].contains("prelu"));
    }
    SECTION("block orders are written by name, and a wrong one names the valid ones") {
        auto bad = doc;
        bad["ops"][5]["attrs"]["order"] = "rcd";
        CHECK_THROWS_WITH(graph_from_json(bad, "bad.json"),
                          Catch::Contains("ops[5].attrs.order") && Catch::Contains("dcr, crd"));
    }
    SECTION("the group count is part of the fingerprint") {
        auto changed = doc;
        changed["ops"][2]["attrs"]["groups"] = 6;
        CHECK(fingerprint(graph_from_json(changed, "mem.json")) != fingerprint(original));
    }
}
