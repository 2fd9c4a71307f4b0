// The epilogue fusion pass (src/fusion.h): which chains it rewrites, what it leaves alone, and
// that a fused graph computes what the unfused one does (CPU reference), on small graphs and on
// every zoo model; the residual convolution's and the fused activation's IR, JSON and operator
// facts.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "src/error.h"
#include "src/fusion.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/operator_info.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"

using namespace iostune;

namespace {

ConvAttrs conv3x3(int out_channels, bool relu = false) {
    ConvAttrs a;
    a.out_channels = out_channels;
    a.kernel_h = a.kernel_w = 3;
    a.pad_h = a.pad_w = 1;
    a.relu = relu;
    return a;
}

Graph with_weights(Graph g, uint64_t seed = 7) {
    init_random_weights(g, seed);
    return g;
}

// Largest |a - b| relative to max(1, |a|), over every output of the two graphs.
double max_relative_difference(const Graph& a, const Graph& b, uint64_t seed) {
    std::vector<HostTensor> inputs;
    for (int k = 0; k < a.input_count(); ++k) inputs.push_back(random_input(a.input_shape(k), seed + k));
    const auto out_a = reference_run_outputs(a, inputs);
    const auto out_b = reference_run_outputs(b, inputs);
    REQUIRE(out_a.size() == out_b.size());
    double worst = 0.0;
    for (size_t o = 0; o < out_a.size(); ++o) {
        REQUIRE(out_a[o].shape == out_b[o].shape);
        for (size_t i = 0; i < out_a[o].data.size(); ++i) {
            const double x = out_a[o].data[i], y = out_b[o].data[i];
            worst = std::max(worst, std::abs(x - y) / std::max(1.0, std::abs(x)));
        }
    }
    return worst;
}

// The graph rebuilt on a smaller square input (the zoo's full resolutions are too slow for the
// CPU reference in CI); weights are re-seeded after.
std::optional<Graph> at_input_size(const Graph& g, int size) {
    try {
        Graph small(g.name(), Shape{1, g.input_shape().c, size, size});
        for (const Op& op : g.ops()) small.add(op.kind, op.attrs, op.inputs, op.name, op.cell);
        if (g.output_count() > 1 || g.output_id() != g.size() - 1) small.set_outputs(g.outputs());
        return small;
    } catch (const Error&) {
        return std::nullopt;
    }
}

}  // namespace

TEST_CASE("fusion: Conv -> ReLU becomes a conv with relu", "[fusion]") {
    Graph g("g", Shape{1, 4, 6, 6});
    const int c = g.add(OpKind::Conv, conv3x3(8), {kGraphInput}, "c");
    const int r = g.add(OpKind::Relu, ReluAttrs{}, {c}, "r");
    g.add(OpKind::Conv, conv3x3(4), {r}, "next");
    const Graph input = with_weights(g);
    const FusedGraph f = fuse_epilogues(input);
    CHECK(f.counts.conv_relu == 1);
    CHECK(f.counts.total() == 1);
    REQUIRE(f.graph.size() == 2);
    CHECK(f.graph.op(0).name == "c");
    CHECK(f.graph.op(0).as<ConvAttrs>().relu);
    CHECK(f.graph.op(1).inputs == std::vector<int>{0});
    // Weights move with their op.
    CHECK(f.graph.params_of(0)[0].values == input.params_of(c)[0].values);
    CHECK(f.graph.params_of(1)[0].values == input.params_of(2)[0].values);
    CHECK(max_relative_difference(input, f.graph, 3) == 0.0);
}

TEST_CASE("fusion: Add -> ReLU becomes an add with relu; a graph-output ReLU still fuses", "[fusion]") {
    Graph g("g", Shape{1, 4, 5, 5});
    const int a = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "a");
    const int s = g.add(OpKind::Add, AddAttrs{}, {a, kGraphInput}, "sum");
    g.add(OpKind::Relu, ReluAttrs{}, {s}, "out");
    const Graph input = with_weights(g);
    const FusedGraph f = fuse_epilogues(input);
    CHECK(f.counts.add_relu == 1);
    REQUIRE(f.graph.size() == 2);
    CHECK(f.graph.op(1).kind == OpKind::Add);
    CHECK(f.graph.op(1).as<AddAttrs>().relu);
    CHECK(f.graph.output_id() == 1);
    CHECK(max_relative_difference(input, f.graph, 4) == 0.0);
}

TEST_CASE("fusion: Conv -> Add -> ReLU becomes one residual conv where the add was", "[fusion]") {
    Graph g("g", Shape{1, 8, 6, 6});
    const int stem = g.add(OpKind::Conv, conv3x3(8, true), {kGraphInput}, "stem");
    // z, beside stem (ready as soon as body's input), added after body.
    const int side = g.add(OpKind::Conv, conv3x3(8, true), {kGraphInput}, "side");
    const int body = g.add(OpKind::Conv, conv3x3(8), {stem}, "body");
    const int sum = g.add(OpKind::Add, AddAttrs{}, {side, body}, "sum");
    const int act = g.add(OpKind::Relu, ReluAttrs{}, {sum}, "act");
    g.add(OpKind::Conv, conv3x3(4), {act}, "head");
    const Graph input = with_weights(g);
    const FusedGraph f = fuse_epilogues(input);
    CHECK(f.counts.conv_add == 1);
    CHECK(f.counts.conv_relu == 1);
    CHECK(f.counts.total() == 2);
    REQUIRE(f.graph.size() == 4);
    // stem, side, then the fused body in the add's place (so z = side is computed first).
    CHECK(f.graph.op(1).name == "side");
    const Op& fused = f.graph.op(2);
    CHECK(fused.name == "body");
    CHECK(fused.kind == OpKind::Conv);
    CHECK(fused.inputs == std::vector<int>{0, 1});
    CHECK(fused.as<ConvAttrs>().residual);
    CHECK(fused.as<ConvAttrs>().relu);
    CHECK(f.graph.op(3).inputs == std::vector<int>{2});
    CHECK(f.graph.params_of(2)[0].values == input.params_of(body)[0].values);
    CHECK(f.graph.params_of(2)[1].values == input.params_of(body)[1].values);
    CHECK(max_relative_difference(input, f.graph, 5) == 0.0);

    SECTION("an add that already has its ReLU (the zoo's ResNet) fuses the same way") {
        Graph h("h", Shape{1, 8, 6, 6});
        const int c = h.add(OpKind::Conv, conv3x3(8), {kGraphInput}, "c");
        h.add(OpKind::Add, AddAttrs{.relu = true}, {kGraphInput, c}, "sum");
        const Graph weighted = with_weights(h);
        const FusedGraph g2 = fuse_epilogues(weighted);
        REQUIRE(g2.graph.size() == 1);
        CHECK(g2.graph.op(0).inputs == std::vector<int>{kGraphInput, kGraphInput});
        CHECK(g2.graph.op(0).as<ConvAttrs>().relu);
        CHECK(max_relative_difference(weighted, g2.graph, 6) == 0.0);
    }
}

namespace {

// A one-convolution branch and a three-convolution branch of the input, summed after one more
// convolution on one of them (`last_on_long`: the long one) and a ReLU.
Graph two_branch_sum(bool last_on_long) {
    Graph g("g", Shape{1, 8, 6, 6});
    const int short_branch = g.add(OpKind::Conv, conv3x3(8, true), {kGraphInput}, "short");
    int long_branch = kGraphInput;
    for (int k = 0; k < 3; ++k)
        long_branch = g.add(OpKind::Conv, conv3x3(8, true), {long_branch}, fmt::format("long{}", k));
    const int conv = g.add(OpKind::Conv, conv3x3(8), {last_on_long ? long_branch : short_branch},
                           "last");
    g.add(OpKind::Add, AddAttrs{.relu = true}, {conv, last_on_long ? short_branch : long_branch},
          "sum");
    g.add(OpKind::Conv, conv3x3(4), {g.size() - 1}, "head");
    return with_weights(g);
}

}  // namespace

TEST_CASE("fusion: a conv whose add waits for a longer branch stays apart from the add",
          "[fusion]") {
    // HRNet's fuse layers: a branch's output resampled by one convolution and added to a
    // branch that is still running. Fused, the convolution would wait for that branch.
    const Graph input = two_branch_sum(false);
    const FusedGraph f = fuse_epilogues(input);
    CHECK(f.counts.conv_add == 0);
    CHECK(f.counts.add_of_branches == 1);
    CHECK(f.counts.total() == 0);
    CHECK(f.graph.size() == input.size());
    CHECK(f.graph.op(f.graph.size() - 2).kind == OpKind::Add);
    CHECK(fingerprint(f.graph) == fingerprint(input));

    SECTION("when the other branch ends before the convolution's input, they fuse") {
        const Graph weighted = two_branch_sum(true);
        const FusedGraph fused = fuse_epilogues(weighted);
        CHECK(fused.counts.conv_add == 1);
        CHECK(fused.counts.add_of_branches == 0);
        CHECK(fused.graph.op(fused.graph.size() - 2).as<ConvAttrs>().residual);
        CHECK(max_relative_difference(weighted, fused.graph, 4) == 0.0);
    }
    SECTION("IOSTUNE_FUSE_ADDS=all fuses it anyway, as before (for A/B runs)") {
        setenv("IOSTUNE_FUSE_ADDS", "all", 1);
        const FusedGraph every = fuse_epilogues(input);
        unsetenv("IOSTUNE_FUSE_ADDS");
        CHECK(every.counts.conv_add == 1);
        CHECK(every.counts.add_of_branches == 0);
        CHECK(max_relative_difference(input, every.graph, 4) == 0.0);
    }
    SECTION("another IOSTUNE_FUSE_ADDS is refused, not ignored") {
        setenv("IOSTUNE_FUSE_ADDS", "1", 1);
        CHECK_THROWS_WITH(fuse_epilogues(input), Catch::Contains("IOSTUNE_FUSE_ADDS=1") &&
                                                     Catch::Contains("\"all\""));
        unsetenv("IOSTUNE_FUSE_ADDS");
    }
}

TEST_CASE("fusion: Add -> Add chains become one n-ary add", "[fusion]") {
    Graph g("g", Shape{1, 4, 5, 5});
    const int a = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "a");
    const int b = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "b");
    const int c = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "c");
    const int d = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "d");
    const int ab = g.add(OpKind::Add, AddAttrs{}, {a, b}, "ab");
    const int abc = g.add(OpKind::Add, AddAttrs{}, {ab, c}, "abc");
    const int sum = g.add(OpKind::Add, AddAttrs{}, {d, abc}, "sum");
    g.add(OpKind::Relu, ReluAttrs{}, {sum}, "act");
    const Graph input = with_weights(g);
    const FusedGraph f = fuse_epilogues(input);
    CHECK(f.counts.add_add == 2);
    CHECK(f.counts.add_relu == 1);
    REQUIRE(f.graph.size() == 5);
    const Op& add = f.graph.op(4);
    CHECK(add.kind == OpKind::Add);
    CHECK(add.inputs == std::vector<int>{3, 0, 1, 2});
    CHECK(add.as<AddAttrs>().relu);
    // Another summation order: equal to rounding.
    CHECK(max_relative_difference(input, f.graph, 8) < 1e-6);
}

TEST_CASE("fusion: graph outputs, shared producers and fused ReLUs are left alone", "[fusion]") {
    SECTION("a producer with two readers") {
        Graph g("g", Shape{1, 4, 5, 5});
        const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
        const int r = g.add(OpKind::Relu, ReluAttrs{}, {c}, "r");
        const int s = g.add(OpKind::Add, AddAttrs{}, {c, r}, "s");  // c read twice
        g.add(OpKind::Add, AddAttrs{}, {s, s}, "t");                // s read twice by one op
        const FusedGraph f = fuse_epilogues(g);
        CHECK(f.counts.total() == 0);
        CHECK(fingerprint(f.graph) == fingerprint(g));
    }
    SECTION("a producer that is a graph output") {
        Graph g("g", Shape{1, 4, 5, 5});
        const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
        const int s = g.add(OpKind::Add, AddAttrs{}, {c, kGraphInput}, "s");
        const int r = g.add(OpKind::Relu, ReluAttrs{}, {s}, "r");
        g.set_outputs({c, r});
        const FusedGraph f = fuse_epilogues(g);
        // The Add may take the ReLU; the conv, an output, keeps its own tensor.
        CHECK(f.counts.total() == 1);
        CHECK(f.counts.add_relu == 1);
        CHECK(f.graph.outputs() == std::vector<int>{0, 1});
        CHECK(f.graph.op(0).kind == OpKind::Conv);
        CHECK_FALSE(f.graph.op(0).as<ConvAttrs>().residual);
    }
    SECTION("a ReLU after a conv that already has one, and a 3-input add of a conv") {
        Graph g("g", Shape{1, 4, 5, 5});
        const int c = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "c");
        const int r = g.add(OpKind::Relu, ReluAttrs{}, {c}, "r");
        const int d = g.add(OpKind::Conv, conv3x3(4), {r}, "d");
        g.add(OpKind::Add, AddAttrs{}, {d, r, kGraphInput}, "s");
        const FusedGraph f = fuse_epilogues(g);
        CHECK(f.counts.total() == 0);
    }
    SECTION("a graph without chains is returned as it is") {
        const Graph g = build_zoo_model("googlenet");
        CHECK(fingerprint(fuse_epilogues(g).graph) == fingerprint(g));
    }
}

PoolAttrs avg3x3() {
    PoolAttrs a;
    a.kernel_h = a.kernel_w = 3;
    a.pad_h = a.pad_w = 1;
    return a;
}

TEST_CASE("fusion: an op computed twice is computed once, and its producer may then fuse", "[fusion]") {
    // NASNet's pattern: two ReLUs of one tensor (two cells' inputs), two average pools of one
    // tensor summed.
    Graph g("g", Shape{1, 4, 6, 6});
    const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
    const int r1 = g.add(OpKind::Relu, ReluAttrs{}, {c}, "r1");
    const int r2 = g.add(OpKind::Relu, ReluAttrs{}, {c}, "r2");
    const int a = g.add(OpKind::Conv, conv3x3(4), {r1}, "a");
    const int b = g.add(OpKind::Conv, conv3x3(4), {r2}, "b");
    const int p1 = g.add(OpKind::AvgPool, avg3x3(), {a}, "p1");
    const int p2 = g.add(OpKind::AvgPool, avg3x3(), {a}, "p2");
    const int sum = g.add(OpKind::Add, AddAttrs{}, {p1, p2}, "sum");
    g.add(OpKind::Concat, ConcatAttrs{}, {sum, b}, "cat");
    const Graph input = with_weights(g);
    const FusedGraph f = fuse_epilogues(input);
    CHECK(f.counts.duplicates == 2);
    // With r2 gone, r1 is c's only reader: the ReLU fuses into c.
    CHECK(f.counts.conv_relu == 1);
    CHECK(f.counts.total() == 3);
    REQUIRE(f.graph.size() == 6);
    CHECK(f.graph.op(0).as<ConvAttrs>().relu);
    CHECK(f.graph.op(1).inputs == std::vector<int>{0});  // a
    CHECK(f.graph.op(2).inputs == std::vector<int>{0});  // b reads r1's value, now c's
    CHECK(f.graph.op(3).name == "p1");
    CHECK(f.graph.op(4).inputs == std::vector<int>{3, 3});  // p1 + p1
    CHECK(max_relative_difference(input, f.graph, 5) == 0.0);
}

TEST_CASE("fusion: Concat -> ReLU becomes a concat of inputs their producers apply it to", "[fusion]") {
    Graph g("g", Shape{1, 4, 6, 6});
    const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
    const int a = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "a");
    const int b = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "b");
    const int s = g.add(OpKind::Add, AddAttrs{}, {a, b}, "s");
    SECTION("every input's producer applies it: the ReLU op is gone") {
        const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {c, s, a}, "cat");
        const int r = g.add(OpKind::Relu, ReluAttrs{}, {cat}, "r");
        g.add(OpKind::Conv, conv3x3(4), {r}, "next");
        const Graph input = with_weights(g);
        const FusedGraph f = fuse_epilogues(input);
        CHECK(f.counts.relu_concat == 1);
        CHECK(f.counts.total() == 1);
        REQUIRE(f.graph.size() == g.size() - 1);
        CHECK(f.graph.op(c).as<ConvAttrs>().relu);
        CHECK(f.graph.op(s).as<AddAttrs>().relu);
        CHECK(f.graph.op(5).inputs == std::vector<int>{cat});  // next reads the concat
        CHECK(max_relative_difference(input, f.graph, 7) == 0.0);
    }
    SECTION("an input read elsewhere too gets a ReLU op, where the concat was") {
        const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {s, c}, "cat");
        const int r = g.add(OpKind::Relu, ReluAttrs{}, {cat}, "r");
        const int next = g.add(OpKind::Conv, conv3x3(4), {r}, "next");
        g.add(OpKind::Concat, ConcatAttrs{}, {next, c}, "out");
        const Graph input = with_weights(g);
        const FusedGraph f = fuse_epilogues(input);
        CHECK(f.counts.relu_concat_slice == 1);
        CHECK(f.counts.total() == 0);
        REQUIRE(f.graph.size() == g.size());
        CHECK(f.graph.op(s).as<AddAttrs>().relu);
        CHECK_FALSE(f.graph.op(c).as<ConvAttrs>().relu);  // "out" reads c as it was
        CHECK(f.graph.op(cat).kind == OpKind::Relu);
        CHECK(f.graph.op(cat).inputs == std::vector<int>{c});
        CHECK(f.graph.op(r).kind == OpKind::Concat);
        CHECK(f.graph.op(r).inputs == std::vector<int>{s, cat});
        CHECK(max_relative_difference(input, f.graph, 8) == 0.0);
    }
    SECTION("two such inputs, or a concat read elsewhere, stay as they are") {
        const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {s, c, kGraphInput}, "cat");
        const int r = g.add(OpKind::Relu, ReluAttrs{}, {cat}, "r");
        const int next = g.add(OpKind::Conv, conv3x3(4), {r}, "next");
        const int cat2 = g.add(OpKind::Concat, ConcatAttrs{}, {s, b}, "cat2");
        const int r2 = g.add(OpKind::Relu, ReluAttrs{}, {cat2}, "r2");
        g.add(OpKind::Concat, ConcatAttrs{}, {next, c, r2, cat2}, "out");
        const FusedGraph f = fuse_epilogues(with_weights(g));
        CHECK_FALSE(f.counts.changed());
    }
}

namespace {

SepConvAttrs sep3x3(int out_channels, bool pre_relu = true) {
    SepConvAttrs a;
    a.out_channels = out_channels;
    a.pre_relu = pre_relu;
    return a;
}

}  // namespace

TEST_CASE("fusion: a ReLU that every reader applies moves into the producer", "[fusion]") {
    Graph g("g", Shape{1, 4, 6, 6});
    SECTION("a separable conv read only by another's pre-ReLU applies it (NASNet's branches)") {
        const int s1 = g.add(OpKind::SepConv, sep3x3(4), {kGraphInput}, "s1");
        const int s2 = g.add(OpKind::SepConv, sep3x3(4), {s1}, "s2");
        g.add(OpKind::Add, AddAttrs{}, {s2, kGraphInput}, "a");  // reads s2 raw
        const Graph input = with_weights(g);
        const FusedGraph f = fuse_epilogues(input);
        CHECK(f.counts.pre_relu_dropped == 1);
        CHECK(f.counts.total() == 0);
        REQUIRE(f.graph.size() == g.size());
        CHECK(f.graph.op(s1).as<SepConvAttrs>().pre_relu);  // of the graph input
        CHECK(f.graph.op(s1).as<SepConvAttrs>().post_relu);
        CHECK_FALSE(f.graph.op(s2).as<SepConvAttrs>().pre_relu);
        CHECK_FALSE(f.graph.op(s2).as<SepConvAttrs>().post_relu);
        CHECK(max_relative_difference(input, f.graph, 8) == 0.0);
    }
    SECTION("a conv read by a Relu op and by two pre-ReLUs applies it; the Relu op goes") {
        const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
        const int r = g.add(OpKind::Relu, ReluAttrs{}, {c}, "r");
        const int s1 = g.add(OpKind::SepConv, sep3x3(4), {c}, "s1");
        const int s2 = g.add(OpKind::SepConv, sep3x3(4), {c}, "s2");
        const int s3 = g.add(OpKind::SepConv, sep3x3(4), {s1}, "s3");  // s1's only reader
        const int next = g.add(OpKind::Conv, conv3x3(4), {r}, "next");
        g.add(OpKind::Concat, ConcatAttrs{}, {next, s2, s3}, "out");
        const Graph input = with_weights(g);
        const FusedGraph f = fuse_epilogues(input);
        CHECK(f.counts.conv_relu == 1);
        CHECK(f.counts.pre_relu_dropped == 3);  // s1, s2 (of c) and s3 (of s1)
        CHECK(f.counts.total() == 1);
        REQUIRE(f.graph.size() == g.size() - 1);
        CHECK(f.graph.op(c).as<ConvAttrs>().relu);
        const int s1_now = s1 - 1, s2_now = s2 - 1, s3_now = s3 - 1, next_now = next - 1;
        CHECK(f.graph.op(s1_now).inputs == std::vector<int>{c});
        CHECK_FALSE(f.graph.op(s1_now).as<SepConvAttrs>().pre_relu);
        CHECK(f.graph.op(s1_now).as<SepConvAttrs>().post_relu);
        CHECK_FALSE(f.graph.op(s2_now).as<SepConvAttrs>().pre_relu);
        CHECK_FALSE(f.graph.op(s2_now).as<SepConvAttrs>().post_relu);  // read by the concat
        CHECK_FALSE(f.graph.op(s3_now).as<SepConvAttrs>().pre_relu);
        CHECK(f.graph.op(next_now).inputs == std::vector<int>{c});  // reads r's value, now c's
        CHECK(max_relative_difference(input, f.graph, 9) == 0.0);
        // The fused graph's files keep the field; a file without it reads as no ReLU after.
        const Graph back = graph_from_json(graph_to_json(f.graph, ""), "fused.json", "");
        CHECK(fingerprint(back) == fingerprint(f.graph));
        CHECK(back.op(s1_now).as<SepConvAttrs>().post_relu);
        CHECK(graph_to_json(input, "").dump().find("post_relu") == std::string::npos);
        CHECK(flops(f.graph, s1_now) == flops(input, s1) - input.op(c).output.elements() +
                                            f.graph.op(s1_now).output.elements());
    }
    SECTION("an add read by pre-ReLUs applies it (RandWire's sums)") {
        const int p = g.add(OpKind::MaxPool, PoolAttrs{}, {kGraphInput}, "p");
        const int sum = g.add(OpKind::Add, AddAttrs{}, {p, kGraphInput}, "sum");
        g.add(OpKind::SepConv, sep3x3(4), {sum}, "s");
        const Graph input = with_weights(g);
        const FusedGraph f = fuse_epilogues(input);
        CHECK(f.graph.op(sum).as<AddAttrs>().relu);
        CHECK_FALSE(f.graph.op(sum + 1).as<SepConvAttrs>().pre_relu);
        CHECK(f.counts.pre_relu_dropped == 1);
        CHECK(max_relative_difference(input, f.graph, 10) == 0.0);
    }
    SECTION("left alone: a raw reader, no pre-ReLU reader, a graph output, an activated conv") {
        const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
        g.add(OpKind::SepConv, sep3x3(4), {c}, "s_c");
        const int p = g.add(OpKind::MaxPool, PoolAttrs{}, {c}, "raw");  // reads c as it is
        const int d = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "d");
        const int rd = g.add(OpKind::Relu, ReluAttrs{}, {d}, "rd");
        const int s_d = g.add(OpKind::SepConv, sep3x3(4, false), {d}, "s_d");  // no pre-ReLU
        const int e = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "e");
        const int re = g.add(OpKind::Relu, ReluAttrs{}, {e}, "re");  // a graph output
        const int s_e = g.add(OpKind::SepConv, sep3x3(4), {e}, "s_e");
        ConvAttrs silu = conv3x3(4);
        silu.activation = ActivationAttrs{ActivationFunction::Silu};
        const int h = g.add(OpKind::Conv, silu, {kGraphInput}, "h");
        const int s_h = g.add(OpKind::SepConv, sep3x3(4), {h}, "s_h");
        const int k = g.add(OpKind::SepConv, sep3x3(4), {kGraphInput}, "k");  // a graph output
        const int s_k = g.add(OpKind::SepConv, sep3x3(4), {k}, "s_k");
        const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {p, rd, s_d, s_e, s_h, s_k}, "cat");
        g.set_outputs({cat, re, k});
        const FusedGraph f = fuse_epilogues(with_weights(g));
        CHECK(f.counts.pre_relu_dropped == 0);
        CHECK(f.counts.total() == 0);
    }
}

TEST_CASE("fusion: ops that differ, carry weights, are outputs or belong to two members stay", "[fusion]") {
    SECTION("other attributes, or weights of their own") {
        Graph g("g", Shape{1, 4, 6, 6});
        const int p = g.add(OpKind::AvgPool, avg3x3(), {kGraphInput}, "p");
        const int q = g.add(OpKind::MaxPool, avg3x3(), {kGraphInput}, "q");  // another kind
        PoolAttrs wide = avg3x3();
        wide.count_include_pad = false;
        const int w = g.add(OpKind::AvgPool, wide, {kGraphInput}, "w");  // another attribute
        const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
        const int d = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "d");  // weights of its own
        const int s = g.add(OpKind::Add, AddAttrs{}, {p, q, w}, "s");
        g.add(OpKind::Concat, ConcatAttrs{}, {s, c, d}, "cat");
        const FusedGraph f = fuse_epilogues(with_weights(g));
        CHECK(f.counts.total() == 0);
        CHECK(f.graph.size() == g.size());
    }
    SECTION("a graph output") {
        Graph g("g", Shape{1, 4, 6, 6});
        const int r1 = g.add(OpKind::Relu, ReluAttrs{}, {kGraphInput}, "r1");
        const int r2 = g.add(OpKind::Relu, ReluAttrs{}, {kGraphInput}, "r2");
        g.set_outputs({r1, r2});
        const FusedGraph f = fuse_epilogues(g);
        CHECK(f.counts.duplicates == 0);
        CHECK(f.graph.outputs() == std::vector<int>{r1, r2});
    }
    SECTION("a model set's members reading one input") {
        Graph m("m", Shape{1, 4, 6, 6});
        const int r = m.add(OpKind::Relu, ReluAttrs{}, {kGraphInput}, "r");
        m.add(OpKind::Conv, conv3x3(4), {r}, "c");
        const Graph set = combine_models({m, m}, SetInputs::Shared);
        const FusedGraph f = fuse_epilogues(with_weights(set));
        CHECK(f.counts.duplicates == 0);
        CHECK(f.graph.size() == 4);
    }
    SECTION("a duplicate after the earlier op's reader: the readers of both read one op") {
        Graph g("g", Shape{1, 4, 6, 6});
        const int r1 = g.add(OpKind::Relu, ReluAttrs{}, {kGraphInput}, "r1");
        const int a = g.add(OpKind::Conv, conv3x3(4), {r1}, "a");
        const int r2 = g.add(OpKind::Relu, ReluAttrs{}, {kGraphInput}, "r2");
        const int b = g.add(OpKind::Conv, conv3x3(4), {r2}, "b");
        g.add(OpKind::Add, AddAttrs{}, {a, b, r2}, "s");
        const Graph input = with_weights(g);
        const FusedGraph f = fuse_epilogues(input);
        CHECK(f.counts.duplicates == 1);
        REQUIRE(f.graph.size() == 4);
        CHECK(f.graph.op(2).inputs == std::vector<int>{0});
        CHECK(f.graph.op(3).inputs == std::vector<int>{1, 2, 0});
        CHECK(max_relative_difference(input, f.graph, 6) == 0.0);
    }
}

TEST_CASE("fusion: a model set's members keep their ranges, outputs and own fingerprints", "[fusion]") {
    Graph a("a", Shape{1, 4, 6, 6});
    const int c = a.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
    const int s = a.add(OpKind::Add, AddAttrs{}, {c, kGraphInput}, "s");
    a.add(OpKind::Relu, ReluAttrs{}, {s}, "r");
    Graph b("b", Shape{1, 4, 6, 6});
    const int p = b.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "p");
    b.add(OpKind::Relu, ReluAttrs{}, {p}, "q");  // ReLU of a ReLU conv: not fused
    const Graph set = combine_models({a, b}, SetInputs::Separate);
    const FusedGraph f = fuse_epilogues(set);
    CHECK(f.counts.total() == 2);
    REQUIRE(f.graph.members().size() == 2);
    const GraphMember& m0 = f.graph.members()[0];
    const GraphMember& m1 = f.graph.members()[1];
    CHECK(m0.first_op == 0);
    CHECK(m0.end_op == 1);
    CHECK(m0.outputs == std::vector<int>{0});
    CHECK(m1.first_op == 1);
    CHECK(m1.end_op == 3);
    CHECK(m1.outputs == std::vector<int>{2});
    CHECK(f.graph.outputs() == std::vector<int>{0, 2});
    CHECK(m0.fingerprint == fingerprint(fuse_epilogues(a).graph));
    CHECK(m1.fingerprint == fingerprint(b));
    // Fusing the members first and combining them gives the same key.
    const Graph combined_fused =
        combine_models({fuse_epilogues(a).graph, fuse_epilogues(b).graph}, SetInputs::Separate);
    CHECK(fingerprint(combined_fused) == fingerprint(f.graph));
    CHECK(max_relative_difference(set, f.graph, 9) == 0.0);
}

TEST_CASE("fusion: every zoo model computes the same outputs fused (CPU reference)", "[fusion]") {
    for (const std::string& name : zoo_model_names()) {
        INFO(name);
        const Graph full = build_zoo_model(name, 1);
        std::optional<Graph> small;
        for (int size : {64, 80, 96, 112, 128, 160, 224, 331})
            if ((small = at_input_size(full, size))) break;
        REQUIRE(small);
        Graph model = with_weights(*small, 11);
        const FusedGraph f = fuse_epilogues(model);
        INFO(fmt::format("input {}, {} ops, {} fused (conv+relu {}, conv+activation {}, "
                         "add+relu {}, conv+add {}, add+add {})",
                         model.input_shape().h, model.size(), f.counts.total(), f.counts.conv_relu,
                         f.counts.conv_activation, f.counts.add_relu, f.counts.conv_add,
                         f.counts.add_add));
        CHECK(f.graph.size() == model.size() - f.counts.total());
        if (name == "resnet50") CHECK(f.counts.conv_add == 16);
        CHECK(max_relative_difference(model, f.graph, 12) < 1e-6);
    }
}

TEST_CASE("residual conv: the IR checks z, JSON round-trips it, old files read unchanged", "[fusion]") {
    Graph g("g", Shape{1, 4, 6, 6});
    ConvAttrs residual = conv3x3(8, true);
    residual.residual = true;
    CHECK_THROWS_WITH(g.add(OpKind::Conv, residual, {kGraphInput}, "one_input"),
                      Catch::Contains("expects 2 input(s), got 1"));
    CHECK_THROWS_WITH(g.add(OpKind::Conv, residual, {kGraphInput, kGraphInput}, "wrong_z"),
                      Catch::Contains("residual input is 1x4x6x6") && Catch::Contains("1x8x6x6"));
    const int z = g.add(OpKind::Conv, conv3x3(8), {kGraphInput}, "z");
    const int fused = g.add(OpKind::Conv, residual, {kGraphInput, z}, "fused");
    init_random_weights(g, 2);

    CHECK(param_shapes(g, fused) == param_shapes(g, z));
    CHECK(flops(g, fused) == flops(g, z) + 2 * g.op(fused).output.elements());  // + z, + ReLU
    CHECK(bytes_moved(g, fused) == bytes_moved(g, z) + g.op(fused).output.elements() * 4);

    const auto doc = graph_to_json(g, "");
    CHECK(doc["ops"][1]["attrs"]["residual"] == true);
    CHECK_FALSE(doc["ops"][0]["attrs"].contains("residual"));  // false: left out
    const Graph back = graph_from_json(doc, "residual.json", "");
    CHECK(fingerprint(back) == fingerprint(g));
    CHECK(back.op(fused).as<ConvAttrs>() == g.op(fused).as<ConvAttrs>());
    CHECK(back.op(fused).inputs == std::vector<int>{kGraphInput, z});
    CHECK(reference_run(g.with_batch(1), random_input(g.input_shape(), 1)).data.size() == 288);

    // A conv without a residual keeps the file text and fingerprint it had before the field
    // existed: FNV-1a 64 of "iostune-structure 1\ninput 3 8 8\nop 0 conv cell=-1 inputs=input
    // out_channels=4 kernel_h=3 kernel_w=3 stride_h=1 stride_w=1 pad_h=1 pad_w=1 dilation_h=1
    // dilation_w=1 groups=1 bias=1 relu=0\n" (docs/model-format.md).
    Graph plain("p", Shape{1, 3, 8, 8});
    plain.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
    CHECK(graph_to_json(plain, "").dump().find("residual") == std::string::npos);
    CHECK(fingerprint(plain) == "3ca44df6fb54fcd4");
    ConvAttrs with_z = conv3x3(4);
    with_z.residual = true;
    Graph other("p", Shape{1, 4, 8, 8});
    other.add(OpKind::Conv, with_z, {kGraphInput, kGraphInput}, "c");
    Graph without_z("p", Shape{1, 4, 8, 8});
    without_z.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
    CHECK(fingerprint(other) != fingerprint(without_z));
}

TEST_CASE("fusion: weights seeded on the fused ResNet-50 keep activations at unit scale", "[fusion][weights]") {
    // A graph without weights (a zoo name) is seeded after fusion: a residual conv's output
    // scale must count its z as the add did.
    Graph g = fuse_epilogues(*at_input_size(build_zoo_model("resnet50", 1), 64)).graph;
    init_random_weights(g, 3);
    const auto outputs = reference_run_all(g, random_input(g.input_shape(), 4));
    for (const Op& op : g.ops()) {
        if (op.kind != OpKind::Conv || !op.as<ConvAttrs>().residual) continue;
        INFO(op.name);
        double m = 0.0;
        for (float v : outputs[size_t(op.id)].data) m += double(v) * double(v);
        m /= double(outputs[size_t(op.id)].data.size());
        CHECK(m > 0.1);
        CHECK(m < 10.0);
    }
}

namespace {

// Each activation function with the parameters its models use.
std::vector<ActivationAttrs> every_activation() {
    return {{ActivationFunction::Clip, 0.0f, 6.0f},
            {ActivationFunction::Sigmoid},
            {ActivationFunction::Silu},
            {ActivationFunction::HardSigmoid, 1.0f / 6.0f, 0.5f},
            {ActivationFunction::HardSwish},
            {ActivationFunction::LeakyRelu, 0.1f},
            {ActivationFunction::Gelu},
            {ActivationFunction::Tanh}};
}

ConvAttrs with_activation(ConvAttrs a, ActivationAttrs activation) {
    a.activation = activation;
    return a;
}

}  // namespace

TEST_CASE("fusion: Conv -> Activation becomes a conv with that activation, bit for bit", "[fusion]") {
    for (const ActivationAttrs& act : every_activation()) {
        INFO(to_string(act.function));
        Graph g("g", Shape{1, 4, 6, 6});
        const int c = g.add(OpKind::Conv, conv3x3(8), {kGraphInput}, "c");
        const int a = g.add(OpKind::Activation, act, {c}, "act");
        g.add(OpKind::Conv, conv3x3(4), {a}, "next");
        const Graph input = with_weights(g);
        const FusedGraph f = fuse_epilogues(input);
        CHECK(f.counts.conv_activation == 1);
        CHECK(f.counts.total() == 1);
        REQUIRE(f.graph.size() == 2);
        CHECK(f.graph.op(0).name == "c");
        CHECK(f.graph.op(0).as<ConvAttrs>().activation == act);
        CHECK_FALSE(f.graph.op(0).as<ConvAttrs>().relu);
        CHECK(f.graph.op(1).inputs == std::vector<int>{0});
        CHECK(f.graph.params_of(0)[0].values == input.params_of(c)[0].values);
        CHECK(max_relative_difference(input, f.graph, 3) == 0.0);
        CHECK(totals(f.graph).flops == totals(input).flops);  // the activation moved, not dropped
    }
}

TEST_CASE("fusion: a residual conv takes the SiLU after its add; an activated conv takes no add",
          "[fusion]") {
    const ActivationAttrs silu{ActivationFunction::Silu};
    Graph g("g", Shape{1, 8, 6, 6});
    const int stem = g.add(OpKind::Conv, conv3x3(8), {kGraphInput}, "stem");
    const int stem_act = g.add(OpKind::Activation, silu, {stem}, "stem_act");
    const int body = g.add(OpKind::Conv, conv3x3(8), {stem_act}, "body");
    const int sum = g.add(OpKind::Add, AddAttrs{}, {body, stem_act}, "sum");
    const int act = g.add(OpKind::Activation, silu, {sum}, "act");
    // An activated conv then an add: the add comes after the activation, so it stays an Add.
    const int side = g.add(OpKind::Conv, conv3x3(8), {act}, "side");
    const int side_act = g.add(OpKind::Activation, silu, {side}, "side_act");
    g.add(OpKind::Add, AddAttrs{}, {side_act, act}, "out");
    const Graph input = with_weights(g);
    const FusedGraph f = fuse_epilogues(input);
    CHECK(f.counts.conv_add == 1);
    CHECK(f.counts.conv_activation == 3);
    CHECK(f.counts.total() == 4);
    REQUIRE(f.graph.size() == 4);
    const auto& fused = f.graph.op(1).as<ConvAttrs>();
    CHECK(f.graph.op(1).name == "body");
    CHECK(fused.residual);
    CHECK(fused.activation == silu);
    CHECK(f.graph.op(1).inputs == std::vector<int>{0, 0});
    CHECK(f.graph.op(2).as<ConvAttrs>().activation == silu);
    CHECK_FALSE(f.graph.op(2).as<ConvAttrs>().residual);
    CHECK(f.graph.op(3).kind == OpKind::Add);
    CHECK(max_relative_difference(input, f.graph, 5) == 0.0);
}

TEST_CASE("fusion: an activation stays an op after a shared, output or already activated conv",
          "[fusion]") {
    const ActivationAttrs swish{ActivationFunction::HardSwish};
    SECTION("the conv has a second reader") {
        Graph g("g", Shape{1, 4, 5, 5});
        const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
        const int a = g.add(OpKind::Activation, swish, {c}, "a");
        g.add(OpKind::Add, AddAttrs{}, {c, a}, "s");
        CHECK(fuse_epilogues(g).counts.total() == 0);
    }
    SECTION("the conv is a graph output") {
        Graph g("g", Shape{1, 4, 5, 5});
        const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
        const int a = g.add(OpKind::Activation, swish, {c}, "a");
        g.set_outputs({c, a});
        CHECK(fuse_epilogues(g).counts.total() == 0);
    }
    SECTION("the conv has its ReLU, or its activation, already") {
        Graph g("g", Shape{1, 4, 5, 5});
        const int c = g.add(OpKind::Conv, conv3x3(4, true), {kGraphInput}, "c");
        const int a = g.add(OpKind::Activation, swish, {c}, "a");
        const int d = g.add(OpKind::Conv, with_activation(conv3x3(4), swish), {a}, "d");
        const int b = g.add(OpKind::Activation, swish, {d}, "b");
        const int e = g.add(OpKind::Conv, with_activation(conv3x3(4), swish), {b}, "e");
        g.add(OpKind::Relu, ReluAttrs{}, {e}, "r");
        CHECK(fuse_epilogues(g).counts.total() == 0);
    }
    SECTION("the producer is not a convolution") {
        Graph g("g", Shape{1, 4, 5, 5});
        const int s = g.add(OpKind::Add, AddAttrs{}, {kGraphInput, kGraphInput}, "s");
        g.add(OpKind::Activation, swish, {s}, "a");
        CHECK(fuse_epilogues(g).counts.total() == 0);
    }
}

TEST_CASE("conv activation: the IR checks it, JSON round-trips it, old files read unchanged",
          "[fusion]") {
    Graph g("g", Shape{1, 4, 6, 6});
    ConvAttrs both = with_activation(conv3x3(8, true), {ActivationFunction::Silu});
    CHECK_THROWS_WITH(g.add(OpKind::Conv, both, {kGraphInput}, "both"),
                      Catch::StartsWith("op 'both' (conv): invalid attributes: a convolution fuses "
                                        "one of a ReLU, an activation and a PReLU"));
    CHECK_THROWS_WITH(g.add(OpKind::Conv,
                            with_activation(conv3x3(8), {ActivationFunction::Clip, 6.0f, 0.0f}),
                            {kGraphInput}, "empty_clip"),
                      Catch::Contains("op 'empty_clip'") && Catch::Contains("clip bounds") &&
                          !Catch::Contains("shape mismatch"));
    const ActivationAttrs relu6{ActivationFunction::Clip, 0.0f, 6.0f};
    const int c = g.add(OpKind::Conv, with_activation(conv3x3(8), relu6), {kGraphInput}, "c");
    g.add(OpKind::Conv, conv3x3(8), {c}, "plain");

    const auto doc = graph_to_json(g, "");
    CHECK(doc["ops"][0]["attrs"]["activation"] ==
          nlohmann::json{{"function", "clip"}, {"alpha", 0.0}, {"beta", 6.0}});
    CHECK_FALSE(doc["ops"][1]["attrs"].contains("activation"));  // unset: left out
    const Graph back = graph_from_json(doc, "act.json", "");
    CHECK(back.op(c).as<ConvAttrs>() == g.op(c).as<ConvAttrs>());
    CHECK(fingerprint(back) == fingerprint(g));
    Graph unfused("g", Shape{1, 4, 6, 6});
    unfused.add(OpKind::Conv, conv3x3(8), {kGraphInput}, "c");
    unfused.add(OpKind::Conv, conv3x3(8), {0}, "plain");
    CHECK(fingerprint(unfused) != fingerprint(g));
    ConvAttrs other = g.op(c).as<ConvAttrs>();
    other.activation->beta = 5.0f;
    Graph clipped_at_5("g", Shape{1, 4, 6, 6});
    clipped_at_5.add(OpKind::Conv, other, {kGraphInput}, "c");
    clipped_at_5.add(OpKind::Conv, conv3x3(8), {0}, "plain");
    CHECK(fingerprint(clipped_at_5) != fingerprint(g));

    const auto refused = [&](nlohmann::json activation) {
        nlohmann::json bad = doc;
        bad["ops"][0]["attrs"]["activation"] = std::move(activation);
        try {
            graph_from_json(bad, "bad.json", "");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(refused({{"function", "swish"}, {"alpha", 0}, {"beta", 0}}),
               Catch::Contains("bad.json") &&
                   Catch::Contains("ops[0].attrs.activation.function: unknown value \"swish\"") &&
                   Catch::Contains("silu"));
    CHECK_THAT(refused({{"function", "silu"}}),
               Catch::Contains("ops[0].attrs.activation.alpha: missing required field"));
    CHECK_THAT(refused("silu"), Catch::Contains("ops[0].attrs.activation: expected an object"));
    CHECK_THAT(refused({{"function", "clip"}, {"alpha", 6}, {"beta", 0}}),
               Catch::Contains("op 'c'") && Catch::Contains("clip bounds [6, 0] are empty"));
}

TEST_CASE("conv activation: convolutions merge only with the same activation", "[fusion]") {
    const ActivationAttrs silu{ActivationFunction::Silu};
    Graph g("g", Shape{1, 4, 6, 6});
    const int a = g.add(OpKind::Conv, with_activation(conv3x3(4), silu), {kGraphInput}, "a");
    const int b = g.add(OpKind::Conv, with_activation(conv3x3(4), silu), {kGraphInput}, "b");
    const int c = g.add(OpKind::Conv, conv3x3(4), {kGraphInput}, "c");
    const int d = g.add(OpKind::Conv, with_activation(conv3x3(4), {ActivationFunction::Tanh}),
                        {kGraphInput}, "d");
    CHECK(can_merge(g, {a, b}));
    std::string why;
    CHECK_FALSE(can_merge(g, {a, c}, &why));
    CHECK_THAT(why, Catch::Contains("activation"));
    CHECK_FALSE(can_merge(g, {a, d}));
}
