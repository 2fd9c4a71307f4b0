// Inputs the importer must refuse with one clear error (naming the file, and for a node its
// name, op type and opset), never a partial model.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "src/error.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;
using Catch::Matchers::Contains;

// conv -> relu: a valid model to break in various ways.
ModelBuilder conv_relu(int opset = 13, int64_t batch = 1, int64_t width = 4) {
    ModelBuilder b(batch, 2, 4, width, opset);
    b.initializer("w", {3, 2, 3, 3}, ramp(54, 0.01f));
    auto& conv = b.node("Conv", {"x", "w"}, "c", "conv1");
    ModelBuilder::ints(conv, "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, "y", "relu1");
    return b;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
    const std::string path = std::string(IOSTUNE_BINARY_DIR) + "/tests/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

}  // namespace

TEST_CASE("the valid base model imports (so the failures below are caused by the defects)",
          "[onnx][errors]") {
    const Graph g = import_onnx_bytes(conv_relu().bytes(), "test");
    REQUIRE(g.size() == 1);
    CHECK(g.op(0).as<ConvAttrs>().relu);
    CHECK(g.output_shape() == Shape{1, 3, 4, 4});
}

TEST_CASE("a truncated file is refused", "[onnx][errors]") {
    const std::string bytes = conv_relu().bytes();
    for (size_t keep : {bytes.size() / 2, bytes.size() - 3, size_t(10)}) {
        const std::string path = write_temp("truncated.onnx", bytes.substr(0, keep));
        CHECK_THROWS_WITH(
            import_onnx_file(path),
            Contains(path) && (Contains("truncated") || Contains("not an ONNX model")));
    }
}

TEST_CASE("a file that is not ONNX is refused", "[onnx][errors]") {
    for (const std::string& text :
         {std::string("{\"model\": \"inception_v3\"}\n"),
          std::string("this is a text file, not a model\n"), std::string()}) {
        const std::string path = write_temp("not_onnx.onnx", text);
        CHECK_THROWS_WITH(import_onnx_file(path), Contains(path) && Contains("ONNX"));
    }
    CHECK_THROWS_WITH(import_onnx_file("/nonexistent/model.onnx"),
                      Contains("cannot open") && Contains("/nonexistent/model.onnx"));
}

TEST_CASE("an unsupported operator error names the node and its op type and opset",
          "[onnx][errors]") {
    ModelBuilder b = conv_relu(15);
    b.node("Softsign", {"y"}, "z", "softsign7");
    CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                      Contains("m.onnx") && Contains("'softsign7'") && Contains("'Softsign'") &&
                          Contains("opset 15") && Contains("Supported op types"));
    ModelBuilder custom = conv_relu();
    custom.node("Relu", {"y"}, "z", "myrelu").set_domain("com.example");
    CHECK_THROWS_WITH(import_onnx_bytes(custom.bytes(), "m.onnx"),
                      Contains("'myrelu'") && Contains("com.example"));
}

TEST_CASE("a dynamic channel or spatial dimension is refused while a symbolic batch is bound",
          "[onnx][errors]") {
    CHECK_THROWS_WITH(import_onnx_bytes(conv_relu(13, 1, 0).bytes(), "m.onnx"),
                      Contains("dynamic width dimension") && Contains("'N'"));
    OnnxImportOptions options;
    options.batch = 5;
    CHECK(import_onnx_bytes(conv_relu(13, 0).bytes(), "m.onnx", options).batch() == 5);
    // A fixed batch is the model's own.
    CHECK(import_onnx_bytes(conv_relu(13, 3).bytes(), "m.onnx", options).batch() == 3);
}

TEST_CASE("opsets outside 11..17 are refused", "[onnx][errors]") {
    CHECK_NOTHROW(import_onnx_bytes(conv_relu(11).bytes(), "m"));
    CHECK_NOTHROW(import_onnx_bytes(conv_relu(17).bytes(), "m"));
    CHECK_THROWS_WITH(import_onnx_bytes(conv_relu(10).bytes(), "m"), Contains("opset 10"));
    CHECK_THROWS_WITH(import_onnx_bytes(conv_relu(18).bytes(), "m"), Contains("opset 18"));
}

TEST_CASE("asymmetric pads fold when the windows are the same and keep the rest otherwise",
          "[onnx][errors]") {
    auto model = [](int64_t width, std::vector<int64_t> pads) {
        ModelBuilder b(1, 1, 4, width);
        b.initializer("w", {1, 1, 3, 3}, ramp(9));
        auto& conv = b.node("Conv", {"x", "w"}, "y", "conv_asym");
        ModelBuilder::ints(conv, "pads", pads);
        ModelBuilder::ints(conv, "strides", {2, 2});
        return b.bytes();
    };
    // W = 5, pads (0, 1): out = (5 + 1 - 3) / 2 + 1 = 2 = (5 - 3) / 2 + 1: the extra column is
    // never read.
    const Graph ok = import_onnx_bytes(model(5, {0, 0, 0, 1}), "m");
    CHECK(ok.op(0).as<ConvAttrs>().pad_w == 0);
    CHECK(ok.output_shape().w == 2);
    // W = 4: the padded column adds a window, so it is a spatial_pad op of its own; H's equal
    // padding stays the convolution's.
    const Graph padded = import_onnx_bytes(model(4, {1, 0, 1, 1}), "m");
    REQUIRE(padded.size() == 2);
    CHECK(padded.op(0).kind == OpKind::SpatialPad);
    CHECK(padded.op(0).as<SpatialPadAttrs>() == SpatialPadAttrs{0, 0, 0, 1});
    CHECK(padded.op(0).name == "conv_asym:pad");
    CHECK(padded.op(1).as<ConvAttrs>().pad_h == 1);
    CHECK(padded.op(1).as<ConvAttrs>().pad_w == 0);
    CHECK(padded.output_shape() == Shape{1, 1, 2, 2});
}

TEST_CASE("padding a pool cannot take as zeros of its own is refused with the axis and pads",
          "[onnx][errors][spatial_pad]") {
    // x (1x1xSxS) -> `op` with pads (begin_h, begin_w, end_h, end_w), 3x3 of stride 2.
    auto model = [](const std::string& op, std::vector<int64_t> pads, int64_t count_include_pad,
                    int64_t ceil_mode, int64_t size = 4) {
        ModelBuilder b(1, 1, size, size);
        auto& pool = b.node(op, {"x"}, "y", "pool_asym");
        ModelBuilder::ints(pool, "kernel_shape", {3, 3});
        ModelBuilder::ints(pool, "strides", {2, 2});
        ModelBuilder::ints(pool, "pads", pads);
        if (op == "AveragePool") ModelBuilder::integer(pool, "count_include_pad", count_include_pad);
        ModelBuilder::integer(pool, "ceil_mode", ceil_mode);
        return b.bytes();
    };
    // An average that counts its padding takes the rest as zeros.
    const Graph counted = import_onnx_bytes(model("AveragePool", {0, 0, 1, 1}, 1, 0), "m");
    REQUIRE(counted.size() == 2);
    CHECK(counted.op(0).kind == OpKind::SpatialPad);
    // One that does not count it, longer at the end, is ceil_mode (TensorFlow's SAME average):
    // the last window of a 4x4 input averages its 2x2 real corner.
    const Graph uncounted = import_onnx_bytes(model("AveragePool", {0, 0, 1, 1}, 0, 0), "m");
    REQUIRE(uncounted.size() == 1);
    CHECK(uncounted.op(0).as<PoolAttrs>().ceil_mode);
    CHECK_FALSE(uncounted.op(0).as<PoolAttrs>().count_include_pad);
    HostTensor ramp_input(uncounted.input_shape());
    for (size_t i = 0; i < ramp_input.data.size(); ++i) ramp_input.data[i] = float(i * i % 7);
    const HostTensor averaged = reference_run(uncounted, ramp_input);
    REQUIRE(averaged.shape == Shape{1, 1, 2, 2});
    const auto& v = ramp_input.data;  // rows of 4
    CHECK(averaged.at(0, 0, 1, 1) == Approx((v[10] + v[11] + v[14] + v[15]) / 4.0f));
    CHECK(averaged.at(0, 0, 0, 1) == Approx((v[2] + v[3] + v[6] + v[7] + v[10] + v[11]) / 6.0f));
    CHECK_THROWS_WITH(import_onnx_bytes(model("AveragePool", {0, 0, 1, 1}, 1, 1), "m.onnx"),
                      Contains("'pool_asym'") && Contains("asymmetric padding along H"));
    CHECK_THROWS_WITH(import_onnx_bytes(model("AveragePool", {1, 1, 0, 0}, 0, 0, 5), "m.onnx"),
                      Contains("'pool_asym'") && Contains("asymmetric padding along H (begin 1, "
                                                          "end 0)"));
    // -inf longer at the end is ceil_mode too; longer at the start is not expressible.
    const Graph ceil = import_onnx_bytes(model("MaxPool", {0, 0, 1, 1}, 0, 0), "m");
    REQUIRE(ceil.size() == 1);
    CHECK(ceil.op(0).as<PoolAttrs>().ceil_mode);
    CHECK(ceil.op(0).as<PoolAttrs>().pad_h == 0);
    CHECK(ceil.output_shape() == Shape{1, 1, 2, 2});
    CHECK_THROWS_WITH(import_onnx_bytes(model("MaxPool", {1, 1, 0, 0}, 0, 0, 5), "m.onnx"),
                      Contains("'pool_asym'") && Contains("asymmetric padding along H (begin 1, "
                                                          "end 0)"));
}

TEST_CASE("a zero Pad folds into a Conv's padding, or is its own op before pools that pad "
          "otherwise",
          "[onnx][spatial_pad]") {
    // x (1x1x5x5) -> Pad 1 on every side -> `op` (3x3, stride 1) with pads `own`.
    auto model = [](const std::string& op, int64_t own, std::vector<int64_t> pads) {
        ModelBuilder b(1, 1, 5, 5);
        b.int_initializer("pads", pads);
        b.node("Pad", {"x", "pads"}, "padded", "pad");
        if (op == "Conv") b.initializer("w", {1, 1, 3, 3}, ramp(9));
        auto& n = b.node(op, op == "Conv" ? std::vector<std::string>{"padded", "w"}
                                          : std::vector<std::string>{"padded"},
                         "y", "consumer");
        ModelBuilder::ints(n, "kernel_shape", {3, 3});
        ModelBuilder::ints(n, "pads", {own, own, own, own});
        return b.bytes();
    };
    const std::vector<int64_t> one{0, 0, 1, 1, 0, 0, 1, 1};
    const Graph conv = import_onnx_bytes(model("Conv", 1, one), "m");
    REQUIRE(conv.size() == 1);
    CHECK(conv.op(0).as<ConvAttrs>().pad_h == 2);
    // An average pool with padding of its own would not count the Pad's zeros as it must.
    const Graph avg = import_onnx_bytes(model("AveragePool", 1, one), "m");
    REQUIRE(avg.size() == 2);
    CHECK(avg.op(0).as<SpatialPadAttrs>() == SpatialPadAttrs{1, 1, 1, 1});
    CHECK(avg.op(1).as<PoolAttrs>().pad_h == 1);
    const Graph avg_alone = import_onnx_bytes(model("AveragePool", 0, one), "m");
    REQUIRE(avg_alone.size() == 1);
    CHECK(avg_alone.op(0).as<PoolAttrs>().count_include_pad);
    // A max pool's padding is -inf, the Pad's zeros are values.
    const Graph max = import_onnx_bytes(model("MaxPool", 0, one), "m");
    REQUIRE(max.size() == 2);
    CHECK(max.op(0).kind == OpKind::SpatialPad);
    // A crop under the conv's own padding is its own op: the conv's zeros stand after the crop.
    const Graph crop = import_onnx_bytes(model("Conv", 1, {0, 0, -1, 0, 0, 0, 0, 0}), "m");
    REQUIRE(crop.size() == 2);
    CHECK(crop.op(0).as<SpatialPadAttrs>() == SpatialPadAttrs{-1, 0, 0, 0});
    CHECK(crop.op(0).name == "pad");
    CHECK(crop.output_shape() == Shape{1, 1, 4, 5});
}

TEST_CASE("pads and slices that are not a zero spatial pad or crop are refused",
          "[onnx][errors][spatial_pad]") {
    auto pad_model = [](std::vector<int64_t> pads, float value, const std::string& mode) {
        ModelBuilder b(1, 1, 5, 5);
        b.int_initializer("pads", pads);
        b.initializer("value", {}, {value});
        auto& pad = b.node("Pad", {"x", "pads", "value"}, "padded", "pad");
        if (!mode.empty()) {
            auto* a = pad.add_attribute();
            a->set_name("mode");
            a->set_type(onnx::AttributeProto::STRING);
            a->set_s(mode);
        }
        b.node("Relu", {"padded"}, "y", "relu");
        return b.bytes();
    };
    const Graph cropped = import_onnx_bytes(pad_model({0, 0, -1, 2, 0, 0, 1, -3}, 0.0f, ""), "m");
    REQUIRE(cropped.size() == 2);
    CHECK(cropped.op(0).as<SpatialPadAttrs>() == SpatialPadAttrs{-1, 1, 2, -3});
    CHECK(cropped.op(0).name == "pad");
    CHECK(cropped.output_shape() == Shape{1, 1, 5, 4});
    CHECK_THROWS_WITH(import_onnx_bytes(pad_model({0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, "reflect"), "m"),
                      Contains("'pad'") && Contains("only constant (zero) padding"));
    CHECK_THROWS_WITH(import_onnx_bytes(pad_model({0, 0, 1, 1, 0, 0, 1, 1}, 0.5f, ""), "m"),
                      Contains("'pad'") && Contains("only padding with zeros"));
    CHECK_THROWS_WITH(import_onnx_bytes(pad_model({0, 1, 0, 0, 0, 0, 0, 0}, 0.0f, ""), "m"),
                      Contains("'pad'") && Contains("only spatial (H, W) padding"));
    CHECK_THROWS_WITH(import_onnx_bytes(pad_model({0, 0, -3, 0, 0, 0, -2, 0}, 0.0f, ""), "m"),
                      Contains("'pad'") && Contains("leaves 0x5"));
    const float lowest = -std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH(import_onnx_bytes(pad_model({0, 0, -1, 0, 0, 0, 1, 0}, lowest, ""), "m"),
                      Contains("'pad'") && Contains("cropping) with -inf"));

    auto slice_model = [](std::vector<int64_t> starts, std::vector<int64_t> ends,
                          std::vector<int64_t> axes, std::vector<int64_t> steps) {
        ModelBuilder b(1, 4, 6, 6);
        b.int_initializer("starts", starts);
        b.int_initializer("ends", ends);
        b.int_initializer("axes", axes);
        b.int_initializer("steps", steps);
        b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, "y", "slice");
        return b.bytes();
    };
    const Graph sliced = import_onnx_bytes(slice_model({1, 1, -2}, {3, 100, 5}, {1, 2, 3}, {1, 1, 1}), "m");
    REQUIRE(sliced.size() == 2);
    CHECK(sliced.op(0).kind == OpKind::ChannelSlice);
    CHECK(sliced.op(1).as<SpatialPadAttrs>() == SpatialPadAttrs{-1, 0, -4, -1});
    CHECK(sliced.output_shape() == Shape{1, 2, 5, 1});
    // A stepped slice (YOLO's Focus) is a strided_slice op (issue 28), no longer refused.
    const Graph stepped = import_onnx_bytes(slice_model({0}, {6}, {2}, {2}), "m");
    REQUIRE(stepped.size() == 1);
    CHECK(stepped.op(0).kind == OpKind::StridedSlice);
    CHECK(stepped.output_shape() == Shape{1, 4, 3, 6});
    CHECK_THROWS_WITH(import_onnx_bytes(slice_model({1}, {2}, {0}, {1}), "m"),
                      Contains("'slice'") && Contains("slicing axis 0"));
    CHECK_THROWS_WITH(import_onnx_bytes(slice_model({4}, {2}, {3}, {1}), "m"),
                      Contains("'slice'") && Contains("slicing axis 3 [4, 2)"));
}

TEST_CASE("a reduction after an H slice reduces the cropped tensor", "[onnx][spatial_pad]") {
    // x (1x2x4x3) -> Slice rows [1, 3) -> ReduceMean over H and W.
    ModelBuilder b(1, 2, 4, 3);
    b.int_initializer("starts", {1});
    b.int_initializer("ends", {3});
    b.int_initializer("axes", {2});
    b.node("Slice", {"x", "starts", "ends", "axes"}, "rows", "slice");
    auto& mean = b.node("ReduceMean", {"rows"}, "y", "mean");
    ModelBuilder::ints(mean, "axes", {2, 3});
    const Graph g = import_onnx_bytes(b.bytes(), "m");
    REQUIRE(g.size() == 2);
    CHECK(g.op(0).as<SpatialPadAttrs>() == SpatialPadAttrs{-1, -1, 0, 0});
    CHECK(g.op(1).as<PoolAttrs>().global);
    REQUIRE(g.output_shape() == Shape{1, 2, 1, 1});
    HostTensor x(g.input_shape());
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = float(i * i % 11);
    const HostTensor y = reference_run(g, x);
    for (int c = 0; c < 2; ++c) {
        float sum = 0.0f;
        for (int h = 1; h < 3; ++h)
            for (int w = 0; w < 3; ++w) sum += x.at(0, c, h, w);
        CHECK(y.at(0, c, 0, 0) == Approx(sum / 6.0f));
    }
}

TEST_CASE("readers of a Pad and of its Identity and Dropout share one spatial_pad op",
          "[onnx][spatial_pad]") {
    // x (1x1x2x2) -> Pad 1 on every side -> Relu, Identity -> Sigmoid, Dropout -> Tanh; summed.
    ModelBuilder b(1, 1, 2, 2);
    b.int_initializer("pads", {0, 0, 1, 1, 0, 0, 1, 1});
    b.node("Pad", {"x", "pads"}, "padded", "pad");
    b.node("Identity", {"padded"}, "alias", "identity");
    b.node("Dropout", {"padded"}, "dropped", "dropout");
    b.node("Relu", {"padded"}, "r", "relu");
    b.node("Sigmoid", {"alias"}, "s", "sigmoid");
    b.node("Tanh", {"dropped"}, "t", "tanh");
    b.node("Sum", {"r", "s", "t"}, "y", "sum");
    const Graph g = import_onnx_bytes(b.bytes(), "m");
    int pads = 0;
    for (int i = 0; i < g.size(); ++i) pads += g.op(i).kind == OpKind::SpatialPad;
    CHECK(pads == 1);
    REQUIRE(g.output_shape() == Shape{1, 1, 4, 4});
    HostTensor x(g.input_shape());
    x.data = {-1.0f, 2.0f, 0.5f, 3.0f};
    const HostTensor y = reference_run(g, x);
    auto expected = [](float v) { return std::max(v, 0.0f) + 1.0f / (1.0f + std::exp(-v)) + std::tanh(v); };
    CHECK(y.at(0, 0, 0, 0) == Approx(expected(0.0f)));
    CHECK(y.at(0, 0, 1, 1) == Approx(expected(-1.0f)));
    CHECK(y.at(0, 0, 2, 2) == Approx(expected(3.0f)));
    CHECK(y.at(0, 0, 3, 1) == Approx(expected(0.0f)));
}

TEST_CASE("Pad(x) * Pad(sigmoid(x)) keeps the padding (not fused into a SiLU of x)",
          "[onnx][spatial_pad]") {
    ModelBuilder b(1, 1, 2, 2);
    b.int_initializer("pads", {0, 0, 1, 0, 0, 0, 0, 1});
    b.node("Sigmoid", {"x"}, "gate", "sigmoid");
    b.node("Pad", {"x", "pads"}, "px", "pad_x");
    b.node("Pad", {"gate", "pads"}, "pgate", "pad_gate");
    b.node("Mul", {"px", "pgate"}, "y", "mul");
    const Graph g = import_onnx_bytes(b.bytes(), "m");
    REQUIRE(g.output_shape() == Shape{1, 1, 3, 3});
    HostTensor x(g.input_shape());
    x.data = {-1.0f, 2.0f, 0.5f, 3.0f};
    const HostTensor y = reference_run(g, x);
    CHECK(y.at(0, 0, 0, 0) == 0.0f);
    CHECK(y.at(0, 0, 1, 2) == 0.0f);
    CHECK(y.at(0, 0, 2, 1) == Approx(3.0f / (1.0f + std::exp(-3.0f))));
}

TEST_CASE("a Softmax before opset 13 judges the padded or cropped map size",
          "[onnx][errors][spatial_pad]") {
    // x (1x3xSxS) -> Pad `pads` -> Softmax(axis 1) at opset 11: over C*H*W, iostune's channel
    // softmax only for a 1x1 map.
    auto model = [](int64_t size, std::vector<int64_t> pads) {
        ModelBuilder b(1, 3, size, size, 11);
        b.int_initializer("pads", pads);
        b.node("Pad", {"x", "pads"}, "padded", "pad");
        b.node("Softmax", {"padded"}, "y", "softmax");
        return b.bytes();
    };
    // 3x3 cropped to its centre pixel.
    const Graph g = import_onnx_bytes(model(3, {0, 0, -1, -1, 0, 0, -1, -1}), "m");
    REQUIRE(g.output_shape() == Shape{1, 3, 1, 1});
    HostTensor x(g.input_shape());
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = float(i % 5);
    const HostTensor y = reference_run(g, x);
    const float e0 = std::exp(x.at(0, 0, 1, 1)), e1 = std::exp(x.at(0, 1, 1, 1)),
                e2 = std::exp(x.at(0, 2, 1, 1));
    CHECK(y.at(0, 1, 0, 0) == Approx(e1 / (e0 + e1 + e2)));
    // 1x1 padded to 3x3.
    CHECK_THROWS_WITH(import_onnx_bytes(model(1, {0, 0, 1, 1, 0, 0, 1, 1}), "m"),
                      Contains("'softmax'") && Contains("softmax along axis 1 of a 4-D tensor"));
}

TEST_CASE("a Pad with -inf feeds only a MaxPool; other pad values are refused",
          "[onnx][errors]") {
    // x -> Pad(value) -> `consumer` (a 3x3 window of stride 1): the pad is 1 on every side.
    auto model = [](float value, const std::string& consumer) {
        ModelBuilder b(1, 1, 5, 5);
        b.initializer("w", {1, 1, 3, 3}, ramp(9));
        b.initializer("value", {}, {value});
        b.int_initializer("pads", {0, 0, 1, 1, 0, 0, 1, 1});
        b.node("Pad", {"x", "pads", "value"}, "padded", "pad");
        if (consumer == "Conv") {
            b.node("Conv", {"padded", "w"}, "y", "consumer");
        } else {
            auto& pool = b.node(consumer, {"padded"}, "y", "consumer");
            ModelBuilder::ints(pool, "kernel_shape", {3, 3});
        }
        return b.bytes();
    };
    const float lowest = -std::numeric_limits<float>::infinity();
    const Graph pooled = import_onnx_bytes(model(lowest, "MaxPool"), "m.onnx");
    REQUIRE(pooled.size() == 1);
    CHECK(pooled.op(0).kind == OpKind::MaxPool);
    CHECK(pooled.op(0).as<PoolAttrs>().pad_h == 1);
    CHECK(pooled.output_shape() == Shape{1, 1, 5, 5});
    CHECK_THROWS_WITH(import_onnx_bytes(model(lowest, "Conv"), "m.onnx"),
                      Contains("'consumer'") && Contains("Pad node with -inf") &&
                          Contains("only into a following MaxPool"));
    CHECK_THROWS_WITH(import_onnx_bytes(model(lowest, "AveragePool"), "m.onnx"),
                      Contains("'consumer'") && Contains("Pad node with -inf"));
    CHECK_THROWS_WITH(import_onnx_bytes(model(1.0f, "MaxPool"), "m.onnx"),
                      Contains("'pad'") && Contains("only padding with zeros (or with -inf"));
}

TEST_CASE("used MaxPool indices and non-channel concat and dangling inputs are refused",
          "[onnx][errors]") {
    {
        ModelBuilder b = conv_relu();
        auto& pool = b.node("MaxPool", {"y"}, "p", "pool");
        pool.add_output("indices");
        ModelBuilder::ints(pool, "kernel_shape", {2, 2});
        b.node("Add", {"p", "indices"}, "z");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m"),
                          Contains("'pool'") && Contains("indices"));
    }
    {
        ModelBuilder b = conv_relu();
        auto& cat = b.node("Concat", {"y", "y"}, "z", "cat");
        ModelBuilder::integer(cat, "axis", 2);
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m"),
                          Contains("'cat'") && Contains("axis 2"));
    }
    {
        ModelBuilder b = conv_relu();
        b.node("Relu", {"later"}, "z", "early");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m"),
                          Contains("'early'") && Contains("topological"));
    }
}
