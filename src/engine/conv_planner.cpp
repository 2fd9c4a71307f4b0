// How each convolution runs. cuDNN's own ranking (cudnnFind times the bare convolution, with the
// cache warm) is only a shortlist: the fastest few algorithms are then timed as the engine really
// runs them (fused with bias and ReLU, or followed by the epilogue kernel, with each math type the
// precision allows, cold L2), and the fastest variant wins. Choices are shared by every engine of
// the process (same shape, same device: same cost) and can be pinned from a stored schedule.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "src/engine/engine_impl.h"
#include "src/engine/planning_pace.h"
#include "src/engine/stream_capture.h"
#include "src/stopwatch.h"

namespace iostune {

namespace {

// cuDNN 9 refines "not supported" and "bad parameter" into sub-codes (3002
// CUDNN_STATUS_NOT_SUPPORTED_SHAPE: its fused call on a 42-channel pointwise convolution writing
// into a concat slice, H100); a whole category means "not this configuration", not an error.
bool refused_by_cudnn(cudnnStatus_t status) {
    const int category = int(status) / 1000;
    return category == int(CUDNN_STATUS_NOT_SUPPORTED) / 1000 ||
           category == int(CUDNN_STATUS_BAD_PARAM) / 1000;
}

constexpr size_t kTimedAlgorithms = 5;
// Past EngineOptions::time_convolutions_by: the graph API configurations and the legacy
// algorithms (by cuDNN's heuristic) timed at most, each.
constexpr int kQuickCandidates = 2;
constexpr int kTimingWarmup = 1, kTimingRepeats = 5;

// Shortlist entry `rank` of a graph-API convolution as a choice on `path`: its rank's name, its
// math, and the configuration it is (ConvChoice::engine).
ConvChoice graph_choice(const GraphConv& graph_conv, int rank, ConvPath path) {
    ConvChoice choice{fmt::format("{}{}", kGraphAlgorithmPrefix, rank), graph_conv.math(rank),
                      choice_name(path), 0.0};
    choice.engine = graph_conv.identity(rank);
    return choice;
}

// Measurements shared by every engine of the process: cuDNN's algorithm ranking and the engine's
// timed choice, per device and convolution signature.
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
// A timed choice and its runners-up, so that an engine finding the choice here can still offer
// the search's kernel moves the same alternatives.
struct TimedChoice {
    ConvChoice choice;
    std::vector<ConvChoice> runners_up;
};
using ChoiceCache = ProcessCache<TimedChoice>;

// The legacy call's ways to run a step with its epilogue: with a bias, cuDNN's fused call
// (which runs few combinations) or the convolution then the epilogue kernel; else the bare
// convolution, followed by the epilogue kernel where a ReLU or residual needs one.
std::vector<const char*> legacy_paths(const ConvStep& step) {
    if (step.has_bias()) return {"fused", "conv+epilogue"};
    return {step.relu() || step.has_residual() ? "conv+epilogue" : "conv"};
}

// The math types worth timing in a precision: strict fp32 has FMA only; TF32 and 16-bit data
// may run on tensor cores explicitly or leave it to cuDNN's default.
std::vector<const char*> candidate_maths(Precision precision) {
    if (!uses_tensor_cores(precision)) return {"FMA_MATH"};
    return {"DEFAULT_MATH", "TENSOR_OP_MATH"};
}

}  // namespace

// Chooses how this convolution runs: the caller's pinned choice if it still works here, else
// the process's earlier choice for the same shape, else by timing the candidates. When the op's
// views are strided (a channel slice), the candidates on those views and on packed staging
// buffers (with a copy) are both timed: the graph API takes strided views, but some of its
// engines then add layout conversions that cost more than the copy (GoogLeNet TF32, H100).
ConvStep Engine::Impl::plan_conv(const std::string& context, const TensorView& in,
                                 const TensorView& out, const ConvSpec& spec, ConvStaging staging) {
    const bool strided = !in.packed() || !out.packed();
    const auto make_step = [&](bool stage) {
        // A pre-ReLU is applied while staging the input for cuDNN (the depthwise kernel fuses
        // it instead and reads the input itself).
        ConvStep step(context, in, out, spec, conv_math, spec.relu_input || (stage && !in.packed()),
                      stage && !out.packed(), staging);
        int on = 0, oc = 0, oh = 0, ow = 0;
        IOSTUNE_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(step.conv_desc().get(),
                                                                  step.x_desc(), step.w_desc(),
                                                                  &on, &oc, &oh, &ow),
                            context);
        if (on != out.n || oc != out.c || oh != out.h || ow != out.w) {
            throw Error(fmt::format("{}: cuDNN computes an output of {}x{}x{}x{}, the graph says "
                                    "{}x{}x{}x{}", context, on, oc, oh, ow, out.n, out.c, out.h,
                                    out.w));
        }
        const ConvGeometry& g = spec.geometry;
        const TensorView& x = step.input();
        const TensorView& y = step.output();
        // NCHW keys keep their earlier form ("tf32|x..."), so stored choices stay valid.
        const std::string storage = layout == TensorLayout::Nchw
                                        ? std::string(to_string(options.precision))
                                        : fmt::format("{}/{}", to_string(options.precision),
                                                      to_string(layout));
        step.signature = fmt::format(
            "{}|x{}x{}x{}x{}/{}|w{}x{}x{}x{}|p{},{}|s{},{}|d{},{}|g{}|y/{}|{}", storage, x.n, x.c,
            x.h, x.w, x.row_stride, spec.out_channels, spec.in_channels_per_group, spec.kernel_h,
            spec.kernel_w, g.pad_h, g.pad_w, g.stride_h, g.stride_w, g.dilation_h, g.dilation_w,
            g.groups, y.row_stride,
            spec.bias ? (spec.relu ? "bias+relu" : "bias") : (spec.relu ? "relu" : "plain"));
        if (spec.relu_input) step.signature += "|relu-in";
        if (spec.residual) step.signature += fmt::format("|z/{}", spec.residual->row_stride);
        // Another epilogue is another choice (the fused graph differs, the kernel after costs).
        if (spec.activation) step.signature += "|" + to_string(*spec.activation);
        if (spec.prelu_slope) step.signature += "|prelu";
        // Channel slices start at any element. The heuristics rank cuDNN's graph engines and
        // cuBLASLt's products by alignment, so a ranked choice (GRAPH_<k>, GEMM_<k>) names one
        // kernel only for one alignment; packed tensors (256-byte aligned) keep the plain key.
        const uint32_t align_x = byte_alignment(x.data, 256), align_y = byte_alignment(y.data, 256),
                       align_z = spec.residual ? byte_alignment(spec.residual->data, 256) : 256;
        if (std::min({align_x, align_y, align_z}) < 256)
            step.signature += fmt::format("|align {}/{}/{}", align_x, align_y, align_z);
        // A staged step reads and writes packed staging buffers, so the key so far is that of a
        // packed convolution of the same shape, which may choose another kernel: GoogLeNet's
        // inception3b branch1 (staged into its concat slice) and branch2.0 (packed) once shared
        // one entry of conv_choices(), and an engine pinning them ran branch2.0's kernel for
        // both (call166: 2e-4 apart from the engine that chose). Its own key, with the
        // alignments of the op's views, on which a 1x1 GEMM runs unstaged (conv_step.cpp).
        if (stage)
            step.signature += fmt::format("|staged {}/{}", byte_alignment(in.data, 256),
                                          byte_alignment(out.data, 256));
        return step;
    };
    // The caller's stored choice for this step's signature, if it runs here.
    const auto pin = [&](ConvStep& step) {
        const auto it = options.conv_choices.find(step.signature);
        if (it == options.conv_choices.end() || !configure(step, it->second)) return false;
        step.pinned = true;
        step.candidates = "pinned";
        return true;
    };
    std::vector<ConvStep> steps;  // on the op's views, then staged where they are strided
    steps.push_back(make_step(false));
    if (pin(steps[0])) return std::move(steps[0]);  // (a replay: no staging buffers to build)
    if (strided) {
        steps.push_back(make_step(true));
        if (pin(steps[1])) return std::move(steps[1]);
    }
    const auto process_key = [&](size_t i) {
        return fmt::format("dev{}|{}", options.device, steps[i].signature);
    };
    // Choices for co-running are another ranking of the same candidates: kept apart.
    const auto choice_key = [&](size_t i) {
        return options.conv_objective == ConvObjective::Alone ? process_key(i)
                                                              : process_key(i) + "|corun";
    };
    for (size_t i = 0; i < steps.size(); ++i) {
        if (auto earlier = ChoiceCache::instance().find(choice_key(i));
            earlier && configure(steps[i], earlier->choice)) {
            steps[i].candidates = "cached in this process";
            steps[i].runners_up = earlier->runners_up;
            return std::move(steps[i]);
        }
    }
    if (options.time_convolutions_by && !options.choose_by &&
        SteadyClock::now() > *options.time_convolutions_by) {
        for (size_t i = 0; i < steps.size(); ++i) {
            if (!choose_quickly(steps[i])) continue;
            // Kept for the process's later engines (the search's measuring engine runs the
            // kernels its end-to-end engine does), with no runners-up for kernel moves.
            ChoiceCache::instance().store(choice_key(i), {steps[i].choice, {}});
            return std::move(steps[i]);
        }
        // Nothing cheap runs here: timed in full below.
    }
    require_planning_time(context);
    // Under CoRun, the staged and unstaged steps compare by their two-at-once times.
    std::optional<size_t> best;
    for (size_t i = 0; i < steps.size(); ++i) {
        if (choose_by_timing(steps[i], process_key(i)) &&
            (!best || steps[i].rank_ms < steps[*best].rank_ms))
            best = i;
    }
    if (best) {
        ChoiceCache::instance().store(choice_key(*best),
                                      {steps[*best].choice, steps[*best].runners_up});
        ConvStep& chosen = steps[*best];
        if (steps.size() > 1)
            chosen.candidates = fmt::format(
                "{}: {} | {}: {}", *best == 0 ? "chosen, in place" : "in place",
                steps[0].candidates, *best == 1 ? "chosen, staged" : "staged",
                steps[1].candidates);
        return std::move(chosen);
    }
    throw Error(fmt::format("{}: cuDNN has no {} {} algorithm for this convolution within a {} "
                            "MiB workspace",
                            context, to_string(options.precision), to_string(layout),
                            options.max_workspace_bytes >> 20));
}

// Sets the step to run `choice`; false when it cannot run here (unknown to this cuDNN, a math
// type the precision forbids, a workspace over the limit, an unsupported fusion).
bool Engine::Impl::configure(ConvStep& step, const ConvChoice& choice, DeviceBuffer* scratch) {
    if (choice.path == choice_name(ConvPath::Gemm)) {
        const int rank = gemm_algorithm_rank(choice.algorithm);
        if (rank < 0) return false;
        GemmConv* gemm = nullptr;
        try {
            gemm = step.gemm(cublaslt.get(), options.precision, options.max_workspace_bytes);
        } catch (const Error&) {
            return false;  // cuBLASLt cannot describe this product: cuDNN's algorithms remain
        }
        if (gemm == nullptr || !gemm->select(rank)) return false;
        step.path = ConvPath::Gemm;
        step.workspace_bytes = gemm->workspace_bytes();
        step.choice = choice;
        return true;
    }
    const bool fused_graph = choice.path == choice_name(ConvPath::GraphFused);
    if (choice.path == choice_name(ConvPath::Graph) || fused_graph) {
        const int rank = graph_algorithm_rank(choice.algorithm);
        if (rank < 0 || (fused_graph && !step.has_graph_epilogue())) return false;
        GraphConv* graph_conv = nullptr;
        try {
            graph_conv = step.graph(options.precision, options.max_workspace_bytes, fused_graph);
        } catch (const Error&) {
            return false;  // cuDNN rejects the graph: the legacy algorithms remain
        }
        // Strict fp32 never takes a tensor-core choice (its shortlist has no such engine).
        if (options.precision == Precision::Fp32 && choice.math == "TENSOR_OP_MATH") return false;
        // Named by its engine, it is that configuration at whatever rank it holds here (none:
        // not in this shortlist, so the convolution is timed afresh).
        const int here = choice.engine.empty() ? rank : graph_conv->rank_of(choice.engine);
        if (!graph_conv->select(here)) return false;
        step.path = fused_graph ? ConvPath::GraphFused : ConvPath::Graph;
        step.workspace_bytes = graph_conv->workspace_bytes();
        // The choice as given (its time, objective, marks), named for the rank it holds here.
        const ConvChoice here_named = graph_choice(*graph_conv, here, step.path);
        step.choice = choice;
        step.choice.algorithm = here_named.algorithm;
        step.choice.math = here_named.math;
        step.choice.engine = here_named.engine;
        return true;
    }
    const bool narrow = choice.algorithm == kDepthwiseNarrowAlgorithm;
    const bool tiled = choice.algorithm == kDepthwiseTiledAlgorithm;
    if (choice.algorithm == kDepthwiseAlgorithm || narrow || tiled) {
        if (choice.path != choice_name(ConvPath::Depthwise) || !step.depthwise_capable() ||
            (narrow && !step.depthwise_narrow_differs()) ||
            (tiled && !step.depthwise_tiled_capable()))
            return false;
        step.path = ConvPath::Depthwise;
        step.depthwise_variant = tiled    ? DepthwiseVariant::Tiled
                                 : narrow ? DepthwiseVariant::Narrowed
                                          : DepthwiseVariant::Widest;
        step.workspace_bytes = 0;
        step.choice = choice;
        return true;
    }
    const bool needs_epilogue = step.needs_epilogue();
    cudnnConvolutionFwdAlgo_t algo{};
    cudnnMathType_t math{};
    ConvPath path{};
    try {
        algo = algo_from_name(choice.algorithm);
        math = math_from_name(choice.math);
        path = conv_path_from_name(choice.path);
    } catch (const Error&) {
        return false;
    }
    if (needs_epilogue == (path == ConvPath::ConvOnly)) return false;
    if (path == ConvPath::Fused && !step.has_bias()) return false;
    if (options.precision == Precision::Fp32) {
        if (math == CUDNN_TENSOR_OP_MATH) return false;
        math = CUDNN_FMA_MATH;  // strict fp32: never let DEFAULT_MATH pick TF32
    }
    step.conv_desc().set_math(math, step.context);
    size_t workspace = 0;
    Lane& lane = *lanes[0];
    if (cudnnGetConvolutionForwardWorkspaceSize(lane.cudnn.get(), step.x_desc(), step.w_desc(),
                                                step.conv_desc().get(), step.y_desc(), algo,
                                                &workspace) != CUDNN_STATUS_SUCCESS ||
        workspace > options.max_workspace_bytes)
        return false;
    step.algo = algo;
    step.path = path;
    step.workspace_bytes = workspace;
    step.choice = choice;
    step.choice.math = math_name(math);
    if (path == ConvPath::Fused) {
        // cuDNN's fused call supports few algorithm/activation/type combinations (without a
        // ReLU only IMPLICIT_PRECOMP_GEMM; a residual z in fewer still): try it once.
        lane.cudnn.set_stream(lane.stream.get());
        DeviceBuffer own;
        if (scratch == nullptr || scratch->bytes() < workspace) own = DeviceBuffer(workspace);
        void* trial_workspace = own.bytes() > 0 ? own.get() : (scratch ? scratch->get() : nullptr);
        const cudnnStatus_t status = step.run_fused(lane.cudnn.get(), trial_workspace);
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(lane.stream.get()), step.context);
        if (refused_by_cudnn(status)) return false;
        IOSTUNE_CUDNN_CHECK(status, step.context + " (trying the fused conv+bias+activation)");
    }
    return true;
}

// cuDNN's ranking of the bare convolution, once per shape per process. The Ex form runs the
// algorithms on the step's own views and weights and a workspace of ours: the plain form
// allocates tensors of its own and reads them uninitialised (compute-sanitizer's initcheck
// reported those reads in NASNet-A's replay, call64). A staging input is filled first: nothing
// has copied into it yet.
std::vector<cudnnConvolutionFwdAlgoPerf_t> Engine::Impl::ranked_algorithms(
    ConvStep& step, const std::string& process_key) {
    if (auto cached = AlgorithmCache::instance().find(process_key)) return *cached;
    Lane& lane = *lanes[0];
    lane.cudnn.set_stream(lane.stream.get());
    // The most any algorithm within the cap asks for, in the descriptor's math and with tensor
    // cores (the search tries both); the descriptor's math is restored after.
    cudnnConvolutionDescriptor_t desc = step.conv_desc().get();
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    IOSTUNE_CUDNN_CHECK(cudnnGetConvolutionMathType(desc, &math), step.context);
    size_t find_bytes = 0;
    for (const cudnnMathType_t m : {math, CUDNN_TENSOR_OP_MATH}) {
        if (cudnnSetConvolutionMathType(desc, m) != CUDNN_STATUS_SUCCESS) continue;
        for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
            size_t bytes = 0;
            if (cudnnGetConvolutionForwardWorkspaceSize(
                    lane.cudnn.get(), step.x_desc(), step.w_desc(), desc, step.y_desc(),
                    cudnnConvolutionFwdAlgo_t(a), &bytes) == CUDNN_STATUS_SUCCESS &&
                bytes <= options.max_workspace_bytes)
                find_bytes = std::max(find_bytes, bytes);
        }
    }
    IOSTUNE_CUDNN_CHECK(cudnnSetConvolutionMathType(desc, math), step.context);
    const DeviceBuffer find_workspace(find_bytes);
    const TensorView& x = step.input();
    if (step.has_input_staging()) {
        fill(x.data, x.elements(), x.dtype, options.fill_seed);
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(origin.get()), step.context);
    }
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    int returned = 0;
    IOSTUNE_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
                            lane.cudnn.get(), step.x_desc(), x.data, step.w_desc(), step.weight(),
                            desc, step.y_desc(), step.output().data,
                            int(perf.size()), &returned, perf.data(), find_workspace.get(),
                            find_bytes),
                        step.context);
    perf.resize(size_t(returned));
    AlgorithmCache::instance().store(process_key, perf);
    return perf;
}

// Median time of one launch of the step as configured, replayed as a one-step CUDA graph on
// lane 0's stream (as a schedule runs it: a cuDNN call's host-side set-up, which can outlast its
// kernel, is then not counted), with a cold L2: in a whole network at small batch each
// convolution's weights come from memory, not from the cache a tight timing loop keeps warm
// (timed warm, a low-parallelism FMA kernel looks fastest and then runs 4x slower in the
// network: seen on the H100).
double Engine::Impl::time_step(const ConvStep& step, DeviceBuffer& workspace) {
    cudnnHandle_t handle = lanes[0]->cudnn.get();
    return time_launch([&](cudaStream_t s, void* w) { step.run(handle, w, s); },
                       step.workspace_bytes, workspace, step.context);
}

void Engine::Impl::ensure_l2_flush() {
    if (l2_flush.bytes() != 0) return;
    int l2_bytes = 0;
    IOSTUNE_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, options.device),
                       "querying the L2 cache size");
    l2_flush = DeviceBuffer(2 * size_t(std::max(l2_bytes, 1 << 20)));
}

double Engine::Impl::time_launch(const std::function<void(cudaStream_t, void*)>& launch,
                                 size_t launch_workspace, DeviceBuffer& workspace,
                                 const std::string& what) {
    Lane& lane = *lanes[0];
    cudaStream_t stream = lane.stream.get();
    lane.cudnn.set_stream(stream);
    if (workspace.bytes() < launch_workspace) workspace = DeviceBuffer(launch_workspace);
    ensure_l2_flush();
    const CudaGraphExec exec =
        capture_graph(stream, [&](cudaStream_t s) { launch(s, workspace.get()); }, what);
    return median_launch_ms(exec, stream);
}

// Two copies of the step launched at once, on lanes 0 and 1 (each its own cuDNN handle and
// workspace), captured as one CUDA graph and timed from the fork to the join with a cold L2: the
// time a concurrent stage of two such convolutions would take. Both copies write the same output;
// only the time is kept (the planner's runs compute nothing a schedule reads).
double Engine::Impl::time_pair(const ConvStep& step, DeviceBuffer& workspace,
                               DeviceBuffer& second_workspace) {
    ensure_lanes(2);
    Lane& first = *lanes[0];
    Lane& second = *lanes[1];
    first.cudnn.set_stream(first.stream.get());
    second.cudnn.set_stream(second.stream.get());
    if (workspace.bytes() < step.workspace_bytes) workspace = DeviceBuffer(step.workspace_bytes);
    if (second_workspace.bytes() < step.workspace_bytes)
        second_workspace = DeviceBuffer(step.workspace_bytes);
    ensure_l2_flush();
    const CudaEvent fork, join;
    const CudaGraphExec exec = capture_graph(
        first.stream.get(),
        [&](cudaStream_t s) {
            fork.record(s);
            fork.wait_on(second.stream.get());
            step.run(first.cudnn.get(), workspace.get(), s);
            step.run(second.cudnn.get(), second_workspace.get(), second.stream.get());
            join.record(second.stream.get());
            join.wait_on(s);
        },
        step.context + " (two at once)");
    return median_launch_ms(exec, first.stream.get());
}

double Engine::Impl::median_launch_ms(const CudaGraphExec& exec, cudaStream_t stream) {
    const CudaEvent start(CudaEvent::Timing::Enabled), stop(CudaEvent::Timing::Enabled);
    for (int i = 0; i < kTimingWarmup; ++i) exec.launch(stream);
    std::vector<double> samples;
    for (int r = 0; r < kTimingRepeats; ++r) {
        IOSTUNE_CUDA_CHECK(cudaMemsetAsync(l2_flush.get(), r, l2_flush.bytes(), stream),
                           "flushing the L2 cache before timing a convolution");
        start.record(stream);
        exec.launch(stream);
        stop.record(stream);
        stop.synchronize();
        samples.push_back(double(stop.elapsed_ms_since(start)));
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

// Times every variant of cuDNN's shortlist and configures the step with the fastest (under
// ConvObjective::CoRun: the fastest two at once of those nearly as fast alone); false when
// none runs (cuDNN has no algorithm for these views).
// Past EngineOptions::choose_by: PlanningDeadline. Checked before cuDNN's ranking and before
// each candidate is timed, so a probe overruns its deadline by one timing at most (checked only
// between convolutions, RandWire's NCHW probe ran past its 9 s by a whole convolution's
// planning: docs/search-log.md).
void Engine::Impl::require_planning_time(const std::string& context) const {
    if (options.choose_by && SteadyClock::now() > *options.choose_by)
        throw PlanningDeadline(fmt::format("{}: still choosing convolutions at the deadline "
                                           "the caller set (EngineOptions::choose_by)",
                                           context));
    require_planning_pace();
}

void Engine::Impl::require_planning_pace() const {
    if (!options.choose_by) return;
    const auto [begin, planned, total] = planning_progress;
    const double elapsed_s = std::chrono::duration<double>(SteadyClock::now() - begin).count();
    const double allowed_s = std::chrono::duration<double>(*options.choose_by - begin).count();
    if (planning_cannot_finish(elapsed_s, allowed_s, planned, total))
        throw PlanningTooSlow(fmt::format(
            "its convolutions would take about {:.0f} s to choose at the pace so far ({} of {} "
            "in {:.1f} s), more than twice the {:.0f} s it was given",
            projected_planning_seconds(elapsed_s, planned, total), planned, total, elapsed_s,
            allowed_s));
}

bool Engine::Impl::choose_quickly(ConvStep& step) {
    std::vector<ConvChoice> ran;
    std::string timed;
    DeviceBuffer scratch;
    const auto time_candidate = [&](ConvChoice candidate) {
        if (!configure(step, candidate, &scratch)) return;
        try {
            candidate.time_ms = time_step(step, scratch);
        } catch (const Error&) {
            return;  // accepted but cannot run: not a candidate
        }
        candidate.math = step.choice.math;
        timed += fmt::format("{}{} {} {} {:.4f} ms", timed.empty() ? "" : ", ", candidate.algorithm,
                             candidate.math, candidate.path, candidate.time_ms);
        ran.push_back(candidate);
    };
    if (step.depthwise_capable())
        time_candidate({kDepthwiseAlgorithm, "FMA_MATH", choice_name(ConvPath::Depthwise), 0.0});
    if (step.depthwise_narrow_differs())
        time_candidate(
            {kDepthwiseNarrowAlgorithm, "FMA_MATH", choice_name(ConvPath::Depthwise), 0.0});
    if (step.depthwise_tiled_capable())
        time_candidate(
            {kDepthwiseTiledAlgorithm, "FMA_MATH", choice_name(ConvPath::Depthwise), 0.0});
    const char* own_math = uses_tensor_cores(options.precision) ? "TENSOR_OP_MATH" : "FMA_MATH";
    if (step.gemm_capable())
        time_candidate({fmt::format("{}0", kGemmAlgorithmPrefix), own_math,
                        choice_name(ConvPath::Gemm), 0.0});
    // The graph API's first configurations where finalizing them compiles nothing (an ungrouped
    // convolution without its epilogue fused: graph_conv.h).
    if (step.geometry().groups == 1) {
        try {
            const GraphConv* graph_conv =
                step.graph(options.precision, options.max_workspace_bytes, false);
            for (int rank = 0; rank < std::min(graph_conv->candidates(), kQuickCandidates); ++rank)
                time_candidate(graph_choice(*graph_conv, rank, ConvPath::Graph));
        } catch (const Error&) {
            // cuDNN rejects the graph: the legacy algorithms remain
        }
    }
    // cuDNN's heuristic ranking of the legacy algorithms: nothing runs to rank them.
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    int returned = 0;
    if (cudnnGetConvolutionForwardAlgorithm_v7(lanes[0]->cudnn.get(), step.x_desc(),
                                               step.w_desc(), step.conv_desc().get(),
                                               step.y_desc(), int(perf.size()), &returned,
                                               perf.data()) != CUDNN_STATUS_SUCCESS)
        returned = 0;
    int legacy = 0;
    for (int i = 0; i < returned && legacy < kQuickCandidates; ++i) {
        const cudnnConvolutionFwdAlgoPerf_t& p = perf[size_t(i)];
        if (p.status != CUDNN_STATUS_SUCCESS || p.memory > options.max_workspace_bytes ||
            p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
            continue;
        const size_t before = ran.size();
        for (const char* path : legacy_paths(step))
            time_candidate({algo_name(p.algo), math_name(p.mathType), path, 0.0});
        legacy += ran.size() > before ? 1 : 0;
    }
    step.candidates = fmt::format("quick (past the time for choosing kernels): {}",
                                  timed.empty() ? "none ran" : timed);
    if (ran.empty()) return false;
    const ConvChoice fastest = *std::min_element(
        ran.begin(), ran.end(),
        [](const ConvChoice& a, const ConvChoice& b) { return a.time_ms < b.time_ms; });
    if (!configure(step, fastest, &scratch)) return false;
    step.choice.time_ms = fastest.time_ms;
    step.choice.objective = options.conv_objective;
    step.choice.quick = true;
    step.rank_ms = fastest.time_ms;
    return true;
}

bool Engine::Impl::choose_by_timing(ConvStep& step, const std::string& process_key) {
    require_planning_time(step.context);
    // Where this choice's seconds go, by kind of candidate (in `candidates`, which `iostune
    // profile --json` shows): the first layout's choices are most of a large model's search.
    std::map<std::string, double> spent;
    const auto began = SteadyClock::now();
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf;
    try {
        perf = ranked_algorithms(step, process_key);
        spent["find"] += seconds_since(began);
    } catch (const Error&) {
        // e.g. a strided view no legacy algorithm supports: the depthwise kernel, the matrix
        // product and the graph API are left (the caller also times the staged step).
    }
    // The shortlist: cuDNN's fastest usable algorithms (it sorts by time), one per algorithm.
    std::vector<cudnnConvolutionFwdAlgo_t> shortlist;
    std::string found, timed;
    for (const auto& p : perf) {
        found += fmt::format("{}{} {} {:.4f} ms {}", found.empty() ? "" : ", ", algo_name(p.algo),
                             math_name(p.mathType), double(p.time),
                             p.status == CUDNN_STATUS_SUCCESS ? "ok" : cudnnGetErrorString(p.status));
        if (p.status != CUDNN_STATUS_SUCCESS || p.memory > options.max_workspace_bytes) continue;
        if (options.precision == Precision::Fp32 && p.mathType == CUDNN_TENSOR_OP_MATH) continue;
        if (p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;  // fp16 inside fp32
        if (std::find(shortlist.begin(), shortlist.end(), p.algo) != shortlist.end()) continue;
        shortlist.push_back(p.algo);
        if (shortlist.size() == kTimedAlgorithms) break;
    }
    const std::vector<const char*> paths = legacy_paths(step);

    DeviceBuffer scratch;
    for (const auto& p : perf)
        if (std::find(shortlist.begin(), shortlist.end(), p.algo) != shortlist.end() &&
            p.memory > scratch.bytes())
            scratch = DeviceBuffer(p.memory);
    std::vector<ConvChoice> ran;  // every variant that ran, with its time alone
    // The engine's own paths, where they apply, time beside cuDNN's variants.
    const auto time_own = [&](ConvChoice candidate) {
        require_planning_time(step.context);
        const SecondsAdder counted(spent[candidate.path]);
        if (!configure(step, candidate)) return;
        const std::string name =
            candidate.path == choice_name(ConvPath::GraphFused)
                ? fmt::format("{} {}", candidate.algorithm, candidate.path)
                : candidate.algorithm;
        try {
            candidate.time_ms = time_step(step, scratch);
        } catch (const Error&) {
            timed += fmt::format("{}{} failed", timed.empty() ? "" : ", ", name);
            return;
        }
        timed += fmt::format("{}{} {:.4f} ms", timed.empty() ? "" : ", ", name, candidate.time_ms);
        ran.push_back(candidate);
    };
    if (step.depthwise_capable())
        time_own(ConvChoice{kDepthwiseAlgorithm, "FMA_MATH", choice_name(ConvPath::Depthwise), 0.0});
    if (step.depthwise_narrow_differs())
        time_own(ConvChoice{kDepthwiseNarrowAlgorithm, "FMA_MATH", choice_name(ConvPath::Depthwise),
                            0.0});
    if (step.depthwise_tiled_capable())
        time_own(ConvChoice{kDepthwiseTiledAlgorithm, "FMA_MATH", choice_name(ConvPath::Depthwise),
                            0.0});
    if (step.gemm_capable()) {
        int shortlist_size = 0;
        try {
            const GemmConv* gemm =
                step.gemm(cublaslt.get(), options.precision, options.max_workspace_bytes);
            shortlist_size = gemm->candidates();
        } catch (const Error& e) {
            timed += fmt::format("{}cuBLASLt refused: {}", timed.empty() ? "" : ", ", e.what());
        }
        const char* math = uses_tensor_cores(options.precision) ? "TENSOR_OP_MATH" : "FMA_MATH";
        for (int rank = 0; rank < shortlist_size; ++rank)
            time_own(ConvChoice{fmt::format("{}{}", kGemmAlgorithmPrefix, rank), math,
                                choice_name(ConvPath::Gemm), 0.0});
    }
    // The graph API's shortlists: the convolution alone (the epilogue kernels follow), and
    // with its epilogue fused into the graph.
    std::vector<ConvChoice> graph_shortlist;
    for (const bool fused : {false, true}) {
        if (fused && !step.has_graph_epilogue()) continue;
        const ConvPath path = fused ? ConvPath::GraphFused : ConvPath::Graph;
        const char* what = fused ? "fused graph API" : "graph API";
        const auto started = SteadyClock::now();
        try {
            const GraphConv* graph_conv =
                step.graph(options.precision, options.max_workspace_bytes, fused);
            for (int rank = 0; rank < graph_conv->candidates(); ++rank)
                graph_shortlist.push_back(graph_choice(*graph_conv, rank, path));
            timed += fmt::format("{}{}: {}", timed.empty() ? "" : ", ", what, graph_conv->notes());
        } catch (const Error& e) {
            timed += fmt::format("{}{} refused: {}", timed.empty() ? "" : ", ", what, e.what());
        }
        spent[fmt::format("{} shortlist", choice_name(path))] += seconds_since(started);
    }
    for (const ConvChoice& candidate : graph_shortlist) time_own(candidate);
    for (cudnnConvolutionFwdAlgo_t algo : shortlist) {
        for (const char* math : candidate_maths(options.precision)) {
            for (const char* path : paths) {
                ConvChoice candidate{algo_name(algo), math, path, 0.0};
                const std::string variant = fmt::format("{} {} {}", algo_name(algo), math, path);
                require_planning_time(step.context);
                const SecondsAdder counted(spent["legacy"]);
                if (!configure(step, candidate, &scratch)) {
                    timed += fmt::format("{}{} refused", timed.empty() ? "" : ", ", variant);
                    continue;
                }
                try {
                    candidate.time_ms = time_step(step, scratch);
                } catch (const Error&) {
                    timed += fmt::format("{}{} failed", timed.empty() ? "" : ", ", variant);
                    continue;  // a variant cuDNN accepts but cannot run: not a candidate
                }
                timed += fmt::format("{}{} {:.4f} ms", timed.empty() ? "" : ", ", variant,
                                     candidate.time_ms);
                candidate.math = step.choice.math;
                ran.push_back(candidate);
            }
        }
    }
    step.candidates = fmt::format("find: {}; timed: {}", found, timed);
    const auto seconds_spent = [&] {
        std::string text = fmt::format("; seconds: {:.3f}", seconds_since(began));
        for (const auto& [what, seconds] : spent) text += fmt::format(", {} {:.3f}", what, seconds);
        return text;
    };
    if (ran.empty()) return false;
    const auto fastest = std::min_element(ran.begin(), ran.end(), [](const auto& a, const auto& b) {
        return a.time_ms < b.time_ms;
    });
    ConvChoice best = *fastest;
    double rank_ms = best.time_ms;
    if (options.conv_objective == ConvObjective::CoRun) {
        // The nearly-as-fast-alone variants, ranked by how long two of them take at once.
        DeviceBuffer second_scratch;
        std::string pairs;
        std::optional<double> best_pair;
        for (const ConvChoice& candidate : ran) {
            require_planning_time(step.context);
            if (candidate.time_ms > fastest->time_ms * (1 + kCoRunSlack) ||
                !configure(step, candidate, &scratch))
                continue;
            double pair_ms = 0;
            try {
                pair_ms = time_pair(step, scratch, second_scratch);
            } catch (const Error&) {
                continue;
            }
            pairs += fmt::format("{}{} {} {:.4f} ms", pairs.empty() ? "" : ", ",
                                 candidate.algorithm, candidate.path, pair_ms);
            if (!best_pair || pair_ms < *best_pair) {
                best_pair = pair_ms;
                best = candidate;
            }
        }
        // No pair ran: ranked as if its two copies ran one after the other, so that the
        // staged and unstaged steps still compare two-at-once times.
        rank_ms = best_pair ? *best_pair : 2 * best.time_ms;
        step.candidates += fmt::format("; two at once: {}", pairs);
    }
    step.candidates += seconds_spent();
    if (!configure(step, best, &scratch)) return false;
    step.runners_up = runners_up(ran, best, kMostRunnersUp);
    step.choice.time_ms = best.time_ms;
    step.choice.objective = options.conv_objective;
    step.rank_ms = rank_ms;
    return true;
}

void Engine::Impl::record_conv(OpPlan& plan, const ConvStep& step) {
    plan.path += (plan.path.empty() ? "" : "; ") + std::string(to_string(step.path)) +
                 step.staging_note();
    plan.algorithms += (plan.algorithms.empty() ? "" : "; ") + step.label();
    plan.candidates += (plan.candidates.empty() ? "" : " || ") + step.candidates;
    plan.conv_signatures.push_back(step.signature);
    plan.workspace_bytes = std::max(plan.workspace_bytes, step.workspace_bytes);
    workspace_bytes = std::max(workspace_bytes, step.workspace_bytes);
}

}  // namespace iostune
