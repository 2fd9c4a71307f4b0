// [gpu] The engine's precision and layout plan: every op kind in fp16, bf16 and the fp32 modes,
// NCHW and channels-last, op by op and under concurrent and merged schedules; the RGB input's
// padded channels; native (unconverted) input and output. All against the fp32 CPU reference,
// within the bounds of engine_fixtures.h. (Whole zoo models: test_engine.cpp.)
#include <catch2/catch.hpp>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "src/engine/engine.h"
#include "src/engine/kernels.h"
#include "src/error.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/engine_fixtures.h"

using namespace iostune;
using namespace iostune::test;

namespace {

const std::vector<Plan>& all_plans() {
    static const std::vector<Plan> plans = {
        {Precision::Fp16, TensorLayout::Nhwc}, {Precision::Bf16, TensorLayout::Nhwc},
        {Precision::Fp16, TensorLayout::Nchw}, {Precision::Bf16, TensorLayout::Nchw},
        {Precision::Fp32, TensorLayout::Nhwc}, {Precision::Tf32, TensorLayout::Nhwc}};
    return plans;
}

const OpPlan& plan_of(const std::vector<OpPlan>& plans, const std::string& name) {
    for (const OpPlan& p : plans)
        if (p.name == name) return p;
    FAIL("no op " << name);
    return plans.front();
}

// Only convolutions read the input of this graph, so 16-bit channels-last pads it.
Graph rgb_stem_graph() {
    Graph g("rgb_stem", Shape{2, 3, 20, 20});
    const int a = g.add(OpKind::Conv, ConvAttrs{16, 3, 3, 2, 2, 1, 1, 1, 1, 1, true, true},
                        {kGraphInput}, "stem3x3");
    const int b = g.add(OpKind::Conv, ConvAttrs{8, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, true},
                        {kGraphInput}, "stem1x1");
    const int pb = g.add(OpKind::MaxPool, PoolAttrs{2, 2, 2, 2, 0, 0, false, true, false}, {b},
                         "pool");
    const int cat = g.add(OpKind::Concat, ConcatAttrs{}, {a, pb}, "cat");
    const int gap = g.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {cat},
                          "gap");
    g.add(OpKind::Linear, LinearAttrs{10, true}, {gap}, "fc");
    return g;
}

// Runs the sequential schedule on `engine` (built for `plan`) and checks every op's output
// against `ref`; returns the engine's op plans.
std::vector<OpPlan> check_every_op(Engine& engine, const Graph& graph, const HostTensor& input,
                                   const std::vector<HostTensor>& ref, const Plan& plan) {
    engine.set_input(input);
    engine.launch_schedule(sequential_schedule(graph), engine.origin_stream());
    const std::vector<OpPlan> plans = engine.op_plans();
    for (const Op& op : graph.ops()) {
        const double err = relative_error(engine.read_op_output(op.id), ref[size_t(op.id)]);
        INFO(fmt::format("{}: op '{}' via {} [{}]: relative error {:.3g}", label(plan), op.name,
                         plans[size_t(op.id)].path, plans[size_t(op.id)].algorithms, err));
        CHECK(err < op_error_bound(plan.precision));
    }
    return plans;
}

// Runs `graph` sequentially in each channels-last plan (every plan with `any_layout`) with every
// convolution pinned to `choice` (those it cannot run are timed afresh), checks each op's output
// against the CPU reference and `pinned` convolutions pinned (unchecked when negative); calls
// check(plan, op plans) for the rest.
template <class Check>
void run_pinned_op_by_op(const Graph& graph, const HostTensor& input, const ConvChoice& choice,
                         int pinned, Check&& check, bool any_layout = false) {
    const std::vector<HostTensor> ref = reference_run_all(graph, input);
    for (const Plan& plan : all_plans()) {
        if (plan.layout != TensorLayout::Nhwc && !any_layout) continue;
        EngineOptions options = options_for(plan);
        ConvChoice pin = choice;
        // A graph API choice names its engine's math: strict fp32 runs no tensor-core engine.
        if (graph_algorithm_rank(pin.algorithm) >= 0 && plan.precision == Precision::Fp32)
            pin.math = "FMA_MATH";
        for (const auto& entry : Engine(graph, options).conv_choices())
            options.conv_choices[entry.first] = pin;
        Engine engine(graph, options);
        if (pinned >= 0) CHECK(engine.pinned_conv_count() == pinned);
        check(plan, check_every_op(engine, graph, input, ref, plan));
    }
}

const ConvChoice kPinDepthwise{"DEPTHWISE_NHWC", "FMA_MATH", "depthwise", 0};
const ConvChoice kPinDepthwiseNarrow{"DEPTHWISE_NHWC_NARROW", "FMA_MATH", "depthwise", 0};
const ConvChoice kPinDepthwiseTiled{"DEPTHWISE_NHWC_TILED", "FMA_MATH", "depthwise", 0};

}  // namespace

TEST_CASE("every op kind matches the CPU reference in each precision and layout, op by op",
          "[gpu][engine][precision]") {
    Graph graph = every_op_graph(2);
    init_random_weights(graph, 7);
    const HostTensor input = random_input(graph.input_shape(), 11);
    const std::vector<HostTensor> ref = reference_run_all(graph, input);
    for (const Plan& plan : all_plans()) {
        Engine engine(graph, every_output_kept(options_for(plan)));
        CHECK(engine.layout() == plan.layout);
        engine.set_input(input);
        const Schedule sequential = sequential_schedule(graph);
        engine.prepare(sequential);
        engine.launch_schedule(sequential, engine.origin_stream());
        const std::vector<OpPlan> plans = engine.op_plans();
        const double bound = op_error_bound(plan.precision);
        for (const Op& op : graph.ops()) {
            const double err = relative_error(engine.read_op_output(op.id), ref[size_t(op.id)]);
            INFO(fmt::format("{}: op {} '{}' ({}) via {} [{}]: relative error {:.3g} (bound {:.3g})",
                             label(plan), op.id, op.name, to_string(op.kind),
                             plans[size_t(op.id)].path, plans[size_t(op.id)].algorithms, err,
                             bound));
            CHECK(err < bound);
        }
        // The plan says what runs: the storage, and channels-last pooling in the engine's kernel.
        const std::string storage =
            fmt::format("{} {}", to_string(storage_type(plan.precision)), to_string(plan.layout));
        CHECK(plan_of(plans, "stem").storage == storage);
        CHECK(plan_of(plans, "maxpool3x3").path ==
              (plan.layout == TensorLayout::Nhwc ? "pool kernel (channels-last)"
                                                 : "cudnnPoolingForward"));
        CHECK(plan_of(plans, "head3x3").writes_into_concat);
        WARN(label(plan) << ": " << plan_summary(engine));
    }
}

TEST_CASE("concurrent and merged schedules in each precision and layout", "[gpu][engine][precision]") {
    Graph graph = every_op_graph(2);
    init_random_weights(graph, 7);
    const HostTensor input = random_input(graph.input_shape(), 11);
    const std::vector<HostTensor> ref_all = reference_run_all(graph, input);
    const HostTensor& ref = ref_all.back();
    int merges = 0;
    const Schedule merged = merged_schedule(graph, &merges);
    REQUIRE(merges == 2);
    const Schedule greedy = greedy_schedule(graph);
    for (const Plan& plan : all_plans()) {
        Engine engine(graph, every_output_kept(options_for(plan)));
        engine.set_input(input);
        const double bound = op_error_bound(plan.precision);
        INFO(label(plan));
        CHECK(relative_error(run_schedule(engine, greedy), ref) < bound);
        CHECK(relative_error(run_schedule(engine, merged), ref) < bound);
        // Merged ops live in (strided) slices of the merged output; consumers read them there.
        for (const MergePlan& mp : engine.merge_plans()) {
            INFO(mp.signature << " via " << mp.path);
            for (int id : mp.ops)
                CHECK(relative_error(engine.read_op_output(id), ref_all[size_t(id)]) < bound);
        }
        // Replayed as one CUDA graph, on a fresh input.
        CudaGraphExec exec = engine.capture(merged);
        const HostTensor input2 = random_input(graph.input_shape(), 12);
        engine.set_input(input2);
        exec.launch(engine.origin_stream());
        CHECK(relative_error(engine.read_output(), reference_run(graph, input2)) < bound);
    }
}

namespace {

// Parallel separable convolutions as NASNet's cells have them, for batched merges: s0-s3 (3x3,
// 5x5, 7x7, 3x3) read c0, c1, a strided channel slice and c0 again; s0 and s1 write into a
// concat (output rows 32 apart), s2 and s3 into their own buffers (16 apart): two batched GEMMs.
// t0 and t1 are stride 2 without pre-ReLU, with a ReLU after (the fusion pass's post_relu: in
// the batched product's epilogue).
struct BatchedBranches {
    Graph graph;
    Schedule schedule;  // sequential but for the merges {s0..s3} and {t0, t1}
};

BatchedBranches batched_branches() {
    Graph g("batched_branches", Shape{2, 16, 12, 12});
    const int c0 = g.add(OpKind::Conv, ConvAttrs{16, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, true},
                         {kGraphInput}, "c0");
    const int c1 = g.add(OpKind::Conv, ConvAttrs{16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true},
                         {kGraphInput}, "c1");
    const int cat0 = g.add(OpKind::Concat, ConcatAttrs{}, {c0, c1}, "cat0");
    const int slice = g.add(OpKind::ChannelSlice, ChannelSliceAttrs{8, 24}, {cat0}, "slice");
    const auto sep = [&](int input, int kernel, int stride, bool pre_relu, const char* name) {
        SepConvAttrs a;
        a.out_channels = 16;
        a.kernel = kernel;
        a.pad = kernel / 2;
        a.stride = stride;
        a.pre_relu = pre_relu;
        a.post_relu = !pre_relu;
        return g.add(OpKind::SepConv, a, {input}, name);
    };
    const int s0 = sep(c0, 3, 1, true, "s0"), s1 = sep(c1, 5, 1, true, "s1");
    const int s2 = sep(slice, 7, 1, true, "s2"), s3 = sep(c0, 3, 1, true, "s3");
    const int t0 = sep(c0, 3, 2, false, "t0"), t1 = sep(c1, 5, 2, false, "t1");
    const int cat1 = g.add(OpKind::Concat, ConcatAttrs{}, {s0, s1}, "cat1");
    const int sum = g.add(OpKind::Add, AddAttrs{}, {s2, s3}, "sum");
    const int cat2 = g.add(OpKind::Concat, ConcatAttrs{}, {cat1, sum}, "cat2");
    const int pool = g.add(OpKind::MaxPool, PoolAttrs{3, 3, 2, 2, 1, 1, false, true, false},
                           {cat2}, "pool");
    const int tsum = g.add(OpKind::Add, AddAttrs{}, {t0, t1}, "tsum");
    g.add(OpKind::Concat, ConcatAttrs{}, {pool, tsum}, "out");
    std::vector<Stage> stages;
    for (const Op& op : g.ops()) {
        if (op.id == s0) stages.push_back(Stage{StageStrategy::Merge, {{s0, s1, s2, s3}}});
        else if (op.id == t0) stages.push_back(Stage{StageStrategy::Merge, {{t0, t1}}});
        else if (op.id == s1 || op.id == s2 || op.id == s3 || op.id == t1) continue;
        else stages.push_back(Stage{StageStrategy::Concurrent, {{op.id}}});
    }
    return {g, Schedule{{stages}}};
}

}  // namespace

TEST_CASE("batched merges of separable convolutions match the reference in each precision and "
          "layout, staged, dataflow and captured",
          "[gpu][engine][precision][batched]") {
    BatchedBranches b = batched_branches();
    Graph& graph = b.graph;
    init_random_weights(graph, 21);
    const HostTensor input = random_input(graph.input_shape(), 22);
    const std::vector<HostTensor> ref_all = reference_run_all(graph, input);
    for (const Plan& plan : all_plans()) {
        INFO(label(plan));
        Engine engine(graph, every_output_kept(options_for(plan)));
        engine.set_input(input);
        const double bound = op_error_bound(plan.precision);
        for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow}) {
            const Schedule schedule = with_form(b.schedule, form);
            INFO(to_string(form));
            CHECK(relative_error(run_schedule(engine, schedule), ref_all.back()) < bound);
            const std::vector<MergePlan> merges = engine.merge_plans();
            REQUIRE(merges.size() == 2);
            for (const MergePlan& mp : merges) {
                INFO(mp.signature << " via " << mp.path << ": " << mp.algorithms);
                // Channels-last runs batched; NCHW (no channels-last filters) op by op.
                CHECK(mp.path == (plan.layout == TensorLayout::Nhwc ? "batched" : "per-op"));
                CHECK(mp.slice_copies == 0);
                // s0-s3: three kernel sizes, two output row strides (cuBLASLt's products, or
                // cuBLAS's GEMMs where cuBLASLt has no pointer-array algorithm).
                if (mp.path == "batched" && mp.ops.size() == 4) {
                    CHECK_THAT(mp.algorithms, Catch::StartsWith("batched: 3 depthwise launches"));
                    CHECK_THAT(mp.algorithms, Catch::Contains("2 cuBLAS") ||
                                                  Catch::Contains("1 cuBLASLt product, 1 cuBLAS GEMM"));
                    WARN(label(plan) << ": " << mp.algorithms);
                }
                for (int id : mp.ops)
                    CHECK(relative_error(engine.read_op_output(id), ref_all[size_t(id)]) < bound);
            }
            // Replayed as one CUDA graph, on a fresh input.
            CudaGraphExec exec = engine.capture(schedule);
            const HostTensor input2 = random_input(graph.input_shape(), 23);
            engine.set_input(input2);
            exec.launch(engine.origin_stream());
            CHECK(relative_error(engine.read_output(), reference_run(graph, input2)) < bound);
            engine.set_input(input);
        }
    }
}

TEST_CASE("a 16-bit channels-last engine can pad the RGB input to 8 channels for its convolutions",
          "[gpu][engine][precision]") {
    Graph graph = rgb_stem_graph();
    init_random_weights(graph, 5);
    const HostTensor input = random_input(graph.input_shape(), 6);
    const HostTensor ref = reference_run(graph, input);
    for (const Plan& plan : all_plans()) {
        for (const bool pad : {true, false}) {
            EngineOptions options = options_for(plan);
            options.pad_input_channels = pad;
            Engine engine(graph, options);
            const bool padded = pad && is_half(plan.precision) && plan.layout == TensorLayout::Nhwc;
            INFO(label(plan) << (pad ? ", padding allowed" : ", no padding"));
            CHECK(engine.native_input().c == (padded ? 8 : 3));
            engine.set_input(input);
            const HostTensor out = run_schedule(engine, sequential_schedule(graph));
            CHECK(relative_error(out, ref) < op_error_bound(plan.precision));
        }
    }
    // A pooling reading the input too: no padding (only convolutions get zero filter channels).
    Graph pooled("rgb_pool", Shape{1, 3, 8, 8});
    const int c = pooled.add(OpKind::Conv, ConvAttrs{8, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true},
                             {kGraphInput}, "conv");
    const int p = pooled.add(OpKind::MaxPool, PoolAttrs{3, 3, 1, 1, 1, 1, false, true, false},
                             {kGraphInput}, "pool");
    pooled.add(OpKind::Concat, ConcatAttrs{}, {c, p}, "cat");
    Engine engine(pooled, options_for({Precision::Fp16, TensorLayout::Nhwc}));
    CHECK(engine.native_input().c == 3);
}

TEST_CASE("native input and output skip the float conversions", "[gpu][engine][precision]") {
    Graph graph = build_zoo_model("squeezenet1_1", 1);
    init_random_weights(graph, 3);
    const HostTensor input = random_input(graph.input_shape(), 5);
    const HostTensor ref = reference_run(graph, input);
    const Schedule sequential = sequential_schedule(graph);
    for (const bool float_io : {true, false}) {
        EngineOptions options = options_for({Precision::Fp16, TensorLayout::Nhwc});
        options.float_io = float_io;
        Engine engine(graph, options);
        INFO("float_io " << float_io);
        CHECK(engine.storage_type() == DType::F16);
        CHECK(engine.native_output().dtype == DType::F16);
        engine.set_input(input);  // converts into the native input at once
        // Clear the caller's float input: a graph that converts from it now computes another
        // result; one on native input does not read it.
        REQUIRE(cudaMemset(engine.input_device(), 0, size_t(input.shape.elements()) * sizeof(float)) ==
                cudaSuccess);
        CudaGraphExec exec = engine.capture(sequential);
        exec.launch(engine.origin_stream());
        const double err = relative_error(engine.read_output(), ref);
        if (float_io) {
            CHECK(err > 0.5);
        } else {
            CHECK(err < model_error_bound(Precision::Fp16));
        }
    }
}

TEST_CASE("the channels-last depthwise kernel matches the reference: strides, dilation, 7x7, "
          "pre-ReLU, odd channel counts, concat slices",
          "[gpu][engine][precision]") {
    Graph graph("depthwise", Shape{2, 16, 21, 21});
    const int sep5 = graph.add(OpKind::SepConv, SepConvAttrs{24, 5, 2, 2, 1, true, true},
                               {kGraphInput}, "sep5x5_s2_prerelu");
    const int dw7 = graph.add(OpKind::Conv,
                              ConvAttrs{16, 7, 7, 1, 1, 3, 3, 1, 1, 16, true, true},
                              {kGraphInput}, "dw7x7_bias_relu");
    const int sep_dil = graph.add(OpKind::SepConv, SepConvAttrs{16, 3, 1, 2, 2, false, false},
                                  {kGraphInput}, "sep3x3_dilated");
    const int cat = graph.add(OpKind::Concat, ConcatAttrs{}, {dw7, sep_dil}, "cat");  // 32
    const int narrow = graph.add(OpKind::Conv, ConvAttrs{12, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, true},
                                 {cat}, "to12");
    const int sep12 = graph.add(OpKind::SepConv, SepConvAttrs{12, 3, 2, 1, 1, true, true},
                                {narrow}, "sep3x3_12ch_s2");  // 11x11, scalar path
    const int pool = graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true},
                               {sep5}, "gap24");
    const int pool12 = graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true},
                                 {sep12}, "gap12");
    graph.add(OpKind::Concat, ConcatAttrs{}, {pool, pool12}, "out");
    init_random_weights(graph, 9);
    const HostTensor input = random_input(graph.input_shape(), 10);
    // Widest packs, then narrowed ones: these small maps give the GPU too few threads at
    // any width, so every pack narrows (one channel per thread in fp32). Then the tiled kernel,
    // which takes three of the four (not the dilated filter).
    for (const ConvChoice& pin : {kPinDepthwise, kPinDepthwiseNarrow, kPinDepthwiseTiled}) {
        INFO(pin.algorithm);
        const int pinned = pin.algorithm == kPinDepthwiseTiled.algorithm ? 3 : 4;
        run_pinned_op_by_op(graph, input, pin, pinned, [&](const Plan&, const std::vector<OpPlan>& plans) {
            CHECK_THAT(plan_of(plans, "sep5x5_s2_prerelu").path,
                       Catch::StartsWith("depthwise kernel (channels-last); pre-ReLU fused"));
            CHECK(plan_of(plans, "sep5x5_s2_prerelu").algorithms.find(pin.algorithm) !=
                  std::string::npos);
            CHECK(plan_of(plans, "dw7x7_bias_relu").writes_into_concat);
        });
    }
}

TEST_CASE("the tiled depthwise kernel matches the reference: 3/5/7 filters of stride 1 and 2, "
          "ragged tiles, channels not a multiple of 32, padding, pre-ReLU, epilogues, concat "
          "slices",
          "[gpu][engine][precision][tiled]") {
    // Batch 1 at 11x11 takes tiles of fewer rows (too few blocks at 8); batch 3 at 45x45 takes 8
    // rows, with ragged tiles on both axes (45 and 23 outputs over 8- and 4-column tiles). 78
    // channels: the last block's lanes past 78 stage zeros and write nothing.
    for (const auto& [batch, size] : {std::pair{1, 11}, std::pair{3, 45}}) {
        INFO("batch " << batch << ", " << size << "x" << size);
        Graph graph("tiled", Shape{batch, 78, size, size});
        const auto depthwise = [](int k, int stride, int pad_h, int pad_w, bool bias, bool relu) {
            return ConvAttrs{78, k, k, stride, stride, pad_h, pad_w, 1, 1, 78, bias, relu};
        };
        const int sep3 = graph.add(OpKind::SepConv, SepConvAttrs{40, 3, 1, 1, 1, true, true},
                                   {kGraphInput}, "sep3x3_prerelu");
        const int dw5 = graph.add(OpKind::Conv, depthwise(5, 2, 2, 2, true, true), {kGraphInput},
                                  "dw5x5_s2_bias_relu");
        const int dw7 = graph.add(OpKind::Conv, depthwise(7, 1, 3, 3, true, false), {kGraphInput},
                                  "dw7x7_bias");
        const int dw3 = graph.add(OpKind::Conv, depthwise(3, 2, 0, 1, false, false), {kGraphInput},
                                  "dw3x3_s2_pad01");
        const int sep7 = graph.add(OpKind::SepConv, SepConvAttrs{24, 7, 2, 3, 1, true, false},
                                   {kGraphInput}, "sep7x7_s2_prerelu");
        // dw7 writes a slice of a concat; dw3x3_of_cat reads the whole concat (156 channels).
        const int cat = graph.add(OpKind::Concat, ConcatAttrs{}, {dw7, kGraphInput}, "cat");
        const int dw_cat = graph.add(OpKind::Conv,
                                     ConvAttrs{156, 3, 3, 1, 1, 1, 1, 1, 1, 156, true, true},
                                     {cat}, "dw3x3_of_cat");
        std::vector<int> pooled;
        for (const int op : {sep3, dw5, dw3, sep7, dw_cat})
            pooled.push_back(graph.add(OpKind::AvgPool,
                                       PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {op},
                                       fmt::format("gap{}", op)));
        graph.add(OpKind::Concat, ConcatAttrs{}, pooled, "out");
        init_random_weights(graph, 31 + batch);
        const HostTensor input = random_input(graph.input_shape(), 32 + batch);
        run_pinned_op_by_op(graph, input, kPinDepthwiseTiled, 6,
                            [](const Plan&, const std::vector<OpPlan>& plans) {
            for (const char* name : {"sep3x3_prerelu", "dw5x5_s2_bias_relu", "dw7x7_bias",
                                     "dw3x3_s2_pad01", "sep7x7_s2_prerelu", "dw3x3_of_cat"}) {
                INFO(name);
                CHECK_THAT(plan_of(plans, name).path, Catch::StartsWith("depthwise kernel"));
                CHECK_THAT(plan_of(plans, name).algorithms, Catch::Contains("DEPTHWISE_NHWC_TILED"));
            }
            CHECK(plan_of(plans, "dw7x7_bias").writes_into_concat);
        });
    }
}

TEST_CASE("the channels-last depthwise kernel at sizes that take its 4-pixel strips, with any "
          "kernel size",
          "[gpu][engine][precision]") {
    // 8 x 57 x 57 x 154 outputs are ~2M packs of two channels: the strip path (TX = 4), with a
    // ragged last strip (57 = 14 x 4 + 1); 9x9 and 1x7 filters take the kernel-size-generic path.
    Graph graph("depthwise_large", Shape{8, 154, 57, 57});
    const int sep = graph.add(OpKind::SepConv, SepConvAttrs{16, 3, 1, 1, 1, true, true},
                              {kGraphInput}, "sep3x3_prerelu");
    const int dw9 = graph.add(OpKind::Conv,
                              ConvAttrs{154, 9, 9, 2, 2, 4, 4, 1, 1, 154, true, false},
                              {kGraphInput}, "dw9x9_s2");
    const int dw1x7 = graph.add(OpKind::Conv,
                                ConvAttrs{154, 1, 7, 1, 1, 0, 3, 1, 1, 154, false, true},
                                {kGraphInput}, "dw1x7_relu");
    const int pool_sep = graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true},
                                   {sep}, "gap_sep");
    const int pool9 = graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true},
                                {dw9}, "gap9");
    const int pool7 = graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true},
                                {dw1x7}, "gap7");
    graph.add(OpKind::Concat, ConcatAttrs{}, {pool_sep, pool9, pool7}, "out");
    init_random_weights(graph, 11);
    const HostTensor input = random_input(graph.input_shape(), 12);
    run_pinned_op_by_op(graph, input, kPinDepthwise, 3,
                        [](const Plan&, const std::vector<OpPlan>& plans) {
        for (const char* name : {"dw9x9_s2", "dw1x7_relu"})
            CHECK_THAT(plan_of(plans, name).path, Catch::StartsWith("depthwise kernel"));
    });
}

TEST_CASE("1x1 convolutions as cuBLASLt matrix products match the reference: odd channel counts, "
          "concat slices, bias/ReLU epilogues, a residual",
          "[gpu][engine][precision][gemm]") {
    // 154 channels (RandWire's): rows of 308 bytes in 16-bit, which cuDNN pads around its
    // kernels. a writes a strided concat slice, c and r read the whole concat, r adds the input.
    Graph graph("gemm", Shape{2, 154, 13, 13});
    const int a = graph.add(OpKind::Conv, ConvAttrs{77, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, true},
                            {kGraphInput}, "pw_bias_relu");
    const int b = graph.add(OpKind::Conv, ConvAttrs{40, 1, 1, 1, 1, 0, 0, 1, 1, 1, false, false},
                            {kGraphInput}, "pw_plain");
    const int cat = graph.add(OpKind::Concat, ConcatAttrs{}, {a, b}, "cat");  // 117
    const int c = graph.add(OpKind::Conv, ConvAttrs{154, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, false},
                            {cat}, "pw_from_cat");
    const int r = graph.add(OpKind::Conv,
                            ConvAttrs{154, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, true, true},
                            {cat, kGraphInput}, "pw_residual");
    const int out = graph.add(OpKind::Concat, ConcatAttrs{}, {c, r}, "out");
    graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {out}, "gap");
    init_random_weights(graph, 21);
    const HostTensor input = random_input(graph.input_shape(), 22);
    run_pinned_op_by_op(graph, input, ConvChoice{"GEMM_0", "TENSOR_OP_MATH", "gemm", 0}, 4,
                        [](const Plan&, const std::vector<OpPlan>& plans) {
        for (const char* name : {"pw_bias_relu", "pw_plain", "pw_from_cat", "pw_residual"})
            CHECK_THAT(plan_of(plans, name).path, Catch::StartsWith("cuBLASLt matmul"));
        CHECK_THAT(plan_of(plans, "pw_residual").path, Catch::Contains("residual z as cuBLASLt's C"));
        CHECK(plan_of(plans, "pw_bias_relu").writes_into_concat);
    });
}

TEST_CASE("convolutions through cuDNN's graph API match the reference: strided concat slices, "
          "asymmetric and depthwise filters, pre-ReLU, bias/ReLU and residual epilogues",
          "[gpu][engine][precision][graph]") {
    // 42 channels: a concat slice of the 16-bit tensors starts at an 84-byte offset, so the
    // graph API sees 4-byte aligned, strided views, written in place.
    Graph graph("graph_api", Shape{2, 42, 21, 21});
    const int a = graph.add(OpKind::Conv, ConvAttrs{24, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true},
                            {kGraphInput}, "conv3x3_bias_relu");
    const int b = graph.add(OpKind::Conv, ConvAttrs{40, 3, 1, 1, 1, 1, 0, 1, 1, 1, true, true},
                            {kGraphInput}, "conv3x1_bias_relu");
    const int cat = graph.add(OpKind::Concat, ConcatAttrs{}, {a, b}, "cat");  // 64
    const int sep = graph.add(OpKind::SepConv, SepConvAttrs{42, 7, 1, 3, 1, true, false},
                              {kGraphInput}, "sep7x7_prerelu");
    const int res = graph.add(OpKind::Conv,
                              ConvAttrs{42, 1, 3, 1, 1, 0, 1, 1, 1, 1, true, true, true},
                              {sep, kGraphInput}, "conv1x3_residual");
    const int down = graph.add(OpKind::Conv, ConvAttrs{42, 3, 3, 2, 2, 0, 0, 1, 1, 1, false, false},
                               {cat}, "conv3x3_s2_plain");
    const int gap_res = graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true},
                                  {res}, "gap_res");
    const int gap_down = graph.add(OpKind::AvgPool,
                                   PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {down},
                                   "gap_down");
    graph.add(OpKind::Concat, ConcatAttrs{}, {gap_res, gap_down}, "out");
    init_random_weights(graph, 31);
    const HostTensor input = random_input(graph.input_shape(), 32);
    // Six convolution steps: four convolutions and the separable one's depthwise and pointwise.
    // GRAPH_0's math is its engine's: tensor cores in every plan but strict fp32 (where the
    // helper pins FMA_MATH).
    run_pinned_op_by_op(graph, input, ConvChoice{"GRAPH_0", "TENSOR_OP_MATH", "graph", 0}, 6,
                        [](const Plan& plan, const std::vector<OpPlan>& plans) {
        INFO(label(plan));
        for (const char* name : {"conv3x3_bias_relu", "conv3x1_bias_relu", "sep7x7_prerelu",
                                 "conv1x3_residual", "conv3x3_s2_plain"}) {
            INFO(name << ": " << plan_of(plans, name).path);
            CHECK_THAT(plan_of(plans, name).path, Catch::StartsWith("cuDNN graph API"));
        }
        // Written into the concat in place, or staged when that timed faster (the pins are the
        // signatures the first engine chose; both forms are checked against the reference).
        CHECK(plan_of(plans, "conv3x3_bias_relu").writes_into_concat);
    }, true);
}

TEST_CASE("cuDNN graph API convolutions with the bias, residual and ReLU fused into the graph "
          "match the reference",
          "[gpu][engine][precision][graph]") {
    // Every epilogue form: bias+ReLU, bias alone, ReLU alone, bias+residual+ReLU, and bias+ReLU
    // written into a concat slice (a strided output), in every precision and layout.
    Graph graph("graph_epilogue", Shape{2, 16, 14, 14});
    const int a = graph.add(OpKind::Conv, ConvAttrs{32, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true},
                            {kGraphInput}, "bias_relu");
    const int b = graph.add(OpKind::Conv, ConvAttrs{16, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, false},
                            {a}, "bias_only");
    const int c = graph.add(OpKind::Conv, ConvAttrs{16, 3, 3, 1, 1, 1, 1, 1, 1, 1, false, true},
                            {b}, "relu_only");
    const int r = graph.add(OpKind::Conv,
                            ConvAttrs{16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true, true},
                            {c, kGraphInput}, "bias_residual_relu");
    const int s = graph.add(OpKind::Conv, ConvAttrs{24, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, true},
                            {r}, "into_concat");
    const int cat = graph.add(OpKind::Concat, ConcatAttrs{}, {s, r}, "cat");
    graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {cat}, "gap");
    init_random_weights(graph, 41);
    const HostTensor input = random_input(graph.input_shape(), 42);
    // Rank 0 of the fused shortlist for every signature (strict fp32 takes no tensor-core
    // engine; where cuDNN has no fused engine the step is timed afresh).
    run_pinned_op_by_op(graph, input, ConvChoice{"GRAPH_0", "TENSOR_OP_MATH", "graph+epilogue", 0},
                        -1, [](const Plan& plan, const std::vector<OpPlan>& plans) {
        std::vector<std::string> fused;
        for (const char* name :
             {"bias_relu", "bias_only", "relu_only", "bias_residual_relu", "into_concat"})
            if (plan_of(plans, name).path.find("epilogue fused") != std::string::npos)
                fused.push_back(name);
        WARN(fmt::format("{}: {} of 5 convolutions ran with their epilogue fused into the graph "
                         "({})",
                         label(plan), fused.size(), fmt::join(fused, ", ")));
        // cuDNN's runtime-fusion engines cover 16-bit channels-last convolutions on Hopper.
        if (plan.layout == TensorLayout::Nhwc && plan.precision == Precision::Fp16)
            for (const char* name : {"bias_relu", "bias_only", "relu_only", "bias_residual_relu"})
                CHECK(std::find(fused.begin(), fused.end(), name) != fused.end());
    }, true);
}

TEST_CASE("every engine of the fused graph shortlist computes a grouped residual convolution, "
          "its output and z packed or in one concat", "[gpu][engine][precision][graph]") {
    // test_fusion.cpp's res_grouped_nobias (groups 4, no bias, z and y slices of one concat)
    // came out wrong in channels-last through the fused shortlist's rank 0 (engine 8): relative
    // error 0.86 in fp32/TF32, NaN in fp16. Each rank of both shortlists (the convolution alone,
    // and with the residual fused) pinned in turn, each placement of y and z.
    for (const bool y_slice : {false, true}) {
        for (const bool z_slice : {false, true}) {
            Graph graph("grouped_residual", Shape{2, 16, 10, 10});
            const auto conv = [&](int out, int kernel, const SameConv& o, std::vector<int> inputs,
                                  const char* name) {
                return graph.add(OpKind::Conv, same_conv(out, kernel, o), std::move(inputs), name);
            };
            const int x = conv(24, 3, {.relu = true}, {kGraphInput}, "x");
            const int z = conv(24, 1, {}, {kGraphInput}, "z");
            const int res = conv(24, 3, {.groups = 4, .bias = false, .residual = true}, {x, z}, "res");
            const int a = z_slice ? z : conv(24, 1, {}, {z}, "after_z");
            const int b = y_slice ? res : conv(24, 1, {}, {res}, "after_res");
            graph.add(OpKind::Concat, ConcatAttrs{}, {a, b}, "cat");
            init_random_weights(graph, 71);
            const HostTensor input = random_input(graph.input_shape(), 72);
            for (int rank = 0; rank < 12; ++rank) {
                const ConvChoice pin{fmt::format("GRAPH_{}", rank % 6), "TENSOR_OP_MATH",
                                     rank < 6 ? "graph+epilogue" : "graph", 0};
                INFO(fmt::format("y {}, z {}, pinned {} {}", y_slice ? "in the concat" : "packed",
                                 z_slice ? "in the concat" : "packed", pin.algorithm, pin.path));
                run_pinned_op_by_op(graph, input, pin, -1,
                                    [&](const Plan& plan, const std::vector<OpPlan>& plans) {
                    const OpPlan& p = plan_of(plans, "res");
                    WARN(fmt::format("{}: y {}, z {}, {} {}: res via {} [{}]", label(plan),
                                     y_slice ? "slice" : "packed", z_slice ? "slice" : "packed",
                                     pin.algorithm, pin.path, p.path, p.algorithms));
                });
            }
        }
    }
}

TEST_CASE("convolutions with a fused activation match the reference on every path, fused into "
          "the cuDNN graph where cuDNN has the activation",
          "[gpu][engine][precision][graph][activation]") {
    // Each activation function after a convolution, with and without bias, with a residual, on
    // the depthwise kernel's and cuBLASLt's shapes (channels-last), and two written into a
    // concat slice (the activation applies before a staged output's copy).
    Graph graph("conv_activation", Shape{2, 16, 12, 12});
    const auto conv = [&](int out, int kernel, int groups, bool bias, bool residual,
                          ActivationAttrs activation, std::vector<int> inputs, const char* name) {
        return graph.add(OpKind::Conv,
                         same_conv(out, kernel,
                                   {.groups = groups, .bias = bias, .residual = residual,
                                    .activation = activation}),
                         std::move(inputs), name);
    };
    const int clip = conv(24, 3, 1, true, false, {ActivationFunction::Clip, 0.0f, 6.0f},
                          {kGraphInput}, "clip6");
    const int sigmoid = conv(16, 1, 1, false, false, {ActivationFunction::Sigmoid}, {clip},
                             "sigmoid_no_bias");
    const int silu = conv(16, 3, 1, true, true, {ActivationFunction::Silu},
                          {sigmoid, kGraphInput}, "silu_residual");
    const int hardsigmoid = conv(16, 3, 1, true, false,
                                 {ActivationFunction::HardSigmoid, 1.0f / 6.0f, 0.5f}, {silu},
                                 "hardsigmoid");
    const int leaky = conv(16, 3, 1, true, false, {ActivationFunction::LeakyRelu, 0.1f},
                           {hardsigmoid}, "leakyrelu");
    const int gelu = conv(16, 3, 16, true, false, {ActivationFunction::Gelu}, {leaky},
                          "gelu_depthwise");
    const int hardswish = conv(24, 3, 1, true, false, {ActivationFunction::HardSwish}, {gelu},
                               "hardswish_into_concat");
    const int tanh = conv(8, 1, 1, true, false, {ActivationFunction::Tanh}, {gelu},
                          "tanh_1x1_into_concat");
    const int cat = graph.add(OpKind::Concat, ConcatAttrs{}, {hardswish, tanh}, "cat");
    graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true}, {cat}, "gap");
    init_random_weights(graph, 51);
    const HostTensor input = random_input(graph.input_shape(), 52);
    const std::vector<const char*> convs = {
        "clip6",          "sigmoid_no_bias", "silu_residual",        "hardsigmoid",
        "leakyrelu",      "gelu_depthwise",  "hardswish_into_concat", "tanh_1x1_into_concat"};
    // Every activated convolution says where its activation ran; cuDNN has no hard-sigmoid or
    // hard-swish mode, so those never run in a fused graph.
    const auto check_paths = [&](const Plan& plan, const std::vector<OpPlan>& plans) {
        std::vector<std::string> fused;
        for (const char* name : convs) {
            const std::string& path = plan_of(plans, name).path;
            INFO(label(plan) << ": " << name << ": " << path);
            CHECK((path.find("fused into the graph") != std::string::npos ||
                   path.find("fused into the depthwise kernel") != std::string::npos ||
                   path.find("fused into the bias kernel") != std::string::npos ||
                   path.find("by the activation kernel") != std::string::npos));
            if (path.find("fused into the graph") != std::string::npos) fused.push_back(name);
        }
        for (const char* name : {"hardsigmoid", "hardswish_into_concat"})
            CHECK(std::find(fused.begin(), fused.end(), name) == fused.end());
        WARN(fmt::format("{}: {} of {} convolutions ran with their activation fused into the "
                         "graph ({})",
                         label(plan), fused.size(), convs.size(), fmt::join(fused, ", ")));
    };
    // Rank 0 of the fused shortlist where there is one (hard-sigmoid and hard-swish, and
    // signatures without a fused engine, are timed afresh).
    run_pinned_op_by_op(graph, input, ConvChoice{"GRAPH_0", "TENSOR_OP_MATH", "graph+epilogue", 0},
                        -1, check_paths, true);
    // The depthwise convolution on the engine's depthwise kernel (channels-last), which applies
    // its GELU as it writes; the other convolutions are timed afresh.
    run_pinned_op_by_op(graph, input, kPinDepthwise, -1, [&](const Plan& plan,
                                                             const std::vector<OpPlan>& plans) {
        const std::string& path = plan_of(plans, "gelu_depthwise").path;
        INFO(label(plan) << ": gelu_depthwise: " << path);
        CHECK(path.find("fused into the depthwise kernel") != std::string::npos);
    });
    // As the planner chooses, in every plan.
    const std::vector<HostTensor> ref = reference_run_all(graph, input);
    for (const Plan& plan : every_plan()) {
        Engine engine(graph, options_for(plan));
        check_paths(plan, check_every_op(engine, graph, input, ref, plan));
    }
}

TEST_CASE("the bias kernel adds the bias and applies the activation over odd channel counts, "
          "packed and in concat slices, in both layouts", "[gpu][engine][precision][activation]") {
    // 77 channels (RandWire's stem): no per-pixel pack fits, so a packed output takes the flat
    // kernel (its channel wrapping inside a pack); the concat slices take the per-pixel kernel
    // (channels-last) or the element kernel (NCHW). cuDNN refuses the pinned algorithm for some
    // of these shapes in some plans (those are timed afresh); the two activated convolutions
    // take it in every plan.
    Graph graph("bias_kernel", Shape{2, 3, 20, 20});
    const auto conv = [&](int out, bool relu, std::optional<ActivationAttrs> activation,
                          const char* name) {
        return graph.add(OpKind::Conv, same_conv(out, 3, {.relu = relu, .activation = activation}),
                         {kGraphInput}, name);
    };
    conv(77, false, ActivationAttrs{ActivationFunction::Silu}, "silu_77");
    conv(77, true, std::nullopt, "relu_77");
    const int hs = conv(24, false, ActivationAttrs{ActivationFunction::HardSwish}, "hardswish_slice");
    const int plain = conv(13, false, std::nullopt, "bias_slice");
    graph.add(OpKind::Concat, ConcatAttrs{}, {hs, plain}, "cat");
    init_random_weights(graph, 61);
    const HostTensor input = random_input(graph.input_shape(), 62);
    run_pinned_op_by_op(graph, input,
                        ConvChoice{"IMPLICIT_GEMM", "DEFAULT_MATH", "conv+epilogue", 0}, -1,
                        [](const Plan& plan, const std::vector<OpPlan>& plans) {
        for (const char* name : {"silu_77", "hardswish_slice"}) {
            INFO(label(plan) << ": " << name << ": " << plan_of(plans, name).path);
            CHECK_THAT(plan_of(plans, name).path, Catch::Contains("fused into the bias kernel"));
        }
        CHECK(plan_of(plans, "hardswish_slice").writes_into_concat);
    }, true);
}

// compute-sanitizer's racecheck checks shared memory, and of the engine's kernels only global
// pooling (channels-last) and group norm use it. Under racecheck the tool itself fails at cuDNN's
// fp16 channels-last convolutions (docs/memory.md), so this graph has no convolution: every
// kernel in it is the engine's (scripts/sanitize.sh runs it under racecheck).
TEST_CASE("the kernels that use shared memory (global pooling, group norm) match the reference "
          "with no library kernel in the graph", "[gpu][engine][precision][pool][racecheck]") {
    for (const int batch : {1, 2}) {
        Graph graph("shared_memory_kernels", Shape{batch, 42, 28, 28});
        const PoolAttrs global{1, 1, 1, 1, 0, 0, false, true, true};
        const int avg = graph.add(OpKind::AvgPool, global, {kGraphInput}, "avg");
        const int max = graph.add(OpKind::MaxPool, global, {kGraphInput}, "max");
        graph.add(OpKind::Concat, ConcatAttrs{}, {avg, max}, "pools");
        const int groups6 = graph.add(OpKind::GroupNorm, GroupNormAttrs{6, 1e-5f}, {kGraphInput},
                                      "group_norm6");
        const int instance = graph.add(OpKind::GroupNorm, GroupNormAttrs{42, 1e-5f},
                                       {kGraphInput}, "instance_norm");
        const int one = graph.add(OpKind::GroupNorm, GroupNormAttrs{1, 1e-3f}, {groups6},
                                  "group_norm1");
        graph.add(OpKind::Concat, ConcatAttrs{}, {instance, one}, "norms");
        init_random_weights(graph, 43);
        const HostTensor input = random_input(graph.input_shape(), 44);
        const std::vector<HostTensor> ref = reference_run_all(graph, input);
        for (const Plan& plan : all_plans()) {
            INFO("batch " << batch);
            Engine engine(graph, options_for(plan));
            check_every_op(engine, graph, input, ref, plan);
        }
    }
}

TEST_CASE("global pooling matches the reference: large maps at batch 1, odd channel counts, "
          "concat slices", "[gpu][engine][precision][pool]") {
    // 112x112 with 32 channels is EfficientNet-B0's first squeeze-and-excitation pool; 42
    // channels take two-element packs, 1000 a grid of several pack groups; the concat makes
    // the pools write strided slices.
    for (const int batch : {1, 3}) {
        Graph graph("global_pool", Shape{batch, 32, 112, 112});
        const int wide = graph.add(OpKind::Conv,
                                   ConvAttrs{42, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, false},
                                   {kGraphInput}, "to42");
        const int deep = graph.add(OpKind::Conv,
                                   ConvAttrs{1000, 3, 3, 16, 16, 1, 1, 1, 1, 1, true, true},
                                   {kGraphInput}, "to1000_7x7");
        const PoolAttrs global{1, 1, 1, 1, 0, 0, false, true, true};
        const int a = graph.add(OpKind::AvgPool, global, {kGraphInput}, "avg32");
        const int b = graph.add(OpKind::MaxPool, global, {kGraphInput}, "max32");
        const int c = graph.add(OpKind::AvgPool, global, {wide}, "avg42");
        const int d = graph.add(OpKind::AvgPool, global, {deep}, "avg1000");
        graph.add(OpKind::Concat, ConcatAttrs{}, {a, b, c, d}, "out");
        init_random_weights(graph, 41);
        const HostTensor input = random_input(graph.input_shape(), 42);
        const std::vector<HostTensor> ref = reference_run_all(graph, input);
        for (const Plan& plan : all_plans()) {
            INFO("batch " << batch);
            Engine engine(graph, options_for(plan));
            check_every_op(engine, graph, input, ref, plan);
        }
    }
}

TEST_CASE("TF32 convolution candidates read fp32 operands rounded or truncated: each one named",
          "[gpu][precision][tf32]") {
    // One operand 1 + 3*2^-12, the other 1, n products per output: a kernel that truncates the
    // odd operand to TF32 sums n, one that rounds it to nearest n(1 + 2^-10), strict fp32
    // n(1 + 3*2^-12) (every partial sum exact in fp32). EfficientNet-B0's TF32 error halved when
    // the filters were rounded at upload (src/tf32.h); a CPU emulation then put most of the rest
    // of its gap to PyTorch at the depthwise filters, rounded too although the channels-last
    // depthwise kernel computes in fp32 (docs/search-log.md, "The batch-1 and batch-16 rows on one
    // binary"). So three probes: a 1x1 convolution on an 8x8 map and on a 1x1 map (a
    // squeeze-excitation gate), the odd operand the input (how each kernel reads activations);
    // and a 5x5 depthwise convolution (25 products, no padding: every output full), the odd
    // operand the filter (how it is stored, and read).
    constexpr float kOdd = 1.0f + 3.0f / 4096.0f;
    struct Probe {
        const char* name;
        Shape input;
        ConvAttrs attrs;
        std::vector<int> weights;  // the filter's dims
        int products;
        float input_value, weight_value;
    };
    const Probe probes[] = {
        {"1x1 on 8x8", Shape{1, 256, 8, 8}, ConvAttrs{64, 1, 1, 1, 1, 0, 0, 1, 1, 1, false, false},
         {64, 256, 1, 1}, 256, kOdd, 1.0f},
        {"1x1 on 1x1 (a gate)", Shape{1, 256, 1, 1},
         ConvAttrs{64, 1, 1, 1, 1, 0, 0, 1, 1, 1, false, false}, {64, 256, 1, 1}, 256, kOdd, 1.0f},
        {"5x5 depthwise", Shape{1, 64, 8, 8},
         ConvAttrs{64, 5, 5, 1, 1, 0, 0, 1, 1, 64, false, false}, {64, 1, 5, 5}, 25, 1.0f, kOdd},
    };
    for (const Probe& probe : probes) {
        const double n = probe.products, truncated = n, rounded = n * (1.0 + 1.0 / 1024.0),
                     exact = n * double(kOdd);
        Graph graph("tf32_probe", probe.input);
        graph.add(OpKind::Conv, probe.attrs, {kGraphInput}, "conv");
        std::size_t filter_size = 1;
        for (const int dim : probe.weights) filter_size *= std::size_t(dim);
        graph.set_params(
            {{ParamTensor{probe.weights, std::vector<float>(filter_size, probe.weight_value)}}},
            WeightsState::Loaded);
        const HostTensor input(graph.input_shape(), probe.input_value);
        const auto classify = [&](const HostTensor& out) -> std::string {
            const auto [lo, hi] = std::minmax_element(out.data.begin(), out.data.end());
            if (*hi - *lo > 1e-3) return fmt::format("mixed ({} to {})", *lo, *hi);
            for (const auto& [value, name] : {std::pair{truncated, "truncates"},
                                              std::pair{rounded, "rounds"},
                                              std::pair{exact, "fp32"}})
                if (std::fabs(*lo - value) < 1e-3) return name;
            return fmt::format("other ({})", *lo);
        };
        for (const TensorLayout layout : {TensorLayout::Nhwc, TensorLayout::Nchw}) {
            const Plan plan{Precision::Tf32, layout};
            INFO(probe.name << ", " << label(plan));
            Engine chosen(graph, options_for(plan));
            chosen.set_input(input);
            const std::string chose = classify(run_schedule(chosen, sequential_schedule(graph)));
            const ConvChoices choices = chosen.conv_choices();
            if (choices.empty()) {
                // The engine's own kernel (channels-last depthwise): fp32 arithmetic on a filter
                // stored as given, so exact.
                WARN(fmt::format("{}, {}: the engine's own kernel, {}", probe.name, label(plan),
                                 chose));
                CHECK(chose == "fp32");
                continue;
            }
            CHECK((chose == "truncates" || chose == "rounds" || chose == "fp32"));
            REQUIRE(choices.size() == 1);
            const std::string signature = choices.begin()->first;
            std::vector<ConvChoice> candidates;
            for (int rank = 0; rank < 8; ++rank) {
                candidates.push_back({fmt::format("GEMM_{}", rank), "TENSOR_OP_MATH", "gemm", 0});
                candidates.push_back({fmt::format("GRAPH_{}", rank), "TENSOR_OP_MATH", "graph", 0});
            }
            for (const char* algo : {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                     "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"})
                for (const char* math : {"TENSOR_OP_MATH", "DEFAULT_MATH"})
                    candidates.push_back({algo, math, "conv", 0});
            // The engine's own channels-last depthwise kernel, pinned where the planner chose
            // cuDNN (call174: GRAPH_0 at this shape), so that its exactness is still checked.
            candidates.push_back({"DEPTHWISE_NHWC", "FMA_MATH", "depthwise", 0});
            candidates.push_back({"DEPTHWISE_NHWC_NARROW", "FMA_MATH", "depthwise", 0});
            candidates.push_back({"DEPTHWISE_NHWC_TILED", "FMA_MATH", "depthwise", 0});
            std::vector<std::string> seen;
            for (const ConvChoice& candidate : candidates) {
                EngineOptions options = options_for(plan);
                options.conv_choices[signature] = candidate;
                Engine pinned(graph, options);
                if (pinned.pinned_conv_count() != 1) continue;  // cannot run here
                pinned.set_input(input);
                const std::string how = classify(run_schedule(pinned, sequential_schedule(graph)));
                const ConvChoice ran = pinned.conv_choices().begin()->second;  // a copy
                seen.push_back(fmt::format("{} {} {}: {}", ran.algorithm, ran.math, ran.path, how));
                INFO(seen.back());
                // TF32 reads an operand one of two ways, or the kernel stays in strict fp32.
                CHECK((how == "truncates" || how == "rounds" || how == "fp32"));
                // The engine's own depthwise kernel: fp32 arithmetic on a filter stored as given.
                if (ran.path == "depthwise") CHECK(how == "fp32");
            }
            CHECK(!seen.empty());
            WARN(fmt::format("{}, {}: the planner chose {} ({}); the candidates: {}", probe.name,
                             label(plan), choices.begin()->second.algorithm, chose,
                             fmt::join(seen, "; ")));
        }
    }
}

TEST_CASE("linear layers match the reference on the engine's rows kernel (batch up to 8) and on "
          "cuBLAS above: odd lengths, no bias, a flattened map, concat slices",
          "[gpu][engine][precision][linear]") {
    // 41 channels of 3x3 flatten to 369 inputs (one-element packs); the 1x1 convolution's 64 to
    // 16-byte packs; fc_a and fc_b write slices of one concat, fc_c reads it whole.
    for (const int batch : {1, 3, 8, 9}) {
        Graph graph("linear", Shape{batch, 41, 3, 3});
        graph.add(OpKind::Linear, LinearAttrs{37, true}, {kGraphInput}, "fc_map");
        const int wide = graph.add(OpKind::Conv,
                                   ConvAttrs{64, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, true},
                                   {kGraphInput}, "to64");
        const int gap = graph.add(OpKind::AvgPool, PoolAttrs{1, 1, 1, 1, 0, 0, false, true, true},
                                  {wide}, "gap");
        const int a = graph.add(OpKind::Linear, LinearAttrs{1000, true}, {gap}, "fc_a");
        const int b = graph.add(OpKind::Linear, LinearAttrs{10, false}, {gap}, "fc_b");
        const int cat = graph.add(OpKind::Concat, ConcatAttrs{}, {a, b}, "cat");
        graph.add(OpKind::Linear, LinearAttrs{5, true}, {cat}, "fc_c");
        init_random_weights(graph, 71);
        const HostTensor input = random_input(graph.input_shape(), 72);
        const std::vector<HostTensor> ref = reference_run_all(graph, input);
        for (const Plan& plan : all_plans()) {
            INFO("batch " << batch);
            Engine engine(graph, options_for(plan));
            const std::vector<OpPlan> plans = check_every_op(engine, graph, input, ref, plan);
            for (const char* name : {"fc_map", "fc_a", "fc_b", "fc_c"}) {
                INFO(label(plan) << ": " << name << ": " << plan_of(plans, name).path);
                if (batch <= kLinearRowsMax)
                    CHECK_THAT(plan_of(plans, name).path,
                               Catch::EndsWith("linear rows kernel (bias fused)"));
                else
                    CHECK_THAT(plan_of(plans, name).path, Catch::Contains("cublas"));
            }
        }
    }
}
