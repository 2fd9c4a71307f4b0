#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "search/cached_cost_model.h"
#include "search/device_profile.h"
#include "search/in_memory_stage_cache.h"
#include "search/ios_search.h"
#include "search/op_estimate.h"
#include "search/sim_cost_model.h"
#include "search/timeline_sim.h"
#include "src/error.h"
#include "src/operator_info.h"
#include "test_graphs.h"

using namespace iostune;

namespace {

Stage single(int op) { return Stage{StageStrategy::Concurrent, {{op}}}; }

double latency(SimCostModel& model, const Graph& g, const Stage& stage) {
    const StageMeasurement m = model.measure(g, stage);
    REQUIRE(m.ok);
    return m.latency_ms;
}

// One conv on a 1 x cin x hw x hw input.
struct ConvCase {
    int batch = 1, cin = 64, hw = 28, cout = 64, kernel = 3;
};

Graph one_conv(const ConvCase& c) {
    Graph g("conv", Shape{c.batch, c.cin, c.hw, c.hw});
    g.add(OpKind::Conv, test::conv(c.cout, c.kernel), {kGraphInput}, "conv");
    return g;
}

// Latency never drops while FLOPs grow along the sequence.
void require_monotonic(SimCostModel& model, const std::vector<ConvCase>& cases) {
    double last_ms = 0.0;
    int64_t last_flops = 0;
    for (const ConvCase& c : cases) {
        const Graph g = one_conv(c);
        const int64_t f = flops(g, 0);
        const double ms = latency(model, g, single(0));
        INFO("batch " << c.batch << " cin " << c.cin << " hw " << c.hw << " cout " << c.cout
                      << " k " << c.kernel << ": " << ms << " ms");
        REQUIRE(f > last_flops);
        REQUIRE(ms >= last_ms);
        last_ms = ms;
        last_flops = f;
    }
}

// Forwards to an inner model and counts what it is asked.
class CountingModel final : public CostModel {
public:
    StageMeasurement measure(const Graph& graph, const Stage& stage) override {
        ++calls;
        return inner.measure(graph, stage);
    }
    std::string name() const override { return "counting"; }
    bool simulated() const override { return true; }
    SimCostModel inner;
    int calls = 0;
};

// The stages a small search of the diamond would ask about.
std::vector<Stage> diamond_candidates() {
    return {single(0), single(1), single(2), single(3),
            Stage{StageStrategy::Concurrent, {{1}, {2}}},
            Stage{StageStrategy::Concurrent, {{1, 2}}},
            Stage{StageStrategy::Merge, {{1, 2}}},
            Stage{StageStrategy::Concurrent, {{1}, {2, 3}}}};
}

}  // namespace

TEST_CASE("device profiles", "[costmodel]") {
    const DeviceProfile& h100 = device_profile("h100");
    CHECK(h100.sm_count == 132);
    CHECK(h100.l2_bytes == Approx(50.0 * 1024 * 1024));
    CHECK(h100.dram_bandwidth == Approx(3.0e12));
    CHECK(h100.peak_tf32_flops > h100.peak_fp32_flops);
    CHECK_THROWS_WITH(device_profile("h200x"), Catch::Contains("h100"));
    CHECK(resident_blocks_per_sm(h100, 256, 32, 0) == 8);        // thread-limited
    CHECK(resident_blocks_per_sm(h100, 256, 128, 0) == 2);       // register-limited
    CHECK(resident_blocks_per_sm(h100, 64, 32, 100 * 1024) == 2);  // shared-memory-limited
    CHECK(block_sm_share(h100, 1024, 64, 0) == Approx(1.0));
}

TEST_CASE("sim model: labelled, deterministic estimates", "[costmodel]") {
    SimCostModel model;
    CHECK(model.name() == "sim:h100");
    CHECK(model.simulated());
    const Graph g = test::inception_like();
    for (int id = 0; id < g.size(); ++id) {
        const StageMeasurement m = model.measure(g, single(id));
        CHECK(m.ok);
        CHECK(m.simulated);
        CHECK(m.repeats == 0);
        CHECK(m.spread_ms == 0.0);
        CHECK(m.latency_ms > 0.0);
        // At least one launch, and well under a millisecond for these small ops.
        CHECK(m.latency_ms >= model.device().kernel_launch_s * 1e3);
        CHECK(m.latency_ms < 1.0);
        SimCostModel again;
        CHECK(again.measure(g, single(id)).latency_ms == m.latency_ms);
    }
}

TEST_CASE("sim model: more FLOPs is never faster", "[costmodel]") {
    SimCostModel model;
    std::vector<ConvCase> by_cout, by_cin, by_kernel, by_size, by_batch;
    for (int cout = 8; cout <= 1024; cout += 8) by_cout.push_back({.cout = cout});
    for (int cin = 4; cin <= 1024; cin += 12) by_cin.push_back({.cin = cin});
    for (int k = 1; k <= 11; k += 2) by_kernel.push_back({.kernel = k});
    for (int hw = 4; hw <= 160; hw += 3) by_size.push_back({.hw = hw});
    for (int n = 1; n <= 64; ++n) by_batch.push_back({.batch = n});
    require_monotonic(model, by_cout);
    require_monotonic(model, by_cin);
    require_monotonic(model, by_kernel);
    require_monotonic(model, by_size);
    require_monotonic(model, by_batch);

    SimCostModel fp32(device_profile("h100"), Precision::Fp32);
    require_monotonic(fp32, by_cout);
    // Strict FP32 runs big convolutions on CUDA cores: slower than TF32 tensor cores.
    const Graph big = one_conv({.batch = 16, .cin = 256, .hw = 56, .cout = 256});
    CHECK(latency(fp32, big, single(0)) > latency(model, big, single(0)));
    // An older GPU is slower on the same work.
    SimCostModel v100(device_profile("v100"));
    CHECK(latency(v100, big, single(0)) > latency(model, big, single(0)));
}

TEST_CASE("sim model: 16-bit storage moves half the bytes and runs GEMMs at the fp16 peak",
          "[costmodel]") {
    SimCostModel tf32(device_profile("h100"), Precision::Tf32);
    SimCostModel fp16(device_profile("h100"), Precision::Fp16);
    SimCostModel bf16(device_profile("h100"), Precision::Bf16);
    CHECK(fp16.precision() == Precision::Fp16);
    // A compute-bound convolution and a memory-bound one both get faster, neither more than 2x
    // (twice the TF32 tensor-core rate, half the bytes) plus the launch.
    const Graph big = one_conv({.batch = 16, .cin = 256, .hw = 56, .cout = 256});
    const Graph thin = one_conv({.batch = 16, .cin = 8, .hw = 112, .cout = 8});
    for (const Graph* g : {&big, &thin}) {
        const double t = latency(tf32, *g, single(0)), h = latency(fp16, *g, single(0));
        CHECK(h < t);
        CHECK(h > t / 2.0 - 1e-9);
        CHECK(latency(bf16, *g, single(0)) == h);  // one peak and one element size for both
    }
    // The kernel-level numbers: half the bytes at the same DRAM bandwidth.
    const auto kernels = op_kernels(thin, 0);
    const KernelTiming k32 = time_kernel(kernels[0], device_profile("h100"), Precision::Tf32);
    const KernelTiming k16 = time_kernel(kernels[0], device_profile("h100"), Precision::Fp16);
    CHECK(k16.machine_bytes_s == Approx(k32.machine_bytes_s / 2.0));
}

TEST_CASE("sim model: small independent ops overlap", "[costmodel]") {
    SimCostModel model;
    const Graph g = test::diamond();
    const double b = latency(model, g, single(1));
    const double c = latency(model, g, single(2));
    const double concurrent = latency(model, g, Stage{StageStrategy::Concurrent, {{1}, {2}}});
    const double one_stream = latency(model, g, Stage{StageStrategy::Concurrent, {{1, 2}}});
    CHECK(one_stream == Approx(b + c));
    CHECK(concurrent < one_stream);
    CHECK(concurrent >= std::max(b, c));

    // Ops that each fill the machine gain less from running side by side than small ones.
    const Graph big = test::diamond().with_batch(256);
    const double big_apart = latency(model, big, single(1)) + latency(model, big, single(2));
    const double big_concurrent =
        latency(model, big, Stage{StageStrategy::Concurrent, {{1}, {2}}});
    CHECK(big_concurrent < big_apart);
    CHECK(big_apart / big_concurrent < one_stream / concurrent);
}

TEST_CASE("sim model: merge stages and failures", "[costmodel]") {
    SimCostModel model;
    const Graph g = test::inception_like();
    // b1_1x1 (1), b2_1x1 (2), b3_1x1 (4) all read the stem: one conv with 72 output channels.
    const Stage merge{StageStrategy::Merge, {{1, 2, 4}}};
    const double merged = latency(model, g, merge);
    const double apart = latency(model, g, single(1)) + latency(model, g, single(2)) +
                         latency(model, g, single(4));
    CHECK(merged < apart);
    CHECK(merged >= latency(model, g, single(1)));
    CHECK(latency(model, g, Stage{StageStrategy::Merge, {{1}}}) == latency(model, g, single(1)));

    SECTION("a batched merge of separable convolutions: one grid per phase") {
        Graph branches("branches", Shape{1, 64, 28, 28});
        SepConvAttrs sep;
        sep.out_channels = 64;
        const int a = branches.add(OpKind::SepConv, sep, {kGraphInput}, "a");
        sep.kernel = 5;
        sep.pad = 2;
        const int b = branches.add(OpKind::SepConv, sep, {kGraphInput}, "b");
        const int c = branches.add(OpKind::SepConv, sep, {kGraphInput}, "c");
        const double batched = latency(model, branches, Stage{StageStrategy::Merge, {{a, b, c}}});
        const double one_by_one = latency(model, branches, single(a)) +
                                  latency(model, branches, single(b)) +
                                  latency(model, branches, single(c));
        CHECK(batched < one_by_one);
        CHECK(batched >= latency(model, branches, single(b)));
    }

    const StageMeasurement illegal = model.measure(g, Stage{StageStrategy::Merge, {{1, 7}}});
    CHECK_FALSE(illegal.ok);
    CHECK_FALSE(illegal.error.empty());
    CHECK(illegal.simulated);
    const StageMeasurement unknown = model.measure(g, single(99));
    CHECK_FALSE(unknown.ok);
    CHECK_THAT(unknown.error, Catch::Contains("99"));
}

TEST_CASE("cached model: a second search asks the inner model nothing", "[costmodel]") {
    const Graph g = test::diamond();
    const auto stages = diamond_candidates();
    InMemoryStageCache cache;
    CountingModel inner;
    const CacheScope scope{"sim:h100", "tf32"};

    std::vector<double> first;
    {
        CachedCostModel cached(inner, cache, scope);
        CHECK(cached.name() == "cached:counting");
        CHECK(cached.simulated());
        for (const Stage& s : stages) first.push_back(cached.measure(g, s).latency_ms);
        // Asking again within the same search is also free.
        for (const Stage& s : stages) cached.measure(g, s);
        CHECK(cached.misses() == int64_t(stages.size()));
        CHECK(cached.hits() == int64_t(stages.size()));
    }
    CHECK(inner.calls == int(stages.size()));
    CHECK(cache.size() == stages.size());

    CachedCostModel second(inner, cache, scope);
    for (size_t i = 0; i < stages.size(); ++i)
        CHECK(second.measure(g, stages[i]).latency_ms == first[i]);
    CHECK(second.hits() == int64_t(stages.size()));
    CHECK(second.misses() == 0);
    CHECK(inner.calls == int(stages.size()));

    SECTION("another batch, device, precision or layout is a different measurement") {
        second.measure(g.with_batch(4), stages[0]);
        CachedCostModel other_device(inner, cache, CacheScope{"sim:a100", "tf32"});
        other_device.measure(g, stages[0]);
        CachedCostModel other_precision(inner, cache, CacheScope{"sim:h100", "fp32"});
        other_precision.measure(g, stages[0]);
        CachedCostModel other_layout(inner, cache, CacheScope{"sim:h100", "tf32", "nhwc"});
        other_layout.measure(g, stages[0]);
        CHECK(second.misses() == 1);
        CHECK(other_device.misses() == 1);
        CHECK(other_precision.misses() == 1);
        CHECK(other_layout.misses() == 1);
        CHECK(inner.calls == int(stages.size()) + 4);
    }
    SECTION("a structurally different graph is a different measurement") {
        const Graph other = test::hourglass();
        CHECK(second.key(other, stages[0]) != second.key(g, stages[0]));
        CHECK(second.key(g, stages[0]).stage.find(stage_signature(stages[0])) != std::string::npos);
    }
    SECTION("a measurement never stands in for an estimate") {
        const StageCacheKey k = second.key(g, stages[0]);
        StageMeasurement measured;
        measured.latency_ms = 123.0;
        measured.simulated = false;
        cache.put(k, measured);
        CHECK(second.measure(g, stages[0]).latency_ms != 123.0);
        CHECK(second.misses() == 1);
    }
    SECTION("failures are remembered too") {
        const Stage bad{StageStrategy::Merge, {{1, 3}}};
        CHECK_FALSE(second.measure(g, bad).ok);
        CHECK_FALSE(second.measure(g, bad).ok);
        CHECK(second.misses() == 1);
        CHECK(inner.calls == int(stages.size()) + 1);
    }
}

TEST_CASE("cached model: custom graph key and scope checks", "[costmodel]") {
    InMemoryStageCache cache;
    CountingModel inner;
    CachedCostModel cached(inner, cache, CacheScope{"sim:h100", "tf32"},
                           [](const Graph&) { return std::string("model-x"); });
    const Graph g = test::diamond();
    CHECK(cached.key(g, single(0)).stage == "model-x|" + stage_signature(single(0)));
    CHECK(cached.key(g, single(0)).batch == 1);
    CHECK_THROWS_AS(CachedCostModel(inner, cache, CacheScope{"", "tf32"}), Error);
    CHECK_THROWS_AS(CachedCostModel(inner, cache, CacheScope{"sim:h100", ""}), Error);
}

TEST_CASE("cached model: a second IOS search of the same model measures nothing", "[costmodel]") {
    const Graph g = test::inception_like();
    InMemoryStageCache cache;
    CountingModel inner;
    const CacheScope scope{"sim:h100", "tf32"};
    SearchOptions options;
    options.progress = false;

    CachedCostModel first(inner, cache, scope);
    const SearchResult a = ios_search(g, first, options);
    const int calls_after_first = inner.calls;
    CHECK(calls_after_first > 0);
    CHECK(first.misses() == calls_after_first);

    CachedCostModel second(inner, cache, scope);
    const SearchResult b = ios_search(g, second, options);
    CHECK(inner.calls == calls_after_first);
    CHECK(second.misses() == 0);
    CHECK(second.hits() > 0);
    CHECK(b.schedule == a.schedule);
    CHECK(b.latency_ms == a.latency_ms);
}

TEST_CASE("sim model and IOS search cost the deployed-CNN operators", "[costmodel][deployed]") {
    // A squeeze-excitation block beside a U-Net-style upsampling branch and a channels-last norm:
    // every kind the ONNX importer added, in two parallel branches the search can overlap.
    Graph g("deployed", Shape{1, 16, 14, 14});
    const int act = g.add(OpKind::Activation, ActivationAttrs{ActivationFunction::Silu, 0, 0},
                          {kGraphInput}, "silu");
    PoolAttrs global;
    global.global = true;
    const int pool = g.add(OpKind::AvgPool, global, {act}, "squeeze");
    const int gate = g.add(OpKind::Activation,
                           ActivationAttrs{ActivationFunction::Sigmoid, 0, 0}, {pool}, "gate");
    const int scaled = g.add(OpKind::Binary, BinaryAttrs{BinaryOp::Mul}, {act, gate}, "excite");
    const int affine = g.add(OpKind::ChannelAffine, ChannelAffineAttrs{}, {scaled}, "bn");
    const int shuffled = g.add(OpKind::ChannelShuffle, ChannelShuffleAttrs{4}, {affine}, "shuffle");
    const int half = g.add(OpKind::ChannelSlice, ChannelSliceAttrs{0, 8}, {kGraphInput}, "half");
    ConvTransposeAttrs up;
    up.out_channels = 8;
    up.kernel_h = up.kernel_w = 2;
    up.stride_h = up.stride_w = 2;
    const int upsampled = g.add(OpKind::ConvTranspose, up, {half}, "up");
    const int back = g.add(OpKind::Resize, ResizeAttrs{ResizeMode::Bilinear, 14, 14, false},
                           {upsampled}, "down");
    const int joined = g.add(OpKind::Concat, ConcatAttrs{}, {shuffled, back}, "cat");
    g.add(OpKind::ChannelNorm, ChannelNormAttrs{1e-6f}, {joined}, "norm");

    SimCostModel model;
    for (const Op& op : g.ops()) {
        INFO(op.name);
        CHECK(latency(model, g, single(op.id)) > 0.0);
        CHECK_FALSE(op_kernels(g, op.id).empty());
    }
    SearchOptions options;
    options.progress = false;
    const auto result = ios_search(g, model, options);
    CHECK_NOTHROW(validate(g, result.schedule));
}

TEST_CASE("sim model, timeline and IOS search cost the second-round operators (issue 28)",
          "[costmodel][second_round]") {
    // Split attention beside a Focus / pixel-shuffle branch and a group-normed PReLU branch, every
    // kind in parallel branches the search can overlap; two PReLU convolutions that merge.
    Graph g("second_round", Shape{1, 16, 14, 14});
    ConvAttrs c3;
    c3.out_channels = 16;
    c3.kernel_h = c3.kernel_w = 3;
    c3.pad_h = c3.pad_w = 1;
    c3.prelu = true;
    const int a = g.add(OpKind::Conv, c3, {kGraphInput}, "conv_prelu_a");
    const int b = g.add(OpKind::Conv, c3, {kGraphInput}, "conv_prelu_b");
    const int norm = g.add(OpKind::GroupNorm, GroupNormAttrs{4, 1e-5f}, {a}, "gn");
    const int prelu = g.add(OpKind::PRelu, PReluAttrs{}, {norm}, "prelu");
    const int attn = g.add(OpKind::RadixSoftmax, RadixSoftmaxAttrs{2, 2}, {b}, "rsoftmax");
    const int focus = g.add(OpKind::StridedSlice, StridedSliceAttrs{0, 1, 16, 0, 2, 7, 1, 2, 7},
                            {kGraphInput}, "focus");
    const int up = g.add(OpKind::DepthToSpace, DepthSpaceAttrs{2, BlockOrder::Crd}, {focus},
                         "pixel_shuffle");
    const int down = g.add(OpKind::SpaceToDepth, DepthSpaceAttrs{2, BlockOrder::Dcr}, {prelu},
                           "space_to_depth");
    const int flat = g.add(OpKind::Flatten, FlattenAttrs{}, {up}, "flatten");
    const int flat_attn = g.add(OpKind::Flatten, FlattenAttrs{}, {attn}, "flatten_attention");
    const int flat_down = g.add(OpKind::Flatten, FlattenAttrs{}, {down}, "flatten_down");
    g.add(OpKind::Concat, ConcatAttrs{}, {flat, flat_attn, flat_down}, "head");

    SimCostModel model;
    for (const Op& op : g.ops()) {
        INFO(op.name);
        CHECK(latency(model, g, single(op.id)) > 0.0);
        CHECK_FALSE(op_kernels(g, op.id).empty());
    }
    // The PReLU epilogue costs work; the two PReLU convolutions merge (their slopes stack).
    ConvAttrs plain = c3;
    plain.prelu = false;
    Graph without("plain", Shape{1, 16, 14, 14});
    without.add(OpKind::Conv, plain, {kGraphInput}, "conv");
    CHECK(op_kernels(g, a).front().flops > op_kernels(without, 0).front().flops);
    CHECK(can_merge(g, {a, b}));
    CHECK(latency(model, g, Stage{StageStrategy::Merge, {{a, b}}}) > 0.0);
    // A group norm's reduction is a block per (image, group): more groups, more blocks.
    Graph wider("gn", Shape{1, 16, 14, 14});
    wider.add(OpKind::GroupNorm, GroupNormAttrs{16, 1e-5f}, {kGraphInput}, "instance_norm");
    CHECK(op_kernels(wider, 0).front().blocks == 16);
    CHECK(op_kernels(g, norm).front().blocks == 4);

    SearchOptions options;
    options.progress = false;
    const auto result = ios_search(g, model, options);
    CHECK_NOTHROW(validate(g, result.schedule));
    CHECK(simulate_program_ms(g, StreamProgram(g, result.schedule), model) > 0.0);
}
