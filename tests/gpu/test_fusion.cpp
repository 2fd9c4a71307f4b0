// [gpu] Fused epilogues (src/fusion.h) in the engine: residual convolutions (with and without
// bias and ReLU, a grouped one, one reading its z from a concat slice and writing into another)
// in every precision and layout, and the fused ResNet-50, all against the fp32 CPU reference.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "src/engine/engine.h"
#include "src/fusion.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "src/zoo/zoo.h"
#include "tests/gpu/engine_fixtures.h"

using namespace iostune;
using namespace iostune::test;

namespace {

ConvAttrs conv(int out_channels, int kernel, bool bias, bool relu, bool residual, int groups = 1) {
    return same_conv(out_channels, kernel,
                     {.groups = groups, .bias = bias, .relu = relu, .residual = residual});
}

// Residual convolutions in each epilogue form. z of "res_from_slice" lives in a concat's slice
// (a strided view); "res_into_slice" and "res_grouped_nobias" write into the final concat.
Graph residual_graph() {
    Graph g("residual", Shape{2, 16, 10, 10});
    const int stem = g.add(OpKind::Conv, conv(24, 3, true, true, false), {kGraphInput}, "stem");
    const int z1 = g.add(OpKind::Conv, conv(24, 1, true, false, false), {kGraphInput}, "z1");
    const int bias_relu = g.add(OpKind::Conv, conv(24, 3, true, true, true), {stem, z1},
                                "res_bias_relu");
    const int bias_only = g.add(OpKind::Conv, conv(24, 3, true, false, true), {stem, bias_relu},
                                "res_bias");
    const int nobias = g.add(OpKind::Conv, conv(24, 1, false, true, true), {bias_only, stem},
                             "res_nobias_relu");
    // A depthwise residual conv: the engine's channels-last depthwise kernel has no z and must
    // not run it.
    const int depthwise = g.add(OpKind::Conv, conv(24, 3, true, true, true, 24), {nobias, stem},
                                "res_depthwise");
    const int za = g.add(OpKind::Conv, conv(24, 1, true, true, false), {depthwise}, "za");
    const int zb = g.add(OpKind::Conv, conv(8, 1, true, true, false), {depthwise}, "zb");
    const int zcat = g.add(OpKind::Concat, ConcatAttrs{}, {za, zb}, "z_concat");
    const int from_slice = g.add(OpKind::Conv, conv(24, 3, true, true, true), {nobias, za},
                                 "res_from_slice");
    const int into_slice = g.add(OpKind::Conv, conv(24, 1, true, false, true),
                                 {from_slice, depthwise}, "res_into_slice");
    const int grouped = g.add(OpKind::Conv, conv(24, 3, false, false, true, 4),
                              {from_slice, into_slice}, "res_grouped_nobias");
    g.add(OpKind::Concat, ConcatAttrs{}, {into_slice, grouped, zcat}, "out_concat");
    return g;
}

bool is_residual(const Op& op) { return op.kind == OpKind::Conv && op.as<ConvAttrs>().residual; }

}  // namespace

TEST_CASE("residual convolutions match the CPU reference in every precision and layout",
          "[gpu][engine][fusion]") {
    Graph graph = residual_graph();
    init_random_weights(graph, 5);
    const HostTensor input = random_input(graph.input_shape(), 6);
    const std::vector<HostTensor> ref = reference_run_all(graph, input);
    for (const Plan& plan : every_plan()) {
        EngineOptions options;
        options.precision = plan.precision;
        options.layout = plan.layout;
        Engine engine(graph, every_output_kept(options));
        engine.set_input(input);
        const Schedule sequential = sequential_schedule(graph);
        engine.prepare(sequential);
        engine.launch_schedule(sequential, engine.origin_stream());
        const std::vector<OpPlan> plans = engine.op_plans();
        const double bound = op_error_bound(plan.precision);
        for (const Op& op : graph.ops()) {
            const OpPlan& p = plans[size_t(op.id)];
            const double err = relative_error(engine.read_op_output(op.id), ref[size_t(op.id)]);
            INFO(fmt::format("{} {}: op {} '{}' via {} [{}]: relative error {:.3g} (bound {:.3g})",
                             to_string(plan.precision), to_string(plan.layout), op.id, op.name,
                             p.path, p.algorithms, err, bound));
            CHECK(err < bound);
            if (!is_residual(op)) continue;
            // The plan says how z was added; never by the depthwise kernel.
            CHECK_THAT(p.path, Catch::Contains("residual z fused (alpha2 = 1)") ||
                                   Catch::Contains("residual z fused into the graph") ||
                                   Catch::Contains("residual added by the add kernel") ||
                                   Catch::Contains("residual z as cuBLASLt's C"));
            CHECK_THAT(p.path, !Catch::Contains("depthwise kernel"));
            // cuDNN's legacy fused call needs a bias; the graph and cuBLASLt's epilogue do not.
            if (!op.as<ConvAttrs>().bias)
                CHECK_THAT(p.path, !Catch::Contains("residual z fused (alpha2 = 1)"));
        }
        WARN(to_string(plan.precision) << " " << to_string(plan.layout) << ": "
                                       << plan_summary(engine));
        // Concurrent stages and one CUDA graph replay on a fresh input.
        const Schedule greedy = greedy_schedule(graph);
        CHECK(relative_error(run_schedule(engine, greedy), ref.back()) < bound);
        CudaGraphExec exec = engine.capture(greedy);
        const HostTensor input2 = random_input(graph.input_shape(), 7);
        engine.set_input(input2);
        exec.launch(engine.origin_stream());
        CHECK(relative_error(engine.read_output(), reference_run(graph, input2)) < bound);
    }
}

TEST_CASE("the fused ResNet-50 matches the CPU reference of the unfused one",
          "[gpu][engine][fusion][zoo]") {
    Graph unfused = build_zoo_model("resnet50", 2);
    init_random_weights(unfused, 3);
    const FusedGraph fused = fuse_epilogues(unfused);
    REQUIRE(fused.counts.conv_add == 16);
    const HostTensor input = random_input(unfused.input_shape(), 5);
    const HostTensor ref = reference_run(unfused, input);
    CHECK(relative_error(reference_run(fused.graph, input), ref) < 1e-6);
    for (const Plan& plan : {Plan{Precision::Fp32, TensorLayout::Nchw},
                             Plan{Precision::Tf32, TensorLayout::Nhwc},
                             Plan{Precision::Fp16, TensorLayout::Nhwc},
                             Plan{Precision::Bf16, TensorLayout::Nhwc}}) {
        EngineOptions options;
        options.precision = plan.precision;
        options.layout = plan.layout;
        Engine engine(fused.graph, options);
        engine.set_input(input);
        const double bound = model_error_bound(plan.precision);
        const double e_seq = relative_error(run_schedule(engine, sequential_schedule(fused.graph)), ref);
        int merges = 0;
        const Schedule merged = merged_schedule(fused.graph, &merges);
        const double e_merged = relative_error(run_schedule(engine, merged), ref);
        int residual_fused = 0, residual_kernel = 0, residual_gemm = 0;
        for (const OpPlan& p : engine.op_plans()) {
            if (p.path.find("residual z fused") != std::string::npos) ++residual_fused;
            if (p.path.find("residual added by the add kernel") != std::string::npos) ++residual_kernel;
            if (p.path.find("residual z as cuBLASLt's C") != std::string::npos) ++residual_gemm;
        }
        const std::string label = fmt::format("resnet50 b2 fused {} {}", to_string(plan.precision),
                                              to_string(plan.layout));
        INFO(fmt::format("{}: relative error sequential {:.3g}, merged ({} merges) {:.3g} (bound "
                         "{:.3g})",
                         label, e_seq, merges, e_merged, bound));
        CHECK(e_seq < bound);
        CHECK(e_merged < bound);
        CHECK(residual_fused + residual_kernel + residual_gemm == 16);
        WARN(fmt::format("{}: err seq {:.2g} merged {:.2g}; residual convs: {} by cuDNN's z, {} "
                         "by the add kernel, {} by cuBLASLt's C",
                         label, e_seq, e_merged, residual_fused, residual_kernel, residual_gemm));
    }
}

TEST_CASE("a residual conv whose z is the RGB input keeps the input unpadded", "[gpu][engine][fusion]") {
    // Padding the input to 8 channels is only for convolutions reading it as x; z is added as
    // it is and must keep the output's 3 channels.
    Graph graph("rgb_residual", Shape{2, 3, 12, 12});
    graph.add(OpKind::Conv, conv(3, 3, true, true, true), {kGraphInput, kGraphInput}, "res");
    init_random_weights(graph, 5);
    const HostTensor input = random_input(graph.input_shape(), 6);
    const HostTensor ref = reference_run(graph, input);
    for (const Plan& plan : every_plan()) {
        EngineOptions options;
        options.precision = plan.precision;
        options.layout = plan.layout;
        options.pad_input_channels = true;
        Engine engine(graph, options);
        INFO(to_string(plan.precision) << " " << to_string(plan.layout));
        CHECK(engine.native_input().c == 3);
        engine.set_input(input);
        CHECK(relative_error(run_schedule(engine, sequential_schedule(graph)), ref) <
              op_error_bound(plan.precision));
    }
}
