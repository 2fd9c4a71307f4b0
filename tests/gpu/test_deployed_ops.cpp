// [gpu] The operators of deployed CNNs (activation, binary, channel_affine, channel_shuffle,
// channel_slice, resize, conv_transpose, channel_norm, spatial_pad) on the engine: every one, op by op, against
// the fp32 CPU reference in each precision and layout, replayed as a CUDA graph, and imported
// PyTorch exports of the families that use them (tests/fixtures/export_torchvision.py).
#include <catch2/catch.hpp>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/engine/conv_transpose_step.h"
#include "src/engine/cuda_graph.h"
#include "src/engine/cudnn_handle.h"
#include "src/engine/device_buffer.h"
#include "src/engine/engine.h"
#include "src/engine/kernels.h"
#include "src/engine/op_kernels.h"
#include "src/fusion.h"
#include "src/onnx/onnx_import.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"
#include "tests/gpu/deployed_ops_graph.h"
#include "tests/gpu/engine_fixtures.h"
#include "tests/gpu/onnx_fixtures.h"

using namespace iostune;
using namespace iostune::test;

namespace {

// Stride, padding and output padding with groups and bias; dilation without bias; U-Net's 2x2
// stride 2.
std::vector<ConvTransposeAttrs> conv_transpose_cases() {
    return {ConvTransposeAttrs{8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, true},
            ConvTransposeAttrs{12, 3, 3, 1, 1, 2, 2, 0, 0, 2, 2, 1, false},
            ConvTransposeAttrs{16, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, true}};
}

// A float NCHW host tensor as a device tensor of the given type and layout (`buffer` holds it).
TensorView upload_as(const std::vector<float>& values, const Shape& s, DType type,
                     TensorLayout layout, DeviceBuffer& buffer) {
    const DeviceBuffer source(values.size() * sizeof(float));
    REQUIRE(cudaMemcpy(source.get(), values.data(), source.bytes(), cudaMemcpyHostToDevice) ==
            cudaSuccess);
    buffer = DeviceBuffer(size_t(s.elements()) * size_t(dtype_bytes(type)));
    const TensorView view = packed_view(buffer.get(), type, layout, s.n, s.c, s.h, s.w);
    launch_convert(packed_view(source.get(), DType::F32, TensorLayout::Nchw, s.n, s.c, s.h, s.w),
                   view, nullptr);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    return view;
}

// A transposed convolution's input, weight [Cin, Cout/groups, kh, kw] and bias on the device in
// one type and layout (the buffers hold them).
struct ConvTransposeOperands {
    DeviceBuffer in_buf, w_buf, b_buf;
    TensorView in, weight;
    const void* bias = nullptr;
    ConvTransposeOperands(const Graph& graph, int id, const HostTensor& input, DType type,
                          TensorLayout layout) {
        const auto& a = graph.op(id).as<ConvTransposeAttrs>();
        const auto& params = graph.params_of(id);
        in = upload_as(input.data, graph.input_shape(), type, layout, in_buf);
        weight = upload_as(params.at(0).values,
                           Shape{graph.input_shape().c, a.out_channels / a.groups, a.kernel_h,
                                 a.kernel_w},
                           type, layout, w_buf);
        if (a.bias)
            bias = upload_as(params.at(1).values, Shape{1, a.out_channels, 1, 1}, type, layout,
                             b_buf)
                       .data;
    }
};

HostTensor download(const TensorView& view) {
    const Shape s{view.n, view.c, view.h, view.w};
    const DeviceBuffer target(size_t(s.elements()) * sizeof(float));
    launch_convert(view, packed_view(target.get(), DType::F32, TensorLayout::Nchw, s.n, s.c, s.h,
                                     s.w),
                   nullptr);
    HostTensor host(s);
    REQUIRE(cudaMemcpy(host.data.data(), target.get(), target.bytes(), cudaMemcpyDeviceToHost) ==
            cudaSuccess);
    return host;
}

Precision precision_of(DType type) {
    return type == DType::F32 ? Precision::Fp32
                              : (type == DType::F16 ? Precision::Fp16 : Precision::Bf16);
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
            INFO(fmt::format("{}: op {} '{}' ({}) via {} [{}]: relative error {:.3g} (bound {:.3g})",
                             label(plan), op.id, op.name, to_string(op.kind), p.path, p.algorithms,
                             err, bound));
            CHECK(err < bound);
            if (op.kind == OpKind::ChannelSlice) CHECK(p.path.find("no copy") != std::string::npos);
            if (op.name == "hardswish") CHECK(p.path == "activation kernel (hardswish)");
            if (op.kind == OpKind::ConvTranspose) {
                // cuDNN's backward data (legacy or graph API), or the direct kernel where
                // cuDNN has no algorithm.
                CHECK((p.path.rfind("cudnnConvolutionBackwardData", 0) == 0 ||
                       p.path.rfind("cuDNN graph API backward data", 0) == 0 ||
                       p.path.rfind("conv transpose kernel (direct", 0) == 0));
                WARN(label(plan) << ": '" << op.name << "' runs " << p.path << " ["
                                 << p.algorithms << "]");
            }
            if (op.name == "deconv_2x2_s2" || op.name == "pad_into_concat")
                CHECK(p.writes_into_concat);
            if (op.kind == OpKind::SpatialPad)
                CHECK(p.path.rfind("spatial pad kernel (top ", 0) == 0);
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

namespace {

// Where a model's error comes from (printed when a fixture check fails): the ops whose output
// errs most beyond their inputs' (relative errors against the CPU reference, every op's output
// kept), worst first.
void warn_error_sources(const Graph& graph, const Plan& plan, const HostTensor& input) {
    const std::vector<HostTensor> ref = reference_run_all(graph, input);
    Engine engine(graph, every_output_kept(options_for(plan)));
    engine.set_input(input);
    const Schedule sequential = sequential_schedule(graph);
    engine.prepare(sequential);
    engine.launch_schedule(sequential, engine.origin_stream());
    std::vector<double> err(size_t(graph.size()), 0.0);
    std::vector<std::pair<double, int>> growth;
    for (const Op& op : graph.ops()) {
        err[size_t(op.id)] = relative_error(engine.read_op_output(op.id), ref[size_t(op.id)]);
        double in = 0;
        for (int i : op.inputs) in = std::max(in, i >= 0 ? err[size_t(i)] : 0.0);
        growth.emplace_back(err[size_t(op.id)] - in, op.id);
    }
    std::sort(growth.rbegin(), growth.rend());
    std::string worst;
    for (size_t k = 0; k < std::min<size_t>(6, growth.size()); ++k) {
        const Op& op = graph.op(growth[k].second);
        std::string runs;
        for (const OpPlan& p : engine.op_plans())
            if (p.op_id == op.id) runs = p.path + ": " + p.algorithms;
        worst += fmt::format("\n  op {} '{}' ({}): error {:.3g}, +{:.3g} over its inputs; {}",
                             op.id, op.name, to_string(op.kind), err[size_t(op.id)],
                             growth[k].first, runs);
    }
    WARN(label(plan) << ": the ops adding most error" << worst);
}

}  // namespace

TEST_CASE("imported PyTorch exports of the deployed families run on the engine as on the CPU "
          "reference",
          "[gpu][engine][onnx][deployed][fixtures]") {
    const std::optional<nlohmann::json> manifest = onnx_fixture_manifest();
    if (!manifest) return;
    const std::filesystem::path dir = onnx_fixture_dir();
    // One model per operator family: hardswish/SE (mobilenet_v3_small), silu/SE (efficientnet_b0),
    // shuffle and split (shufflenet_v2_x0_5), layer norm and gelu (convnext_tiny), conv transpose
    // and concat (unet), nearest resize and several outputs (the FPN backbone); spatial pads and
    // crops: timm's "same" padding at an even size, F.pad of any sign, slices of H and W, and
    // nasnet's path_1 / path_2.
    const std::vector<std::string> names = {"mobilenet_v3_small", "efficientnet_b0",
                                            "shufflenet_v2_x0_5", "convnext_tiny", "unet",
                                            "fasterrcnn_fpn_backbone", "same_padding_even",
                                            "crop_pad", "spatial_slice", "nasnet_paths_odd"};
    for (const std::string& name : names) {
        const nlohmann::json entry = onnx_fixture(*manifest, name);
        OnnxImportOptions options;
        options.batch = entry["batch"].get<int>();
        const Graph imported =
            import_onnx_file((dir / entry["onnx"].get<std::string>()).string(), options);
        // The engine runs it fused, as every command does (SiLU, hard-swish, GELU, leaky ReLU
        // into their convolutions); the reference runs the import as it is.
        const Graph graph = fuse_epilogues(imported).graph;
        // PyTorch's own error was measured on the export's input, so the engine's is judged on
        // the same one (before call147 it ran on an input of its own drawing).
        const HostTensor input = fixture_input(entry, graph.input_shape());
        const std::vector<HostTensor> ref = reference_run_outputs(imported, {input});
        // Strict fp32 in the reference's layout, and the storages deployments use.
        for (const Plan& plan : {Plan{Precision::Fp32, TensorLayout::Nchw},
                                 Plan{Precision::Tf32, TensorLayout::Nhwc},
                                 Plan{Precision::Fp16, TensorLayout::Nhwc}}) {
            Engine engine(graph, options_for(plan));
            engine.set_input(input);
            const Schedule sequential = sequential_schedule(graph);
            engine.prepare(sequential);
            engine.launch_schedule(sequential, engine.origin_stream());
            if (!fixture_outputs_agree(entry, plan, graph.size(), engine.read_outputs(), ref))
                warn_error_sources(graph, plan, input);
        }
    }
}

TEST_CASE("the engine's direct transposed convolution (cuDNN's stand-in) matches the reference "
          "in each type and layout",
          "[gpu][engine][precision][deployed]") {
    // Each case writing the second half of a wider (strided) output.
    for (const ConvTransposeAttrs& a : conv_transpose_cases()) {
        Graph graph("conv_transpose", Shape{2, 16, 7, 9});
        const int id = graph.add(OpKind::ConvTranspose, a, {kGraphInput}, "deconv");
        init_random_weights(graph, 17);
        const HostTensor input = random_input(graph.input_shape(), 18);
        const HostTensor ref = reference_run(graph, input);
        const Shape out = graph.op(id).output;
        for (const DType type : {DType::F32, DType::F16, DType::BF16})
            for (const TensorLayout layout : {TensorLayout::Nchw, TensorLayout::Nhwc}) {
                const ConvTransposeOperands x(graph, id, input, type, layout);
                const DeviceBuffer out_buf(size_t(out.elements()) * 2 * size_t(dtype_bytes(type)));
                const TensorView wide = packed_view(out_buf.get(), type, layout, out.n, 2 * out.c,
                                                    out.h, out.w);
                const TensorView target = wide.channels(out.c, out.c);
                launch_conv_transpose(x.in, target, x.weight.data, x.bias,
                                      ConvTransposeGeometry{a.kernel_h, a.kernel_w, a.stride_h,
                                                            a.stride_w, a.pad_h, a.pad_w,
                                                            a.dilation_h, a.dilation_w, a.groups},
                                      nullptr);
                REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
                const double err = relative_error(download(target), ref);
                const double bound = op_error_bound(precision_of(type));
                INFO(fmt::format("{} {} {}x{} stride {} groups {}: relative error {:.3g} (bound "
                                 "{:.3g})",
                                 to_string(type), to_string(layout), a.kernel_h, a.kernel_w,
                                 a.stride_h, a.groups, err, bound));
                CHECK(err < bound);
            }
    }
}

TEST_CASE("every candidate of a transposed convolution step (cuDNN's legacy backward data and "
          "each graph API engine) matches the reference in each type and layout",
          "[gpu][engine][precision][deployed][graph]") {
    // The step on a packed input and a packed output: the planner times these candidates
    // against each other and keeps the fastest, so each must compute the op.
    CudnnHandle handle;
    int graph_runs = 0;
    for (const ConvTransposeAttrs& a : conv_transpose_cases()) {
        Graph graph("conv_transpose", Shape{2, 16, 7, 9});
        const int id = graph.add(OpKind::ConvTranspose, a, {kGraphInput}, "deconv");
        init_random_weights(graph, 19);
        const HostTensor input = random_input(graph.input_shape(), 20);
        const HostTensor ref = reference_run(graph, input);
        const Shape out = graph.op(id).output;
        for (const DType type : {DType::F32, DType::F16, DType::BF16})
            for (const TensorLayout layout : {TensorLayout::Nchw, TensorLayout::Nhwc}) {
                const Precision precision = precision_of(type);
                const ConvTransposeOperands x(graph, id, input, type, layout);
                const DeviceBuffer out_buf(size_t(out.elements()) * size_t(dtype_bytes(type)));
                const TensorView target =
                    packed_view(out_buf.get(), type, layout, out.n, out.c, out.h, out.w);
                const ConvTransposeSpec spec{
                    a.out_channels, 16, a.kernel_h, a.kernel_w,
                    ConvGeometry{a.pad_h, a.pad_w, a.stride_h, a.stride_w, a.dilation_h,
                                 a.dilation_w, a.groups},
                    x.weight.data, x.bias};
                ConvTransposeStep step("deconv", x.in, target, TensorView{}, TensorView{}, spec,
                                       precision == Precision::Fp32 ? CUDNN_FMA_MATH
                                                                    : CUDNN_TENSOR_OP_MATH);
                const size_t max_workspace = size_t(256) << 20;
                const DeviceBuffer workspace(max_workspace);
                const auto check_selected = [&]() {
                    step.run(handle.get(), workspace.get(), nullptr);
                    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
                    const double err = relative_error(download(target), ref);
                    const double bound = op_error_bound(precision);
                    INFO(fmt::format("{} {} {}x{} stride {} groups {} via {} [{}]: relative error "
                                     "{:.3g} (bound {:.3g})",
                                     to_string(type), to_string(layout), a.kernel_h, a.kernel_w,
                                     a.stride_h, a.groups, step.path(), step.label(), err, bound));
                    CHECK(err < bound);
                };
                if (step.choose_algorithm(handle.get(), precision, max_workspace))
                    check_selected();
                int candidates = 0;
                try {
                    candidates = step.graph(precision, max_workspace).candidates();
                } catch (const Error& e) {
                    WARN(fmt::format("{} {}: graph API refused: {}", to_string(type),
                                     to_string(layout), e.what()));
                }
                for (int rank = 0; rank < candidates; ++rank) {
                    REQUIRE(step.select_graph(rank));
                    check_selected();
                    ++graph_runs;
                }
            }
    }
    // cuDNN's graph API has backward-data engines for these shapes.
    CHECK(graph_runs > 0);
    WARN(graph_runs << " graph API candidates checked");
}

TEST_CASE("the spatial pad kernel pads and crops strided views like the reference in each type "
          "and layout",
          "[gpu][engine][precision][deployed][spatial_pad]") {
    // nasnet's shift by a pixel, "same" padding one longer at the end, a crop of every side,
    // padding on one side only; from channels [8, 8 + c) of a wider input into the second half
    // of a wider output. 8 channels take 16-byte packs in half NHWC, 3 channels single elements.
    const std::vector<SpatialPadAttrs> cases = {
        {-1, 1, -1, 1}, {1, 2, 1, 2}, {-2, -1, -3, -1}, {0, 3, 0, 0}};
    for (const int channels : {8, 3})
        for (const SpatialPadAttrs& a : cases) {
            Graph graph("spatial_pad", Shape{2, channels, 6, 7});
            const int id = graph.add(OpKind::SpatialPad, a, {kGraphInput}, "pad");
            init_random_weights(graph, 17);  // none to draw: marks the graph as ready to run
            const HostTensor input = random_input(graph.input_shape(), 19);
            const HostTensor ref = reference_run(graph, input);
            const Shape out = graph.op(id).output;
            // The input as channels [8, 8 + c) of a wider tensor whose other channels differ.
            const Shape wide_in{2, channels + 8, 6, 7};
            HostTensor wide_input = random_input(wide_in, 20);
            for (int n = 0; n < 2; ++n)
                for (int c = 0; c < channels; ++c)
                    for (int y = 0; y < 6; ++y)
                        for (int x = 0; x < 7; ++x)
                            wide_input.at(n, c + 8, y, x) = input.at(n, c, y, x);
            for (const DType type : {DType::F32, DType::F16, DType::BF16})
                for (const TensorLayout layout : {TensorLayout::Nchw, TensorLayout::Nhwc}) {
                    DeviceBuffer in_buf, out_buf;
                    const TensorView in =
                        upload_as(wide_input.data, wide_in, type, layout, in_buf)
                            .channels(8, channels);
                    out_buf = DeviceBuffer(size_t(out.elements()) * 2 * size_t(dtype_bytes(type)));
                    // Garbage in the output: every element must be written, zeros included.
                    REQUIRE(cudaMemset(out_buf.get(), 0x7f, out_buf.bytes()) == cudaSuccess);
                    const TensorView wide = packed_view(out_buf.get(), type, layout, out.n,
                                                        2 * out.c, out.h, out.w);
                    const TensorView target = wide.channels(out.c, out.c);
                    launch_spatial_pad(in, target, a.top, a.bottom, a.left, a.right, nullptr);
                    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
                    const double err = relative_error(download(target), ref);
                    const double bound = op_error_bound(precision_of(type));
                    INFO(fmt::format("{} {} {} channels, top {} bottom {} left {} right {}: "
                                     "relative error {:.3g} (bound {:.3g})",
                                     to_string(type), to_string(layout), channels, a.top,
                                     a.bottom, a.left, a.right, err, bound));
                    CHECK(err < bound);
                }
        }
    // A mismatched output extent is refused before any launch.
    DeviceBuffer a_buf(size_t(2 * 3 * 6 * 7) * sizeof(float)), b_buf(a_buf.bytes());
    const TensorView in = packed_view(a_buf.get(), DType::F32, TensorLayout::Nchw, 2, 3, 6, 7);
    const TensorView bad = packed_view(b_buf.get(), DType::F32, TensorLayout::Nchw, 2, 3, 6, 7);
    CHECK_THROWS_WITH(launch_spatial_pad(in, bad, 1, 0, 0, 0, nullptr),
                      Catch::Contains("spatial pad") && Catch::Contains("top 1"));
}
