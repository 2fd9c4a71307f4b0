#include "src/engine/conv_transpose_step.h"

#include <fmt/format.h>

#include <vector>

#include "src/conv_choices.h"
#include "src/engine/conv_step.h"
#include "src/engine/cuda_check.h"
#include "src/engine/kernels.h"
#include "src/error.h"

namespace iostune {

namespace {

const TensorView& staged_or(const TensorView& staged, const TensorView& own) {
    return staged.data != nullptr ? staged : own;
}

}  // namespace

const char* algo_name(cudnnConvolutionBwdDataAlgo_t algo) {
    switch (algo) {
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "ALGO_0";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "ALGO_1";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "FFT";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "FFT_TILING";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "WINOGRAD";
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
        default: return "UNKNOWN";
    }
}

ConvTransposeStep::ConvTransposeStep(std::string context_, const TensorView& source,
                                     const TensorView& target, const TensorView& staged_in,
                                     const TensorView& staged_out, const ConvTransposeSpec& spec,
                                     cudnnMathType_t math_)
    : context(std::move(context_)),
      math(math_),
      source_(source),
      target_(target),
      in_(staged_or(staged_in, source)),
      out_(staged_or(staged_out, target)),
      dy_desc_(in_, context),
      dx_desc_(out_, context),
      w_desc_(source.dtype, source.layout, spec.in_channels,
              spec.out_channels / spec.geometry.groups, spec.kernel_h, spec.kernel_w, context),
      conv_desc_(spec.geometry, math_, context),
      weight_(spec.weight),
      bias_(spec.bias),
      geometry_(spec.geometry),
      kernel_h_(spec.kernel_h),
      kernel_w_(spec.kernel_w) {
    // The forward convolution of the output must give back the input's shape.
    int n = 0, c = 0, h = 0, w = 0;
    IOSTUNE_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv_desc_.get(), dx_desc_.get(),
                                                              w_desc_.get(), &n, &c, &h, &w),
                        context);
    if (n != source.n || c != source.c || h != source.h || w != source.w)
        throw Error(fmt::format("{}: the transposed convolution's output {}x{}x{}x{} maps back "
                                "to {}x{}x{}x{}, not to its input {}x{}x{}x{}",
                                context, target.n, target.c, target.h, target.w, n, c, h, w,
                                source.n, source.c, source.h, source.w));
}

bool ConvTransposeStep::choose_algorithm(cudnnHandle_t handle, Precision precision,
                                         size_t max_workspace) {
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    int returned = 0;
    if (cudnnFindConvolutionBackwardDataAlgorithm(handle, w_desc_.get(), dy_desc_.get(),
                                                  conv_desc_.get(), dx_desc_.get(),
                                                  int(perf.size()), &returned,
                                                  perf.data()) != CUDNN_STATUS_SUCCESS)
        return false;  // e.g. strided views no algorithm takes: the caller stages them
    perf.resize(size_t(returned));
    candidates.clear();
    bool found = false;
    for (const auto& p : perf) {  // cuDNN sorts them fastest first
        candidates += fmt::format("{}{} {} {:.4f} ms {}", candidates.empty() ? "" : ", ",
                                  algo_name(p.algo), math_name(p.mathType), double(p.time),
                                  p.status == CUDNN_STATUS_SUCCESS ? "ok"
                                                                   : cudnnGetErrorString(p.status));
        if (found || p.status != CUDNN_STATUS_SUCCESS || p.memory > max_workspace) continue;
        if (p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;  // fp16 inside fp32
        if (precision == Precision::Fp32 && p.mathType == CUDNN_TENSOR_OP_MATH) continue;
        // Strict fp32: never let DEFAULT_MATH pick TF32.
        const cudnnMathType_t chosen = precision == Precision::Fp32 ? CUDNN_FMA_MATH : p.mathType;
        conv_desc_.set_math(chosen, context);
        size_t bytes = 0;
        if (cudnnGetConvolutionBackwardDataWorkspaceSize(handle, w_desc_.get(), dy_desc_.get(),
                                                         conv_desc_.get(), dx_desc_.get(), p.algo,
                                                         &bytes) != CUDNN_STATUS_SUCCESS ||
            bytes > max_workspace)
            continue;
        legacy_algo_ = p.algo;
        legacy_math_ = chosen;
        legacy_workspace_ = bytes;
        found = true;
    }
    if (found) select_legacy();
    return found;
}

const GraphConv& ConvTransposeStep::graph(Precision precision, size_t max_workspace) {
    if (!graph_)
        graph_ = std::make_unique<GraphConv>(in_, out_, weight_, kernel_h_, kernel_w_, geometry_,
                                             GraphEpilogue{}, precision, max_workspace, context,
                                             GraphConvDirection::BackwardData);
    return *graph_;
}

bool ConvTransposeStep::select_graph(int rank) {
    if (!graph_ || !graph_->select(rank)) return false;
    graph_rank_ = rank;
    math = std::string(graph_->math(rank)) == "TENSOR_OP_MATH" ? CUDNN_TENSOR_OP_MATH
                                                               : CUDNN_FMA_MATH;
    workspace_bytes = graph_->workspace_bytes();
    return true;
}

void ConvTransposeStep::select_legacy() {
    graph_rank_ = -1;
    algo = legacy_algo_;
    math = legacy_math_;
    workspace_bytes = legacy_workspace_;
    conv_desc_.set_math(math, context);
}

void ConvTransposeStep::run(cudnnHandle_t handle, void* workspace, cudaStream_t stream) const {
    if (in_.data != source_.data) launch_copy(source_, in_, false, stream);
    if (graph_rank_ >= 0) {
        graph_->run(handle, workspace);
    } else {
        const float one = 1.0f, zero = 0.0f;
        IOSTUNE_CUDNN_CHECK(cudnnConvolutionBackwardData(handle, &one, w_desc_.get(), weight_,
                                                         dy_desc_.get(), in_.data,
                                                         conv_desc_.get(), algo, workspace,
                                                         workspace_bytes, &zero, dx_desc_.get(),
                                                         out_.data),
                            context);
    }
    if (bias_ != nullptr) launch_bias_activation(out_, bias_, false, stream);
    if (out_.data != target_.data) launch_copy(out_, target_, false, stream);
}

std::string ConvTransposeStep::path() const {
    std::string text = graph_rank_ >= 0 ? "cuDNN graph API backward data"
                                        : "cudnnConvolutionBackwardData";
    if (bias_ != nullptr) text += " + bias kernel";
    if (in_.data != source_.data) text += "; input staged";
    if (out_.data != target_.data) text += "; output staged into its slice";
    return text;
}

std::string ConvTransposeStep::label() const {
    if (graph_rank_ >= 0)
        return fmt::format("{}{} {} ({})", kGraphAlgorithmPrefix, graph_rank_,
                           graph_->selected_name(), math_name(math));
    return fmt::format("{} ({})", algo_name(algo), math_name(math));
}

}  // namespace iostune
