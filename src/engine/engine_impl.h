// Internals of Engine (engine.h), shared by the files that implement it, one concept each:
//   engine.cpp         the public API, stream lanes, stage launches, capture, input/output
//   memory_plan.cpp    weights and activations in the plan's type and layout, concat slices,
//                      the input's padded channels
//   conv_planner.cpp   how each convolution runs: a pinned, cached or timed choice
//   op_plans.cpp       each op's execution plan and launch
//   deployed_ops.cpp   the same for the operators of deployed CNNs (activation, binary, resize, ...)
//   merge_stages.cpp   operator-merge stages: stacked weights, merged outputs, where merged ops live
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/engine/conv_step.h"
#include "src/engine/conv_transpose_step.h"
#include "src/engine/cublas_handle.h"
#include "src/engine/cuda_event.h"
#include "src/engine/cuda_stream.h"
#include "src/engine/cudnn_descriptors.h"
#include "src/engine/cudnn_handle.h"
#include "src/engine/device_buffer.h"
#include "src/engine/engine.h"
#include "src/engine/kernels.h"
#include "src/engine/tensor_view.h"
#include "src/stream_program.h"

namespace iostune::engine_internal {

constexpr size_t kCublasWorkspaceBytes = size_t(8) << 20;

struct Lane {
    CudaStream stream;
    CudnnHandle cudnn;
    CublasHandle cublas;
    DeviceBuffer workspace;
    DeviceBuffer cublas_workspace{kCublasWorkspaceBytes};
    CudaEvent joined;  // recorded on `stream` when its group of a stage is done
};

struct OpWeights {
    DeviceBuffer weight, weight2, bias;  // weight2: SepConv's pointwise weights
    DeviceBuffer slope;  // a PRelu's slopes, or those of a convolution with a fused PReLU
    // A depthwise filter as [kernel_h, kernel_w, channels], for the engine's channels-last
    // depthwise kernel (SepConv's depthwise part, a Conv with groups = channels).
    DeviceBuffer depthwise;
};

struct OpExec {
    std::vector<ConvStep> convs;  // Conv: 1; SepConv: depthwise, pointwise
    std::optional<TensorDescriptor> x_desc, y_desc;  // cuDNN pooling / softmax
    std::optional<PoolingDescriptor> pool_desc;
    PoolWindow window;
    DeviceBuffer depthwise_scratch;  // SepConv: the depthwise output the pointwise conv reads
    DeviceBuffer linear_input;  // Linear over a strided channels-last input: packed copy
    std::vector<int> concat_copies;  // indexes of Concat inputs not written in place
    std::optional<ConvTransposeStep> conv_transpose;
    // ConvTranspose's packed copies of strided views cuDNN does not take (kept on re-planning,
    // as depthwise_scratch is).
    DeviceBuffer staged_input, staged_output;
    std::vector<TensorView> planned_views;  // inputs then output, as planned
    OpPlan plan;
};

struct MergeExec {
    DeviceBuffer output, weight, bias, slope;
    TensorView merged;  // the whole of `output`
    ConvSpec spec;
    TensorView planned_input;
    std::optional<ConvStep> conv;
    std::vector<TensorView> slices;  // each merged op's channels of `output`
    MergePlan plan;
};

// "running op 3 'conv1' (Conv)": the context of every error an op's launch or plan raises.
std::string op_label(const Op& op);

// A convolution must not run with a smaller workspace than it was planned for (it would write
// past the end): an internal error instead, checked on the host at launch.
void require_workspace(const ConvStep& step, const Lane& lane);

// Copies a (possibly channel-sliced) view into another of equal shape and storage.
void copy_view(const TensorView& src, const TensorView& dst, cudaStream_t stream,
               const std::string& context);

}  // namespace iostune::engine_internal

namespace iostune {

struct Engine::Impl {
    using Lane = engine_internal::Lane;
    using OpWeights = engine_internal::OpWeights;
    using OpExec = engine_internal::OpExec;
    using MergeExec = engine_internal::MergeExec;

    Graph graph;
    EngineOptions options;
    TensorLayout layout = TensorLayout::Nchw;
    DType dtype = DType::F32;
    cudnnMathType_t conv_math = CUDNN_DEFAULT_MATH;
    cublasMath_t blas_math = CUBLAS_DEFAULT_MATH;

    std::vector<OpWeights> weights;
    // Each graph input: the caller's float NCHW buffer (float_io) and the input as ops read it.
    // When the engine's storage is float NCHW itself, the float buffer is the native input and
    // no conversion runs.
    struct InputPort {
        DeviceBuffer float_buffer, native_buffer;
        TensorView float_view;
        TensorView view;          // native, with the padded channels (what convolutions read)
        TensorView logical_view;  // its first graph.input_shape(k).c channels
        bool convert = false;
    };
    // Each graph output: its op, and the caller's float NCHW copy when the storage differs.
    struct OutputPort {
        int op = 0;
        DeviceBuffer float_buffer;
        TensorView float_view;
        bool convert = false;
    };
    std::vector<InputPort> input_ports;
    std::vector<OutputPort> output_ports;
    InputPort& input_port(int index);
    const OutputPort& output_port(int index) const;
    std::vector<DeviceBuffer> outputs;  // empty for ops that write into a concat
    // Where each op's output lives now: base_views (own buffer or concat slice) except, after
    // prepare(), ops of the schedule's merge stages, which live in their merged output's slice.
    std::vector<TensorView> views, base_views;
    std::vector<OpExec> execs;
    std::map<std::string, MergeExec> merges;

    std::vector<std::unique_ptr<Lane>> lanes;
    size_t workspace_bytes = 0;  // every lane's workspace is at least this large
    CudaStream origin;
    CudaEvent forked;
    // One per launch of the largest stream program run so far: recorded after a launch that a
    // launch on another lane waits for (stream_program.h).
    std::vector<CudaEvent> launch_done;
    CublasLtHandle cublaslt;  // the 1x1 convolutions' matrix products (gemm_conv.h)
    DeviceBuffer l2_flush;  // written before each timed convolution run: twice the L2 size
    // Buffers replaced by larger ones, and re-planned convolutions (with their staging buffers):
    // kept, since CUDA graphs captured earlier still use them.
    std::vector<DeviceBuffer> retired;
    std::vector<ConvStep> retired_steps;

    Impl(Graph g, EngineOptions opt);

    // engine.cpp
    void ensure_lanes(size_t count);
    void grow_workspaces();
    const TensorView& tensor(int id) const;
    void launch_stage(const Stage& stage, cudaStream_t origin_stream);
    // Lanes, merged weights and events a program needs (outside capture only).
    void prepare_program(const StreamProgram& program, cudaStream_t stream);
    void launch_program(const StreamProgram& program, cudaStream_t origin_stream);
    void launch_input_conversion(cudaStream_t stream) const;
    void launch_output_conversion(cudaStream_t stream) const;
    void check_op_id(int id) const;
    void require_not_capturing(cudaStream_t stream, const std::string& what) const;
    void prepare_stage(const Stage& stage, cudaStream_t stream);
    HostTensor read_view(const TensorView& v, const std::string& what);

    // memory_plan.cpp
    TensorView packed(void* data, const Shape& s) const;  // in the engine's type and layout
    DeviceBuffer allocate(const Shape& s) const;           // for one packed tensor of this shape
    // A filter [k, c, r, s] given as float KCRS, stored in the engine's type and layout with
    // `stored_channels` >= c input channels (the extra ones zero).
    DeviceBuffer upload_filter(const std::vector<float>& kcrs, int k, int c, int r, int s,
                               int stored_channels, const std::string& what) const;
    DeviceBuffer upload_vector(const std::vector<float>& values, const std::string& what) const;
    DeviceBuffer upload_depthwise(const std::vector<float>& kcrs, int c, int kh, int kw,
                                  const std::string& what) const;
    void upload_weights();
    void plan_memory();
    // Points each ChannelSlice op's view at its channels of its input's view in `v` (no copy).
    void place_channel_slices(std::vector<TensorView>& v) const;

    // conv_planner.cpp
    ConvStep plan_conv(const std::string& context, const TensorView& in, const TensorView& out,
                       const ConvSpec& spec);
    bool configure(ConvStep& step, const ConvChoice& choice, DeviceBuffer* scratch = nullptr);
    std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked_algorithms(ConvStep& step,
                                                                 const std::string& process_key);
    double time_step(const ConvStep& step, DeviceBuffer& workspace);
    // time_step's measurement of any launch that takes a workspace of `launch_workspace` bytes.
    double time_launch(const std::function<void(cudaStream_t, void*)>& launch,
                       size_t launch_workspace, DeviceBuffer& workspace, const std::string& what);
    bool choose_by_timing(ConvStep& step, const std::string& process_key);
    void ensure_l2_flush();  // allocates l2_flush (twice the L2 size) on first use
    void record_conv(OpPlan& plan, const ConvStep& step);

    // deployed_ops.cpp: times cuDNN's legacy backward-data algorithm against the graph API's
    // shortlist and configures the step with the fastest; false when none runs.
    bool choose_conv_transpose(ConvTransposeStep& step);

    // op_plans.cpp
    std::vector<TensorView> current_views(const Op& op) const;
    void plan_op(const Op& op);
    void run_op(int id, Lane& lane, cudaStream_t stream);

    // deployed_ops.cpp
    void plan_deployed_op(const Op& op);
    void run_deployed_op(const Op& op, Lane& lane, cudaStream_t stream);

    // merge_stages.cpp
    MergeExec& plan_merge(const Stage& stage);
    void run_merge(const MergeExec& m, Lane& lane, cudaStream_t stream);
    void place_merged_ops(const Schedule& schedule);
};

}  // namespace iostune
