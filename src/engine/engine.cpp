// The engine's public API, its stream lanes, stage launches, capture and the caller's input and
// output. The plan itself lives beside it (engine_impl.h lists the files).
#include "src/engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "src/engine/device_memory.h"
#include "src/engine/engine_impl.h"
#include "src/engine/stream_capture.h"
#include "src/weights.h"

namespace iostune {

Engine::Impl::Impl(Graph g, EngineOptions opt) : graph(std::move(g)), options(std::move(opt)) {
    IOSTUNE_CUDA_CHECK(cudaSetDevice(options.device),
                       fmt::format("selecting CUDA device {} for the engine", options.device));
    layout = options.layout.value_or(default_layout(options.precision));
    dtype = iostune::storage_type(options.precision);
    // PyTorch's choice: TF32 tensor cores are allowed by cuDNN's default math on Ampere and
    // later, as are fp16/bf16 ones for 16-bit data; strict fp32 needs FMA-only kernels.
    conv_math = options.precision == Precision::Fp32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
    switch (options.precision) {
        case Precision::Fp32: blas_math = CUBLAS_PEDANTIC_MATH; break;
        case Precision::Tf32: blas_math = CUBLAS_TF32_TENSOR_OP_MATH; break;
        default: blas_math = CUBLAS_DEFAULT_MATH; break;
    }
    if (graph.size() == 0) throw Error("Engine: the graph has no ops");
    require_engine_memory(graph, options.precision, dtype_bytes(dtype));  // before any allocation
    if (graph.weights_state() == WeightsState::Absent) init_random_weights(graph, options.weight_seed);
    ensure_lanes(1);
    plan_memory();
    upload_weights();
    for (const Op& op : graph.ops()) plan_op(op);
    grow_workspaces();
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing the engine's set-up");
}

void Engine::Impl::ensure_lanes(size_t count) {
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

void Engine::Impl::grow_workspaces() {
    for (auto& lane : lanes) {
        if (lane->workspace.bytes() < workspace_bytes) {
            retired.push_back(std::move(lane->workspace));
            lane->workspace = DeviceBuffer(workspace_bytes);
        }
    }
}

const TensorView& Engine::Impl::tensor(int id) const {
    return is_graph_input(id) ? input_ports[size_t(graph_input_index(id))].view : views[size_t(id)];
}

Engine::Impl::InputPort& Engine::Impl::input_port(int index) {
    if (index < 0 || index >= int(input_ports.size()))
        throw Error(fmt::format("graph '{}' has {} input(s); there is no input {}", graph.name(),
                                input_ports.size(), index));
    return input_ports[size_t(index)];
}

const Engine::Impl::OutputPort& Engine::Impl::output_port(int index) const {
    if (index < 0 || index >= int(output_ports.size()))
        throw Error(fmt::format("graph '{}' has {} output(s); there is no output {}", graph.name(),
                                output_ports.size(), index));
    return output_ports[size_t(index)];
}

void Engine::Impl::launch_input_conversion(cudaStream_t stream) const {
    for (const InputPort& port : input_ports)
        if (port.convert) launch_convert(port.float_view, port.logical_view, stream);
}

void Engine::Impl::launch_output_conversion(cudaStream_t stream) const {
    for (const OutputPort& port : output_ports)
        if (port.convert) launch_convert(views[size_t(port.op)], port.float_view, stream);
}

void Engine::Impl::launch_stage(const Stage& stage, cudaStream_t origin_stream) {
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

void Engine::Impl::check_op_id(int id) const {
    if (id < 0 || id >= graph.size()) {
        throw Error(fmt::format("op id {} is out of range: graph '{}' has ops 0..{}", id,
                                graph.name(), graph.size() - 1));
    }
}

// Planning done lazily during launches must never happen inside a capture.
void Engine::Impl::require_not_capturing(cudaStream_t stream, const std::string& what) const {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    IOSTUNE_CUDA_CHECK(cudaStreamIsCapturing(stream, &status), what);
    if (status != cudaStreamCaptureStatusNone) {
        throw Error(fmt::format("{} needs planning (stream lanes, merged weights) that cannot "
                                "happen inside a CUDA graph capture: call prepare(schedule) "
                                "first", what));
    }
}

void Engine::Impl::prepare_stage(const Stage& stage, cudaStream_t stream) {
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

// Any view, as float NCHW on the host: 16-bit or channels-last storage is converted on the
// device first.
HostTensor Engine::Impl::read_view(const TensorView& v, const std::string& what) {
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), fmt::format("finishing work before reading {}", what));
    HostTensor host(Shape{v.n, v.c, v.h, v.w});
    TensorView source = v;
    DeviceBuffer converted;
    if (v.dtype != DType::F32 || v.layout != TensorLayout::Nchw) {
        converted = DeviceBuffer(size_t(v.elements()) * sizeof(float));
        source = packed_view(converted.get(), DType::F32, TensorLayout::Nchw, v.n, v.c, v.h, v.w);
        launch_convert(v, source, origin.get());
        IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(origin.get()), fmt::format("converting {}", what));
    }
    IOSTUNE_CUDA_CHECK(cudaMemcpy2D(host.data.data(), size_t(source.row_bytes()), source.data,
                                    size_t(source.row_pitch_bytes()), size_t(source.row_bytes()),
                                    size_t(source.rows()), cudaMemcpyDeviceToHost),
                       fmt::format("reading {}", what));
    return host;
}

Engine::Engine(Graph graph, EngineOptions options)
    : impl_(std::make_unique<Impl>(std::move(graph), options)) {}
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

const Graph& Engine::graph() const { return impl_->graph; }
const EngineOptions& Engine::options() const { return impl_->options; }
TensorLayout Engine::layout() const { return impl_->layout; }
DType Engine::storage_type() const { return impl_->dtype; }

void Engine::prepare(const Schedule& schedule) {
    validate(impl_->graph, schedule);
    impl_->place_merged_ops(schedule);
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
    if (impl_->options.float_io) impl_->launch_input_conversion(origin);
    for (const Stage& stage : schedule.flat_stages()) launch_stage(stage, origin);
    if (impl_->options.float_io) impl_->launch_output_conversion(origin);
}

CudaGraphExec Engine::capture(const Schedule& schedule) {
    prepare(schedule);
    return capture_graph(impl_->origin.get(), [&](cudaStream_t s) { launch_schedule(schedule, s); },
                        "a schedule");
}

CudaGraphExec Engine::capture_stage(const Stage& stage) {
    return capture_graph(impl_->origin.get(), [&](cudaStream_t s) { launch_stage(stage, s); },
                        fmt::format("stage {}", stage_signature(stage)));
}

cudaStream_t Engine::origin_stream() const { return impl_->origin.get(); }

void Engine::set_input(const HostTensor& input) { set_input(0, input); }

void Engine::set_input(int index, const HostTensor& input) {
    Impl::InputPort& port = impl_->input_port(index);
    const Shape& e = impl_->graph.input_shape(index);
    if (input.shape != e)
        throw Error(fmt::format("input {} of shape {}x{}x{}x{} given; graph '{}' takes "
                                "{}x{}x{}x{}",
                                index, input.shape.n, input.shape.c, input.shape.h, input.shape.w,
                                impl_->graph.name(), e.n, e.c, e.h, e.w));
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing work before setting the input");
    IOSTUNE_CUDA_CHECK(cudaMemcpy(port.float_buffer.get(), input.data.data(),
                                  port.float_buffer.bytes(), cudaMemcpyHostToDevice),
                       "copying the input to the device");
    if (port.convert)
        launch_convert(port.float_view, port.logical_view, impl_->origin.get());
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(impl_->origin.get()), "converting the input");
}

HostTensor Engine::read_output(int index) {
    return read_op_output(impl_->output_port(index).op);
}

std::vector<HostTensor> Engine::read_outputs() {
    std::vector<HostTensor> outputs;
    for (int k = 0; k < int(impl_->output_ports.size()); ++k) outputs.push_back(read_output(k));
    return outputs;
}

void Engine::set_random_inputs(uint64_t seed) {
    for (int k = 0; k < impl_->graph.input_count(); ++k)
        set_input(k, random_input(impl_->graph.input_shape(k), seed + uint64_t(k)));
}

HostTensor Engine::read_op_output(int op_id) {
    impl_->check_op_id(op_id);
    return impl_->read_view(impl_->views[size_t(op_id)],
                            fmt::format("the output of op {} '{}'", op_id,
                                        impl_->graph.op(op_id).name));
}

float* Engine::input_device(int index) { return impl_->input_port(index).float_buffer.floats(); }
const float* Engine::output_device(int index) const {
    const Impl::OutputPort& port = impl_->output_port(index);
    return port.convert ? port.float_buffer.floats()
                        : static_cast<const float*>(impl_->views[size_t(port.op)].data);
}
TensorView Engine::native_input(int index) const {
    return impl_->input_port(index).view;
}
TensorView Engine::native_output(int index) const {
    return impl_->views[size_t(impl_->output_port(index).op)];
}

void Engine::synchronize() {
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "waiting for the engine's work");
}

std::vector<OpPlan> Engine::op_plans() const {
    std::vector<OpPlan> plans;
    for (const auto& e : impl_->execs) plans.push_back(e.plan);
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
    size_t total = 0;
    for (const auto& port : im.input_ports)
        total += port.float_buffer.bytes() + port.native_buffer.bytes();
    for (const auto& port : im.output_ports) total += port.float_buffer.bytes();
    for (const auto& w : im.weights) total += w.weight.bytes() + w.weight2.bytes() + w.bias.bytes();
    for (const auto& b : im.outputs) total += b.bytes();
    for (const auto& e : im.execs)
        total += e.depthwise_scratch.bytes() + e.linear_input.bytes();
    for (const auto& [s, m] : im.merges) total += m.output.bytes() + m.weight.bytes() + m.bias.bytes();
    for (const auto& lane : im.lanes) total += lane->workspace.bytes() + lane->cublas_workspace.bytes();
    total += im.l2_flush.bytes();
    return total;
}

int Engine::lane_count() const { return int(impl_->lanes.size()); }

ConvChoices Engine::conv_choices() const {
    ConvChoices choices;
    for (const auto& e : impl_->execs)
        for (const ConvStep& step : e.convs) choices[step.signature] = step.choice;
    for (const auto& [signature, m] : impl_->merges)
        if (m.conv) choices[m.conv->signature] = m.conv->choice;
    return choices;
}

int Engine::pinned_conv_count() const {
    int pinned = 0;
    for (const auto& e : impl_->execs)
        for (const ConvStep& step : e.convs) pinned += step.pinned ? 1 : 0;
    for (const auto& [signature, m] : impl_->merges) pinned += m.conv && m.conv->pinned ? 1 : 0;
    return pinned;
}

int Engine::conv_count() const {
    int count = 0;
    for (const auto& e : impl_->execs) count += int(e.convs.size());
    for (const auto& [signature, m] : impl_->merges) count += m.conv ? 1 : 0;
    return count;
}

}  // namespace iostune
