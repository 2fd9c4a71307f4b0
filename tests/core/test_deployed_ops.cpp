// The operators of deployed CNNs (activation, binary, channel_affine, channel_shuffle,
// channel_slice, resize, conv_transpose, channel_norm, spatial_pad): shape inference and its errors, the CPU
// reference against PyTorch 1.13's results (values printed by torch.nn.functional on the same
// inputs, or hand-checked where stated), the JSON model format and the fingerprint.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "src/error.h"
#include "src/graph.h"
#include "src/model_json.h"
#include "src/operator_info.h"
#include "src/reference/reference.h"
#include "src/tensor.h"
#include "tests/core/run_op.h"
#include "src/weights.h"

using namespace iostune;
using iostune::test::run_op;

namespace {

HostTensor tensor(Shape shape, std::vector<float> values) {
    HostTensor t(shape);
    REQUIRE(values.size() == t.data.size());
    t.data = std::move(values);
    return t;
}


void require_values(const HostTensor& got, Shape shape, const std::vector<float>& expected,
                    double margin = 1e-5) {
    REQUIRE(got.shape == shape);
    REQUIRE(got.data.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        INFO("element " << i);
        CHECK(got.data[i] == Approx(expected[i]).margin(margin));
    }
}

// The activation test input: one value per interesting region of every function.
HostTensor eight() { return tensor({1, 8, 1, 1}, {-3, -1, -0.5, 0, 0.5, 1, 3, 7}); }

HostTensor activate(ActivationFunction f, float alpha = 0.0f, float beta = 0.0f) {
    return run_op(OpKind::Activation, ActivationAttrs{f, alpha, beta}, {eight()});
}

ConvTransposeAttrs up(int out, int k, int stride, int pad, int output_padding, int groups) {
    ConvTransposeAttrs a;
    a.out_channels = out;
    a.kernel_h = a.kernel_w = k;
    a.stride_h = a.stride_w = stride;
    a.pad_h = a.pad_w = pad;
    a.output_padding_h = a.output_padding_w = output_padding;
    a.groups = groups;
    return a;
}

std::string add_error(Graph& g, OpKind kind, OpAttrs attrs, std::vector<int> inputs) {
    try {
        g.add(kind, std::move(attrs), std::move(inputs), "bad");
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("the op was accepted");
    return "";
}

// One of each new kind, in a graph an SE block, a U-Net decoder and a ConvNeXt block would make.
Graph deployed_graph(int batch = 1) {
    Graph g("deployed", {batch, 4, 6, 6});
    const int act = g.add(OpKind::Activation, ActivationAttrs{ActivationFunction::HardSigmoid,
                                                              1.0f / 6.0f, 0.5f},
                          {kGraphInput}, "hsig");
    PoolAttrs global;
    global.global = true;
    const int pool = g.add(OpKind::AvgPool, global, {act}, "squeeze");
    const int scaled = g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Mul}, {act, pool}, "excite");
    const int affine = g.add(OpKind::ChannelAffine, ChannelAffineAttrs{}, {scaled}, "bn");
    const int shuffled = g.add(OpKind::ChannelShuffle, ChannelShuffleAttrs{2}, {affine}, "shuffle");
    const int slice = g.add(OpKind::ChannelSlice, ChannelSliceAttrs{1, 3}, {shuffled}, "slice");
    const int upsampled = g.add(OpKind::ConvTranspose, up(3, 3, 2, 1, 1, 1), {slice}, "up");
    const int resized =
        g.add(OpKind::Resize, ResizeAttrs{ResizeMode::Bilinear, 12, 12, false}, {slice}, "resize");
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {upsampled, resized}, "cat");
    const int norm = g.add(OpKind::ChannelNorm, ChannelNormAttrs{1e-6f}, {cat}, "norm");
    g.add(OpKind::SpatialPad, SpatialPadAttrs{-1, 2, 1, -3}, {norm}, "shift");
    return g;
}

}  // namespace

TEST_CASE("activations match torch.nn.functional", "[reference][deployed]") {
    const Shape s{1, 8, 1, 1};
    require_values(activate(ActivationFunction::Sigmoid), s,
                   {0.047425874f, 0.26894143f, 0.37754068f, 0.5f, 0.62245935f, 0.7310586f,
                    0.95257413f, 0.999089f});
    require_values(activate(ActivationFunction::Silu), s,
                   {-0.14227761f, -0.26894143f, -0.18877034f, 0.0f, 0.31122968f, 0.7310586f,
                    2.8577225f, 6.9936228f});
    require_values(activate(ActivationFunction::HardSigmoid, 1.0f / 6.0f, 0.5f), s,
                   {0.0f, 0.33333334f, 0.41666666f, 0.5f, 0.58333331f, 0.66666669f, 1.0f, 1.0f});
    require_values(activate(ActivationFunction::HardSwish), s,
                   {0.0f, -0.33333334f, -0.20833333f, 0.0f, 0.29166666f, 0.66666669f, 3.0f, 7.0f});
    require_values(activate(ActivationFunction::LeakyRelu, 0.1f), s,
                   {-0.3f, -0.1f, -0.05f, 0.0f, 0.5f, 1.0f, 3.0f, 7.0f});
    require_values(activate(ActivationFunction::Gelu), s,
                   {-0.0040498674f, -0.15865529f, -0.15426879f, 0.0f, 0.3457312f, 0.84134471f,
                    2.9959502f, 7.0f});
    require_values(activate(ActivationFunction::Tanh), s,
                   {-0.99505478f, -0.76159418f, -0.46211717f, 0.0f, 0.46211717f, 0.76159418f,
                    0.99505478f, 0.99999833f});
    // ReLU6 is clip(0, 6).
    require_values(activate(ActivationFunction::Clip, 0.0f, 6.0f), s,
                   {0, 0, 0, 0, 0.5f, 1, 3, 6});
}

TEST_CASE("binary ops broadcast a per-channel scale over the map", "[reference][deployed]") {
    const HostTensor map = tensor({1, 2, 1, 2}, {1, 2, 3, 4});
    const HostTensor scale = tensor({1, 2, 1, 1}, {10, 100});
    // Hand-checked: channel 0 pairs with 10, channel 1 with 100, in either input order.
    require_values(run_op(OpKind::Binary, BinaryAttrs{BinaryOp::Mul}, {map, scale}),
                   {1, 2, 1, 2}, {10, 20, 300, 400});
    require_values(run_op(OpKind::Binary, BinaryAttrs{BinaryOp::Sub}, {scale, map}),
                   {1, 2, 1, 2}, {9, 8, 97, 96});
    require_values(run_op(OpKind::Binary, BinaryAttrs{BinaryOp::Div}, {map, scale}),
                   {1, 2, 1, 2}, {0.1f, 0.2f, 0.03f, 0.04f});
    require_values(run_op(OpKind::Binary, BinaryAttrs{BinaryOp::Add}, {map, map}),
                   {1, 2, 1, 2}, {2, 4, 6, 8});
    Graph g("g", {1, 2, 3, 3});
    Graph other("o", {1, 3, 3, 3});
    (void)other;
    PoolAttrs global;
    global.global = true;
    const int pooled = g.add(OpKind::AvgPool, global, {kGraphInput}, "pool");
    ChannelSliceAttrs one{0, 1};
    const int slice = g.add(OpKind::ChannelSlice, one, {pooled}, "slice");
    CHECK(g.op(g.add(OpKind::Binary, BinaryAttrs{}, {slice, kGraphInput}, "scalar")).output ==
          Shape{1, 2, 3, 3});
    ConvAttrs three;
    three.out_channels = 3;
    const int conv = g.add(OpKind::Conv, three, {kGraphInput}, "conv");
    CHECK_THAT(add_error(g, OpKind::Binary, BinaryAttrs{}, {conv, kGraphInput}),
               Catch::Contains("do not broadcast along channels"));
}

TEST_CASE("a channel affine map scales and shifts each channel", "[reference][deployed]") {
    // Hand-checked: y = scale[c] * x + shift[c].
    require_values(run_op(OpKind::ChannelAffine, ChannelAffineAttrs{},
                          {tensor({1, 2, 1, 2}, {1, 2, 3, 4})},
                          {ParamTensor{{2}, {2, -1}}, ParamTensor{{2}, {0.5f, 10}}}),
                   {1, 2, 1, 2}, {2.5f, 4.5f, 7, 6});
    CHECK_THROWS_WITH(run_op(OpKind::ChannelAffine, ChannelAffineAttrs{},
                             {tensor({1, 2, 1, 1}, {1, 2})}, {ParamTensor{{2}, {1, 1}}}),
                      Catch::Contains("expects 2 parameter tensors"));
}

TEST_CASE("channel shuffle and slice move whole planes", "[reference][deployed]") {
    // Hand-checked against x.view(1, 2, 3, 1, 1).transpose(1, 2).reshape(1, 6, 1, 1).
    const HostTensor six = tensor({1, 6, 1, 1}, {0, 1, 2, 3, 4, 5});
    require_values(run_op(OpKind::ChannelShuffle, ChannelShuffleAttrs{2}, {six}), {1, 6, 1, 1},
                   {0, 3, 1, 4, 2, 5});
    require_values(run_op(OpKind::ChannelShuffle, ChannelShuffleAttrs{3}, {six}), {1, 6, 1, 1},
                   {0, 2, 4, 1, 3, 5});
    const HostTensor two_by_three = tensor({2, 3, 1, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    require_values(run_op(OpKind::ChannelSlice, ChannelSliceAttrs{1, 3}, {two_by_three}),
                   {2, 2, 1, 2}, {2, 3, 4, 5, 8, 9, 10, 11});
    Graph g("g", {1, 6, 2, 2});
    CHECK_THAT(add_error(g, OpKind::ChannelShuffle, ChannelShuffleAttrs{4}, {kGraphInput}),
               Catch::Contains("do not split into 4 groups"));
    CHECK_THAT(add_error(g, OpKind::ChannelSlice, ChannelSliceAttrs{2, 7}, {kGraphInput}),
               Catch::Contains("channels [2, 7)"));
}

TEST_CASE("spatial pad pads with zeros and crops", "[reference][deployed][spatial_pad]") {
    // Hand-checked: out[y][x] = in[y - top][x - left], zero outside the input.
    const HostTensor x = tensor({1, 2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    require_values(run_op(OpKind::SpatialPad, SpatialPadAttrs{-1, 1, 1, -2}, {x}), {1, 2, 2, 2},
                   {0, 4, 0, 0, 0, 10, 0, 0});
    require_values(run_op(OpKind::SpatialPad, SpatialPadAttrs{1, 0, 0, 1}, {x}), {1, 2, 3, 4},
                   {0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0, 7, 8, 9, 0, 10, 11, 12, 0});
    // nasnet's shift by a pixel: ZeroPad2d((-1, 1, -1, 1)).
    require_values(run_op(OpKind::SpatialPad, SpatialPadAttrs{-1, 1, -1, 1}, {x}), {1, 2, 2, 3},
                   {5, 6, 0, 0, 0, 0, 11, 12, 0, 0, 0, 0});
    // Cropped past the input along W: zeros only.
    require_values(run_op(OpKind::SpatialPad, SpatialPadAttrs{0, 0, -3, 2}, {x}), {1, 2, 2, 2},
                   {0, 0, 0, 0, 0, 0, 0, 0});
    Graph g("g", {1, 2, 2, 3});
    CHECK_THAT(add_error(g, OpKind::SpatialPad, SpatialPadAttrs{-2, 0, 0, 0}, {kGraphInput}),
               Catch::Contains("leaves 0x3") && Catch::Contains("'bad'"));
    CHECK_THAT(add_error(g, OpKind::SpatialPad, SpatialPadAttrs{0, 0, -1, -2}, {kGraphInput}),
               Catch::Contains("leaves 2x0"));
    const int ok = g.add(OpKind::SpatialPad, SpatialPadAttrs{3, -1, 0, 0}, {kGraphInput}, "ok");
    CHECK(g.op(ok).output == Shape{1, 2, 4, 3});
}

TEST_CASE("resize matches torch's interpolate", "[reference][deployed]") {
    // x = arange(6).reshape(1, 1, 2, 3) ** 1.5
    const HostTensor x =
        tensor({1, 1, 2, 3}, {0.0f, 1.0f, 2.8284271f, 5.1961522f, 8.0f, 11.18034f});
    require_values(run_op(OpKind::Resize, ResizeAttrs{ResizeMode::Nearest, 4, 6, false}, {x}),
                   {1, 1, 4, 6},
                   {0, 0, 1, 1, 2.8284271f, 2.8284271f, 0, 0, 1, 1, 2.8284271f, 2.8284271f,
                    5.1961522f, 5.1961522f, 8, 8, 11.18034f, 11.18034f, 5.1961522f, 5.1961522f,
                    8, 8, 11.18034f, 11.18034f});
    require_values(run_op(OpKind::Resize, ResizeAttrs{ResizeMode::Bilinear, 4, 5, false}, {x}),
                   {1, 1, 4, 5},
                   {0.0f, 0.40000004f, 1.0000001f, 2.0970564f, 2.8284271f, 1.2990381f,
                    1.8794229f, 2.75f, 4.0498433f, 4.9164052f, 3.8971143f, 4.8382688f, 6.25f,
                    7.9554172f, 9.0923615f, 5.1961522f, 6.3176913f, 8.0f, 9.9082041f,
                    11.18034f});
    require_values(run_op(OpKind::Resize, ResizeAttrs{ResizeMode::Bilinear, 4, 5, true}, {x}),
                   {1, 1, 4, 5},
                   {0.0f, 0.5f, 1.0f, 1.9142135f, 2.8284271f, 1.7320508f, 2.5326922f,
                    3.3333335f, 4.4728656f, 5.6123981f, 3.4641016f, 4.5653844f, 5.666667f,
                    7.031518f, 8.396369f, 5.1961522f, 6.5980763f, 8.0f, 9.5901699f, 11.18034f});
    Graph g("g", {1, 1, 2, 2});
    CHECK_THAT(add_error(g, OpKind::Resize, ResizeAttrs{ResizeMode::Nearest, 4, 4, true},
                         {kGraphInput}),
               Catch::Contains("align_corners applies to bilinear"));
}

TEST_CASE("a grouped, strided transposed convolution matches torch", "[reference][deployed]") {
    // torch.randn(generator seeded 0), rounded to 2 decimals; conv_transpose2d(x, w, b,
    // stride=2, padding=1, output_padding=1, groups=2).
    const HostTensor x = tensor(
        {1, 4, 2, 3},
        {-1.13f, -1.15f, -0.25f, -0.43f, 0.85f, 0.69f, -0.32f, -2.12f, 0.47f, -0.16f, 1.44f, 0.27f,
         0.17f, 0.87f, -0.14f, -0.11f, 0.93f, 1.26f, 2.0f, 0.05f, 0.62f, -0.41f, -0.84f, -2.32f});
    const std::vector<float> w{
        -0.22f, -0.74f, 0.56f,  0.26f,  -0.17f, -0.68f, 0.94f,  0.49f,  1.2f,   0.08f,  -1.2f,
        -0.0f,  -0.52f, -0.31f, -1.58f, 1.71f,  0.21f,  -0.45f, -0.57f, -0.56f, 0.59f,  1.54f,
        0.51f,  -0.59f, -1.33f, 0.19f,  -0.07f, -0.49f, -1.5f,  -0.19f, 0.45f,  1.33f,  1.51f,
        2.08f,  1.71f,  2.38f,  -1.13f, -0.32f, -1.09f, -0.09f, 0.33f,  -0.76f, -1.6f,  0.02f,
        -0.75f, 0.19f,  0.62f,  0.64f,  -0.0f,  -0.53f, 1.17f,  0.39f,  1.94f,  0.79f,  -0.02f,
        -0.44f, -0.22f, -2.44f, -0.07f, -0.03f, 0.96f,  0.35f,  -0.92f, -0.06f, -0.62f, -0.46f,
        1.92f,  -0.4f,  0.12f,  1.16f,  0.92f,  1.39f};
    const HostTensor y = run_op(OpKind::ConvTranspose, up(4, 3, 2, 1, 1, 2), {x},
                                {ParamTensor{{4, 2, 3, 3}, w}, ParamTensor{{4}, {0.1f, -0.2f, 0.3f, 0}}});
    require_values(
        y, {1, 4, 4, 6},
        {0.12890002f,  -2.5065999f,  -0.78569984f, 2.7915998f,   0.38219997f,  -0.0072999969f,
         -0.10670003f, -0.83800006f, -2.3017001f,  -0.97179997f, -0.59500003f, 0.31279999f,
         0.091500007f, 2.9254f,      0.68990004f,  -0.7324f,     0.1204f,      -0.52849996f,
         -0.14109999f, -1.521f,      0.7901001f,   1.3087001f,   0.4894f,      0.90910006f,
         -0.27529997f, 0.74620014f,  -2.6631f,     -1.2426999f,  0.50260001f,  0.90469998f,
         -0.22849996f, -7.4363995f,  -7.2466998f,  -4.5286999f,  -0.68180001f, 0.97979993f,
         -0.27950001f, 0.44380003f,  1.4517001f,   0.39410007f,  -0.054799989f, -0.88250005f,
         -0.56389999f, 4.0613999f,   2.4409001f,   4.5862007f,   0.40660006f,  0.13210006f,
         0.21610001f,  -0.08950001f, 0.58360004f,  -1.8629003f,  0.21040002f,  0.38780001f,
         1.2190001f,   -3.8355f,     0.40690002f,  -1.7855999f,  1.1317999f,   -1.0283999f,
         0.2924f,      2.3618f,      0.66570002f,  5.1658001f,   0.87819999f,  -0.588f,
         0.1543f,      -1.5346999f,  0.024599999f, -3.8679001f,  -0.48679996f, 1.4893999f,
         -0.8901f,     0.53490001f,  -0.48109999f, 2.2143002f,   -0.17380002f, -0.089400001f,
         2.3558002f,   3.6568999f,   2.8312001f,   2.7816f,      2.5184f,      2.6248f,
         0.22229999f,  -1.7906998f,  -0.15689999f, -3.4670997f,  0.26020002f,  1.1957999f,
         -0.59060001f, -1.2684999f,  1.0314001f,   -2.6326997f,  0.31000018f,  -2.2293999f},
        1e-4);
    Graph g("g", {1, 4, 5, 5});
    const int id = g.add(OpKind::ConvTranspose, up(6, 2, 2, 0, 0, 2), {kGraphInput}, "up");
    CHECK(g.op(id).output == Shape{1, 6, 10, 10});
    CHECK(param_shapes(g, id) == std::vector<std::vector<int>>{{4, 3, 2, 2}, {6}});
    // MACs: every input element meets (6/2) outputs x 2 x 2 taps.
    CHECK(flops(g, id) == 2 * 100 * 3 * 4 + 600);
    CHECK_THAT(add_error(g, OpKind::ConvTranspose, up(6, 3, 2, 1, 2, 1), {kGraphInput}),
               Catch::Contains("output_padding"));
}

TEST_CASE("channel norm is layer norm over each pixel's channels", "[reference][deployed]") {
    // F.layer_norm(x.permute(0, 2, 3, 1), (3,), gamma, beta, 1e-6).permute(0, 3, 1, 2)
    const HostTensor x = tensor({1, 3, 1, 2}, {-0.46f, -0.34f, -1.57f, 1.23f, 1.39f, 1.17f});
    require_values(run_op(OpKind::ChannelNorm, ChannelNormAttrs{1e-6f}, {x},
                          {ParamTensor{{3}, {1.0f, 0.5f, 2.0f}}, ParamTensor{{3}, {0, 0.1f, -0.1f}}}),
                   {1, 3, 1, 2},
                   {-0.20203047f, -1.4134079f, -0.45558372f, 0.47400239f, 2.5263958f,
                    1.2308059f});
}

TEST_CASE("the deployed-CNN kinds round-trip through the model format", "[model_json][deployed]") {
    Graph original = deployed_graph();
    init_random_weights(original, 5);
    const Graph imported = graph_from_json(graph_to_json(original), "mem.json");
    REQUIRE(imported.size() == original.size());
    for (int i = 0; i < original.size(); ++i) {
        INFO("op " << original.op(i).name);
        CHECK(imported.op(i).kind == original.op(i).kind);
        CHECK(imported.op(i).attrs == original.op(i).attrs);
        CHECK(imported.op(i).output == original.op(i).output);
    }
    CHECK(fingerprint(imported) == fingerprint(original));
    const auto doc = graph_to_json(original);
    CHECK(doc["ops"][0]["attrs"]["function"] == "hardsigmoid");
    CHECK(doc["ops"][2]["attrs"]["op"] == "mul");
    CHECK(doc["ops"][7]["attrs"]["mode"] == "bilinear");
    CHECK(doc["ops"][10]["op"] == "spatial_pad");
    CHECK(doc["ops"][10]["attrs"]["left"] == 1);
    CHECK(doc["ops"][10]["attrs"]["right"] == -3);

    SECTION("an unknown enum value names the valid ones") {
        auto bad = doc;
        bad["ops"][0]["attrs"]["function"] = "swish";
        CHECK_THROWS_WITH(graph_from_json(bad, "bad.json"),
                          Catch::Contains("ops[0].attrs.function") &&
                              Catch::Contains("clip, sigmoid, silu"));
        bad = doc;
        bad["ops"][9]["attrs"]["eps"] = "small";
        CHECK_THROWS_WITH(graph_from_json(bad, "bad.json"),
                          Catch::Contains("ops[9].attrs.eps: expected a number"));
    }
    SECTION("a float attribute is part of the fingerprint") {
        auto changed = doc;
        changed["ops"][0]["attrs"]["alpha"] = 0.2;
        CHECK(fingerprint(graph_from_json(changed, "mem.json")) != fingerprint(original));
    }
    SECTION("the reference runs the whole graph at another batch") {
        const Graph two = original.with_batch(2);
        const HostTensor out = reference_run(two, random_input(two.input_shape(), 3));
        CHECK(out.shape == Shape{2, 5, 13, 10});
        for (float v : out.data) REQUIRE(std::isfinite(v));
    }
}
