// Shape arithmetic folded at import (models built node by node, no PyTorch needed): "same"
// padding computed from the input's shape with Ceil/Max/Div, a classifier Reshape whose batch
// comes from Shape, and the clear errors for what folding cannot turn into supported ops.
#include <catch2/catch.hpp>

#include "onnx.pb.h"
#include "src/error.h"
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
