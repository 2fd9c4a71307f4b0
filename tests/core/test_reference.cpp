// The CPU reference against hand-computed results (torch semantics), a naive convolution for the
// blocked kernel's edge cases, and a whole hand-built graph.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "src/error.h"
#include "src/graph.h"
#include "src/reference/reference.h"
#include "src/tensor.h"
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

// The 3x3 image used by most cases: 1..9 row-major.
HostTensor nine() { return tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

ParamTensor param(std::vector<int> dims, std::vector<float> values) {
    return ParamTensor{std::move(dims), std::move(values)};
}


void require_values(const HostTensor& got, Shape shape, const std::vector<float>& expected) {
    REQUIRE(got.shape == shape);
    REQUIRE(got.data.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        INFO("element " << i);
        CHECK(got.data[i] == Approx(expected[i]).margin(1e-5));
    }
}

ConvAttrs conv(int out, int k, int stride, int pad, int dilation = 1, int groups = 1,
               bool bias = true, bool relu = false) {
    ConvAttrs a;
    a.out_channels = out;
    a.kernel_h = a.kernel_w = k;
    a.stride_h = a.stride_w = stride;
    a.pad_h = a.pad_w = pad;
    a.dilation_h = a.dilation_w = dilation;
    a.groups = groups;
    a.bias = bias;
    a.relu = relu;
    return a;
}

PoolAttrs pool(int kh, int kw, int sh, int sw, int ph, int pw, bool ceil_mode,
               bool count_include_pad = true) {
    PoolAttrs a;
    a.kernel_h = kh;
    a.kernel_w = kw;
    a.stride_h = sh;
    a.stride_w = sw;
    a.pad_h = ph;
    a.pad_w = pw;
    a.ceil_mode = ceil_mode;
    a.count_include_pad = count_include_pad;
    return a;
}

// Deterministic, irregular values in [-2, 2].
std::vector<float> pattern(size_t count, int salt) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i)
        v[i] = float(int((i * 37 + size_t(salt) * 11) % 101) - 50) / 25.0f;
    return v;
}

}  // namespace

TEST_CASE("conv: 2x2 kernel with bias", "[reference]") {
    const auto out = run_op(OpKind::Conv, conv(1, 2, 1, 0), {nine()},
                            {param({1, 1, 2, 2}, {1, 2, 3, 4}), param({1}, {0.5f})});
    // (0,0): 1*1 + 2*2 + 3*4 + 4*5 = 37, and so on, plus 0.5.
    require_values(out, {1, 1, 2, 2}, {37.5f, 47.5f, 67.5f, 77.5f});
}

TEST_CASE("conv: stride 2 with zero padding", "[reference]") {
    const auto out = run_op(OpKind::Conv, conv(1, 3, 2, 1, 1, 1, false), {nine()},
                            {param({1, 1, 3, 3}, std::vector<float>(9, 1.0f))});
    // Each output sums the 2x2 corner of the image its padded window covers.
    require_values(out, {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST_CASE("conv: dilation 2 with padding", "[reference]") {
    const auto out = run_op(OpKind::Conv, conv(1, 2, 1, 1, 2, 1, false), {nine()},
                            {param({1, 1, 2, 2}, {1, 2, 3, 4})});
    // out(i,j) = x(i-1,j-1) + 2 x(i-1,j+1) + 3 x(i+1,j-1) + 4 x(i+1,j+1), zero outside.
    require_values(out, {1, 1, 3, 3}, {20, 36, 15, 36, 64, 26, 10, 16, 5});
}

TEST_CASE("conv: groups with bias and fused relu", "[reference]") {
    const auto in = tensor({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    const auto out = run_op(OpKind::Conv, conv(4, 1, 1, 0, 1, 2, true, true), {in},
                            {param({4, 1, 1, 1}, {1, -1, 2, 0.5f}), param({4}, {0, 1, 0, -3})});
    // Channels 0-1 read input channel 0, channels 2-3 read input channel 1.
    require_values(out, {1, 4, 2, 2},
                   {1, 2, 3, 4,            // 1 * ch0
                    0, 0, 0, 0,            // relu(1 - ch0)
                    10, 12, 14, 16,        // 2 * ch1
                    0, 0, 0.5f, 1});       // relu(0.5 * ch1 - 3)
}

TEST_CASE("conv: blocked kernel matches a naive convolution", "[reference]") {
    // Odd channel counts (row-block remainders), > 256 output pixels (pixel-block edges),
    // non-square padding/stride/dilation, groups and a batch of 2.
    struct Case {
        ConvAttrs attrs;
        Shape in;
    };
    ConvAttrs a = conv(6, 3, 1, 1, 1, 2, true, true);
    ConvAttrs b = conv(7, 1, 1, 0);
    ConvAttrs c = conv(5, 3, 2, 2, 2);
    c.kernel_w = 2;
    c.stride_w = 1;
    c.pad_w = 0;
    c.dilation_w = 1;
    const std::vector<Case> cases{{a, {2, 4, 18, 17}}, {b, {2, 3, 19, 20}}, {c, {1, 3, 21, 11}}};
    for (const Case& k : cases) {
        const ConvAttrs& s = k.attrs;
        Graph g("naive", k.in);
        g.add(OpKind::Conv, s, {kGraphInput}, "conv");
        const Shape o = g.output_shape();
        const int cin_g = k.in.c / s.groups, cout_g = s.out_channels / s.groups;
        const auto x = tensor(k.in, pattern(size_t(k.in.elements()), 1));
        const auto w = param({s.out_channels, cin_g, s.kernel_h, s.kernel_w},
                             pattern(size_t(s.out_channels * cin_g * s.kernel_h * s.kernel_w), 2));
        const auto bias = param({s.out_channels}, pattern(size_t(s.out_channels), 3));
        const auto got = reference_op(g.op(0), {&x}, {w, bias});
        REQUIRE(got.shape == o);
        for (int n = 0; n < o.n; ++n)
            for (int oc = 0; oc < o.c; ++oc)
                for (int oh = 0; oh < o.h; ++oh)
                    for (int ow = 0; ow < o.w; ++ow) {
                        double sum = bias.values[size_t(oc)];
                        const int g0 = oc / cout_g * cin_g;
                        for (int ic = 0; ic < cin_g; ++ic)
                            for (int i = 0; i < s.kernel_h; ++i)
                                for (int j = 0; j < s.kernel_w; ++j) {
                                    const int ih = oh * s.stride_h - s.pad_h + i * s.dilation_h;
                                    const int iw = ow * s.stride_w - s.pad_w + j * s.dilation_w;
                                    if (ih < 0 || ih >= k.in.h || iw < 0 || iw >= k.in.w) continue;
                                    sum += double(x.at(n, g0 + ic, ih, iw)) *
                                           w.values[((size_t(oc) * cin_g + ic) * s.kernel_h + i) *
                                                        s.kernel_w + j];
                                }
                        if (s.relu && sum < 0) sum = 0;
                        INFO("n " << n << " oc " << oc << " oh " << oh << " ow " << ow);
                        REQUIRE(got.at(n, oc, oh, ow) == Approx(sum).margin(1e-4));
                    }
    }
}

TEST_CASE("sepconv: depthwise then pointwise, with and without pre-relu", "[reference]") {
    auto in = nine();
    for (float& v : in.data) v -= 5.0f;  // -4..4
    SepConvAttrs a;
    a.out_channels = 2;
    a.kernel = 3;
    a.stride = 2;
    a.pad = 1;
    const std::vector<ParamTensor> params{param({1, 1, 3, 3}, std::vector<float>(9, 1.0f)),
                                          param({2, 1, 1, 1}, {2, -1}), param({2}, {0.5f, 0})};
    SECTION("no pre-relu") {
        a.pre_relu = false;
        // Depthwise sums of the padded 2x2 corners: -8, -4, 4, 8.
        require_values(run_op(OpKind::SepConv, a, {in}, params), {1, 2, 2, 2},
                       {-15.5f, -7.5f, 8.5f, 16.5f, 8, 4, -4, -8});
    }
    SECTION("pre-relu") {
        a.pre_relu = true;
        // relu(x) = [0 0 0; 0 0 1; 2 3 4]; depthwise sums: 0, 1, 5, 8.
        require_values(run_op(OpKind::SepConv, a, {in}, params), {1, 2, 2, 2},
                       {0.5f, 2.5f, 10.5f, 16.5f, 0, -1, -5, -8});
    }
}

TEST_CASE("sepconv: each channel has its own depthwise filter", "[reference]") {
    const auto in = tensor({1, 2, 1, 3}, {1, 2, 3, -1, -2, -3});
    SepConvAttrs a;
    a.out_channels = 1;
    a.kernel = 1;
    a.pad = 0;
    a.pre_relu = false;
    a.bias = false;
    // depthwise: ch0 * 2, ch1 * 3; pointwise: ch0 + ch1.
    const auto out = run_op(OpKind::SepConv, a, {in},
                            {param({2, 1, 1, 1}, {2, 3}), param({1, 2, 1, 1}, {1, 1})});
    require_values(out, {1, 1, 1, 3}, {-1, -2, -3});
}

TEST_CASE("maxpool: padding is -inf, not zero", "[reference]") {
    auto in = nine();
    for (float& v : in.data) v = -v;
    const auto out = run_op(OpKind::MaxPool, pool(3, 3, 1, 1, 1, 1, false), {in});
    require_values(out, {1, 1, 3, 3}, {-1, -1, -2, -1, -1, -2, -4, -4, -5});
}

TEST_CASE("maxpool: ceil_mode adds a window that starts inside the input", "[reference]") {
    require_values(run_op(OpKind::MaxPool, pool(2, 2, 2, 2, 0, 0, false), {nine()}), {1, 1, 1, 1},
                   {5});
    require_values(run_op(OpKind::MaxPool, pool(2, 2, 2, 2, 0, 0, true), {nine()}), {1, 1, 2, 2},
                   {5, 6, 8, 9});
}

TEST_CASE("maxpool: ceil_mode drops a window that would start in the padding", "[reference]") {
    // 3 wide, kernel 2, stride 2, pad 1: ceil would give 3 windows, but the third starts at
    // input index 3 (= in + pad - 1 + 1), so torch keeps 2, the same as floor mode.
    for (bool ceil_mode : {false, true}) {
        INFO("ceil_mode " << ceil_mode);
        require_values(run_op(OpKind::MaxPool, pool(2, 2, 2, 2, 1, 1, ceil_mode), {nine()}),
                       {1, 1, 2, 2}, {1, 3, 7, 9});
    }
}

TEST_CASE("avgpool: count_include_pad with padding", "[reference]") {
    SECTION("included: every window divides by 4") {
        require_values(run_op(OpKind::AvgPool, pool(2, 2, 2, 2, 1, 1, false, true), {nine()}),
                       {1, 1, 2, 2}, {0.25f, 1.25f, 2.75f, 7});
    }
    SECTION("excluded: divide by the elements inside the input") {
        require_values(run_op(OpKind::AvgPool, pool(2, 2, 2, 2, 1, 1, false, false), {nine()}),
                       {1, 1, 2, 2}, {1, 2.5f, 5.5f, 7});
    }
}

TEST_CASE("avgpool: ceil_mode windows past the padded edge", "[reference]") {
    SECTION("no padding: the hanging window divides by its elements either way") {
        for (bool include : {false, true}) {
            INFO("count_include_pad " << include);
            require_values(
                run_op(OpKind::AvgPool, pool(2, 2, 2, 2, 0, 0, true, include), {nine()}),
                {1, 1, 2, 2}, {3, 4.5f, 7.5f, 9});
        }
    }
    // [1 2 3 4], kernel 3, stride 2, pad 1, ceil: windows [-1,2) [1,4) [3,6). torch counts the
    // padding up to in + pad = 5, so the last divisor is 2 (not 3) with count_include_pad.
    const auto row = tensor({1, 1, 1, 4}, {1, 2, 3, 4});
    SECTION("count_include_pad: divisors 3, 3, 2") {
        require_values(run_op(OpKind::AvgPool, pool(1, 3, 1, 2, 0, 1, true, true), {row}),
                       {1, 1, 1, 3}, {1, 3, 2});
    }
    SECTION("exclude pad: divisors 2, 3, 1") {
        require_values(run_op(OpKind::AvgPool, pool(1, 3, 1, 2, 0, 1, true, false), {row}),
                       {1, 1, 1, 3}, {1.5f, 3, 4});
    }
}

TEST_CASE("global pools reduce each channel to one value", "[reference]") {
    const auto in = tensor({1, 2, 2, 2}, {1, 2, 3, 4, -1, -5, -2, -3});
    PoolAttrs a;
    a.global = true;
    require_values(run_op(OpKind::AvgPool, a, {in}), {1, 2, 1, 1}, {2.5f, -2.75f});
    require_values(run_op(OpKind::MaxPool, a, {in}), {1, 2, 1, 1}, {4, -1});
}

TEST_CASE("concat stacks channels per batch item", "[reference]") {
    const auto a = tensor({2, 1, 1, 2}, {1, 2, 7, 8});
    const auto b = tensor({2, 2, 1, 2}, {3, 4, 5, 6, 9, 10, 11, 12});
    require_values(run_op(OpKind::Concat, ConcatAttrs{}, {a, b}), {2, 3, 1, 2},
                   {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST_CASE("add: two inputs, and three with relu", "[reference]") {
    const auto a = tensor({1, 3, 1, 1}, {1, -2, 3});
    const auto b = tensor({1, 3, 1, 1}, {0.5f, 0.5f, -4});
    const auto c = tensor({1, 3, 1, 1}, {1, 1, 1});
    require_values(run_op(OpKind::Add, AddAttrs{false}, {a, b}), {1, 3, 1, 1}, {1.5f, -1.5f, -1});
    require_values(run_op(OpKind::Add, AddAttrs{false}, {a, b, c}), {1, 3, 1, 1},
                   {2.5f, -0.5f, 0});
    require_values(run_op(OpKind::Add, AddAttrs{true}, {a, b, c}), {1, 3, 1, 1}, {2.5f, 0, 0});
}

TEST_CASE("relu and identity", "[reference]") {
    const auto in = tensor({1, 1, 2, 2}, {-1, 0, 2, -0.5f});
    require_values(run_op(OpKind::Relu, ReluAttrs{}, {in}), in.shape, {0, 0, 2, 0});
    require_values(run_op(OpKind::Identity, IdentityAttrs{}, {in}), in.shape, in.data);
}

TEST_CASE("linear over flattened C*H*W", "[reference]") {
    const auto in = tensor({2, 2, 1, 2}, {1, 2, 3, 4, 0, 0, 0, 1});
    LinearAttrs a;
    a.out_features = 2;
    const auto out = run_op(OpKind::Linear, a, {in},
                            {param({2, 4}, {1, 0, -1, 0, 0.5f, 0.5f, 0.5f, 0.5f}),
                             param({2}, {1, -1})});
    require_values(out, {2, 2, 1, 1}, {-1, 4, 1, -0.5f});
}

TEST_CASE("softmax over channels is normalised and stable", "[reference]") {
    const std::vector<float> expected{0.09003057f, 0.24472847f, 0.66524096f};
    require_values(run_op(OpKind::Softmax, SoftmaxAttrs{}, {tensor({1, 3, 1, 1}, {1, 2, 3})}),
                   {1, 3, 1, 1}, expected);
    // Shifted by 1000: exp() would overflow without subtracting the maximum.
    require_values(
        run_op(OpKind::Softmax, SoftmaxAttrs{}, {tensor({1, 3, 1, 1}, {1001, 1002, 1003})}),
        {1, 3, 1, 1}, expected);
    // Two pixels, normalised independently: channel-major layout [c0p0 c0p1 c1p0 c1p1].
    const auto out =
        run_op(OpKind::Softmax, SoftmaxAttrs{}, {tensor({1, 2, 1, 2}, {0, -50, 0, 50})});
    CHECK(out.data[0] + out.data[2] == Approx(1.0f));
    CHECK(out.data[1] + out.data[3] == Approx(1.0f));
    CHECK(out.data[0] == Approx(0.5f));
    CHECK(out.data[3] == Approx(1.0f));
}

TEST_CASE("reference_op rejects wrong parameters", "[reference]") {
    // Bias declared but not given.
    CHECK_THROWS_AS(
        run_op(OpKind::Conv, conv(1, 2, 1, 0), {nine()}, {param({1, 1, 2, 2}, {1, 2, 3, 4})}),
        Error);
    CHECK_THROWS_WITH(run_op(OpKind::Conv, conv(1, 2, 1, 0, 1, 1, false), {nine()},
                             {param({1, 1, 3, 3}, std::vector<float>(9, 1.0f))}),
                      Catch::Contains("op 'op'") && Catch::Contains("expected dims [1,1,2,2]"));
    CHECK_THROWS_AS(run_op(OpKind::Relu, ReluAttrs{}, {nine()}, {param({1}, {1})}), Error);
}

namespace {

// input X (1..9) -> conv 1x1 to [X, 10 - X] -> maxpool 2/1 and avgpool 2/1 -> add -> concat
// (maxpool, add) -> global avg -> linear -> softmax.
Graph tiny_graph() {
    Graph g("tiny", {1, 1, 3, 3});
    const int c = g.add(OpKind::Conv, conv(2, 1, 1, 0), {kGraphInput}, "conv");
    const int mp = g.add(OpKind::MaxPool, pool(2, 2, 1, 1, 0, 0, false), {c}, "max");
    const int ap = g.add(OpKind::AvgPool, pool(2, 2, 1, 1, 0, 0, false), {c}, "avg");
    const int sum = g.add(OpKind::Add, AddAttrs{}, {mp, ap}, "add");
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {mp, sum}, "cat");
    PoolAttrs global;
    global.global = true;
    const int gap = g.add(OpKind::AvgPool, global, {cat}, "gap");
    LinearAttrs fc;
    fc.out_features = 2;
    const int lin = g.add(OpKind::Linear, fc, {gap}, "fc");
    g.add(OpKind::Softmax, SoftmaxAttrs{}, {lin}, "softmax");
    std::vector<std::vector<ParamTensor>> params(size_t(g.size()));
    params[size_t(c)] = {param({2, 1, 1, 1}, {1, -1}), param({2}, {0, 10})};
    params[size_t(lin)] = {param({2, 4}, {1, 0, 0, 0, 0, 0, 0.5f, -1}), param({2}, {0, 1})};
    g.set_params(std::move(params), WeightsState::Loaded);
    return g;
}

}  // namespace

TEST_CASE("whole graph: every op's output and the final one", "[reference]") {
    const Graph g = tiny_graph();
    const auto all = reference_run_all(g, nine());
    REQUIRE(all.size() == size_t(g.size()));
    require_values(all[0], {1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1});
    require_values(all[1], {1, 2, 2, 2}, {5, 6, 8, 9, 9, 8, 6, 5});
    require_values(all[2], {1, 2, 2, 2}, {3, 4, 6, 7, 7, 6, 4, 3});
    require_values(all[3], {1, 2, 2, 2}, {8, 10, 14, 16, 16, 14, 10, 8});
    require_values(all[4], {1, 4, 2, 2},
                   {5, 6, 8, 9, 9, 8, 6, 5, 8, 10, 14, 16, 16, 14, 10, 8});
    require_values(all[5], {1, 4, 1, 1}, {7, 7, 12, 12});
    require_values(all[6], {1, 2, 1, 1}, {7, -5});
    const float p = 1.0f / (1.0f + std::exp(-12.0f));
    require_values(all[7], {1, 2, 1, 1}, {p, 1.0f - p});
    require_values(reference_run(g, nine()), {1, 2, 1, 1}, all[7].data);
}

TEST_CASE("whole graph: weights and input shape are checked", "[reference]") {
    Graph g = tiny_graph();
    CHECK_THROWS_WITH(reference_run(g, tensor({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6})),
                      Catch::Contains("tiny") && Catch::Contains("1x1x3x3") &&
                          Catch::Contains("1x1x3x2"));
    g.drop_params();
    CHECK_THROWS_WITH(reference_run(g, nine()),
                      Catch::Contains("model 'tiny'") && Catch::Contains("no weights"));
    CHECK_THROWS_AS(reference_run_all(g, nine()), Error);
}
