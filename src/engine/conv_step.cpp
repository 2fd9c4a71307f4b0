#include "src/engine/conv_step.h"

#include <fmt/format.h>

#include <cstdlib>

#include "src/engine/kernels.h"
#include "src/engine/pointwise_function.h"
#include "src/error.h"

namespace iostune {

namespace {

// A buffer of the step's own only when it stages and the caller gave none.
DeviceBuffer staging_buffer(bool staged, const void* given, const TensorView& v) {
    if (!staged || given != nullptr) return DeviceBuffer();
    return DeviceBuffer(size_t(v.elements()) * size_t(v.element_bytes()));
}

TensorView staged_view(bool staged, void* given, const TensorView& v, const DeviceBuffer& own) {
    return staged ? packed_view(given ? given : own.get(), v.dtype, v.layout, v.n, v.c, v.h, v.w)
                  : v;
}

}  // namespace

const char* to_string(ConvPath path) {
    switch (path) {
        case ConvPath::Fused: return "cudnnConvolutionBiasActivationForward";
        case ConvPath::ConvThenEpilogue: return "cudnnConvolutionForward + bias/relu kernel";
        case ConvPath::ConvOnly: return "cudnnConvolutionForward";
        case ConvPath::Depthwise: return "depthwise kernel (channels-last)";
        case ConvPath::Gemm: return "cuBLASLt matmul (1x1, bias/ReLU epilogue)";
        case ConvPath::Graph: return "cuDNN graph API convolution";
        case ConvPath::GraphFused: return "cuDNN graph API convolution with its epilogue fused";
    }
    return "?";
}

const char* choice_name(ConvPath path) {
    switch (path) {
        case ConvPath::Fused: return "fused";
        case ConvPath::ConvThenEpilogue: return "conv+epilogue";
        case ConvPath::ConvOnly: return "conv";
        case ConvPath::Depthwise: return "depthwise";
        case ConvPath::Gemm: return "gemm";
        case ConvPath::Graph: return "graph";
        case ConvPath::GraphFused: return "graph+epilogue";
    }
    return "?";
}

ConvPath conv_path_from_name(const std::string& name) {
    if (name == "fused") return ConvPath::Fused;
    if (name == "conv+epilogue") return ConvPath::ConvThenEpilogue;
    if (name == "conv") return ConvPath::ConvOnly;
    if (name == "depthwise") return ConvPath::Depthwise;
    if (name == "gemm") return ConvPath::Gemm;
    if (name == "graph") return ConvPath::Graph;
    if (name == "graph+epilogue") return ConvPath::GraphFused;
    throw Error(fmt::format("unknown convolution path '{}'", name));
}

const char* algo_name(cudnnConvolutionFwdAlgo_t algo) {
    switch (algo) {
        case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
        default: return "UNKNOWN";
    }
}

cudnnConvolutionFwdAlgo_t algo_from_name(const std::string& name) {
    for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
        const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(a);
        if (name == algo_name(algo)) return algo;
    }
    throw Error(fmt::format("unknown cuDNN convolution algorithm '{}'", name));
}

const char* math_name(cudnnMathType_t math) {
    switch (math) {
        case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
        case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
        case CUDNN_FMA_MATH: return "FMA_MATH";
        default: return "UNKNOWN";
    }
}

cudnnMathType_t math_from_name(const std::string& name) {
    if (name == "TENSOR_OP_MATH") return CUDNN_TENSOR_OP_MATH;
    if (name == "FMA_MATH") return CUDNN_FMA_MATH;
    if (name == "DEFAULT_MATH") return CUDNN_DEFAULT_MATH;
    throw Error(fmt::format("unknown cuDNN math type '{}'", name));
}

ConvStep::ConvStep(std::string ctx, const TensorView& source, const TensorView& target,
                   const ConvSpec& spec, cudnnMathType_t math, bool stage_input, bool stage_output,
                   ConvStaging staging)
    : context(std::move(ctx)),
      source_(source),
      target_(target),
      stages_in_(stage_input),
      stages_out_(stage_output),
      staging_in_(staging_buffer(stage_input, staging.input, source)),
      staging_out_(staging_buffer(stage_output, staging.output, target)),
      in_(staged_view(stage_input, staging.input, source, staging_in_)),
      out_(staged_view(stage_output, staging.output, target, staging_out_)),
      residual_(spec.residual),
      z_(spec.residual ? *spec.residual : out_),
      x_desc_(in_, context),
      y_desc_(out_, context),
      bias_desc_(target.dtype, target.c, context),
      z_desc_(z_, context),
      w_desc_(source.dtype, source.layout, spec.out_channels, spec.in_channels_per_group,
              spec.kernel_h, spec.kernel_w, context),
      conv_desc_(spec.geometry, math, context),
      act_desc_(spec.relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, context),
      weight_(spec.weight),
      bias_(spec.bias),
      relu_(spec.relu),
      relu_input_(spec.relu_input),
      activation_(spec.activation),
      prelu_slope_(spec.prelu_slope),
      depthwise_weight_(spec.depthwise_weight),
      residual_sum_(spec.residual ? std::vector<TensorView>{out_, *spec.residual}
                                  : std::vector<TensorView>{}),
      geometry_(spec.geometry),
      kernel_h_(spec.kernel_h),
      kernel_w_(spec.kernel_w) {
    if (staging_over_views(source, in_.data, target, out_.data))
        throw InternalError(fmt::format("{}: its staging buffer shares bytes with the view it "
                                        "stands in for (the memory plan gave it a place that "
                                        "overlaps); please report it with the model",
                                        context));
}

bool ConvStep::staging_over_views(const TensorView& source, const void* in_buffer,
                                  const TensorView& target, const void* out_buffer) const {
    return (stages_in_ && source.overlaps(in_buffer, in_.extent_bytes())) ||
           (stages_out_ && target.overlaps(out_buffer, out_.extent_bytes()));
}

bool ConvStep::rebind(const TensorView& source, const TensorView& target,
                      const std::optional<TensorView>& residual, ConvStaging staging) {
    if (!same_but_address(source, source_) || !same_but_address(target, target_) ||
        residual.has_value() != residual_.has_value() ||
        (residual && !same_but_address(*residual, *residual_)))
        return false;
    // A side staged through the caller's buffer needs one again if the chosen path uses it (the
    // step's own stays its own); an unused one may be gone (null).
    void* in_buffer = staging_in_.bytes() > 0 ? staging_in_.get() : staging.input;
    void* out_buffer = staging_out_.bytes() > 0 ? staging_out_.get() : staging.output;
    if ((input_staged() && in_buffer == nullptr) || (output_staged() && out_buffer == nullptr))
        return false;
    // A staging buffer over the very view it stands in for cannot stage it: plan again.
    if (staging_over_views(source, in_buffer, target, out_buffer)) return false;
    // (A null address is aligned to everything: what matters is the buffer that will be used.)
    const auto realigned = [](bool stages, void* buffer, const void* now) {
        return stages && buffer != nullptr && byte_alignment(buffer, 256) != byte_alignment(now, 256);
    };
    if (realigned(stages_in_, in_buffer, in_.data) || realigned(stages_out_, out_buffer, out_.data))
        return false;
    source_ = source;
    target_ = target;
    residual_ = residual;
    in_ = stages_in_ ? packed_view(in_buffer, in_.dtype, in_.layout, in_.n, in_.c, in_.h, in_.w)
                    : source;
    out_ = stages_out_ ? packed_view(out_buffer, out_.dtype, out_.layout, out_.n, out_.c, out_.h,
                                    out_.w)
                      : target;
    z_ = residual ? *residual : out_;
    residual_sum_ = residual ? std::vector<TensorView>{out_, *residual} : std::vector<TensorView>{};
    if (gemm_) gemm_->rebind(source_, target_, residual_ ? &*residual_ : nullptr);
    if (graph_) graph_->rebind(in_, out_, nullptr);
    if (graph_fused_) graph_fused_->rebind(in_, out_, residual_ ? &*residual_ : nullptr);
    return true;
}

cudnnStatus_t ConvStep::run_fused(cudnnHandle_t handle, void* workspace) const {
    // Scaling factors are float for float, half and bfloat16 data alike. y = act(conv(x) +
    // alpha2 * z + bias): alpha2 = 1 adds the residual; without one z is y, scaled by 0.
    const float one = 1.0f, alpha2 = residual_ ? 1.0f : 0.0f;
    return cudnnConvolutionBiasActivationForward(
        handle, &one, x_desc_.get(), in_.data, w_desc_.get(), weight_, conv_desc_.get(), algo,
        workspace, workspace_bytes, &alpha2, z_desc_.get(), z_.data, bias_desc_.get(), bias_,
        act_desc_.get(), y_desc_.get(), out_.data);
}

bool ConvStep::gemm_capable() const {
    const ConvGeometry& g = geometry_;
    return kernel_h_ == 1 && kernel_w_ == 1 && g.stride_h == 1 && g.stride_w == 1 &&
           g.pad_h == 0 && g.pad_w == 0 && g.dilation_h == 1 && g.dilation_w == 1 &&
           g.groups == 1 && source_.nhwc() && target_.nhwc() && !relu_input_;
}

GemmConv* ConvStep::gemm(cublasLtHandle_t handle, Precision precision, size_t max_workspace) {
    if (!gemm_capable()) return nullptr;
    if (!gemm_)
        gemm_ = std::make_unique<GemmConv>(handle, source_, target_,
                                           residual_ ? &*residual_ : nullptr, weight_, bias_,
                                           relu_, precision, max_workspace, context);
    return gemm_.get();
}

GraphConv* ConvStep::graph(Precision precision, size_t max_workspace, bool fused) {
    std::unique_ptr<GraphConv>& graph = fused ? graph_fused_ : graph_;
    std::string& refusal = fused ? graph_fused_refusal_ : graph_refusal_;
    if (!refusal.empty()) throw Error(refusal);
    if (!graph) {
        const GraphEpilogue epilogue =
            fused ? GraphEpilogue{bias_, residual_, relu_, activation_} : GraphEpilogue{};
        try {
            graph = std::make_unique<GraphConv>(in_, out_, weight_, kernel_h_, kernel_w_,
                                                geometry_, epilogue, precision, max_workspace,
                                                context);
        } catch (const Error& e) {
            refusal = e.what();
            throw;
        }
    }
    return graph.get();
}

void ConvStep::run(cudnnHandle_t handle, void* workspace, cudaStream_t stream) const {
    convolve(handle, workspace, stream);
    const TensorView& written = output_staged() ? out_ : target_;
    if (activation_ && !activation_fused())
        launch_activation(written, written, *activation_, stream);
    if (prelu_slope_ && !prelu_fused()) launch_prelu(written, written, prelu_slope_, stream);
    if (output_staged()) launch_copy(out_, target_, false, stream);
}

bool ConvStep::depthwise_narrow_differs() const {
    // IOSTUNE_DEPTHWISE_NARROW=off: never a candidate (the A/B of docs/search-log.md, "A fused
    // separable convolution, and narrower depthwise packs").
    static const bool off = [] {
        const char* v = std::getenv("IOSTUNE_DEPTHWISE_NARROW");
        return v != nullptr && std::string(v) == "off";
    }();
    return !off && depthwise_capable() &&
           depthwise_packs_differ(source_, target_, depthwise_weight_, bias_);
}

bool ConvStep::depthwise_tiled_capable() const {
    // IOSTUNE_DEPTHWISE_TILED=off: never a candidate (the A/B of docs/search-log.md, "A tiled
    // depthwise kernel").
    static const bool off = [] {
        const char* v = std::getenv("IOSTUNE_DEPTHWISE_TILED");
        return v != nullptr && std::string(v) == "off";
    }();
    return !off && depthwise_capable() && depthwise_tileable(depthwise_geometry());
}

void ConvStep::convolve(cudnnHandle_t handle, void* workspace, cudaStream_t stream) const {
    if (path == ConvPath::Gemm) {
        gemm_->run(workspace, workspace_bytes, stream);
        return;
    }
    if (path == ConvPath::Depthwise) {
        launch_depthwise_nhwc(source_, target_, depthwise_weight_, bias_, depthwise_geometry(),
                              relu_input_, output_activation(relu_, activation_, prelu_slope_),
                              depthwise_variant, stream);
        return;
    }
    if (stages_in_) launch_copy(source_, in_, relu_input_, stream);
    if (path == ConvPath::Fused) {
        IOSTUNE_CUDNN_CHECK(run_fused(handle, workspace), context);
        return;
    }
    if (const GraphConv* graph = selected_graph()) {
        graph->run(handle, workspace);
    } else {
        const float one = 1.0f, zero = 0.0f;
        IOSTUNE_CUDNN_CHECK(cudnnConvolutionForward(handle, &one, x_desc_.get(), in_.data,
                                                    w_desc_.get(), weight_, conv_desc_.get(), algo,
                                                    workspace, workspace_bytes, &zero,
                                                    y_desc_.get(), out_.data),
                            context);
    }
    if (epilogue_kernels()) {
        if (residual_) {
            if (bias_) launch_bias_activation(out_, bias_, false, stream);
            launch_add(residual_sum_, out_, relu_, stream);
        } else {
            launch_bias_activation(out_, bias_,
                                   output_activation(relu_, activation_, prelu_slope_), stream);
        }
    }
}

std::string ConvStep::label() const {
    const GraphConv* graph = selected_graph();
    const std::string engine = graph ? fmt::format(" {}", graph->selected_name()) : "";
    return fmt::format("{}{} ({}{})", choice.algorithm, engine, choice.math,
                       pinned ? ", pinned" : "");
}

std::string ConvStep::staging_note() const {
    std::string note;
    if (path == ConvPath::Depthwise) {
        if (relu_input_) note += "; pre-ReLU fused";
    } else if (path == ConvPath::Gemm) {
        if (residual_) note += "; residual z as cuBLASLt's C";
    } else {
        if (relu_input_) note += "; pre-ReLU copy";
        else if (stages_in_) note += "; input staged";
        if (output_staged()) note += "; output staged into its slice";
        if (residual_)
            note += path == ConvPath::Fused        ? "; residual z fused (alpha2 = 1)"
                    : path == ConvPath::GraphFused ? "; residual z fused into the graph"
                                                   : "; residual added by the add kernel";
    }
    if (activation_)
        note += fmt::format("; {} {}", to_string(activation_->function),
                            path == ConvPath::GraphFused  ? "fused into the graph"
                            : path == ConvPath::Depthwise ? "fused into the depthwise kernel"
                            : activation_fused()          ? "fused into the bias kernel"
                                                          : "by the activation kernel");
    if (prelu_slope_)
        note += path == ConvPath::Depthwise ? "; prelu fused into the depthwise kernel"
                : prelu_fused()             ? "; prelu fused into the bias kernel"
                                            : "; prelu by the prelu kernel";
    return note;
}

}  // namespace iostune
