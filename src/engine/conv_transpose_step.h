// One planned transposed convolution (torch.nn.ConvTranspose2d) of the engine: cuDNN's
// backward-data convolution, which is exactly a transposed convolution. The op's input plays the
// role of dy, its output of dx, and its weight [Cin, Cout/groups, kh, kw] is the filter
// [k = Cin, c = Cout/groups, kh, kw] of the forward convolution that maps the output back onto the
// input (KCRS for NCHW, KRSC for NHWC: upload_filter's forms). output_padding needs nothing more:
// it only makes dx larger, and the forward convolution still maps dx onto dy. The bias is the
// engine's bias kernel after the call.
//
// Two ways to run it, timed against each other by the planner: the legacy
// cudnnConvolutionBackwardData with cudnnFind's fastest algorithm, and the graph API's
// backward-data operation (graph_conv.h) with one of its shortlisted engines. The legacy call ran
// U-Net's 2x2 stride-2 upsampling as seven kernels at 1% of the roofline (fp16 b16, H100).
//
// When cuDNN has no algorithm for the op's strided views (a concat slice, as U-Net decoders
// write), the step reads or writes packed buffers the caller owns and one copy kernel moves them.
#pragma once

#include <cudnn.h>

#include <memory>
#include <string>

#include "src/engine/cudnn_descriptors.h"
#include "src/engine/graph_conv.h"
#include "src/engine/tensor_view.h"
#include "src/precision.h"

namespace iostune {

struct ConvTransposeSpec {
    int out_channels = 0, in_channels = 0, kernel_h = 1, kernel_w = 1;
    ConvGeometry geometry;  // pad, stride, dilation, groups (the forward convolution's)
    const void* weight = nullptr;  // [Cin, Cout/groups, kh, kw] in the engine's type and layout
    const void* bias = nullptr;    // Cout elements of the type, or nullptr
};

class ConvTransposeStep {
public:
    // Reads `source` and writes `target` (the op's views), through `staged_in` / `staged_out`
    // (packed views of the same shapes, or null data for none) when given. Throws iostune::Error
    // when cuDNN's geometry does not give back the input's shape.
    ConvTransposeStep(std::string context, const TensorView& source, const TensorView& target,
                      const TensorView& staged_in, const TensorView& staged_out,
                      const ConvTransposeSpec& spec, cudnnMathType_t math);

    // Picks cuDNN's fastest legacy backward-data algorithm that runs in this precision within
    // `max_workspace` bytes (cudnnFind, which runs each on scratch memory of its own) and runs
    // it from now on; false when none does.
    bool choose_algorithm(cudnnHandle_t handle, Precision precision, size_t max_workspace);
    // The graph API's shortlist for these views (built on first use; throws iostune::Error when
    // cuDNN rejects the graph), and running its entry `rank` from now on (false: no such entry).
    const GraphConv& graph(Precision precision, size_t max_workspace);
    bool select_graph(int rank);
    // Back to the algorithm choose_algorithm picked.
    void select_legacy();

    // Enqueues staging copy in, the backward-data convolution, bias, copy out (capture-safe).
    void run(cudnnHandle_t handle, void* workspace, cudaStream_t stream) const;

    // It reads / writes the caller's staging buffers instead of the op's views.
    bool stages_input() const { return in_.data != source_.data; }
    bool stages_output() const { return out_.data != target_.data; }

    // "cudnnConvolutionBackwardData + bias kernel; output staged into its slice", for plans.
    std::string path() const;
    // "ALGO_1 (TENSOR_OP_MATH)" or "GRAPH_0 engine 12 (TENSOR_OP_MATH)", for plans and profiles.
    std::string label() const;

    std::string context;
    cudnnConvolutionBwdDataAlgo_t algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    size_t workspace_bytes = 0;
    std::string candidates;  // what cudnnFind reported

private:
    TensorView source_, target_;  // the op's own views
    TensorView in_, out_;         // what cuDNN reads and writes
    TensorDescriptor dy_desc_, dx_desc_;
    FilterDescriptor w_desc_;
    ConvolutionDescriptor conv_desc_;
    const void* weight_ = nullptr;
    const void* bias_ = nullptr;
    ConvGeometry geometry_;
    int kernel_h_ = 1, kernel_w_ = 1;
    // What choose_algorithm picked (algo, math and workspace_bytes say what runs now).
    cudnnConvolutionBwdDataAlgo_t legacy_algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    cudnnMathType_t legacy_math_ = CUDNN_DEFAULT_MATH;
    size_t legacy_workspace_ = 0;
    std::unique_ptr<GraphConv> graph_;
    int graph_rank_ = -1;  // the graph entry that runs, or -1: the legacy call
};

const char* algo_name(cudnnConvolutionBwdDataAlgo_t algo);  // "ALGO_0", "FFT", ...

}  // namespace iostune
