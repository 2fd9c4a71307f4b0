#include "src/engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <utility>

#include "src/engine/cublas_handle.h"
#include "src/engine/cuda_check.h"
#include "src/engine/cuda_event.h"
#include "src/engine/cuda_stream.h"
#include "src/engine/cudnn_descriptors.h"
#include "src/engine/cudnn_handle.h"
#include "src/engine/device_buffer.h"
#include "src/engine/kernels.h"
#include "src/engine/tensor_view.h"
#include "src/operator_info.h"
#include "src/weights.h"

namespace iostune {

namespace {

constexpr size_t kCublasWorkspaceBytes = size_t(8) << 20;
// cuDNN's own ranking (cudnnFind times the bare convolution, with the cache warm) is only a
// shortlist: the fastest few algorithms are then timed as the engine really runs them (fused
// with bias and ReLU, or followed by the epilogue kernel, with each math type, cold L2), and the
// fastest variant wins.
constexpr size_t kTimedAlgorithms = 5;
constexpr int kTimingWarmup = 1, kTimingRepeats = 5;

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

std::string op_label(const Op& op) {
    return fmt::format("running op {} '{}' ({})", op.id, op.name, to_string(op.kind));
}

Shape shape_of(const TensorView& v) { return Shape{v.n, v.c, v.h, v.w}; }

TensorView packed_view(float* data, const Shape& s) {
    return TensorView{data, s.n, s.c, s.h, s.w, int64_t(s.c) * s.h * s.w};
}

DeviceBuffer upload(const std::vector<float>& host, const std::string& what) {
    DeviceBuffer buffer(host.size() * sizeof(float));
    if (!host.empty()) {
        IOSTUNE_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), buffer.bytes(),
                                      cudaMemcpyHostToDevice),
                           fmt::format("uploading {}", what));
    }
    return buffer;
}

TensorDescriptor describe(const TensorView& v, const std::string& context) {
    return TensorDescriptor(v.n, v.c, v.h, v.w, v.batch_stride, context);
}

// Copies a (possibly channel-sliced) view into another of equal shape: one 2-D copy whose rows
// are the batch items.
void copy_view(const TensorView& src, const TensorView& dst, cudaStream_t stream,
               const std::string& context) {
    const size_t row = size_t(src.c) * size_t(src.h) * size_t(src.w) * sizeof(float);
    IOSTUNE_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, size_t(dst.batch_stride) * sizeof(float), src.data,
                                         size_t(src.batch_stride) * sizeof(float), row, size_t(src.n),
                                         cudaMemcpyDeviceToDevice, stream),
                       context);
}

// Measurements shared by every engine of the process (the same shape costs the same on the same
// device): cuDNN's algorithm ranking and the engine's timed choice, per device and convolution.
template <class Value>
class ProcessCache {
public:
    static ProcessCache& instance() {
        static ProcessCache cache;
        return cache;
    }
    std::optional<Value> find(const std::string& key) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = entries_.find(key);
        if (it == entries_.end()) return std::nullopt;
        return it->second;
    }
    void store(const std::string& key, Value value) {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[key] = std::move(value);
    }

private:
    std::mutex mutex_;
    std::map<std::string, Value> entries_;
};
using AlgorithmCache = ProcessCache<std::vector<cudnnConvolutionFwdAlgoPerf_t>>;
using ChoiceCache = ProcessCache<ConvChoice>;

enum class ConvPath { Fused, ConvThenEpilogue, ConvOnly };

const char* to_string(ConvPath path) {
    switch (path) {
        case ConvPath::Fused: return "cudnnConvolutionBiasActivationForward";
        case ConvPath::ConvThenEpilogue: return "cudnnConvolutionForward + bias/relu kernel";
        case ConvPath::ConvOnly: return "cudnnConvolutionForward";
    }
    return "?";
}

// The path's name in a ConvChoice (src/conv_choices.h).
const char* choice_name(ConvPath path) {
    switch (path) {
        case ConvPath::Fused: return "fused";
        case ConvPath::ConvThenEpilogue: return "conv+epilogue";
        case ConvPath::ConvOnly: return "conv";
    }
    return "?";
}

ConvPath path_from_name(const std::string& name) {
    if (name == "fused") return ConvPath::Fused;
    if (name == "conv+epilogue") return ConvPath::ConvThenEpilogue;
    if (name == "conv") return ConvPath::ConvOnly;
    throw Error(fmt::format("unknown convolution path '{}'", name));
}

struct ConvSpec {
    int out_channels = 0, in_channels_per_group = 0, kernel_h = 1, kernel_w = 1;
    ConvGeometry geometry;
    const float* weight = nullptr;
    const float* bias = nullptr;  // nullptr: no bias
    bool relu = false;
};

// One planned convolution: descriptors, chosen algorithm and path.
struct ConvStep {
    std::string context;
    TensorView in, out;
    TensorDescriptor x_desc, y_desc, bias_desc;
    FilterDescriptor w_desc;
    ConvolutionDescriptor conv_desc;
    ActivationDescriptor act_desc;
    const float* weight = nullptr;
    const float* bias = nullptr;
    bool relu = false;
    ConvPath path = ConvPath::ConvOnly;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    size_t workspace_bytes = 0;
    std::string signature;  // the shape key of ConvChoices
    ConvChoice choice;      // what runs: algo, math and path by name
    bool pinned = false;    // the choice came from EngineOptions::conv_choices

    ConvStep(std::string ctx, const TensorView& x, const TensorView& y, const ConvSpec& spec,
             cudnnMathType_t math)
        : context(std::move(ctx)),
          in(x),
          out(y),
          x_desc(describe(x, context)),
          y_desc(describe(y, context)),
          bias_desc(1, y.c, 1, 1, y.c, context),
          w_desc(spec.out_channels, spec.in_channels_per_group, spec.kernel_h, spec.kernel_w, context),
          conv_desc(spec.geometry, math, context),
          act_desc(spec.relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, context),
          weight(spec.weight),
          bias(spec.bias),
          relu(spec.relu) {}

    cudnnStatus_t run_fused(cudnnHandle_t handle, void* workspace) const {
        const float one = 1.0f, zero = 0.0f;
        return cudnnConvolutionBiasActivationForward(
            handle, &one, x_desc.get(), in.data, w_desc.get(), weight, conv_desc.get(), algo,
            workspace, workspace_bytes, &zero, y_desc.get(), out.data, bias_desc.get(), bias,
            act_desc.get(), y_desc.get(), out.data);
    }

    void run(cudnnHandle_t handle, void* workspace, cudaStream_t stream) const {
        if (path == ConvPath::Fused) {
            IOSTUNE_CUDNN_CHECK(run_fused(handle, workspace), context);
            return;
        }
        const float one = 1.0f, zero = 0.0f;
        IOSTUNE_CUDNN_CHECK(cudnnConvolutionForward(handle, &one, x_desc.get(), in.data, w_desc.get(),
                                                    weight, conv_desc.get(), algo, workspace,
                                                    workspace_bytes, &zero, y_desc.get(), out.data),
                            context);
        if (path == ConvPath::ConvThenEpilogue) launch_bias_activation(out, bias, relu, stream);
    }
};

// How a planned convolution runs, for plans and profiles: "IMPLICIT_GEMM (TENSOR_OP_MATH, pinned)".
std::string choice_label(const ConvStep& step) {
    return fmt::format("{} ({}{})", algo_name(step.algo), step.choice.math,
                       step.pinned ? ", pinned" : "");
}

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
};

struct OpExec {
    std::vector<ConvStep> convs;  // Conv: 1; SepConv: depthwise, pointwise
    std::optional<TensorDescriptor> x_desc, y_desc;  // cuDNN pooling / softmax
    std::optional<PoolingDescriptor> pool_desc;
    PoolWindow window;
    DeviceBuffer relu_scratch, depthwise_scratch;  // SepConv
    std::vector<int> concat_copies;  // indexes of Concat inputs not written in place
    std::vector<TensorView> planned_views;  // inputs then output, as planned
    OpPlan plan;
};

struct MergeExec {
    DeviceBuffer output, weight, bias;
    TensorView merged;  // the whole of `output`
    ConvSpec spec;
    TensorView planned_input;
    std::optional<ConvStep> conv;
    std::vector<TensorView> slices;  // each merged op's channels of `output`
    MergePlan plan;
};

}  // namespace

struct Engine::Impl {
    Graph graph;
    EngineOptions options;
    cudnnMathType_t conv_math = CUDNN_DEFAULT_MATH;
    cublasMath_t blas_math = CUBLAS_DEFAULT_MATH;

    std::vector<OpWeights> weights;
    DeviceBuffer input_buffer;
    TensorView input_view;
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
    DeviceBuffer l2_flush;  // written before each timed convolution run: twice the L2 size
    // Buffers replaced by larger ones: kept, since CUDA graphs captured earlier still use them.
    std::vector<DeviceBuffer> retired;

    Impl(Graph g, EngineOptions opt) : graph(std::move(g)), options(opt) {
        IOSTUNE_CUDA_CHECK(cudaSetDevice(options.device),
                           fmt::format("selecting CUDA device {} for the engine", options.device));
        // PyTorch's choice: TF32 tensor cores are allowed by cuDNN's default math on Ampere and
        // later; strict fp32 needs FMA-only kernels.
        conv_math = options.math == MathMode::Tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
        blas_math = options.math == MathMode::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH;
        if (graph.size() == 0) throw Error("Engine: the graph has no ops");
        if (graph.weights_state() == WeightsState::Absent) init_random_weights(graph, options.weight_seed);
        ensure_lanes(1);
        upload_weights();
        plan_memory();
        for (const Op& op : graph.ops()) plan_op(op);
        grow_workspaces();
        IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing the engine's set-up");
    }

    // --- planning --------------------------------------------------------------------------

    void ensure_lanes(size_t count) {
        while (lanes.size() < count) {
            auto lane = std::make_unique<Lane>();
            const std::string context = fmt::format("setting up stream lane {}", lanes.size());
            IOSTUNE_CUBLAS_CHECK(cublasSetMathMode(lane->cublas.get(), blas_math), context);
            IOSTUNE_CUBLAS_CHECK(cublasSetWorkspace(lane->cublas.get(), lane->cublas_workspace.get(),
                                                    lane->cublas_workspace.bytes()),
                                 context);
            lane->workspace = DeviceBuffer(workspace_bytes);
            lanes.push_back(std::move(lane));
        }
    }

    void grow_workspaces() {
        for (auto& lane : lanes) {
            if (lane->workspace.bytes() < workspace_bytes) {
                retired.push_back(std::move(lane->workspace));
                lane->workspace = DeviceBuffer(workspace_bytes);
            }
        }
    }

    void upload_weights() {
        weights.resize(size_t(graph.size()));
        for (const Op& op : graph.ops()) {
            const auto& params = graph.params_of(op.id);
            const std::string what = fmt::format("the weights of op {} '{}'", op.id, op.name);
            OpWeights& w = weights[size_t(op.id)];
            switch (op.kind) {
                case OpKind::Conv:
                case OpKind::Linear: {
                    const bool has_bias = op.kind == OpKind::Conv ? op.as<ConvAttrs>().bias
                                                                  : op.as<LinearAttrs>().bias;
                    w.weight = upload(params.at(0).values, what);
                    if (has_bias) w.bias = upload(params.at(1).values, what);
                    break;
                }
                case OpKind::SepConv:
                    w.weight = upload(params.at(0).values, what);
                    w.weight2 = upload(params.at(1).values, what);
                    if (op.as<SepConvAttrs>().bias) w.bias = upload(params.at(2).values, what);
                    break;
                default:
                    break;
            }
        }
    }

    // One buffer per op output, except ops whose only consumer is a Concat: they write into
    // their channel slice of its output. Resolved from the last op backwards so that nested
    // concats chain their slices.
    void plan_memory() {
        const int n = graph.size();
        const auto consumers = graph.consumers();
        struct Slice { int concat = -1; int first_channel = 0; };
        std::vector<Slice> slice(static_cast<size_t>(n));
        if (options.concat_in_place) {
            for (const Op& op : graph.ops()) {
                if (op.kind != OpKind::Concat) continue;
                int offset = 0;
                for (int in : op.inputs) {
                    const bool sole_use =
                        in != kGraphInput && consumers[size_t(in)] == std::vector<int>{op.id} &&
                        std::count(op.inputs.begin(), op.inputs.end(), in) == 1;
                    if (sole_use) slice[size_t(in)] = {op.id, offset};
                    offset += graph.tensor_shape(in).c;
                }
            }
        }
        input_buffer = DeviceBuffer(size_t(graph.input_shape().elements()) * sizeof(float));
        input_view = packed_view(input_buffer.floats(), graph.input_shape());
        outputs.resize(size_t(n));
        views.resize(size_t(n));
        for (int id = n - 1; id >= 0; --id) {
            const Shape& s = graph.op(id).output;
            const Slice& sl = slice[size_t(id)];
            if (sl.concat >= 0) {
                views[size_t(id)] = views[size_t(sl.concat)].channels(sl.first_channel, s.c);
            } else {
                outputs[size_t(id)] = DeviceBuffer(size_t(s.elements()) * sizeof(float));
                views[size_t(id)] = packed_view(outputs[size_t(id)].floats(), s);
            }
        }
        base_views = views;
        execs.resize(size_t(n));
        for (int id = 0; id < n; ++id) {
            OpPlan& plan = execs[size_t(id)].plan;
            plan.op_id = id;
            plan.name = graph.op(id).name;
            plan.kind = graph.op(id).kind;
            plan.writes_into_concat = slice[size_t(id)].concat >= 0;
        }
    }

    const TensorView& tensor(int id) const {
        return id == kGraphInput ? input_view : views[size_t(id)];
    }

    // Chooses how this convolution runs: the caller's pinned choice if it still works here, else
    // the process's earlier choice for the same shape, else by timing the candidates.
    ConvStep plan_conv(const std::string& context, const TensorView& in, const TensorView& out,
                       const ConvSpec& spec) {
        ConvStep step(context, in, out, spec, conv_math);
        int on = 0, oc = 0, oh = 0, ow = 0;
        IOSTUNE_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(step.conv_desc.get(),
                                                                  step.x_desc.get(),
                                                                  step.w_desc.get(), &on, &oc, &oh, &ow),
                            context);
        if (on != out.n || oc != out.c || oh != out.h || ow != out.w) {
            throw Error(fmt::format("{}: cuDNN computes an output of {}x{}x{}x{}, the graph says "
                                    "{}x{}x{}x{}", context, on, oc, oh, ow, out.n, out.c, out.h, out.w));
        }
        const ConvGeometry& g = spec.geometry;
        step.signature = fmt::format(
            "{}|x{}x{}x{}x{}/{}|w{}x{}x{}x{}|p{},{}|s{},{}|d{},{}|g{}|y/{}|{}",
            to_string(options.math), in.n, in.c, in.h, in.w, in.batch_stride, spec.out_channels,
            spec.in_channels_per_group, spec.kernel_h, spec.kernel_w, g.pad_h, g.pad_w, g.stride_h,
            g.stride_w, g.dilation_h, g.dilation_w, g.groups, out.batch_stride,
            spec.bias ? (spec.relu ? "bias+relu" : "bias") : (spec.relu ? "relu" : "plain"));
        const std::string process_key = fmt::format("dev{}|{}", options.device, step.signature);
        if (auto it = options.conv_choices.find(step.signature);
            it != options.conv_choices.end() && configure(step, it->second)) {
            step.pinned = true;
            return step;
        }
        if (auto earlier = ChoiceCache::instance().find(process_key); earlier && configure(step, *earlier))
            return step;
        choose_by_timing(step, spec, process_key);
        ChoiceCache::instance().store(process_key, step.choice);
        return step;
    }

    // Sets the step to run `choice`; false when it cannot run here (unknown to this cuDNN, a
    // math type the precision forbids, a workspace over the limit, an unsupported fusion).
    bool configure(ConvStep& step, const ConvChoice& choice, DeviceBuffer* scratch = nullptr) {
        const bool needs_epilogue = step.bias != nullptr || step.relu;
        cudnnConvolutionFwdAlgo_t algo{};
        cudnnMathType_t math{};
        ConvPath path{};
        try {
            algo = algo_from_name(choice.algorithm);
            math = math_from_name(choice.math);
            path = path_from_name(choice.path);
        } catch (const Error&) {
            return false;
        }
        if (needs_epilogue == (path == ConvPath::ConvOnly)) return false;
        if (path == ConvPath::Fused && step.bias == nullptr) return false;
        if (options.math == MathMode::Fp32) {
            if (math == CUDNN_TENSOR_OP_MATH) return false;
            math = CUDNN_FMA_MATH;  // strict fp32: never let DEFAULT_MATH pick TF32
        }
        step.conv_desc.set_math(math, step.context);
        size_t workspace = 0;
        Lane& lane = *lanes[0];
        if (cudnnGetConvolutionForwardWorkspaceSize(lane.cudnn.get(), step.x_desc.get(),
                                                    step.w_desc.get(), step.conv_desc.get(),
                                                    step.y_desc.get(), algo,
                                                    &workspace) != CUDNN_STATUS_SUCCESS ||
            workspace > options.max_workspace_bytes)
            return false;
        step.algo = algo;
        step.path = path;
        step.workspace_bytes = workspace;
        step.choice = choice;
        step.choice.math = math_name(math);
        if (path == ConvPath::Fused) {
            // cuDNN's fused call supports few algorithm/activation pairs: try it once.
            lane.cudnn.set_stream(lane.stream.get());
            DeviceBuffer own;
            if (scratch == nullptr || scratch->bytes() < workspace) own = DeviceBuffer(workspace);
            void* trial_workspace = own.bytes() > 0 ? own.get() : (scratch ? scratch->get() : nullptr);
            const cudnnStatus_t status = step.run_fused(lane.cudnn.get(), trial_workspace);
            IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(lane.stream.get()), step.context);
            if (status == CUDNN_STATUS_NOT_SUPPORTED) return false;
            IOSTUNE_CUDNN_CHECK(status, step.context + " (trying the fused conv+bias+activation)");
        }
        return true;
    }

    // cuDNN's ranking of the bare convolution, once per shape per process.
    std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked_algorithms(ConvStep& step,
                                                                 const std::string& process_key) {
        if (auto cached = AlgorithmCache::instance().find(process_key)) return *cached;
        Lane& lane = *lanes[0];
        lane.cudnn.set_stream(lane.stream.get());
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
        int returned = 0;
        IOSTUNE_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(
                                lane.cudnn.get(), step.x_desc.get(), step.w_desc.get(),
                                step.conv_desc.get(), step.y_desc.get(), int(perf.size()),
                                &returned, perf.data()),
                            step.context);
        perf.resize(size_t(returned));
        AlgorithmCache::instance().store(process_key, perf);
        return perf;
    }

    // Median time of one launch of the step as configured, on lane 0's stream, with a cold L2:
    // in a whole network at small batch each convolution's weights come from memory, not from
    // the cache a tight timing loop keeps warm (timed warm, a low-parallelism FMA kernel looks
    // fastest and then runs 4x slower in the network: seen on the H100).
    double time_step(const ConvStep& step, DeviceBuffer& workspace) {
        Lane& lane = *lanes[0];
        cudaStream_t stream = lane.stream.get();
        lane.cudnn.set_stream(stream);
        if (workspace.bytes() < step.workspace_bytes) workspace = DeviceBuffer(step.workspace_bytes);
        if (l2_flush.bytes() == 0) {
            int l2_bytes = 0;
            IOSTUNE_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, options.device),
                               "querying the L2 cache size");
            l2_flush = DeviceBuffer(2 * size_t(std::max(l2_bytes, 1 << 20)));
        }
        const CudaEvent start(CudaEvent::Timing::Enabled), stop(CudaEvent::Timing::Enabled);
        for (int i = 0; i < kTimingWarmup; ++i) step.run(lane.cudnn.get(), workspace.get(), stream);
        std::vector<double> samples;
        for (int r = 0; r < kTimingRepeats; ++r) {
            IOSTUNE_CUDA_CHECK(cudaMemsetAsync(l2_flush.get(), r, l2_flush.bytes(), stream),
                               "flushing the L2 cache before timing a convolution");
            start.record(stream);
            step.run(lane.cudnn.get(), workspace.get(), stream);
            stop.record(stream);
            stop.synchronize();
            samples.push_back(double(stop.elapsed_ms_since(start)));
        }
        std::sort(samples.begin(), samples.end());
        return samples[samples.size() / 2];
    }

    void choose_by_timing(ConvStep& step, const ConvSpec& spec, const std::string& process_key) {
        const std::vector<cudnnConvolutionFwdAlgoPerf_t> perf = ranked_algorithms(step, process_key);
        // The shortlist: cuDNN's fastest usable algorithms (it sorts by time), one per algorithm.
        std::vector<cudnnConvolutionFwdAlgo_t> shortlist;
        for (const auto& p : perf) {
            if (p.status != CUDNN_STATUS_SUCCESS || p.memory > options.max_workspace_bytes) continue;
            if (options.math == MathMode::Fp32 && p.mathType == CUDNN_TENSOR_OP_MATH) continue;
            if (p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;  // fp16 inside
            if (std::find(shortlist.begin(), shortlist.end(), p.algo) != shortlist.end()) continue;
            shortlist.push_back(p.algo);
            if (shortlist.size() == kTimedAlgorithms) break;
        }
        // Every way to run each: TF32 may use tensor cores explicitly or leave it to cuDNN.
        std::vector<const char*> maths = {options.math == MathMode::Tf32 ? "DEFAULT_MATH" : "FMA_MATH"};
        if (options.math == MathMode::Tf32) maths.push_back("TENSOR_OP_MATH");
        std::vector<const char*> paths;
        if (spec.bias != nullptr) paths = {"fused", "conv+epilogue"};
        else paths = {spec.relu ? "conv+epilogue" : "conv"};

        DeviceBuffer scratch;
        for (const auto& p : perf)
            if (std::find(shortlist.begin(), shortlist.end(), p.algo) != shortlist.end() &&
                p.memory > scratch.bytes())
                scratch = DeviceBuffer(p.memory);
        std::optional<ConvChoice> best;
        for (cudnnConvolutionFwdAlgo_t algo : shortlist) {
            for (const char* math : maths) {
                for (const char* path : paths) {
                    ConvChoice candidate{algo_name(algo), math, path, 0.0};
                    if (!configure(step, candidate, &scratch)) continue;
                    try {
                        candidate.time_ms = time_step(step, scratch);
                    } catch (const Error&) {
                        continue;  // a variant cuDNN accepts but cannot run: not a candidate
                    }
                    candidate.math = step.choice.math;
                    if (!best || candidate.time_ms < best->time_ms) best = candidate;
                }
            }
        }
        if (!best || !configure(step, *best, &scratch)) {
            throw Error(fmt::format("{}: cuDNN has no {} algorithm for this convolution within a "
                                    "{} MiB workspace", step.context, to_string(options.math),
                                    options.max_workspace_bytes >> 20));
        }
        step.choice.time_ms = best->time_ms;
    }

    void record_conv(OpPlan& plan, const ConvStep& step) {
        plan.path += (plan.path.empty() ? "" : "; ") + std::string(to_string(step.path));
        plan.algorithms += (plan.algorithms.empty() ? "" : "; ") + choice_label(step);
        plan.workspace_bytes = std::max(plan.workspace_bytes, step.workspace_bytes);
        workspace_bytes = std::max(workspace_bytes, step.workspace_bytes);
    }

    std::vector<TensorView> current_views(const Op& op) const {
        std::vector<TensorView> v;
        for (int i : op.inputs) v.push_back(tensor(i));
        v.push_back(views[size_t(op.id)]);
        return v;
    }

    void plan_op(const Op& op) {
        OpExec& exec = execs[size_t(op.id)];
        exec.planned_views = current_views(op);
        const std::string context = op_label(op);
        const TensorView& out = views[size_t(op.id)];
        const TensorView& in = tensor(op.inputs.at(0));
        const OpWeights& w = weights[size_t(op.id)];
        switch (op.kind) {
            case OpKind::Conv: {
                const auto& a = op.as<ConvAttrs>();
                ConvSpec spec{a.out_channels, in.c / a.groups, a.kernel_h, a.kernel_w,
                              ConvGeometry{a.pad_h, a.pad_w, a.stride_h, a.stride_w, a.dilation_h,
                                           a.dilation_w, a.groups},
                              w.weight.floats(), a.bias ? w.bias.floats() : nullptr, a.relu};
                exec.convs.push_back(plan_conv(context, in, out, spec));
                record_conv(exec.plan, exec.convs.back());
                break;
            }
            case OpKind::SepConv: {
                const auto& a = op.as<SepConvAttrs>();
                TensorView dw_in = in;
                if (a.pre_relu) {
                    if (exec.relu_scratch.bytes() == 0)
                        exec.relu_scratch = DeviceBuffer(size_t(in.elements()) * sizeof(float));
                    dw_in = packed_view(exec.relu_scratch.floats(), shape_of(in));
                }
                const Shape dw_shape{out.n, in.c, out.h, out.w};
                if (exec.depthwise_scratch.bytes() == 0)
                    exec.depthwise_scratch = DeviceBuffer(size_t(dw_shape.elements()) * sizeof(float));
                const TensorView dw_out = packed_view(exec.depthwise_scratch.floats(), dw_shape);
                ConvSpec depthwise{in.c, 1, a.kernel, a.kernel,
                                   ConvGeometry{a.pad, a.pad, a.stride, a.stride, a.dilation,
                                                a.dilation, in.c},
                                   w.weight.floats(), nullptr, false};
                ConvSpec pointwise{a.out_channels, in.c, 1, 1, ConvGeometry{},
                                   w.weight2.floats(), a.bias ? w.bias.floats() : nullptr, false};
                exec.convs.push_back(plan_conv(context + " depthwise", dw_in, dw_out, depthwise));
                exec.convs.push_back(plan_conv(context + " pointwise", dw_out, out, pointwise));
                if (a.pre_relu) exec.plan.path = "relu kernel; ";
                for (const ConvStep& s : exec.convs) record_conv(exec.plan, s);
                break;
            }
            case OpKind::MaxPool:
            case OpKind::AvgPool: {
                const auto& a = op.as<PoolAttrs>();
                PoolWindow& win = exec.window;
                win.max = op.kind == OpKind::MaxPool;
                win.count_include_pad = a.count_include_pad;
                if (a.global) {
                    win.kernel_h = in.h, win.kernel_w = in.w;
                } else {
                    win.kernel_h = a.kernel_h, win.kernel_w = a.kernel_w;
                    win.stride_h = a.stride_h, win.stride_w = a.stride_w;
                    win.pad_h = a.pad_h, win.pad_w = a.pad_w;
                }
                // cuDNN rounds the output size down; with ceil_mode the extra window is ours.
                const int floor_h = (in.h + 2 * win.pad_h - win.kernel_h) / win.stride_h + 1;
                const int floor_w = (in.w + 2 * win.pad_w - win.kernel_w) / win.stride_w + 1;
                if (floor_h == out.h && floor_w == out.w) {
                    const cudnnPoolingMode_t mode =
                        win.max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                : (win.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                         : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
                    exec.pool_desc.emplace(mode, win.kernel_h, win.kernel_w, win.pad_h, win.pad_w,
                                           win.stride_h, win.stride_w, context);
                    exec.x_desc.emplace(describe(in, context));
                    exec.y_desc.emplace(describe(out, context));
                    exec.plan.path = "cudnnPoolingForward";
                } else {
                    exec.plan.path = "pool kernel (ceil_mode)";
                }
                break;
            }
            case OpKind::Softmax:
                exec.x_desc.emplace(describe(in, context));
                exec.y_desc.emplace(describe(out, context));
                exec.plan.path = "cudnnSoftmaxForward";
                break;
            case OpKind::Concat: {
                int offset = 0, in_place = 0;
                for (size_t k = 0; k < op.inputs.size(); ++k) {
                    const TensorView& src = tensor(op.inputs[k]);
                    if (src == out.channels(offset, src.c)) {
                        ++in_place;
                    } else {
                        exec.concat_copies.push_back(int(k));
                    }
                    offset += src.c;
                }
                exec.plan.path = fmt::format("concat: {} in place, {} copied", in_place,
                                             exec.concat_copies.size());
                break;
            }
            case OpKind::Add:
                exec.plan.path = "add kernel";
                break;
            case OpKind::Relu:
                exec.plan.path = "relu kernel";
                break;
            case OpKind::Identity:
                exec.plan.path = "copy kernel";
                break;
            case OpKind::Linear:
                exec.plan.path = "cublasSgemm + bias kernel";
                break;
        }
    }

    MergeExec& plan_merge(const Stage& stage) {
        const std::string signature = stage_signature(stage);
        if (auto it = merges.find(signature); it != merges.end()) return it->second;
        if (stage.groups.size() != 1) {
            throw Error(fmt::format("merge stage {} must have exactly one group", signature));
        }
        const std::vector<int>& ids = stage.groups[0];
        std::string why;
        if (!can_merge(graph, ids, &why)) {
            throw Error(fmt::format("merge stage {} is not a legal merge: {}", signature, why));
        }
        const std::string context = fmt::format("running merge stage {}", signature);
        MergeExec m;
        const Op& first = graph.op(ids[0]);
        const auto& fa = first.as<ConvAttrs>();
        const TensorView& in = tensor(first.inputs[0]);
        int kh = 0, kw = 0, channels = 0;
        for (int id : ids) {
            const auto& a = graph.op(id).as<ConvAttrs>();
            kh = std::max(kh, a.kernel_h);
            kw = std::max(kw, a.kernel_w);
            channels += a.out_channels;
        }
        // Stack the weights along output channels, each kernel centred in the largest one.
        std::vector<float> stacked(size_t(channels) * size_t(in.c) * size_t(kh) * size_t(kw), 0.0f);
        std::vector<float> bias;
        int row = 0;
        for (int id : ids) {
            const auto& a = graph.op(id).as<ConvAttrs>();
            const auto& params = graph.params_of(id);
            const std::vector<float>& wv = params.at(0).values;
            const int dy = (kh - a.kernel_h) / 2, dx = (kw - a.kernel_w) / 2;
            for (int o = 0; o < a.out_channels; ++o)
                for (int c = 0; c < in.c; ++c)
                    for (int y = 0; y < a.kernel_h; ++y)
                        for (int x = 0; x < a.kernel_w; ++x)
                            stacked[((size_t(row + o) * size_t(in.c) + size_t(c)) * size_t(kh) +
                                     size_t(y + dy)) * size_t(kw) + size_t(x + dx)] =
                                wv[((size_t(o) * size_t(in.c) + size_t(c)) * size_t(a.kernel_h) +
                                    size_t(y)) * size_t(a.kernel_w) + size_t(x)];
            if (a.bias) bias.insert(bias.end(), params.at(1).values.begin(), params.at(1).values.end());
            row += a.out_channels;
        }
        m.weight = upload(stacked, context + " stacked weights");
        if (fa.bias) m.bias = upload(bias, context + " stacked bias");
        const Shape& s0 = first.output;
        const Shape merged_shape{s0.n, channels, s0.h, s0.w};
        m.output = DeviceBuffer(size_t(merged_shape.elements()) * sizeof(float));
        const TensorView merged = packed_view(m.output.floats(), merged_shape);
        const ConvSpec spec{channels, in.c, kh, kw,
                            ConvGeometry{fa.pad_h + (kh - fa.kernel_h) / 2,
                                         fa.pad_w + (kw - fa.kernel_w) / 2, fa.stride_h,
                                         fa.stride_w, 1, 1, 1},
                            m.weight.floats(), fa.bias ? m.bias.floats() : nullptr, fa.relu};
        m.merged = merged;
        m.spec = spec;
        m.planned_input = in;
        m.conv.emplace(plan_conv(context, in, merged, spec));
        int offset = 0;
        for (int id : ids) {
            const int c = graph.op(id).output.c;
            m.slices.push_back(merged.channels(offset, c));
            offset += c;
        }
        m.plan.signature = signature;
        m.plan.ops = ids;
        m.plan.out_channels = channels;
        m.plan.kernel_h = kh;
        m.plan.kernel_w = kw;
        m.plan.path = to_string(m.conv->path);
        m.plan.algorithms = choice_label(*m.conv);
        workspace_bytes = std::max(workspace_bytes, m.conv->workspace_bytes);
        return merges.emplace(signature, std::move(m)).first->second;
    }

    // Planning done lazily during launches must never happen inside a capture.
    void require_not_capturing(cudaStream_t stream, const std::string& what) const {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        IOSTUNE_CUDA_CHECK(cudaStreamIsCapturing(stream, &status), what);
        if (status != cudaStreamCaptureStatusNone) {
            throw Error(fmt::format("{} needs planning (stream lanes, merged weights) that cannot "
                                    "happen inside a CUDA graph capture: call prepare(schedule) "
                                    "first", what));
        }
    }

    void prepare_stage(const Stage& stage, cudaStream_t stream) {
        const bool need_merge = stage.strategy == StageStrategy::Merge &&
                                merges.find(stage_signature(stage)) == merges.end();
        const bool need_lanes = stage.strategy == StageStrategy::Concurrent &&
                                stage.groups.size() > lanes.size();
        if (!need_merge && !need_lanes) return;
        require_not_capturing(stream, fmt::format("stage {}", stage_signature(stage)));
        if (need_merge) plan_merge(stage);
        ensure_lanes(stage.groups.size());
        grow_workspaces();
    }

    // --- execution -------------------------------------------------------------------------

    void run_op(int id, Lane& lane, cudaStream_t stream) {
        const Op& op = graph.op(id);
        const OpExec& exec = execs[size_t(id)];
        const TensorView& out = views[size_t(id)];
        const TensorView& in = tensor(op.inputs.at(0));
        const float one = 1.0f, zero = 0.0f;
        switch (op.kind) {
            case OpKind::Conv:
            case OpKind::SepConv:
                lane.cudnn.set_stream(stream);
                if (op.kind == OpKind::SepConv && op.as<SepConvAttrs>().pre_relu) {
                    launch_copy(in, exec.convs[0].in, true, stream);
                }
                for (const ConvStep& step : exec.convs) {
                    step.run(lane.cudnn.get(), lane.workspace.get(), stream);
                }
                break;
            case OpKind::MaxPool:
            case OpKind::AvgPool:
                if (exec.pool_desc) {
                    lane.cudnn.set_stream(stream);
                    IOSTUNE_CUDNN_CHECK(cudnnPoolingForward(lane.cudnn.get(), exec.pool_desc->get(),
                                                            &one, exec.x_desc->get(), in.data, &zero,
                                                            exec.y_desc->get(), out.data),
                                        op_label(op));
                } else {
                    launch_pool2d(in, out, exec.window, stream);
                }
                break;
            case OpKind::Softmax:
                lane.cudnn.set_stream(stream);
                IOSTUNE_CUDNN_CHECK(cudnnSoftmaxForward(lane.cudnn.get(), CUDNN_SOFTMAX_ACCURATE,
                                                        CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                                        exec.x_desc->get(), in.data, &zero,
                                                        exec.y_desc->get(), out.data),
                                    op_label(op));
                break;
            case OpKind::Concat: {
                int offset = 0;
                size_t next_copy = 0;
                for (size_t k = 0; k < op.inputs.size(); ++k) {
                    const TensorView& src = tensor(op.inputs[k]);
                    if (next_copy < exec.concat_copies.size() &&
                        exec.concat_copies[next_copy] == int(k)) {
                        copy_view(src, out.channels(offset, src.c), stream, op_label(op));
                        ++next_copy;
                    }
                    offset += src.c;
                }
                break;
            }
            case OpKind::Add: {
                std::vector<TensorView> inputs;
                inputs.reserve(op.inputs.size());
                for (int i : op.inputs) inputs.push_back(tensor(i));
                launch_add(inputs, out, op.as<AddAttrs>().relu, stream);
                break;
            }
            case OpKind::Relu:
                launch_copy(in, out, true, stream);
                break;
            case OpKind::Identity:
                launch_copy(in, out, false, stream);
                break;
            case OpKind::Linear: {
                const auto& a = op.as<LinearAttrs>();
                const int k = in.c * in.h * in.w;
                const OpWeights& w = weights[size_t(id)];
                lane.cublas.set_stream(stream);
                // Row-major y[N, out] = x[N, K] W[out, K]^T, written column-major as
                // y^T = W^T' x^T with W read transposed.
                IOSTUNE_CUBLAS_CHECK(cublasSgemm(lane.cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N,
                                                 a.out_features, in.n, k, &one, w.weight.floats(), k,
                                                 in.data, int(in.batch_stride), &zero, out.data,
                                                 int(out.batch_stride)),
                                     op_label(op));
                if (a.bias) launch_bias_activation(out, w.bias.floats(), false, stream);
                break;
            }
        }
    }

    // Ops that live in their slice of the merged output need nothing more; the others (outputs
    // that are concat slices, or a merge stage run under another schedule's layout) get a copy.
    void run_merge(const MergeExec& m, Lane& lane, cudaStream_t stream) {
        lane.cudnn.set_stream(stream);
        m.conv->run(lane.cudnn.get(), lane.workspace.get(), stream);
        for (size_t k = 0; k < m.plan.ops.size(); ++k) {
            const TensorView& home = views[size_t(m.plan.ops[k])];
            if (!(home == m.slices[k])) copy_view(m.slices[k], home, stream, m.conv->context);
        }
    }

    // Moves the schedule's merged ops into their slices of the merged outputs (so consumers read
    // the slice, no copy) and every other op back to its own place, then re-plans whatever
    // reads or writes a tensor that moved. Scratch buffers are reused, never freed, so CUDA
    // graphs captured under an earlier layout stay valid.
    void set_layout(const Schedule& schedule) {
        std::vector<TensorView> target = base_views;
        for (const Stage& stage : schedule.flat_stages()) {
            if (stage.strategy != StageStrategy::Merge) continue;
            MergeExec& m = plan_merge(stage);
            for (size_t k = 0; k < m.plan.ops.size(); ++k) {
                const int id = m.plan.ops[k];
                if (!execs[size_t(id)].plan.writes_into_concat) target[size_t(id)] = m.slices[k];
            }
        }
        views = std::move(target);
        for (const Op& op : graph.ops()) {
            if (current_views(op) == execs[size_t(op.id)].planned_views) continue;
            OpExec old = std::move(execs[size_t(op.id)]);
            OpExec& fresh = execs[size_t(op.id)];
            fresh = OpExec{};
            fresh.relu_scratch = std::move(old.relu_scratch);
            fresh.depthwise_scratch = std::move(old.depthwise_scratch);
            fresh.plan.op_id = old.plan.op_id;
            fresh.plan.name = old.plan.name;
            fresh.plan.kind = old.plan.kind;
            fresh.plan.writes_into_concat = old.plan.writes_into_concat;
            plan_op(op);
        }
        for (auto& [signature, m] : merges) {
            const TensorView& in = tensor(graph.op(m.plan.ops[0]).inputs[0]);
            if (in == m.planned_input) continue;
            m.planned_input = in;
            m.conv.reset();
            m.conv.emplace(plan_conv(fmt::format("running merge stage {}", signature), in,
                                     m.merged, m.spec));
            workspace_bytes = std::max(workspace_bytes, m.conv->workspace_bytes);
        }
    }

    void launch_stage(const Stage& stage, cudaStream_t origin_stream) {
        prepare_stage(stage, origin_stream);
        if (stage.strategy == StageStrategy::Merge) {
            run_merge(merges.at(stage_signature(stage)), *lanes[0], origin_stream);
            return;
        }
        if (stage.groups.size() == 1) {  // no fork needed
            for (int id : stage.groups[0]) run_op(id, *lanes[0], origin_stream);
            return;
        }
        forked.record(origin_stream);
        for (size_t g = 0; g < stage.groups.size(); ++g) {
            Lane& lane = *lanes[g];
            forked.wait_on(lane.stream.get());
            for (int id : stage.groups[g]) run_op(id, lane, lane.stream.get());
            lane.joined.record(lane.stream.get());
        }
        for (size_t g = 0; g < stage.groups.size(); ++g) lanes[g]->joined.wait_on(origin_stream);
    }

    void check_op_id(int id) const {
        if (id < 0 || id >= graph.size()) {
            throw Error(fmt::format("op id {} is out of range: graph '{}' has ops 0..{}", id,
                                    graph.name(), graph.size() - 1));
        }
    }

    template <class Launch>
    CudaGraphExec capture_with(Launch&& launch, const std::string& what) {
        const cudaStream_t stream = origin.get();
        launch(stream);  // warm-up: lazy loading, lazy planning, first-run costs
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), fmt::format("warming up {}", what));
        IOSTUNE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                           fmt::format("starting to capture {}", what));
        try {
            launch(stream);
        } catch (...) {
            cudaGraph_t broken = nullptr;
            cudaStreamEndCapture(stream, &broken);
            if (broken != nullptr) cudaGraphDestroy(broken);
            throw;
        }
        cudaGraph_t raw = nullptr;
        IOSTUNE_CUDA_CHECK(cudaStreamEndCapture(stream, &raw),
                           fmt::format("ending the capture of {}", what));
        const CudaGraph graph_owner(raw);
        return CudaGraphExec(graph_owner);
    }

    HostTensor read_view(const TensorView& v, const std::string& what) {
        IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), fmt::format("finishing work before reading {}", what));
        HostTensor host(shape_of(v));
        const size_t row = size_t(v.c) * size_t(v.h) * size_t(v.w) * sizeof(float);
        IOSTUNE_CUDA_CHECK(cudaMemcpy2D(host.data.data(), row, v.data,
                                        size_t(v.batch_stride) * sizeof(float), row, size_t(v.n),
                                        cudaMemcpyDeviceToHost),
                           fmt::format("reading {}", what));
        return host;
    }
};

Engine::Engine(Graph graph, EngineOptions options)
    : impl_(std::make_unique<Impl>(std::move(graph), options)) {}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

const Graph& Engine::graph() const { return impl_->graph; }
const EngineOptions& Engine::options() const { return impl_->options; }

void Engine::prepare(const Schedule& schedule) {
    validate(impl_->graph, schedule);
    impl_->set_layout(schedule);
    size_t widest = 1;
    for (const Stage& stage : schedule.flat_stages()) {
        if (stage.strategy == StageStrategy::Concurrent) widest = std::max(widest, stage.groups.size());
    }
    impl_->ensure_lanes(widest);
    impl_->grow_workspaces();
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing the schedule's set-up");
}

void Engine::launch_op(int op_id, cudaStream_t stream) {
    impl_->check_op_id(op_id);
    impl_->run_op(op_id, *impl_->lanes[0], stream);
}

void Engine::launch_stage(const Stage& stage, cudaStream_t origin) {
    for (const auto& group : stage.groups)
        for (int id : group) impl_->check_op_id(id);
    impl_->launch_stage(stage, origin);
}

void Engine::launch_schedule(const Schedule& schedule, cudaStream_t origin) {
    for (const Stage& stage : schedule.flat_stages()) launch_stage(stage, origin);
}

CudaGraphExec Engine::capture(const Schedule& schedule) {
    prepare(schedule);
    return impl_->capture_with([&](cudaStream_t s) { launch_schedule(schedule, s); }, "a schedule");
}

CudaGraphExec Engine::capture_stage(const Stage& stage) {
    return impl_->capture_with([&](cudaStream_t s) { launch_stage(stage, s); },
                               fmt::format("stage {}", stage_signature(stage)));
}

cudaStream_t Engine::origin_stream() const { return impl_->origin.get(); }

void Engine::set_input(const HostTensor& input) {
    if (input.shape != impl_->graph.input_shape()) {
        const Shape& e = impl_->graph.input_shape();
        throw Error(fmt::format("input of shape {}x{}x{}x{} given; graph '{}' takes {}x{}x{}x{}",
                                input.shape.n, input.shape.c, input.shape.h, input.shape.w,
                                impl_->graph.name(), e.n, e.c, e.h, e.w));
    }
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing work before setting the input");
    IOSTUNE_CUDA_CHECK(cudaMemcpy(impl_->input_buffer.get(), input.data.data(),
                                  impl_->input_buffer.bytes(), cudaMemcpyHostToDevice),
                       "copying the input to the device");
}

void Engine::set_input_device(const float* src, cudaStream_t stream) {
    IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(impl_->input_buffer.get(), src, impl_->input_buffer.bytes(),
                                       cudaMemcpyDeviceToDevice, stream),
                       "copying the input from device memory");
}

HostTensor Engine::read_output() { return read_op_output(impl_->graph.output_id()); }

HostTensor Engine::read_op_output(int op_id) {
    impl_->check_op_id(op_id);
    return impl_->read_view(impl_->views[size_t(op_id)],
                            fmt::format("the output of op {} '{}'", op_id,
                                        impl_->graph.op(op_id).name));
}

float* Engine::input_device() { return impl_->input_buffer.floats(); }
const float* Engine::output_device() const { return impl_->views.back().data; }

void Engine::synchronize() {
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "waiting for the engine's work");
}

std::vector<OpPlan> Engine::op_plans() const {
    std::vector<OpPlan> plans;
    for (const OpExec& e : impl_->execs) plans.push_back(e.plan);
    return plans;
}

std::vector<MergePlan> Engine::merge_plans() const {
    std::vector<MergePlan> plans;
    for (const auto& [signature, m] : impl_->merges) {
        MergePlan plan = m.plan;
        for (size_t k = 0; k < m.plan.ops.size(); ++k)
            if (!(impl_->views[size_t(m.plan.ops[k])] == m.slices[k])) ++plan.slice_copies;
        plans.push_back(std::move(plan));
    }
    return plans;
}

size_t Engine::device_memory_bytes() const {
    const Impl& im = *impl_;
    size_t total = im.input_buffer.bytes();
    for (const auto& w : im.weights) total += w.weight.bytes() + w.weight2.bytes() + w.bias.bytes();
    for (const auto& b : im.outputs) total += b.bytes();
    for (const auto& e : im.execs) total += e.relu_scratch.bytes() + e.depthwise_scratch.bytes();
    for (const auto& [s, m] : im.merges) total += m.output.bytes() + m.weight.bytes() + m.bias.bytes();
    for (const auto& lane : im.lanes) total += lane->workspace.bytes() + lane->cublas_workspace.bytes();
    total += im.l2_flush.bytes();
    return total;
}

int Engine::lane_count() const { return int(impl_->lanes.size()); }

ConvChoices Engine::conv_choices() const {
    ConvChoices choices;
    for (const OpExec& e : impl_->execs)
        for (const ConvStep& step : e.convs) choices[step.signature] = step.choice;
    for (const auto& [signature, m] : impl_->merges)
        if (m.conv) choices[m.conv->signature] = m.conv->choice;
    return choices;
}

int Engine::pinned_conv_count() const {
    int pinned = 0;
    for (const OpExec& e : impl_->execs)
        for (const ConvStep& step : e.convs) pinned += step.pinned ? 1 : 0;
    for (const auto& [signature, m] : impl_->merges) pinned += m.conv && m.conv->pinned ? 1 : 0;
    return pinned;
}

int Engine::conv_count() const {
    int count = 0;
    for (const OpExec& e : impl_->execs) count += int(e.convs.size());
    for (const auto& [signature, m] : impl_->merges) count += m.conv ? 1 : 0;
    return count;
}

}  // namespace iostune
