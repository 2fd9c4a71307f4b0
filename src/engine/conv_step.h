// One planned convolution of the engine: its cuDNN descriptors, the chosen algorithm, math type
// and path (fused conv+bias+ReLU, conv then the engine's epilogue kernel, or conv alone), and
// the staging copies it needs when cuDNN cannot read or write the op's own view in place.
//
// A residual convolution (ConvAttrs::residual) adds z before the ReLU: the fused path passes it
// as cuDNN's z with alpha2 = 1; the epilogue path adds it with the engine's add kernel after
// the bias; the engine's depthwise kernel has no z and is never chosen for it.
//
// A fused activation (ConvAttrs::activation: SiLU, ReLU6, ...) comes last. The fused cuDNN graph
// computes it as one more pointwise operation where cuDNN has a mode for it, the engine's
// depthwise kernel and bias kernel as they write (any function); every other path
// runs as without it and then applies the engine's activation kernel in place on what the
// convolution wrote, before any copy into the op's slice. A fused PReLU (ConvAttrs::prelu, one
// slope per output channel) likewise: the depthwise and bias kernels apply it as they write,
// every other path (the fused graph too: cuDNN has no per-channel slope) runs the PReLU kernel
// in place after.
//
// Staging: an op may read a channel slice of a merged output or write its slice of a concat.
// cuDNN runs most convolutions on such strided views directly, but some of its algorithms refuse
// them or convert layouts around them; the planner therefore also times a step that reads or
// writes a packed buffer of its own, with one copy kernel moving the slice, and keeps the faster.
// The plan text says which. A SepConv's pre-ReLU is part
// of its depthwise step: applied while staging the input for cuDNN, or fused into the load of
// the engine's own depthwise kernel.
#pragma once

#include <cudnn.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/conv_choices.h"
#include "src/engine/cudnn_descriptors.h"
#include "src/engine/device_buffer.h"
#include "src/engine/gemm_conv.h"
#include "src/engine/graph_conv.h"
#include "src/engine/kernels.h"
#include "src/engine/tensor_view.h"
#include "src/graph.h"

namespace iostune {

// Depthwise: the engine's channels-last depthwise kernel (launch_depthwise_nhwc), not cuDNN.
// Gemm: a 1x1 channels-last convolution as one cuBLASLt matrix product (gemm_conv.h).
// Graph: cuDNN's graph API on the op's own views (graph_conv.h), then the epilogue kernels.
// GraphFused: one graph with the bias, residual, ReLU and activation fused after the convolution.
enum class ConvPath { Fused, ConvThenEpilogue, ConvOnly, Depthwise, Gemm, Graph, GraphFused };

// The algorithm names of ConvPath::Depthwise in a ConvChoice: the widest packs, packs narrowed
// to give small maps more threads, and the shared-memory tiled kernel (kernels.h:
// DepthwiseVariant).
inline constexpr const char* kDepthwiseAlgorithm = "DEPTHWISE_NHWC";
inline constexpr const char* kDepthwiseNarrowAlgorithm = "DEPTHWISE_NHWC_NARROW";
inline constexpr const char* kDepthwiseTiledAlgorithm = "DEPTHWISE_NHWC_TILED";

const char* to_string(ConvPath path);       // the call(s), for plans: "cudnnConvolutionForward"
const char* choice_name(ConvPath path);     // its name in a ConvChoice: "fused", ...
ConvPath conv_path_from_name(const std::string& name);  // throws iostune::Error
const char* algo_name(cudnnConvolutionFwdAlgo_t algo);  // "IMPLICIT_GEMM", ...
cudnnConvolutionFwdAlgo_t algo_from_name(const std::string& name);  // throws iostune::Error
const char* math_name(cudnnMathType_t math);            // "TENSOR_OP_MATH", ...
cudnnMathType_t math_from_name(const std::string& name);  // throws iostune::Error

// What to convolve: the filter (in the engine's type and layout), bias, ReLU and activation.
struct ConvSpec {
    int out_channels = 0, in_channels_per_group = 0, kernel_h = 1, kernel_w = 1;
    ConvGeometry geometry;
    const void* weight = nullptr;
    const void* bias = nullptr;  // nullptr: no bias; else out_channels elements of the type
    bool relu = false;
    bool relu_input = false;  // ReLU of the input first (a SepConv's pre-ReLU)
    // The filter as [kernel_h, kernel_w, channels] for the engine's depthwise kernel; set only for
    // a depthwise convolution (groups = channels in = channels out) in channels-last storage.
    const void* depthwise_weight = nullptr;
    // z of a residual convolution (the op's view of its second input), added before the ReLU.
    std::optional<TensorView> residual = std::nullopt;
    // Applied last (never with `relu`).
    std::optional<ActivationAttrs> activation = std::nullopt;
    // A PReLU's slopes (out_channels elements of the type), applied last; nullptr: none. Never
    // with `relu` or `activation`.
    const void* prelu_slope = nullptr;
};

// Packed buffers a step may stage through: the memory plan's scratch (null: the step allocates
// its own when it stages).
struct ConvStaging {
    void* input = nullptr;
    void* output = nullptr;
};

class ConvStep {
public:
    // Reads `source` and writes `target` (the op's views); `stage_input`/`stage_output` make
    // the step use packed buffers on that side instead: `staging`'s, or its own.
    ConvStep(std::string context, const TensorView& source, const TensorView& target,
             const ConvSpec& spec, cudnnMathType_t math, bool stage_input, bool stage_output,
             ConvStaging staging = {});

    // Points the step at other views (and staging buffers) that differ from its own in their
    // addresses only (same_but_address: another memory plan's places), keeping its descriptors
    // and chosen algorithm. A staging buffer its chosen path does not use may be missing (a plan
    // refined by the engine's choices). False, and nothing changed, when anything else differs
    // or a staging buffer it uses is missing: then it must be planned again.
    bool rebind(const TensorView& source, const TensorView& target,
                const std::optional<TensorView>& residual, ConvStaging staging);
    // Device bytes of staging buffers the step allocated itself (outside any memory plan).
    size_t owned_bytes() const { return staging_in_.bytes() + staging_out_.bytes(); }

    // Enqueues the step as configured: staging copy in, convolution (+ epilogue), copy out.
    void run(cudnnHandle_t handle, void* workspace, cudaStream_t stream) const;
    // The fused call alone (to try whether cuDNN supports it for this configuration).
    cudnnStatus_t run_fused(cudnnHandle_t handle, void* workspace) const;

    // "IMPLICIT_GEMM (TENSOR_OP_MATH, pinned)", for plans and profiles.
    std::string label() const;
    // "; input staged" / "; output staged into its slice" / "; pre-ReLU fused" /
    // "; silu by the activation kernel" / "", for plans.
    std::string staging_note() const;
    // The convolution writes a buffer of its own and a copy moves it into the op's view.
    bool output_staged() const {
        return path != ConvPath::Depthwise && path != ConvPath::Gemm && stages_out_;
    }
    // A copy of the input (strided, or with the pre-ReLU applied) is what the convolution reads.
    bool input_staged() const {
        return path != ConvPath::Depthwise && path != ConvPath::Gemm && stages_in_;
    }
    // input() is a staging buffer of the step's own, not the op's view (fixed when planned).
    bool has_input_staging() const { return stages_in_; }
    // The engine's depthwise kernel can run this convolution (it has no residual input).
    bool depthwise_capable() const {
        return depthwise_weight_ != nullptr && source_.nhwc() && !residual_;
    }
    // Its narrowed packs are another kernel than its widest (a small map).
    bool depthwise_narrow_differs() const;
    // The tiled depthwise kernel runs its geometry (kernels.h: depthwise_tileable).
    bool depthwise_tiled_capable() const;
    // A 1x1, stride-1, ungrouped convolution over channels-last views: a matrix product.
    bool gemm_capable() const;
    // That product, described for cuBLASLt on first use (on the op's own views: cuBLASLt reads
    // and writes strided rows, so nothing is staged); null when the step is not gemm_capable().
    GemmConv* gemm(cublasLtHandle_t handle, Precision precision, size_t max_workspace);
    // The convolution through cuDNN's graph API, built on first use on what cuDNN reads and
    // writes (this step's views, staged or not), alone or (`fused`) with the step's bias,
    // residual, ReLU and activation in the graph; throws iostune::Error when cuDNN rejects the
    // graph or has no pointwise mode for the activation, then and on every later call (the
    // rejection is remembered, not retried).
    GraphConv* graph(Precision precision, size_t max_workspace, bool fused);

    std::string context;
    ConvPath path = ConvPath::ConvOnly;
    DepthwiseVariant depthwise_variant = DepthwiseVariant::Widest;  // ConvPath::Depthwise's
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    size_t workspace_bytes = 0;
    std::string signature;  // the shape key of ConvChoices
    ConvChoice choice;      // what runs: algo, math and path by name
    bool pinned = false;    // the choice came from EngineOptions::conv_choices
    std::string candidates;  // how the choice was made (OpPlan::candidates)
    // What the choice was ranked by when timed here: its time alone, or two at once
    // (ConvObjective::CoRun).
    double rank_ms = 0;
    // The next fastest kernels the timing ran (conv_choices.h's runners_up); none when pinned.
    std::vector<ConvChoice> runners_up;
    const ConvGeometry& geometry() const { return geometry_; }
    bool has_bias() const { return bias_ != nullptr; }
    bool relu() const { return relu_; }
    bool has_residual() const { return residual_.has_value(); }
    // Bias, ReLU or a residual: the fused call or the epilogue kernels after the convolution.
    bool needs_epilogue() const { return has_bias() || relu() || has_residual(); }
    const std::optional<ActivationAttrs>& activation() const { return activation_; }
    // Something for a fused graph to compute after the convolution: an epilogue or activation.
    bool has_graph_epilogue() const { return needs_epilogue() || activation_.has_value(); }
    // The bias/ReLU/residual epilogue runs as the engine's kernels after the convolution.
    bool epilogue_kernels() const {
        return path == ConvPath::ConvThenEpilogue || (path == ConvPath::Graph && needs_epilogue());
    }
    // The path computes the activation itself, else the activation kernel follows: the fused
    // graph, the depthwise kernel, and the bias kernel of an epilogue without a residual.
    bool activation_fused() const {
        return path == ConvPath::GraphFused || path == ConvPath::Depthwise ||
               (epilogue_kernels() && !residual_);
    }
    bool has_prelu() const { return prelu_slope_ != nullptr; }
    // The path applies the PReLU as it writes (the depthwise and bias kernels), else the PReLU
    // kernel follows.
    bool prelu_fused() const {
        return path == ConvPath::Depthwise || (epilogue_kernels() && !residual_);
    }
    const TensorView& input() const { return in_; }    // what cuDNN reads
    const TensorView& output() const { return out_; }  // what cuDNN writes
    const TensorView& source() const { return source_; }  // the op's own views
    const TensorView& target() const { return target_; }
    const void* weight() const { return weight_; }
    const void* bias() const { return bias_; }

    cudnnTensorDescriptor_t x_desc() const { return x_desc_.get(); }
    cudnnTensorDescriptor_t y_desc() const { return y_desc_.get(); }
    cudnnFilterDescriptor_t w_desc() const { return w_desc_.get(); }
    const ConvolutionDescriptor& conv_desc() const { return conv_desc_; }

private:
    // The depthwise kernel's geometry (kernel, stride, padding, dilation).
    DepthwiseGeometry depthwise_geometry() const {
        return {kernel_h_,          kernel_w_,       geometry_.stride_h,   geometry_.stride_w,
                geometry_.pad_h,    geometry_.pad_w, geometry_.dilation_h, geometry_.dilation_w};
    }
    // Whether a staging buffer (in_buffer / out_buffer, for the sides this step stages) shares
    // bytes with the view it stands in for: such a buffer cannot stage it.
    bool staging_over_views(const TensorView& source, const void* in_buffer,
                            const TensorView& target, const void* out_buffer) const;

    TensorView source_, target_;  // the op's own views
    // Whether cuDNN reads / writes a packed buffer instead, fixed when the step is planned: a
    // graph-API plan is built for those strides, so rebind() never turns a side in place. (It
    // once inferred it from in_.data != source_.data, and a staging buffer that came to share
    // the view's address turned the side in place for good: GoogLeNet's op 54 then wrote
    // packed rows into its concat slice, docs/search-log.md.)
    bool stages_in_ = false, stages_out_ = false;
    DeviceBuffer staging_in_, staging_out_;
    TensorView in_, out_;
    std::optional<TensorView> residual_;
    TensorView z_;  // cuDNN's z: the residual, or the output (scaled by 0) without one
    TensorDescriptor x_desc_, y_desc_, bias_desc_, z_desc_;
    FilterDescriptor w_desc_;
    ConvolutionDescriptor conv_desc_;
    ActivationDescriptor act_desc_;
    const void* weight_ = nullptr;
    const void* bias_ = nullptr;
    bool relu_ = false;
    bool relu_input_ = false;
    std::optional<ActivationAttrs> activation_;
    const void* prelu_slope_ = nullptr;
    const void* depthwise_weight_ = nullptr;
    std::vector<TensorView> residual_sum_;  // {output, z}: the epilogue path's add
    ConvGeometry geometry_;
    int kernel_h_ = 1, kernel_w_ = 1;
    std::unique_ptr<GemmConv> gemm_;
    std::unique_ptr<GraphConv> graph_, graph_fused_;
    std::string graph_refusal_, graph_fused_refusal_;  // why cuDNN rejected a graph, once it has

    // The graph the path runs (fused or not), or null for the other paths.
    const GraphConv* selected_graph() const {
        return path == ConvPath::Graph        ? graph_.get()
               : path == ConvPath::GraphFused ? graph_fused_.get()
                                              : nullptr;
    }
    // The convolution and its bias/ReLU/residual epilogue, into output_staged() ? out_ : target_.
    void convolve(cudnnHandle_t handle, void* workspace, cudaStream_t stream) const;
};

}  // namespace iostune
