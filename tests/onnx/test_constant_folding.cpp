// Shape arithmetic folded at import (models built node by node, no PyTorch needed): "same"
// padding computed from the input's shape with Ceil/Max/Div or Clip (timm's pad_same), a
// classifier Reshape whose batch comes from Shape, single folded ops (Clip in both forms, Mod,
// Round, comparisons) and the clear errors for what folding cannot turn into supported ops.
#include <catch2/catch.hpp>

#include "onnx.pb.h"
#include "src/error.h"
#include "src/onnx/constant_folding.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "src/weights.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_test;
using Catch::Matchers::Contains;

void float_scalar(ModelBuilder& b, const std::string& name, float value) {
    b.initializer(name, {}, {value});
}

using onnx_import::ConstTensor;

ConstTensor int_tensor(std::vector<int64_t> values) {
    ConstTensor t;
    t.is_float = false;
    t.dims = {int64_t(values.size())};
    t.ints = std::move(values);
    return t;
}
ConstTensor float_tensor(std::vector<float> values) {
    ConstTensor t;
    t.dims = {int64_t(values.size())};
    t.floats = std::move(values);
    return t;
}

onnx::NodeProto folding_node(const std::string& op) {
    onnx::NodeProto node;
    node.set_op_type(op);
    node.set_name(op);
    node.add_output("out");
    return node;
}
void float_attribute(onnx::NodeProto& node, const std::string& name, float value) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
}

// One node folded directly (nullptr: an absent optional input).
ConstTensor fold(const onnx::NodeProto& node, const std::vector<const ConstTensor*>& inputs,
                 int opset = 13) {
    auto outputs = onnx_import::fold_node(node, inputs, opset, "node '" + node.name() + "'");
    REQUIRE(outputs.size() == 1);
    return outputs[0];
}

// timm's Conv2dSame on a 9x9 input, kernel 5, stride 2, as PyTorch exports it:
// pad = clamp((ceil(in / 2) - 1) * 2 + 5 - in, min=0) = 4 (floats), pads = pad // 2 and the
// rest, then Pad and an unpadded Conv. `clip_inputs` are Clip's inputs after the first.
ModelBuilder timm_same_conv(int opset, std::vector<std::string> clip_inputs) {
    ModelBuilder b(1, 2, 9, 9, opset);
    b.initializer("w", {3, 2, 5, 5}, ramp(150, 0.01f, -0.7f));
    b.int_initializer("hw_begin", {2});
    b.int_initializer("hw_end", {4});
    b.int_initializer("zeros", {0, 0});
    b.int_initializer("two_i", {2});
    float_scalar(b, "zero", 0.0f);
    float_scalar(b, "big", 100.0f);
    float_scalar(b, "one", 1.0f);
    float_scalar(b, "stride", 2.0f);
    float_scalar(b, "reach", 5.0f);  // (kernel - 1) * dilation + 1
    b.node("Shape", {"x"}, "shape");
    b.node("Slice", {"shape", "hw_begin", "hw_end"}, "hw");
    ModelBuilder::integer(b.node("Cast", {"hw"}, "hw_f"), "to", 1);
    b.node("Div", {"hw_f", "stride"}, "ratio");
    b.node("Ceil", {"ratio"}, "out_f");
    b.node("Sub", {"out_f", "one"}, "out_m1");
    b.node("Mul", {"out_m1", "stride"}, "span");
    b.node("Add", {"span", "reach"}, "extent");
    b.node("Sub", {"extent", "hw_f"}, "excess");
    clip_inputs.insert(clip_inputs.begin(), "excess");
    b.node("Clip", clip_inputs, "total_f", "same_pad_clip");
    ModelBuilder::integer(b.node("Cast", {"total_f"}, "total"), "to", 7);
    b.node("Div", {"total", "two_i"}, "before");
    b.node("Sub", {"total", "before"}, "after");
    auto& pads = b.node("Concat", {"zeros", "before", "zeros", "after"}, "pads");
    ModelBuilder::integer(pads, "axis", 0);
    b.node("Pad", {"x", "pads"}, "padded");
    ModelBuilder::ints(b.node("Conv", {"padded", "w"}, "y", "conv_same"), "strides", {2, 2});
    return b;
}

}  // namespace

TEST_CASE("TensorFlow-style 'same' padding computed from the input shape folds into the Conv",
          "[onnx][folding]") {
    // pads = total / 2 before and total - total / 2 after, total = max(0, (ceil(in / 2) - 1) * 2
    // + 3 - in): as NASNet and EfficientNet ports compute them. in = 7 gives total 2, pads 1.
    ModelBuilder b(0, 2, 7, 7);
    b.initializer("w", {3, 2, 3, 3}, ramp(54, 0.01f));
    b.int_initializer("hw_begin", {2});
    b.int_initializer("hw_end", {4});
    b.int_initializer("zeros", {0, 0});
    b.int_initializer("one", {1});
    b.int_initializer("two", {2});
    b.int_initializer("kernel", {3});
    b.int_initializer("none", {0});
    float_scalar(b, "stride", 2.0f);
    b.node("Shape", {"x"}, "shape");
    b.node("Slice", {"shape", "hw_begin", "hw_end"}, "hw");
    auto& to_float = b.node("Cast", {"hw"}, "hw_f");
    ModelBuilder::integer(to_float, "to", 1);
    b.node("Div", {"hw_f", "stride"}, "ratio");
    b.node("Ceil", {"ratio"}, "out_f");
    auto& to_int = b.node("Cast", {"out_f"}, "out");
    ModelBuilder::integer(to_int, "to", 7);
    b.node("Sub", {"out", "one"}, "out_m1");
    b.node("Mul", {"out_m1", "two"}, "span");
    b.node("Add", {"span", "kernel"}, "reach");
    b.node("Sub", {"reach", "hw"}, "excess");
    b.node("Max", {"excess", "none"}, "total");
    b.node("Div", {"total", "two"}, "before");
    b.node("Sub", {"total", "before"}, "after");
    auto& pads = b.node("Concat", {"zeros", "before", "zeros", "after"}, "pads");
    ModelBuilder::integer(pads, "axis", 0);
    b.node("Pad", {"x", "pads"}, "padded");
    auto& conv = b.node("Conv", {"padded", "w"}, "y", "conv_same");
    ModelBuilder::ints(conv, "strides", {2, 2});
    OnnxImportOptions options;
    options.batch = 2;
    const Graph g = import_onnx_bytes(b.bytes(), "same.onnx", options);
    REQUIRE(g.size() == 1);
    CHECK(g.op(0).as<ConvAttrs>().pad_h == 1);
    CHECK(g.op(0).as<ConvAttrs>().pad_w == 1);
    CHECK(g.output_shape() == Shape{2, 3, 4, 4});
}

TEST_CASE("Range, ConstantOfShape, Equal, Where and Expand fold into pads", "[onnx][folding]") {
    // pads = [zeros(2), where(range(0, 2) == [0, 1], [1, 1], [5, 5]), zeros(2), expand(1, [2])]
    //      = [0, 0, 1, 1, 0, 0, 1, 1].
    ModelBuilder b(1, 2, 5, 5);
    b.initializer("w", {3, 2, 3, 3}, ramp(54, 0.01f));
    b.int_initializer("two", {2});
    b.int_initializer("zero", {0});
    b.int_initializer("one", {1});
    b.int_initializer("ramp", {0, 1});
    b.int_initializer("ones", {1, 1});
    b.int_initializer("fives", {5, 5});
    auto& zeros = b.node("ConstantOfShape", {"two"}, "zeros");
    auto* value = zeros.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    value->mutable_t()->add_dims(1);
    value->mutable_t()->add_int64_data(0);
    b.node("Squeeze", {"zero"}, "start");
    b.node("Squeeze", {"two"}, "limit");
    b.node("Squeeze", {"one"}, "delta");
    b.node("Range", {"start", "limit", "delta"}, "range");
    b.node("Equal", {"range", "ramp"}, "same");
    b.node("Where", {"same", "ones", "fives"}, "begin");
    b.node("Expand", {"one", "two"}, "end");
    auto& pads = b.node("Concat", {"zeros", "begin", "zeros", "end"}, "pads");
    ModelBuilder::integer(pads, "axis", 0);
    b.node("Pad", {"x", "pads"}, "padded");
    b.node("Conv", {"padded", "w"}, "y", "conv");
    const Graph g = import_onnx_bytes(b.bytes(), "pads.onnx");
    REQUIRE(g.size() == 1);
    CHECK(g.op(0).as<ConvAttrs>().pad_h == 1);
    CHECK(g.output_shape() == Shape{1, 3, 5, 5});
}

TEST_CASE("a classifier reshape to [batch from Shape, -1] keeps the batch symbolic",
          "[onnx][folding]") {
    ModelBuilder b(0, 2, 4, 4);
    b.initializer("w", {3, 2, 1, 1}, ramp(6));
    b.initializer("fc", {5, 3}, ramp(15, 0.05f));
    b.int_initializer("index0", {0});
    b.int_initializer("minus1", {-1});
    b.node("Conv", {"x", "w"}, "c");
    b.node("GlobalAveragePool", {"c"}, "p");
    b.node("Shape", {"p"}, "shape");
    auto& gather = b.node("Gather", {"shape", "index0"}, "batch");
    ModelBuilder::integer(gather, "axis", 0);
    auto& target = b.node("Concat", {"batch", "minus1"}, "target");
    ModelBuilder::integer(target, "axis", 0);
    b.node("Reshape", {"p", "target"}, "flat");
    auto& gemm = b.node("Gemm", {"flat", "fc"}, "y");
    ModelBuilder::integer(gemm, "transB", 1);
    OnnxImportOptions options;
    options.batch = 3;
    const Graph g = import_onnx_bytes(b.bytes(), "reshape.onnx", options);
    CHECK(g.output_shape() == Shape{3, 5, 1, 1});
    CHECK(g.op(g.output_id()).kind == OpKind::Linear);
    // Imported once, run at any batch.
    CHECK(g.with_batch(7).output_shape() == Shape{7, 5, 1, 1});
}

TEST_CASE("a per-channel constant Mul and Add after a Conv fold into its weights",
          "[onnx][folding]") {
    ModelBuilder b(1, 2, 3, 3);
    b.initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1});
    b.initializer("scale", {2, 1, 1}, {2, 3});
    b.initializer("shift", {1, 2, 1, 1}, {10, 20});
    b.node("Conv", {"x", "w"}, "c");
    b.node("Mul", {"c", "scale"}, "scaled");
    b.node("Add", {"scaled", "shift"}, "y");
    Graph g = import_onnx_bytes(b.bytes(), "affine.onnx");
    REQUIRE(g.size() == 1);
    HostTensor x(g.input_shape(), 1.0f);
    const HostTensor y = reference_run(g, x);
    CHECK(y.at(0, 0, 1, 1) == Approx(12.0f));
    CHECK(y.at(0, 1, 2, 0) == Approx(23.0f));
}

TEST_CASE("what folding leaves unsupported is one clear error", "[onnx][folding][errors]") {
    {
        ModelBuilder b(1, 2, 3, 3);
        b.node("Erf", {"x"}, "y", "lonely_erf");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'lonely_erf'") && Contains("GELU"));
    }
    {
        ModelBuilder b(1, 2, 3, 3);
        b.initializer("map", {1, 2, 3, 3}, ramp(18));
        b.node("Mul", {"x", "map"}, "y", "full_mul");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'full_mul'") && Contains("one value per channel"));
    }
    {
        ModelBuilder b(1, 2, 3, 3);
        auto& t = b.node("Transpose", {"x"}, "y", "odd_transpose");
        ModelBuilder::ints(t, "perm", {0, 1, 3, 2});
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'odd_transpose'") && Contains("perm [0, 1, 3, 2]"));
    }
}

TEST_CASE("timm's 'same' padding through Clip folds into the Conv and computes as explicit pads",
          "[onnx][folding]") {
    // The same convolution with its pads written out: the oracle for the folded one.
    ModelBuilder explicit_pads(1, 2, 9, 9);
    explicit_pads.initializer("w", {3, 2, 5, 5}, ramp(150, 0.01f, -0.7f));
    auto& conv = explicit_pads.node("Conv", {"x", "w"}, "y", "conv");
    ModelBuilder::ints(conv, "strides", {2, 2});
    ModelBuilder::ints(conv, "pads", {2, 2, 2, 2});
    const Graph oracle = import_onnx_bytes(explicit_pads.bytes(), "explicit.onnx");
    HostTensor x(oracle.input_shape());
    for (size_t k = 0; k < x.data.size(); ++k) x.data[k] = float(k % 13) * 0.25f - 1.5f;
    const HostTensor want = reference_run(oracle, x);

    // PyTorch's clamp(min=0) (max absent), a max bound that does not bind, and min absent.
    const std::vector<std::pair<int, std::vector<std::string>>> forms = {
        {11, {"zero"}}, {13, {"zero", ""}}, {17, {"zero", "big"}}, {13, {"", "big"}}};
    for (const auto& [opset, clip_inputs] : forms) {
        INFO("opset " << opset << ", Clip inputs " << clip_inputs.size() + 1);
        ModelBuilder b = timm_same_conv(opset, clip_inputs);
        const Graph g = import_onnx_bytes(b.bytes(), "timm_same.onnx");
        REQUIRE(g.size() == 1);
        CHECK(g.op(0).as<ConvAttrs>().pad_h == 2);
        CHECK(g.op(0).as<ConvAttrs>().pad_w == 2);
        REQUIRE(g.output_shape() == Shape{1, 3, 5, 5});
        CHECK(reference_run(g, x).data == want.data);
    }
}

TEST_CASE("Clip folds with attribute bounds (opset 6) and optional input bounds (opset 11+)",
          "[onnx][folding]") {
    const ConstTensor floats = float_tensor({-3.0f, 2.5f, 9.0f});
    const ConstTensor ints = int_tensor({-3, 2, 9});
    SECTION("attributes: min only, max only, both") {
        auto low = folding_node("Clip");
        float_attribute(low, "min", 0.0f);
        CHECK(fold(low, {&floats}, 6).floats == std::vector<float>{0.0f, 2.5f, 9.0f});
        auto high = folding_node("Clip");
        float_attribute(high, "max", 4.0f);
        CHECK(fold(high, {&floats}, 6).floats == std::vector<float>{-3.0f, 2.5f, 4.0f});
        auto both = folding_node("Clip");
        float_attribute(both, "min", -1.0f);
        float_attribute(both, "max", 2.0f);
        CHECK(fold(both, {&floats}, 6).floats == std::vector<float>{-1.0f, 2.0f, 2.0f});
        CHECK(fold(folding_node("Clip"), {&floats}, 6).floats == floats.floats);
    }
    SECTION("inputs: integers and floats, either bound absent") {
        const ConstTensor zero = int_tensor({0}), four = int_tensor({4});
        const auto clip = folding_node("Clip");
        CHECK(fold(clip, {&ints, &zero}).ints == std::vector<int64_t>{0, 2, 9});
        CHECK(fold(clip, {&ints, nullptr, &four}).ints == std::vector<int64_t>{-3, 2, 4});
        CHECK(fold(clip, {&ints, &zero, &four}).ints == std::vector<int64_t>{0, 2, 4});
        CHECK(fold(clip, {&ints}).ints == ints.ints);
        // min > max: every value becomes max, as ONNX and torch.clamp define it.
        CHECK(fold(clip, {&ints, &four, &zero}).ints == std::vector<int64_t>{0, 0, 0});
        const ConstTensor half = float_tensor({0.5f});
        const ConstTensor folded = fold(clip, {&floats, &half, nullptr}, 11);
        CHECK(folded.is_float);
        CHECK(folded.dims == floats.dims);
        CHECK(folded.floats == std::vector<float>{0.5f, 2.5f, 9.0f});
    }
    SECTION("bounds of the wrong type or size are clear errors") {
        const auto clip = folding_node("Clip");
        const ConstTensor half = float_tensor({0.5f}), pair = int_tensor({0, 1});
        CHECK_THROWS_WITH(fold(clip, {&ints, &half}),
                          Contains("node 'Clip'") && Contains("min and its input differ in type"));
        CHECK_THROWS_WITH(fold(clip, {&ints, nullptr, &pair}),
                          Contains("Clip's max must be a scalar"));
    }
}

TEST_CASE("Mod, Round, ordered comparisons and And/Or/Xor fold", "[onnx][folding]") {
    const ConstTensor a = int_tensor({-7, 7, -7, 7}), b = int_tensor({3, -3, -3, 3});
    auto mod = folding_node("Mod");
    CHECK(fold(mod, {&a, &b}).ints == std::vector<int64_t>{2, -2, -1, 1});  // Python's %
    const ConstTensor zero = int_tensor({0});
    CHECK_THROWS_WITH(fold(mod, {&a, &zero}), Contains("integer modulo by zero"));
    const ConstTensor x = float_tensor({-7.5f, 7.5f}), y = float_tensor({2.0f});
    CHECK_THROWS_WITH(fold(mod, {&x, &y}), Contains("fmod=1"));
    ModelBuilder::integer(mod, "fmod", 1);
    CHECK(fold(mod, {&a, &b}).ints == std::vector<int64_t>{-1, 1, -1, 1});  // C's %
    CHECK(fold(mod, {&x, &y}).floats == std::vector<float>{-1.5f, 1.5f});

    const ConstTensor halves = float_tensor({0.5f, 1.5f, 2.5f, -2.5f, 2.4f});
    CHECK(fold(folding_node("Round"), {&halves}).floats ==
          std::vector<float>{0.0f, 2.0f, 2.0f, -2.0f, 2.0f});

    const ConstTensor p = int_tensor({1, 2, 3}), q = int_tensor({2});
    CHECK(fold(folding_node("LessOrEqual"), {&p, &q}).ints == std::vector<int64_t>{1, 1, 0});
    const ConstTensor result = fold(folding_node("GreaterOrEqual"), {&p, &q});
    CHECK_FALSE(result.is_float);
    CHECK(result.ints == std::vector<int64_t>{0, 1, 1});
    const ConstTensor t = int_tensor({1, 1, 0, 0}), f = int_tensor({1, 0, 1, 0});
    CHECK(fold(folding_node("And"), {&t, &f}).ints == std::vector<int64_t>{1, 0, 0, 0});
    CHECK(fold(folding_node("Or"), {&t, &f}).ints == std::vector<int64_t>{1, 1, 1, 0});
    CHECK(fold(folding_node("Xor"), {&t, &f}).ints == std::vector<int64_t>{0, 1, 1, 0});
}

TEST_CASE("an op over folded constants that folding does not know is one clear error",
          "[onnx][folding][errors]") {
    // Sigmoid is imported only over tensors computed from the input.
    {
        ModelBuilder b = timm_same_conv(13, {"zero"});
        b.node("Sigmoid", {"total_f"}, "gate", "shape_sigmoid");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("m.onnx") && Contains("'shape_sigmoid'") &&
                              Contains("(Sigmoid, opset 13)") && Contains("is a constant"));
    }
    // Sin is neither folded nor imported.
    {
        ModelBuilder b = timm_same_conv(13, {"zero"});
        b.node("Sin", {"total_f"}, "wave", "shape_sin");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'shape_sin'") && Contains("'Sin'") &&
                              Contains("cannot import"));
    }
}
