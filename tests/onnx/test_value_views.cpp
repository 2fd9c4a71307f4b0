// The importer's view rules (src/onnx/value_views.h) on their own, and ONNX graphs built node by
// node that use them: the ops a view becomes, and one clear error where a view is read in a way
// iostune does not compute.
#include <catch2/catch.hpp>

#include <cmath>

#include "src/error.h"
#include "src/onnx/onnx_import.h"
#include "src/onnx/value_views.h"
#include "src/reference/reference.h"
#include "tests/onnx/onnx_test_support.h"

namespace {

using namespace iostune;
using namespace iostune::onnx_import;
using namespace iostune::onnx_test;
using Catch::Contains;
using Dims = std::vector<int64_t>;

}  // namespace

TEST_CASE("a transpose that only moves axes of size 1 reads the tensor in order",
          "[onnx][views]") {
    // timm's rSoftMax with one cardinal group: [N, 1, radix, r] transposed to [N, radix, 1, r].
    CHECK(normalized({{2, 1, 4, 3}, {0, 2, 1, 3}}) == ViewShape{{2, 4, 1, 3}, {}});
    CHECK(normalized({{2, 2, 4, 3}, {0, 2, 1, 3}}).transposed());
    // Composition: ONNX Transpose after a transposed view.
    const auto t = transposed({{2, 2, 4, 3}, {0, 2, 1, 3}}, {0, 3, 1, 2});
    REQUIRE(t);
    CHECK(t->perm == Dims{0, 3, 2, 1});
    CHECK(t->logical() == Dims{2, 3, 4, 2});
    CHECK_FALSE(transposed({{2, 2, 4, 3}, {}}, {0, 1, 1, 2}));
}

TEST_CASE("reshape targets resolve 0, -1 and the batch as ONNX and the importer bind them",
          "[onnx][views]") {
    CHECK(reshape_target({0, 4, -1}, {2, 12, 3, 3}, false, 2) == Dims{2, 4, 27});
    CHECK(reshape_target({1, -1}, {3, 5, 2, 2}, false, 3) == Dims{3, 20});  // export batch 1
    CHECK_FALSE(reshape_target({2, 7, -1}, {2, 12, 3, 3}, false, 2));
    CHECK_FALSE(reshape_target({2, -1, -1}, {2, 12, 3, 3}, false, 2));
    CHECK_FALSE(reshape_target({2, 0, 5}, {2, 12, 3, 3}, true, 2));
}

TEST_CASE("a softmax over a branch axis is a radix softmax, its result a view of the output",
          "[onnx][views]") {
    const Shape attn{2, 24, 1, 1};
    // ResNeSt, cardinality 2, radix 3, r 4: [N, 2, 3, 4] transposed, softmax over axis 1.
    const auto p = plan_radix_softmax(attn, {{2, 2, 3, 4}, {0, 2, 1, 3}}, 1);
    REQUIRE(p);
    CHECK(p->attrs == RadixSoftmaxAttrs{3, 2});
    CHECK(p->result == ViewShape{{2, 3, 2, 4}, {}});
    // The opset-11 export: transposed once more so the branch axis is last.
    const auto last = plan_radix_softmax(attn, {{2, 2, 3, 4}, {0, 3, 1, 2}}, 3);
    REQUIRE(last);
    CHECK(last->attrs == RadixSoftmaxAttrs{3, 2});
    CHECK(last->result.logical() == Dims{2, 4, 2, 3});
    // SKNet: [N, paths, C, H, W] over a map.
    const auto sk = plan_radix_softmax({2, 12, 5, 7}, {{2, 3, 4, 5, 7}, {}}, 1);
    REQUIRE(sk);
    CHECK(sk->attrs == RadixSoftmaxAttrs{3, 1});
    // Not over whole planes (axis 3 of [N, radix, C, H, W] splits a plane), not the batch.
    CHECK_FALSE(plan_radix_softmax({2, 12, 5, 7}, {{2, 3, 4, 5, 7}, {}}, 3));
    CHECK_FALSE(plan_radix_softmax(attn, {{2, 24}, {}}, 0));
}

TEST_CASE("6-D pixel shuffle views match depth_to_space / space_to_depth in both orders",
          "[onnx][views]") {
    const Shape s{1, 8, 4, 6};
    using M = DepthSpaceMatch;
    const auto match = [&](Dims dims, Dims perm) { return match_depth_space(s, {dims, perm}); };
    const auto is = [](const std::optional<M>& m, OpKind kind, DepthSpaceAttrs a) {
        return m && m->kind == kind && m->attrs == a;
    };
    CHECK(is(match({1, 8, 2, 2, 3, 2}, {0, 1, 3, 5, 2, 4}), OpKind::SpaceToDepth,
             {2, BlockOrder::Crd}));
    CHECK(is(match({1, 8, 2, 2, 3, 2}, {0, 3, 5, 1, 2, 4}), OpKind::SpaceToDepth,
             {2, BlockOrder::Dcr}));
    CHECK(is(match({1, 2, 2, 2, 4, 6}, {0, 1, 4, 2, 5, 3}), OpKind::DepthToSpace,
             {2, BlockOrder::Crd}));
    CHECK(is(match({1, 2, 2, 2, 4, 6}, {0, 3, 4, 1, 5, 2}), OpKind::DepthToSpace,
             {2, BlockOrder::Dcr}));
    CHECK_FALSE(match({1, 2, 2, 2, 4, 6}, {0, 1, 2, 3, 5, 4}));
}

TEST_CASE("ONNX slices with steps clamp as ONNX does and compose", "[onnx][views]") {
    const Shape s{2, 6, 7, 9};
    const auto big = std::numeric_limits<int64_t>::max();
    // x[:, ::2, 1::3, ::-1] as one Slice.
    const auto a = strided_slice_of(s, {0, 1, -1}, {big, big, -big}, {1, 2, 3}, {2, 3, -1}, "n");
    REQUIRE(a);
    CHECK(*a == StridedSliceAttrs{0, 2, 3, 1, 3, 2, 8, -1, 9});
    // A step past the extent reads one element.
    CHECK(strided_slice_of(s, {2}, {big}, {2}, {100}, "n") ==
          StridedSliceAttrs{0, 1, 6, 2, 1, 1, 0, 1, 9});
    CHECK_FALSE(strided_slice_of(s, {5}, {3}, {2}, {1}, "n"));  // empty
    CHECK_THROWS_WITH(strided_slice_of(s, {0}, {2}, {0}, {2}, "node"),
                      Contains("node: slicing the batch axis"));
    CHECK_THROWS_WITH(strided_slice_of(s, {0}, {2}, {2}, {0}, "node"), Contains("step of 0"));
    // [::2] of [1::2] is [1::4].
    const StridedSliceAttrs odd{1, 2, 3, 0, 1, 7, 0, 1, 9};
    const StridedSliceAttrs every_other{0, 2, 2, 0, 1, 7, 0, 1, 9};
    CHECK(composed(odd, every_other) == StridedSliceAttrs{1, 4, 2, 0, 1, 7, 0, 1, 9});
}

TEST_CASE("PReLU slopes: per channel a prelu op, shared a leaky ReLU, anything else an error",
          "[onnx][views]") {
    for (const int slopes : {1, 2}) {
        ModelBuilder b(1, 2, 2, 2);
        if (slopes == 1) b.initializer("slope", {1}, {0.2f});
        else b.initializer("slope", {2, 1, 1}, {0.2f, -0.5f});
        b.node("PRelu", {"x", "slope"}, "y");
        const Graph g = import_onnx_bytes(b.bytes(), "prelu.onnx");
        REQUIRE(g.size() == 1);
        CHECK(g.op(0).kind == (slopes == 1 ? OpKind::Activation : OpKind::PRelu));
        HostTensor x(g.input_shape(), -1.0f);
        const HostTensor y = reference_run(g, x);
        CHECK(y.at(0, 1, 1, 1) == Approx(slopes == 1 ? -0.2f : 0.5f));
    }
    ModelBuilder b(1, 2, 2, 2);
    b.initializer("slope", {2}, {0.2f, 0.3f});  // [C] broadcasts along W, not the channels
    b.node("PRelu", {"x", "slope"}, "y", "odd_prelu");
    CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "prelu.onnx"),
                      Contains("'odd_prelu'") && Contains("one value per channel"));
}

TEST_CASE("views read in ways iostune does not compute give one clear error",
          "[onnx][views][errors]") {
    {  // A softmax over the last axis of GroupNorm's [N, G, -1] view.
        ModelBuilder b(1, 4, 2, 2);
        b.int_initializer("shape", {0, 2, -1});
        b.node("Reshape", {"x", "shape"}, "v");
        auto& s = b.node("Softmax", {"v"}, "y", "odd_softmax");
        ModelBuilder::integer(s, "axis", 2);
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'odd_softmax'") && Contains("view [1, 2, 8]") &&
                              Contains("split attention"));
    }
    {  // A transposed view reshaped back: neither a channel shuffle nor a pixel shuffle.
        ModelBuilder b(1, 4, 2, 2);
        b.int_initializer("shape", {1, 2, 2, 4});
        b.int_initializer("back", {1, 4, 2, 2});
        b.node("Reshape", {"x", "shape"}, "v");
        auto& t = b.node("Transpose", {"v"}, "t");
        ModelBuilder::ints(t, "perm", {0, 3, 1, 2});
        b.node("Reshape", {"t", "back"}, "y", "odd_reshape");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'odd_reshape'") && Contains("perm [0, 3, 1, 2]") &&
                              Contains("PixelShuffle"));
    }
    {  // A conv over a view.
        ModelBuilder b(1, 4, 2, 2);
        b.int_initializer("shape", {0, 2, -1});
        b.initializer("w", {1, 4, 1, 1}, ramp(4));
        b.node("Reshape", {"x", "shape"}, "v");
        b.node("Conv", {"v", "w"}, "y", "conv_of_view");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'conv_of_view'") && Contains("reshaped view [1, 2, 8]"));
    }
    {  // InstanceNormalization over groups that split a channel.
        ModelBuilder b(1, 3, 2, 2);
        b.int_initializer("shape", {0, 2, -1});
        b.initializer("scale", {2}, {1.0f, 1.0f});
        b.initializer("bias", {2}, {0.0f, 0.0f});
        b.node("Reshape", {"x", "shape"}, "v");
        b.node("InstanceNormalization", {"v", "scale", "bias"}, "y", "odd_norm");
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'odd_norm'") && Contains("G dividing the channels"));
    }
    {  // DepthToSpace of channels that do not fill the blocks; an unknown mode.
        ModelBuilder b(1, 6, 2, 2);
        auto& d = b.node("DepthToSpace", {"x"}, "y", "odd_d2s");
        ModelBuilder::integer(d, "blocksize", 2);
        CHECK_THROWS_WITH(import_onnx_bytes(b.bytes(), "m.onnx"),
                          Contains("'odd_d2s'") && Contains("do not divide into blocks of 2x2"));
    }
}

TEST_CASE("a Sum over H and W is a pool and a scale; a stepped Slice of a stepped Slice is one op",
          "[onnx][views]") {
    ModelBuilder b(1, 2, 4, 4);
    b.int_initializer("axes", {2, 3});
    b.int_initializer("starts", {1});
    b.int_initializer("ends", {4});
    b.int_initializer("h", {2});
    b.int_initializer("w", {3});
    b.int_initializer("two", {2});
    b.node("Slice", {"x", "starts", "ends", "h", "two"}, "rows");
    b.node("Slice", {"rows", "starts", "ends", "w", "two"}, "grid");
    auto& sum = b.node("ReduceSum", {"grid", "axes"}, "y");
    ModelBuilder::integer(sum, "keepdims", 1);
    const Graph g = import_onnx_bytes(b.bytes(), "sum.onnx");
    REQUIRE(g.size() == 3);
    CHECK(g.op(0).as<StridedSliceAttrs>() == StridedSliceAttrs{0, 1, 2, 1, 2, 2, 1, 2, 2});
    CHECK(g.op(2).kind == OpKind::ChannelAffine);
    HostTensor x(g.input_shape());
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = float(i);
    // Channel 0, rows 1 and 3, columns 1 and 3: 5 + 7 + 13 + 15.
    CHECK(reference_run(g, x).at(0, 0, 0, 0) == Approx(40.0f));
}
