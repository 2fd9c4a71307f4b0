#include "src/engine/graph_conv.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

#include "src/engine/cudnn_descriptors.h"
#include "src/engine/cudnn_handle.h"
#include "src/stopwatch.h"

namespace iostune {

struct GraphConv::Shortlist {
    struct Plan {
        BackendDescriptor plan;
        int64_t engine;
        int setting;  // 1: the engine's first configuration in the heuristics' order, 2: its next
        size_t workspace;
        bool tensor_cores;
        int sm_target = 0;  // > 0: a configuration carved to run on that many SMs
    };
    std::vector<Plan> plans;
    std::string notes;
};

namespace {

// A shortlist entry by what it is: "engine 51", "engine 51 setting 2", "engine 67 on 66 SMs".
std::string plan_name(const GraphConv::Shortlist::Plan& p) {
    std::string text = fmt::format("engine {}", p.engine);
    if (p.setting > 1) text += fmt::format(" setting {}", p.setting);
    if (p.sm_target > 0) text += fmt::format(" on {} SMs", p.sm_target);
    return text;
}

// Tensor unique ids of the graph: its real tensors, then the virtual ones between its operations.
constexpr int64_t kX = 1, kW = 2, kY = 3, kBias = 4, kZ = 5, kFirstVirtual = 100;

cudnnDataType_t data_type(DType type) {
    switch (type) {
        case DType::F16: return CUDNN_DATA_HALF;
        case DType::BF16: return CUDNN_DATA_BFLOAT16;
        default: return CUDNN_DATA_FLOAT;
    }
}

// cuDNN's tensor descriptors take alignments up to 16 bytes.
int64_t alignment_of(const void* p) { return int64_t(byte_alignment(p, 16)); }

// Dimensions are always N, C, H, W in the graph API; the strides say the layout. A virtual
// tensor (an intermediate of a fused graph, never in memory) is fp32 whatever the storage.
BackendDescriptor tensor(int64_t id, const TensorView& v, const std::string& context,
                         bool is_virtual = false) {
    BackendDescriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR, context);
    const cudnnDataType_t type = is_virtual ? CUDNN_DATA_FLOAT : data_type(v.dtype);
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    t.set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, {v.n, v.c, v.h, v.w});
    const int64_t rs = v.row_stride;
    t.set_int64s(CUDNN_ATTR_TENSOR_STRIDES,
                 v.nhwc() ? std::vector<int64_t>{int64_t(v.h) * v.w * rs, 1, int64_t(v.w) * rs, rs}
                          : std::vector<int64_t>{rs, int64_t(v.h) * v.w, v.w, 1});
    t.set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, id);
    t.set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, is_virtual ? 16 : alignment_of(v.data));
    if (is_virtual) {
        const bool yes = true;
        t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes);
    }
    t.finalize();
    return t;
}

// A pointwise mode and the parameters it takes (attributes of type double), e.g. a ReLU's clips.
struct PointwiseMode {
    cudnnPointwiseMode_t mode;
    std::vector<std::pair<cudnnBackendAttributeName_t, double>> parameters = {};
};

// The pointwise mode that computes graph.h's activation `a` exactly; throws iostune::Error
// where cuDNN has none.
PointwiseMode pointwise_mode(const ActivationAttrs& a, const std::string& context) {
    // RELU_FWD: y = x < lower ? lower + slope * (x - lower) : min(x, upper).
    const auto relu = [](double lower, double upper, double slope) {
        return PointwiseMode{CUDNN_POINTWISE_RELU_FWD,
                             {{CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, lower},
                              {CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, upper},
                              {CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, slope}}};
    };
    switch (a.function) {
        case ActivationFunction::Sigmoid: return {CUDNN_POINTWISE_SIGMOID_FWD};
        case ActivationFunction::Tanh: return {CUDNN_POINTWISE_TANH_FWD};
        case ActivationFunction::Gelu: return {CUDNN_POINTWISE_GELU_FWD};  // the erf form
        // x * sigmoid(beta * x); beta is 1 by default, set to say so.
        case ActivationFunction::Silu:
            return {CUDNN_POINTWISE_SWISH_FWD, {{CUDNN_ATTR_POINTWISE_SWISH_BETA, 1.0}}};
        // An infinite clip bound would make lower + slope * (x - lower) a NaN.
        case ActivationFunction::Clip:
            if (std::isfinite(a.alpha) && std::isfinite(a.beta)) return relu(a.alpha, a.beta, 0.0);
            break;
        case ActivationFunction::LeakyRelu: return relu(0.0, FLT_MAX, a.alpha);
        case ActivationFunction::HardSigmoid:
        case ActivationFunction::HardSwish: break;
    }
    throw Error(fmt::format("{}: cuDNN's graph API has no pointwise mode for {}: the "
                            "convolution is not fused with it (its activation kernel follows)",
                            context, to_string(a)));
}

// y = mode(x) or mode(x, b), computed in fp32.
BackendDescriptor pointwise(const PointwiseMode& mode, const BackendDescriptor& x,
                            const BackendDescriptor* b, const BackendDescriptor& y,
                            const std::string& context) {
    BackendDescriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, context);
    const cudnnDataType_t math = CUDNN_DATA_FLOAT;
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode.mode);
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math);
    for (const auto& [name, value] : mode.parameters) pw.set(name, CUDNN_TYPE_DOUBLE, 1, &value);
    pw.finalize();
    BackendDescriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, context);
    op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    op.finalize();
    return op;
}

// The filter as a packed K x C/groups x R x S tensor of the views' type and layout.
BackendDescriptor filter(const TensorView& in, const TensorView& out, const void* weight,
                         int kernel_h, int kernel_w, int groups, const std::string& context) {
    TensorView w = packed_view(const_cast<void*>(weight), in.dtype, in.layout, out.c,
                               in.c / groups, kernel_h, kernel_w);
    return tensor(kW, w, context);
}

template <class T, size_t N>
std::vector<T> attribute_list(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                              cudnnBackendAttributeType_t type) {
    std::array<T, N> values{};
    int64_t count = 0;
    if (cudnnBackendGetAttribute(d, name, type, int64_t(N), &count, values.data()) !=
        CUDNN_STATUS_SUCCESS)
        return {};
    return std::vector<T>(values.begin(), values.begin() + std::min<int64_t>(count, int64_t(N)));
}

bool contains(const std::vector<cudnnBackendNumericalNote_t>& notes,
              cudnnBackendNumericalNote_t note) {
    return std::find(notes.begin(), notes.end(), note) != notes.end();
}

std::vector<cudnnBackendNumericalNote_t> numerical_notes(cudnnBackendDescriptor_t engine) {
    return attribute_list<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT>(
        engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE);
}

bool runtime_compiled(cudnnBackendDescriptor_t engine) {
    const auto behaviour =
        attribute_list<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT>(
            engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE);
    return std::find(behaviour.begin(), behaviour.end(),
                     CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) != behaviour.end();
}

// How many run-time compiled configurations a shortlist finalizes at most:
// IOSTUNE_GRAPH_COMPILED (1 to GraphConv::kCandidates), else GraphConv::kCompiledCandidates.
int compiled_candidates() {
    const char* setting = std::getenv("IOSTUNE_GRAPH_COMPILED");
    if (setting == nullptr || *setting == '\0') return GraphConv::kCompiledCandidates;
    int count = 0;
    const std::string text(setting);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (error != std::errc() || end != text.data() + text.size() || count < 1 ||
        count > GraphConv::kCandidates)
        throw Error(fmt::format("IOSTUNE_GRAPH_COMPILED={}: expected how many run-time compiled "
                                "engine configurations a convolution's shortlist may finalize, "
                                "1 to {} (unset: {})",
                                text, GraphConv::kCandidates, GraphConv::kCompiledCandidates));
    return count;
}

// Why an engine is not a candidate (it changes the precision's arithmetic, or compiles its kernel
// at run time where that is not allowed), or "" when it is.
std::string unsuitable(cudnnBackendDescriptor_t engine, Precision precision,
                       bool allow_runtime_compiled) {
    const auto numerical = numerical_notes(engine);
    const bool fp32_storage = storage_type(precision) == DType::F32;
    if (precision == Precision::Fp32 && contains(numerical, CUDNN_NUMERICAL_NOTE_TENSOR_CORE))
        return "tensor cores (strict fp32)";
    if (fp32_storage && contains(numerical, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS))
        return "down-converts fp32 inputs";
    if (contains(numerical, CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION))
        return "reduced-precision accumulation";
    if (!allow_runtime_compiled && runtime_compiled(engine)) return "run-time compiled";
    return "";
}

// The convolution operation's descriptor type and attribute names, forward or backward data.
struct ConvOperation {
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t x, w, y, conv_desc, alpha, beta;
};
constexpr ConvOperation kForward{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
constexpr ConvOperation kBackwardData{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};

// The heuristics' engine configurations for a finalized operation graph, best guess first.
// `sm_target` > 0 asks for configurations that run on that many SMs (cuDNN's SM carveout,
// Hopper and later): the rest of the GPU stays free for a concurrent branch.
std::vector<BackendDescriptor> heuristic_configs(const BackendDescriptor& graph, int32_t sm_target,
                                                 const std::string& context) {
    BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, context);
    heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode);
    if (sm_target > 0)
        heuristics.set(CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, CUDNN_TYPE_INT32, 1, &sm_target);
    heuristics.finalize();
    int64_t offered = 0;
    IOSTUNE_CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &offered,
                                                 nullptr),
                        context + " (counting the heuristics' engine configurations)");
    std::vector<BackendDescriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < offered; ++i) {
        configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, context);
        raw.push_back(configs.back().get());
    }
    int64_t returned = 0;
    if (offered > 0)
        IOSTUNE_CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(),
                                                     CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, offered,
                                                     &returned, raw.data()),
                            context + " (reading the heuristics' engine configurations)");
    configs.erase(configs.begin() + std::clamp<int64_t>(returned, 0, offered), configs.end());
    return configs;
}

// Finalizes one engine configuration into a plan; nullopt (with a note) when cuDNN refuses it or
// it needs more than `max_workspace`. `finalize_s` gets the time it took.
std::optional<GraphConv::Shortlist::Plan> finalize_plan(
    cudnnHandle_t handle, const BackendDescriptor& config, cudnnBackendDescriptor_t engine,
    int64_t index, int setting, size_t max_workspace, const std::string& context,
    double& finalize_s, std::string& notes) {
    BackendDescriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, context);
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    cudnnBackendDescriptor_t config_raw = config.get();
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
             &config_raw);
    const auto started = SteadyClock::now();
    const cudnnStatus_t status = plan.try_finalize();
    finalize_s += seconds_since(started);
    if (status != CUDNN_STATUS_SUCCESS) {
        notes += fmt::format("{}engine {} refused ({})", notes.empty() ? "" : ", ", index,
                             cudnnGetErrorString(status));
        return std::nullopt;
    }
    int64_t workspace = 0;
    int64_t one = 0;
    IOSTUNE_CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(),
                                                 CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                 CUDNN_TYPE_INT64, 1, &one, &workspace),
                        context + " (reading an execution plan's workspace size)");
    if (workspace < 0 || size_t(workspace) > max_workspace) {
        notes += fmt::format("{}engine {} needs {} MiB of workspace", notes.empty() ? "" : ", ",
                             index, workspace >> 20);
        return std::nullopt;
    }
    const bool tensor_cores = contains(numerical_notes(engine), CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
    return GraphConv::Shortlist::Plan{std::move(plan), index, setting, size_t(workspace),
                                      tensor_cores};
}

// A heuristic configuration's engine and cuDNN's global index of it (-1 when cuDNN does not
// say); nullopt when the configuration gives no engine.
struct ConfigEngine {
    BackendDescriptor descriptor;
    int64_t index = -1;
    cudnnBackendDescriptor_t raw() const { return descriptor.get(); }
};

std::optional<ConfigEngine> engine_of(const BackendDescriptor& config, const std::string& context) {
    ConfigEngine engine{BackendDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, context)};
    cudnnBackendDescriptor_t raw = engine.raw();
    int64_t one = 0;
    if (cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &one, &raw) !=
        CUDNN_STATUS_SUCCESS)
        return std::nullopt;
    cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &one,
                             &engine.index);
    return engine;
}

// Up to kCarvedPerTarget configurations that run on `sm_target` SMs (precompiled engines
// only; an engine that does not say it keeps to the target is left out), appended to `plans`.
// The idea: a kernel kept to part of the GPU leaves the rest to a concurrent branch. Measured,
// it bought nothing past the spread of searches (at batch 1 these convolutions already fit in
// half the GPU: docs/search-log.md, "SM carveout: measured, not adopted"), so it is off unless
// asked for, a diagnostic for other GPUs and cuDNN versions.
constexpr int kCarvedPerTarget = 2;

void add_carved_plans(cudnnHandle_t handle, const BackendDescriptor& graph, int32_t sm_target,
                      Precision precision, size_t max_workspace, const std::string& context,
                      std::vector<GraphConv::Shortlist::Plan>& plans, double& finalize_s,
                      std::string& notes) {
    if (sm_target <= 0) return;
    const std::vector<BackendDescriptor> configs = heuristic_configs(graph, sm_target, context);
    int added = 0, ignored = 0;
    std::map<int64_t, int> settings_seen;  // engine -> its carved configurations seen so far
    for (const BackendDescriptor& config : configs) {
        if (added >= kCarvedPerTarget) break;
        const std::optional<ConfigEngine> engine = engine_of(config, context);
        if (!engine) continue;
        const int64_t index = engine->index;
        cudnnBackendDescriptor_t engine_raw = engine->raw();
        int64_t one = 0;
        const int setting = ++settings_seen[index];  // names it apart from its engine's others
        int32_t kept_to = 0;
        if (cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_SM_COUNT_TARGET,
                                     CUDNN_TYPE_INT32, 1, &one, &kept_to) != CUDNN_STATUS_SUCCESS ||
            kept_to != sm_target) {
            ++ignored;
            continue;
        }
        if (!unsuitable(engine_raw, precision, false).empty()) continue;
        std::optional<GraphConv::Shortlist::Plan> plan = finalize_plan(
            handle, config, engine_raw, index, setting, max_workspace, context, finalize_s, notes);
        if (!plan) continue;
        plan->sm_target = sm_target;
        plans.push_back(std::move(*plan));
        ++added;
    }
    if (added == 0)
        notes += fmt::format("{}no configuration on {} SMs ({} of {} not kept to it)",
                             notes.empty() ? "" : ", ", sm_target, ignored, configs.size());
}

// The carved configurations a shortlist offers: on `sm_count` / d SMs for each divisor d of
// IOSTUNE_SM_CARVEOUT ("2": half the GPU; "2,3": half and a third; unset, "" or "0": none),
// on GPUs of compute capability 9.0 and later (cuDNN's SM carveout needs Hopper).
struct Carveout {
    int sm_count = 0;
    std::vector<int> divisors;
    std::string key() const {
        std::string text = fmt::format("sm {}", sm_count);
        for (const int d : divisors) text += fmt::format(" /{}", d);
        return text;
    }
};

Carveout carveout_for(int device, const std::string& context) {
    Carveout carveout;
    const char* setting = std::getenv("IOSTUNE_SM_CARVEOUT");
    if (setting == nullptr || std::string(setting).empty() || std::string(setting) == "0")
        return carveout;
    int major = 0;
    IOSTUNE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                       context);
    IOSTUNE_CUDA_CHECK(
        cudaDeviceGetAttribute(&carveout.sm_count, cudaDevAttrMultiProcessorCount, device),
        context);
    std::stringstream list(setting);
    std::string item;
    while (std::getline(list, item, ',')) {
        int divisor = 0;
        const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), divisor);
        if (error != std::errc() || end != item.data() + item.size() || divisor < 2 ||
            divisor > 16)
            throw Error(fmt::format("IOSTUNE_SM_CARVEOUT={}: expected divisors of the SM count "
                                    "from 2 to 16 separated by commas (\"2\": half the SMs), or "
                                    "0 for none",
                                    setting));
        if (major >= 9) carveout.divisors.push_back(divisor);
    }
    return carveout;
}

// Builds the graph on `handle` and finalizes its shortlist (see the header).
// `in` and `out` are the forward convolution's x and y (for backward data: dx and dy).
std::shared_ptr<const GraphConv::Shortlist> build_shortlist(
    cudnnHandle_t handle, const TensorView& in, const TensorView& out, const void* weight,
    int kernel_h, int kernel_w, const ConvGeometry& g, const GraphEpilogue& epilogue,
    Precision precision, size_t max_workspace, const std::string& context,
    GraphConvDirection direction, const Carveout& carveout, int most_compiled) {
    auto shortlist = std::make_shared<GraphConv::Shortlist>();
    std::vector<GraphConv::Shortlist::Plan>& plans = shortlist->plans;
    std::string& notes = shortlist->notes;
    BackendDescriptor x = tensor(kX, in, context);
    BackendDescriptor w = filter(in, out, weight, kernel_h, kernel_w, g.groups, context);
    BackendDescriptor y = tensor(kY, out, context);
    // The fused epilogue, y = act(conv + bias + z), as pointwise operations on fp32 virtual
    // tensors: each writes the next virtual tensor, the last one writes y.
    const int steps = int(epilogue.bias != nullptr) + int(epilogue.residual.has_value()) +
                      int(epilogue.relu) + int(epilogue.activation.has_value());
    std::deque<BackendDescriptor> operands;  // bias, z and the virtual tensors (stable addresses)
    // Virtual tensors are packed, whatever y's strides.
    const TensorView virtual_view = packed_view(nullptr, out.dtype, out.layout, out.n, out.c,
                                                out.h, out.w);
    const auto output_of_step = [&](int step) -> const BackendDescriptor& {
        if (step == steps) return y;
        operands.push_back(tensor(kFirstVirtual + step, virtual_view, context, true));
        return operands.back();
    };
    const BackendDescriptor& conv_y = output_of_step(0);

    BackendDescriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, context);
    const cudnnDataType_t accumulate = CUDNN_DATA_FLOAT;  // every precision accumulates in fp32
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &accumulate);
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    conv.set_int64(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 2);
    conv.set_int64s(CUDNN_ATTR_CONVOLUTION_DILATIONS, {g.dilation_h, g.dilation_w});
    conv.set_int64s(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, {g.stride_h, g.stride_w});
    conv.set_int64s(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, {g.pad_h, g.pad_w});
    conv.set_int64s(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, {g.pad_h, g.pad_w});
    conv.finalize();

    // The same operands either way: x (dx), w, and y (dy; the first virtual tensor when fused).
    const ConvOperation& kind =
        direction == GraphConvDirection::BackwardData ? kBackwardData : kForward;
    const float alpha = 1.0f, beta = 0.0f;
    BackendDescriptor op(kind.type, context);
    op.set_descriptor(kind.x, x);
    op.set_descriptor(kind.w, w);
    op.set_descriptor(kind.y, conv_y);
    op.set_descriptor(kind.conv_desc, conv);
    op.set(kind.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
    op.set(kind.beta, CUDNN_TYPE_FLOAT, 1, &beta);
    op.finalize();

    std::vector<BackendDescriptor> pointwise_ops;
    const BackendDescriptor* last = &conv_y;
    const auto then = [&](const PointwiseMode& step, const BackendDescriptor* operand) {
        const BackendDescriptor& next = output_of_step(int(pointwise_ops.size()) + 1);
        pointwise_ops.push_back(pointwise(step, *last, operand, next, context));
        last = &next;
    };
    if (epilogue.bias != nullptr) {
        const TensorView bias = packed_view(const_cast<void*>(epilogue.bias), out.dtype,
                                            out.layout, 1, out.c, 1, 1);
        operands.push_back(tensor(kBias, bias, context));
        then({CUDNN_POINTWISE_ADD}, &operands.back());
    }
    if (epilogue.residual) {
        operands.push_back(tensor(kZ, *epilogue.residual, context));
        then({CUDNN_POINTWISE_ADD}, &operands.back());
    }
    if (epilogue.relu) then({CUDNN_POINTWISE_RELU_FWD}, nullptr);
    if (epilogue.activation) then(pointwise_mode(*epilogue.activation, context), nullptr);

    BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, context);
    std::vector<cudnnBackendDescriptor_t> ops = {op.get()};
    for (const BackendDescriptor& p : pointwise_ops) ops.push_back(p.get());
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops.size()),
              ops.data());
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    const auto began = SteadyClock::now();
    graph.finalize();

    std::vector<BackendDescriptor> configs = heuristic_configs(graph, 0, context);
    const double setup_s = seconds_since(began);
    // Finalizing is nearly all of a shortlist's time where engines compile at run time: 25-30 of
    // EfficientNet-B1's 34 s of choosing convolutions (TF32, H200, calls 181-182). Finalized on
    // several threads (a cuDNN handle each), they did not compile in parallel: three at once
    // ended at 0.31, 1.04 and 1.90 s, as one after the other would (cuDNN 9.19).
    double finalize_s = 0;
    const int64_t returned = int64_t(configs.size());

    // Run-time compiled engines (NVRTC, a fraction of a second per shape, once a process) only
    // for grouped convolutions and fused epilogues: cuDNN's fast channels-last depthwise kernel
    // is one (PyTorch's choice for NASNet's 7x7 separable convolutions in fp16, H100), and so are
    // its runtime-fusion engines; dense convolutions alone have precompiled engines as fast. A
    // fused graph's runtime-compiled engine writes a packed y only: into a concat slice, the one
    // engine of a grouped residual convolution wrote wrong values (relative error 0.86, NaN in
    // fp16; H100, cuDNN 9.19), so it runs staged.
    const bool runtime_compiled_ok = (g.groups > 1 || steps > 0) && (steps == 0 || out.packed());
    // Two passes over the heuristics' list, which names an engine once per knob setting (tile
    // shape, split-K, ...), its best guess first. First one configuration per engine, so that
    // different kernels compete; then up to kKnobVariants further settings of the engines already
    // shortlisted, precompiled ones only: the best setting is not always the heuristics' first.
    // (Inception V3's 3x3 convolution on 8x8x448 at batch 16, TF32, H100, cuDNN 9.19: with
    // first settings only, the fastest was a 64x64 split-K tile, 33.0 us against PyTorch's 27.5;
    // a later setting of engine 51 takes 28.4 us.)
    std::vector<bool> taken(size_t(returned), false);
    std::map<int64_t, int> settings_seen;  // engine -> its configurations seen so far
    int variants = 0, compiled = 0, not_compiled = 0;
    for (const bool variant_pass : {false, true}) {
        for (int64_t i = 0; i < returned; ++i) {
            if (!variant_pass && int(plans.size()) >= GraphConv::kCandidates) break;
            if (variant_pass && variants >= GraphConv::kKnobVariants) break;
            const std::optional<ConfigEngine> engine = engine_of(configs[size_t(i)], context);
            if (!engine) continue;
            const int64_t index = engine->index;
            cudnnBackendDescriptor_t engine_raw = engine->raw();
            // An engine whose index cannot be read (-1) is taken once and never repeated.
            const auto same_engine = [&](const GraphConv::Shortlist::Plan& p) {
                return p.engine == index;
            };
            const bool shortlisted =
                index >= 0 && std::any_of(plans.begin(), plans.end(), same_engine);
            // The configuration's rank among its engine's in the heuristics' order (1: first).
            const int setting = variant_pass ? ++settings_seen[index] : 1;
            if (taken[size_t(i)] || (variant_pass ? !shortlisted : shortlisted)) continue;
            const bool allow_runtime_compiled = runtime_compiled_ok && !variant_pass;
            if (const std::string why = unsuitable(engine_raw, precision, allow_runtime_compiled);
                !why.empty()) {
                if (!variant_pass)
                    notes += fmt::format("{}engine {} skipped ({})", notes.empty() ? "" : ", ",
                                         index, why);
                continue;
            }
            // Under IOSTUNE_GRAPH_COMPILED, the heuristics' later guesses of engines compiled at
            // run time are left out: each costs a compilation.
            const bool compiles = runtime_compiled(engine_raw);
            if (compiles && compiled >= most_compiled) {
                ++not_compiled;
                continue;
            }
            std::optional<GraphConv::Shortlist::Plan> plan = finalize_plan(
                handle, configs[size_t(i)], engine_raw, index, setting, max_workspace, context,
                finalize_s, notes);
            if (!plan) continue;
            compiled += int(compiles);
            taken[size_t(i)] = true;
            variants += int(variant_pass);
            plans.push_back(std::move(*plan));
        }
    }
    if (not_compiled > 0)
        notes += fmt::format("{}{} further run-time compiled configurations (at most {} "
                             "compiled)",
                             notes.empty() ? "" : ", ", not_compiled, most_compiled);
    // Carved configurations come last, so that the ranks before them (the stored choices' names)
    // stay what they were without them.
    if (direction == GraphConvDirection::Forward)
        for (const int divisor : carveout.divisors)
            add_carved_plans(handle, graph, carveout.sm_count / divisor, precision, max_workspace,
                             context, plans, finalize_s, notes);
    std::string ranked;
    for (size_t rank = 0; rank < plans.size(); ++rank)
        ranked += fmt::format("{}GRAPH_{} = {}", rank == 0 ? "" : ", ", rank,
                              plan_name(plans[rank]));
    notes = fmt::format(
            "{} of {} heuristic engine configurations ({}){}{} (seconds: graph and heuristics "
            "{:.3f}, finalizing {:.3f})",
            plans.size(), returned, ranked, notes.empty() ? "" : "; left out: ", notes, setup_s,
            finalize_s);
    return shortlist;
}

// What a shortlist depends on: the descriptors without their data pointers.
std::string view_key(const TensorView& v) {
    return fmt::format("{} {} {}x{}x{}x{} row {} align {}", to_string(v.dtype), to_string(v.layout),
                       v.n, v.c, v.h, v.w, v.row_stride, alignment_of(v.data));
}

// The process's finalized shortlists, and per device the handle that finalizes them (an engine's
// handles end with the engine; a plan runs on whichever handle launches it).
struct ShortlistCache {
    std::mutex mutex;
    std::map<int, CudnnHandle> handles;
    std::map<std::string, std::shared_ptr<const GraphConv::Shortlist>> entries;
};

ShortlistCache& shortlist_cache() {
    // Never destroyed: at exit the CUDA runtime may be gone before its plans and handles.
    static auto* cache = new ShortlistCache;
    return *cache;
}

}  // namespace

GraphConv::GraphConv(const TensorView& op_in, const TensorView& op_out, const void* weight,
                     int kernel_h, int kernel_w, const ConvGeometry& g,
                     const GraphEpilogue& epilogue, Precision precision, size_t max_workspace,
                     const std::string& context, GraphConvDirection direction)
    : w_(weight),
      bias_(epilogue.bias),
      z_(epilogue.residual ? epilogue.residual->data : nullptr),
      context_(context + (direction == GraphConvDirection::BackwardData
                              ? " (cuDNN graph API transposed convolution)"
                              : " (cuDNN graph API convolution)")) {
    const bool backward = direction == GraphConvDirection::BackwardData;
    if (backward && (epilogue.bias || epilogue.residual || epilogue.relu || epilogue.activation))
        throw Error(context_ + ": a transposed convolution's graph takes no epilogue");
    // The forward convolution's x and y.
    const TensorView& in = backward ? op_out : op_in;
    const TensorView& out = backward ? op_in : op_out;
    x_ = in.data;
    y_ = out.data;
    // Refused before the cache is consulted: no graph of this epilogue exists to share.
    if (epilogue.activation) pointwise_mode(*epilogue.activation, context_);
    int device = 0;
    IOSTUNE_CUDA_CHECK(cudaGetDevice(&device), context_);
    const Carveout carveout = carveout_for(device, context_);
    const int most_compiled = compiled_candidates();
    const std::string key = fmt::format(
        "dev{}|{}|x {}|y {}|w align {}|{}x{} pad {},{} stride {},{} dilation {},{} groups {}|{}|"
        "workspace {}|bias {}|z {}|relu {}|activation {}|carveout {}|compiled {}",
        device, backward ? "backward data" : "forward", view_key(in), view_key(out),
        alignment_of(weight), kernel_h, kernel_w, g.pad_h, g.pad_w, g.stride_h, g.stride_w,
        g.dilation_h, g.dilation_w, g.groups, to_string(precision), max_workspace,
        epilogue.bias ? fmt::format("align {}", alignment_of(epilogue.bias)) : "none",
        epilogue.residual ? view_key(*epilogue.residual) : "none", epilogue.relu,
        epilogue.activation ? to_string(*epilogue.activation) : "none", carveout.key(),
        most_compiled);
    ShortlistCache& cache = shortlist_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (auto it = cache.entries.find(key); it != cache.entries.end()) {
        shortlist_ = it->second;
        return;
    }
    shortlist_ = build_shortlist(cache.handles[device].get(), in, out, weight, kernel_h, kernel_w,
                                 g, epilogue, precision, max_workspace, context_, direction,
                                 carveout, most_compiled);
    cache.entries.emplace(key, shortlist_);
}

int GraphConv::candidates() const { return int(shortlist_->plans.size()); }

size_t GraphConv::workspace_bytes() const {
    return shortlist_->plans.at(size_t(selected_)).workspace;
}

int GraphConv::sm_target() const { return shortlist_->plans.at(size_t(selected_)).sm_target; }

std::string GraphConv::selected_name() const {
    return plan_name(shortlist_->plans.at(size_t(selected_)));
}

std::string GraphConv::identity(int rank) const {
    const Shortlist::Plan& p = shortlist_->plans.at(size_t(rank));
    // An engine cuDNN did not name (-1) cannot be found again by its name: no identity.
    return p.engine < 0 ? std::string() : plan_name(p);
}

int GraphConv::rank_of(const std::string& wanted) const {
    if (wanted.empty()) return -1;  // identity() of an unnamed engine: never found by name
    for (int rank = 0; rank < candidates(); ++rank)
        if (identity(rank) == wanted) return rank;
    return -1;
}

const std::string& GraphConv::notes() const { return shortlist_->notes; }

bool GraphConv::select(int rank) {
    if (rank < 0 || rank >= candidates()) return false;
    selected_ = rank;
    return true;
}

const char* GraphConv::math(int rank) const {
    return shortlist_->plans.at(size_t(rank)).tensor_cores ? "TENSOR_OP_MATH" : "FMA_MATH";
}

void GraphConv::rebind(const TensorView& in, const TensorView& out, const TensorView* residual) {
    x_ = in.data;
    y_ = out.data;
    if (z_ != nullptr && residual != nullptr) z_ = residual->data;
}

void GraphConv::run(cudnnHandle_t handle, void* workspace) const {
    // Built per launch: a variant pack is a few host-side attributes, and a schedule's
    // launches are captured into a CUDA graph once.
    BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, context_);
    std::vector<int64_t> ids = {kX, kW, kY};
    std::vector<void*> pointers = {x_, const_cast<void*>(w_), y_};
    if (bias_ != nullptr) {
        ids.push_back(kBias);
        pointers.push_back(const_cast<void*>(bias_));
    }
    if (z_ != nullptr) {
        ids.push_back(kZ);
        pointers.push_back(const_cast<void*>(z_));
    }
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(ids.size()),
             ids.data());
    pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
             int64_t(pointers.size()), pointers.data());
    pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    pack.finalize();
    IOSTUNE_CUDNN_CHECK(cudnnBackendExecute(handle,
                                            shortlist_->plans.at(size_t(selected_)).plan.get(),
                                            pack.get()),
                        context_);
}

}  // namespace iostune
