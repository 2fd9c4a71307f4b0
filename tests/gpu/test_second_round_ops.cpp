// [gpu] The second round of deployed-CNN operators (issue 28: prelu and the convolution's fused
// PReLU, group_norm, radix_softmax, strided_slice, depth_to_space, space_to_depth, flatten) on the
// engine: every one, op by op, against the fp32 CPU reference in each precision and layout,
// replayed as a CUDA graph and run under a schedule that merges two PReLU convolutions; and the
// imported PyTorch exports of issue 28's patterns (tests/fixtures/export_torchvision.py).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/engine/cuda_graph.h"
#include "src/engine/engine.h"
#include "src/fusion.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "tests/gpu/engine_fixtures.h"
#include "tests/gpu/onnx_fixtures.h"
#include "tests/gpu/second_round_graph.h"

using namespace iostune;
using namespace iostune::test;

namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.rfind(prefix, 0) == 0;
}

// What each kind's plan must say it runs.
void check_path(const Op& op, const OpPlan& p) {
    switch (op.kind) {
        case OpKind::PRelu: CHECK(p.path == "prelu kernel"); break;
        case OpKind::GroupNorm: CHECK(starts_with(p.path, "group norm kernel")); break;
        case OpKind::RadixSoftmax: CHECK(starts_with(p.path, "radix softmax kernel")); break;
        case OpKind::StridedSlice: CHECK(starts_with(p.path, "strided slice kernel")); break;
        case OpKind::DepthToSpace: CHECK(starts_with(p.path, "depth to space kernel")); break;
        case OpKind::SpaceToDepth: CHECK(starts_with(p.path, "space to depth kernel")); break;
        case OpKind::Flatten: CHECK(p.path == "flatten kernel"); break;
        case OpKind::Conv:
            // A fused PReLU is applied by the kernel that writes the output, or by the PReLU
            // kernel after the convolution; the plan names which.
            if (op.as<ConvAttrs>().prelu) CHECK(p.path.find("; prelu ") != std::string::npos);
            break;
        default: break;
    }
}

}  // namespace

TEST_CASE("every second-round operator matches the CPU reference in each precision and layout, "
          "op by op, and replays as a CUDA graph",
          "[gpu][engine][precision][deployed][second_round]") {
    Graph graph = second_round_ops_graph(2);
    init_random_weights(graph, 5);
    const HostTensor input = random_input(graph.input_shape(), 13);
    const HostTensor input2 = random_input(graph.input_shape(), 14);
    const std::vector<HostTensor> ref = reference_run_all(graph, input);
    const HostTensor ref2 = reference_run(graph, input2);
    for (const Plan& plan : every_plan()) {
        Engine engine(graph, every_output_kept(options_for(plan)));
        engine.set_input(input);
        const Schedule sequential = sequential_schedule(graph);
        engine.prepare(sequential);
        engine.launch_schedule(sequential, engine.origin_stream());
        const std::vector<OpPlan> plans = engine.op_plans();
        const double bound = op_error_bound(plan.precision);
        for (const Op& op : graph.ops()) {
            const OpPlan& p = plans[size_t(op.id)];
            const double err = relative_error(engine.read_op_output(op.id), ref[size_t(op.id)]);
            INFO(fmt::format("{}: op {} '{}' ({}) via {} [{}]: relative error {:.3g} (bound "
                             "{:.3g})",
                             label(plan), op.id, op.name, to_string(op.kind), p.path, p.algorithms,
                             err, bound));
            CHECK(err < bound);
            check_path(op, p);
            if (op.name == "group_norm1" || op.name == "flatten_map") CHECK(p.writes_into_concat);
            if (op.name == "depthwise_prelu" && plan.layout == TensorLayout::Nhwc)
                WARN(label(plan) << ": the depthwise PReLU convolution runs " << p.path);
        }
        CudaGraphExec exec = engine.capture(sequential);
        engine.set_input(input2);
        exec.launch(engine.origin_stream());
        const double err = relative_error(engine.read_output(), ref2);
        INFO(label(plan) << ": the captured graph's output errs by " << err);
        CHECK(err < bound);
    }
}

TEST_CASE("convolutions with a fused PReLU merge (their slopes stacked) and match the reference",
          "[gpu][engine][precision][second_round][merge]") {
    Graph graph = second_round_ops_graph(1);
    init_random_weights(graph, 8);
    const HostTensor input = random_input(graph.input_shape(), 9);
    const std::vector<HostTensor> ref = reference_run_all(graph, input);
    int merges = 0;
    const Schedule merged = merged_schedule(graph, &merges);
    bool prelu_pair = false;
    for (const Stage& stage : merged.flat_stages())
        if (stage.strategy == StageStrategy::Merge)
            for (int id : stage.groups[0])
                prelu_pair = prelu_pair || graph.op(id).name == "merge_a";
    REQUIRE(prelu_pair);
    for (const Plan& plan : {Plan{Precision::Fp32, TensorLayout::Nchw},
                             Plan{Precision::Tf32, TensorLayout::Nhwc},
                             Plan{Precision::Fp16, TensorLayout::Nhwc},
                             Plan{Precision::Bf16, TensorLayout::Nchw}}) {
        Engine engine(graph, every_output_kept(options_for(plan)));
        engine.set_input(input);
        engine.prepare(merged);
        engine.launch_schedule(merged, engine.origin_stream());
        for (const Op& op : graph.ops()) {
            const double err = relative_error(engine.read_op_output(op.id), ref[size_t(op.id)]);
            INFO(fmt::format("{} under {} merges: op '{}': relative error {:.3g}", label(plan),
                             merges, op.name, err));
            CHECK(err < op_error_bound(plan.precision));
        }
    }
}

TEST_CASE("imported PyTorch exports of issue 28's patterns run on the engine as on the CPU "
          "reference",
          "[gpu][engine][onnx][deployed][second_round][fixtures]") {
    const std::optional<nlohmann::json> manifest = onnx_fixture_manifest();
    if (!manifest) return;
    const std::filesystem::path dir = onnx_fixture_dir();
    const std::vector<std::string> names = {
        "prelu_net",        "group_norms",       "split_attention", "split_attention_opset11",
        "selective_kernel", "flat_concat_head",  "focus_stem",      "pixel_shuffles",
        "depth_space_nodes", "espcn"};
    for (const std::string& name : names) {
        const nlohmann::json entry = onnx_fixture(*manifest, name);
        OnnxImportOptions options;
        options.batch = entry["batch"].get<int>();
        const Graph imported =
            import_onnx_file((dir / entry["onnx"].get<std::string>()).string(), options);
        const Graph graph = fuse_epilogues(imported).graph;
        const HostTensor input = random_input(graph.input_shape(), 21);
        const std::vector<HostTensor> ref = reference_run_outputs(imported, {input});
        for (const Plan& plan : every_plan()) {
            Engine engine(graph, options_for(plan));
            engine.set_input(input);
            const Schedule sequential = sequential_schedule(graph);
            engine.prepare(sequential);
            engine.launch_schedule(sequential, engine.origin_stream());
            fixture_outputs_agree(entry, plan, graph.size(), engine.read_outputs(), ref);
        }
    }
}
