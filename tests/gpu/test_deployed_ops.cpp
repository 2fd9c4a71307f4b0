// [gpu] The operators of deployed CNNs (activation, binary, channel_affine, channel_shuffle,
// channel_slice, resize, conv_transpose, channel_norm) on the engine: every one, op by op, against
// the fp32 CPU reference in each precision and layout, replayed as a CUDA graph, and imported
// PyTorch exports of the families that use them (tests/fixtures/export_torchvision.py).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/engine/cuda_graph.h"
#include "src/engine/engine.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "tests/gpu/deployed_ops_graph.h"
#include "tests/gpu/engine_fixtures.h"

using namespace iostune;
using namespace iostune::test;

namespace {

struct Plan {
    Precision precision;
    TensorLayout layout;
};

const std::vector<Plan>& every_plan() {
    static const std::vector<Plan> plans = {
        {Precision::Fp32, TensorLayout::Nchw}, {Precision::Fp32, TensorLayout::Nhwc},
        {Precision::Tf32, TensorLayout::Nchw}, {Precision::Tf32, TensorLayout::Nhwc},
        {Precision::Fp16, TensorLayout::Nchw}, {Precision::Fp16, TensorLayout::Nhwc},
        {Precision::Bf16, TensorLayout::Nchw}, {Precision::Bf16, TensorLayout::Nhwc}};
    return plans;
}

std::string label(const Plan& plan) {
    return fmt::format("{} {}", to_string(plan.precision), to_string(plan.layout));
}

EngineOptions options_for(const Plan& plan) {
    EngineOptions options;
    options.precision = plan.precision;
    options.layout = plan.layout;
    return options;
}

}  // namespace

TEST_CASE("every deployed-CNN operator matches the CPU reference in each precision and layout, "
          "op by op, and replays as a CUDA graph",
          "[gpu][engine][precision][deployed]") {
    Graph graph = deployed_ops_graph(2);
    init_random_weights(graph, 5);
    const HostTensor input = random_input(graph.input_shape(), 13);
    const HostTensor input2 = random_input(graph.input_shape(), 14);
    const std::vector<HostTensor> ref = reference_run_all(graph, input);
    const HostTensor ref2 = reference_run(graph, input2);
    for (const Plan& plan : every_plan()) {
        Engine engine(graph, options_for(plan));
        engine.set_input(input);
        const Schedule sequential = sequential_schedule(graph);
        engine.prepare(sequential);
        engine.launch_schedule(sequential, engine.origin_stream());
        const std::vector<OpPlan> plans = engine.op_plans();
        const double bound = op_error_bound(plan.precision);
        for (const Op& op : graph.ops()) {
            const OpPlan& p = plans[size_t(op.id)];
            const double err = relative_error(engine.read_op_output(op.id), ref[size_t(op.id)]);
            INFO(fmt::format("{}: op {} '{}' ({}) via {} [{}]: relative error {:.3g} (bound {:.3g})",
                             label(plan), op.id, op.name, to_string(op.kind), p.path, p.algorithms,
                             err, bound));
            CHECK(err < bound);
            if (op.kind == OpKind::ChannelSlice) CHECK(p.path.find("no copy") != std::string::npos);
            if (op.name == "hardswish") CHECK(p.path == "activation kernel (hardswish)");
            if (op.kind == OpKind::ConvTranspose)
                CHECK(p.path.rfind("cudnnConvolutionBackwardData", 0) == 0);
            if (op.name == "deconv_2x2_s2") {
                CHECK(p.writes_into_concat);
                WARN(label(plan) << ": the U-Net transposed conv into its concat slice runs "
                                 << p.path << " [" << p.algorithms << "]");
            }
        }
        // The same launches captured once and replayed on another input.
        CudaGraphExec exec = engine.capture(sequential);
        engine.set_input(input2);
        exec.launch(engine.origin_stream());
        const double err = relative_error(engine.read_output(), ref2);
        INFO(label(plan) << ": the captured graph's output errs by " << err);
        CHECK(err < bound);
    }
}

TEST_CASE("imported PyTorch exports of the deployed families run on the engine as on the CPU "
          "reference",
          "[gpu][engine][onnx][deployed]") {
    // Exported by tests/fixtures/export_torchvision.py into the build tree (target onnx_fixtures).
    const std::filesystem::path dir = std::filesystem::path(IOSTUNE_BINARY_DIR) / "tests" /
                                      "onnx_fixtures";
    std::ifstream file(dir / "manifest.json");
    if (!file)
        FAIL("no " << (dir / "manifest.json").string()
                   << ": build the onnx_fixtures target first (cmake --build build --target "
                      "onnx_fixtures)");
    const nlohmann::json manifest = nlohmann::json::parse(file);
    if (manifest.value("skipped", true)) {
        WARN("the PyTorch fixtures were skipped (no torch for /usr/bin/python3); nothing checked");
        return;
    }
    // One model per operator family: hardswish/SE (mobilenet_v3_small), silu/SE (efficientnet_b0),
    // shuffle and split (shufflenet_v2_x0_5), layer norm and gelu (convnext_tiny), conv transpose
    // and concat (unet), nearest resize and several outputs (the FPN backbone).
    const std::vector<std::string> names = {"mobilenet_v3_small", "efficientnet_b0",
                                            "shufflenet_v2_x0_5", "convnext_tiny", "unet",
                                            "fasterrcnn_fpn_backbone"};
    for (const std::string& name : names) {
        nlohmann::json entry;
        for (const auto& e : manifest["models"])
            if (e["name"] == name) entry = e;
        if (entry.is_null()) FAIL("the fixture manifest has no " << name);
        OnnxImportOptions options;
        options.batch = entry["batch"].get<int>();
        Graph graph = import_onnx_file((dir / entry["onnx"].get<std::string>()).string(), options);
        const HostTensor input = random_input(graph.input_shape(), 21);
        const std::vector<HostTensor> ref = reference_run_outputs(graph, {input});
        // Strict fp32 in the reference's layout, and the storages deployments use.
        for (const Plan& plan : {Plan{Precision::Fp32, TensorLayout::Nchw},
                                 Plan{Precision::Tf32, TensorLayout::Nhwc},
                                 Plan{Precision::Fp16, TensorLayout::Nhwc}}) {
            Engine engine(graph, options_for(plan));
            engine.set_input(input);
            const Schedule sequential = sequential_schedule(graph);
            engine.prepare(sequential);
            engine.launch_schedule(sequential, engine.origin_stream());
            const std::vector<HostTensor> out = engine.read_outputs();
            REQUIRE(out.size() == ref.size());
            for (size_t k = 0; k < out.size(); ++k) {
                const double err = relative_error(out[k], ref[k]);
                INFO(fmt::format("{} {} output {}: {} ops, relative error {:.3g} (bound {:.3g})",
                                 name, label(plan), k, graph.size(), err,
                                 model_error_bound(plan.precision)));
                CHECK(err < model_error_bound(plan.precision));
            }
        }
    }
}
