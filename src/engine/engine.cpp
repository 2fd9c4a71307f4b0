// The engine's public API, its stream lanes, stage launches, capture and the caller's input and
// output. The plan itself lives beside it (engine_impl.h lists the files).
#include "src/engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include "src/engine/device_memory.h"
#include "src/engine/engine_impl.h"
#include "src/engine/stream_capture.h"
#include "src/weights.h"

namespace iostune {

namespace {

// The convolutions plan_op chooses kernels for: a separable one is two (depthwise, pointwise).
int planned_convolutions(const Op& op) {
    return op.kind == OpKind::Conv ? 1 : op.kind == OpKind::SepConv ? 2 : 0;
}

int planned_convolutions(const Graph& graph) {
    int count = 0;
    for (const Op& op : graph.ops()) count += planned_convolutions(op);
    return count;
}

// Arena offsets keep every buffer at the alignment the kernels' vector loads need.
void require_arena_offset(size_t bytes, const char* what) {
    if (bytes % EngineOptions::kArenaOffsetAlignment != 0)
        throw Error(fmt::format("{} of {} bytes is not a multiple of {} (the alignment the "
                                "kernels' vector loads need): give a multiple",
                                what, bytes, EngineOptions::kArenaOffsetAlignment),
                    ErrorKind::BadInput);
}

}  // namespace

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
    require_arena_offset(options.arena_offset, "an arena offset");
    require_arena_offset(options.arena_room, "an arena's room");
    require_engine_memory(graph, options.precision, dtype_bytes(dtype));  // before any allocation
    if (graph.weights_state() == WeightsState::Absent) init_random_weights(graph, options.weight_seed);
    if (options.arena) {
        arena = options.arena;
        arena_given = true;
    }
    ensure_lanes(1);
    // Planned for the schedule from the start when it is known: the memory of every activation
    // at once is never allocated.
    apply_plan(options.schedule ? plan_memory(graph, *options.schedule, plan_options())
                                : plan_memory_without_schedule(graph, plan_options()));
    if (options.weights) use_weights(options.weights);
    else upload_weights();
    for (const MergePlacement& m : memory_plan.merges)
        plan_merge(Stage{StageStrategy::Merge, {m.ops}});
    // A probe engine (options.choose_by) that cannot choose its convolutions in its time stops
    // at half of it, not at its deadline (planning_pace.h).
    planning_progress = {SteadyClock::now(), 0, planned_convolutions(graph)};
    for (const Op& op : graph.ops()) {
        plan_op(op);
        planning_progress.planned += planned_convolutions(op);
        require_planning_pace();
    }
    grow_workspaces();
    refine_staging();
    l2_flush = DeviceBuffer();  // only convolution timing needs it
    // Seeded inputs: the first launch (a capture's warm-up) converts real-looking data, not
    // memory nothing wrote.
    for (int k = 0; k < graph.input_count(); ++k)
        write_input(k, random_input(graph.input_shape(k), options.fill_seed + uint64_t(k)));
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing the engine's set-up");
}

void Engine::Impl::ensure_lanes(size_t count) {
    while (lanes.size() < count) {
        auto lane = std::make_unique<Lane>();
        const std::string context = fmt::format("setting up stream lane {}", lanes.size());
        IOSTUNE_CUBLAS_CHECK(cublasSetMathMode(lane->cublas.get(), blas_math), context);
        lane->cublas.set_workspace(lane->cublas_workspace.get(), lane->cublas_workspace.bytes());
        seed_workspace(lane->cublas_workspace);
        lanes.push_back(std::move(lane));
    }
}

// Seeded like the arena: cuBLASLt's split-K reductions read workspace their partial products
// did not write (compute-sanitizer initcheck, NASNet-A fp16: call97), and cuBLAS's likewise.
void Engine::Impl::seed_workspace(const DeviceBuffer& w) const {
    fill(w.get(), int64_t(w.bytes() / 4), DType::F32, options.fill_seed + w.bytes());
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(origin.get()), "seeding a workspace");
}

void Engine::Impl::ensure_workspaces(size_t count) {
    while (workspaces.size() < count) {
        workspaces.emplace_back(workspace_bytes);
        seed_workspace(workspaces.back());
    }
}

void Engine::Impl::grow_workspaces() {
    for (DeviceBuffer& w : workspaces) {
        if (w.bytes() < workspace_bytes) {
            retire(std::move(w));
            w = DeviceBuffer(workspace_bytes);
            seed_workspace(w);
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
        run_merge(merges.at(stage_signature(stage)), *lanes[0], workspaces[0], origin_stream);
        return;
    }
    if (stage.groups.size() == 1) {  // no fork needed
        for (int id : stage.groups[0]) run_op(id, *lanes[0], workspaces[0], origin_stream);
        return;
    }
    forked.record(origin_stream);
    for (size_t g = 0; g < stage.groups.size(); ++g) {
        Lane& lane = *lanes[g];
        forked.wait_on(lane.stream.get());
        for (int id : stage.groups[g]) run_op(id, lane, workspaces[g], lane.stream.get());
        lane.joined.record(lane.stream.get());
    }
    for (size_t g = 0; g < stage.groups.size(); ++g) lanes[g]->joined.wait_on(origin_stream);
}

namespace {
Stage merge_stage_of(const Launch& launch) { return Stage{StageStrategy::Merge, {launch.ops}}; }

// IOSTUNE_SYNC_LAUNCHES=1: a debugging aid. Outside a capture, every launch of a schedule is
// waited for and checked, so an error (an illegal address, say) names the op that caused it.
bool sync_each_launch(cudaStream_t origin) {
    static const bool asked = std::getenv("IOSTUNE_SYNC_LAUNCHES") != nullptr;
    if (!asked) return false;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    IOSTUNE_CUDA_CHECK(cudaStreamIsCapturing(origin, &status), "IOSTUNE_SYNC_LAUNCHES");
    return status == cudaStreamCaptureStatusNone;
}
}  // namespace

// The workspace slot of each launch: the plan's when it was made for this program's schedule,
// else the launch's lane (lanes run one launch at a time).
std::vector<int> Engine::Impl::workspace_slots(const Schedule& schedule,
                                               const StreamProgram& program) const {
    if (memory_plan.schedule && same_launches(*memory_plan.schedule, schedule) &&
        memory_plan.workspace_slot.size() == program.launches().size())
        return memory_plan.workspace_slot;
    std::vector<int> slots;
    for (const Launch& l : program.launches()) slots.push_back(l.lane);
    return slots;
}

void Engine::Impl::prepare_program(const StreamProgram& program, const std::vector<int>& slots,
                                   cudaStream_t stream) {
    for (const Launch& launch : program.launches())
        if (launch.merge) prepare_stage(merge_stage_of(launch), stream);
    const size_t slot_count = size_t(*std::max_element(slots.begin(), slots.end()) + 1);
    // Merges and the ops re-planned to read their slices may need larger workspaces than the
    // slots hold (they raise workspace_bytes): every slot grows to it here, outside a capture.
    const bool small_workspace = std::any_of(workspaces.begin(), workspaces.end(),
                                             [&](const DeviceBuffer& w) {
                                                 return w.bytes() < workspace_bytes;
                                             });
    const auto lacks_urgent = [&](const Launch& l) {
        return size_t(l.lane) >= lanes.size() || lanes[size_t(l.lane)]->urgent.size() <
                                                      size_t(l.priority);
    };
    const bool urgent_missing =
        std::any_of(program.launches().begin(), program.launches().end(), lacks_urgent);
    if (size_t(program.lane_count()) > lanes.size() || slot_count > workspaces.size() ||
        program.launches().size() > launch_done.size() || small_workspace || urgent_missing) {
        require_not_capturing(stream, "a schedule with more stream lanes or launches than planned");
        ensure_lanes(size_t(program.lane_count()));
        ensure_workspaces(slot_count);
        grow_workspaces();
        while (launch_done.size() < program.launches().size()) launch_done.emplace_back();
        for (const Launch& l : program.launches()) ensure_urgent(*lanes[size_t(l.lane)], l.priority);
    }
}

// Level k is k steps above the default priority, at most the device's highest.
void Engine::Impl::ensure_urgent(Lane& lane, int level) {
    if (lane.urgent.size() >= size_t(level)) return;
    int least = 0, greatest = 0;
    IOSTUNE_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                       "reading the device's stream priorities");
    while (lane.urgent.size() < size_t(level))
        lane.urgent.emplace_back(std::max(greatest, least - int(lane.urgent.size()) - 1));
}

// Every lane starts after the origin's work so far (the input conversion) and the origin waits
// for every lane at the end, so the program is one fork and one join as seen from outside.
void Engine::Impl::launch_program(const StreamProgram& program, const std::vector<int>& slots,
                                  cudaStream_t origin_stream, const Perturbation* perturbation) {
    prepare_program(program, slots, origin_stream);
    const auto& launches = program.launches();
    std::vector<bool> waited_for(launches.size(), false);
    for (const Launch& l : launches)
        for (int w : l.waits) waited_for[size_t(w)] = true;
    const std::vector<uint64_t> delays =
        perturbation ? perturbation_delays(program, *perturbation) : std::vector<uint64_t>{};
    const bool keep_waits = !perturbation || !perturbation->drop_waits;
    forked.record(origin_stream);
    for (int k = 0; k < program.lane_count(); ++k) forked.wait_on(lanes[size_t(k)]->stream.get());
    const bool sync_each = sync_each_launch(origin_stream);
    // The stream each lane's last launch went to (its own, or one of its urgent ones).
    std::vector<cudaStream_t> current(size_t(program.lane_count()));
    for (int k = 0; k < program.lane_count(); ++k) current[size_t(k)] = lanes[size_t(k)]->stream.get();
    const auto hand_over = [&](Lane& lane, cudaStream_t& from, cudaStream_t to) {
        if (from == to) return;
        lane.handoff.record(from);
        lane.handoff.wait_on(to);
        from = to;
    };
    for (size_t i = 0; i < launches.size(); ++i) {
        const Launch& l = launches[i];
        Lane& lane = *lanes[size_t(l.lane)];
        cudaStream_t stream = l.priority > 0 ? lane.urgent[size_t(l.priority - 1)].get()
                                             : lane.stream.get();
        hand_over(lane, current[size_t(l.lane)], stream);
        if (keep_waits)
            for (int w : l.waits) launch_done[size_t(w)].wait_on(stream);
        if (!delays.empty() && delays[i] > 0) launch_spin(delays[i], stream);
        // A launch without a convolution has no slot; any workspace will do (it takes none).
        const DeviceBuffer& workspace = workspaces[size_t(std::max(slots[i], 0))];
        if (l.merge)
            run_merge(merges.at(stage_signature(merge_stage_of(l))), lane, workspace, stream);
        else
            run_op(l.ops[0], lane, workspace, stream);
        if (waited_for[i]) launch_done[i].record(stream);
        if (sync_each)
            IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream),
                               "IOSTUNE_SYNC_LAUNCHES: " + program.describe(graph, int(i)));
    }
    for (int k = 0; k < program.lane_count(); ++k) {
        Lane& lane = *lanes[size_t(k)];
        hand_over(lane, current[size_t(k)], lane.stream.get());
        lane.joined.record(lane.stream.get());
        lane.joined.wait_on(origin_stream);
    }
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
                            (stage.groups.size() > lanes.size() ||
                             stage.groups.size() > workspaces.size());
    if (!need_merge && !need_lanes) return;
    require_not_capturing(stream, fmt::format("stage {}", stage_signature(stage)));
    if (need_merge) plan_merge(stage);
    ensure_lanes(stage.groups.size());
    ensure_workspaces(stage.groups.size());
    grow_workspaces();
}

void Engine::Impl::require_plan_for(const Schedule& schedule, cudaStream_t stream) {
    if (!memory_plan.schedule || !memory_plan.options.reuse ||
        same_launches(*memory_plan.schedule, schedule))
        return;
    require_not_capturing(stream, "a schedule other than the one the memory is planned for");
    plan_for(schedule);
}

void Engine::Impl::plan_for(const Schedule& schedule) {
    // Audited when applied; priorities alone change no launch order, so no plan.
    if (memory_plan.schedule && same_launches(*memory_plan.schedule, schedule)) return;
    apply_plan(plan_memory(graph, schedule, plan_options()));  // validates the schedule
    refine_staging();
    l2_flush = DeviceBuffer();
}

void Engine::Impl::write_input(int index, const HostTensor& input) {
    InputPort& port = input_port(index);
    const Shape& e = graph.input_shape(index);
    if (input.shape != e)
        throw Error(fmt::format("input {} of shape {}x{}x{}x{} given; graph '{}' takes "
                                "{}x{}x{}x{}",
                                index, input.shape.n, input.shape.c, input.shape.h, input.shape.w,
                                graph.name(), e.n, e.c, e.h, e.w));
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing work before setting the input");
    // On the stream that converts it: a synchronous cudaMemcpy from pageable memory may return
    // before its last staged chunk lands, and it is not ordered with the non-blocking origin
    // stream. Under load the conversion then read the seeded input's tail (the [gpu] pooling
    // and kernel tests' wrong results in the ninth session's calls 61 and 64).
    IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(port.float_view.data, input.data.data(),
                                       input.data.size() * sizeof(float), cudaMemcpyHostToDevice,
                                       origin.get()),
                       "copying the input to the device");
    if (port.convert) launch_convert(port.float_view, port.logical_view, origin.get());
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(origin.get()), "converting the input");
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
    impl_->plan_for(schedule);
    const StreamProgram program(impl_->graph, schedule);
    impl_->prepare_program(program, impl_->workspace_slots(schedule, program),
                           impl_->origin.get());
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing the schedule's set-up");
}

void Engine::launch_op(int op_id, cudaStream_t stream) {
    impl_->check_op_id(op_id);
    impl_->run_op(op_id, *impl_->lanes[0], impl_->workspaces[0], stream);
}

void Engine::launch_stage(const Stage& stage, cudaStream_t origin) {
    for (const auto& group : stage.groups)
        for (int id : group) impl_->check_op_id(id);
    impl_->launch_stage(stage, origin);
}

void Engine::launch_schedule(const Schedule& schedule, cudaStream_t origin) {
    impl_->launch_schedule(schedule, origin, nullptr);
}

void Engine::Impl::launch_schedule(const Schedule& schedule, cudaStream_t origin_stream,
                                   const Perturbation* perturbation) {
    const StreamProgram program(graph, schedule);
    require_plan_for(schedule, origin_stream);
    const std::vector<int> slots = workspace_slots(schedule, program);
    if (options.float_io) launch_input_conversion(origin_stream);
    launch_program(program, slots, origin_stream, perturbation);
    if (options.float_io) launch_output_conversion(origin_stream);
}

CudaGraphExec Engine::capture(const Schedule& schedule) { return CudaGraphExec(record(schedule)); }

size_t Engine::arena_offset() const { return impl_->arena->offset(); }

void Engine::place_arena(size_t offset) {
    Impl& im = *impl_;
    if (im.arena_given)
        throw Error("place_arena: the engine runs in an arena it was given (EngineOptions::arena), "
                    "which it does not move");
    require_arena_offset(offset, "an arena placement");
    if (offset > im.arena->room())
        throw Error(fmt::format("place_arena: {} bytes in is past the arena's room of {} "
                                "(EngineOptions::arena_room)",
                                offset, im.arena->room()));
    if (offset == im.arena->offset()) return;
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing work before moving the arena");
    im.arena->move_to(offset);
    im.options.arena_offset = offset;  // an arena allocated later (a larger plan) starts there
    // The plan in force again: every view, and every op bound to them, from the new place.
    im.apply_plan(MemoryPlan(im.memory_plan));
}

CudaGraph Engine::record(const Schedule& schedule, bool warm_up) {
    prepare(schedule);
    impl_->captured = true;  // the graph uses the plan's memory: kept if the plan changes
    return record_graph(impl_->origin.get(), [&](cudaStream_t s) { launch_schedule(schedule, s); },
                        "a schedule", warm_up);
}

void Engine::refill_arena(uint64_t seed) {
    Impl& im = *impl_;
    if (im.arena && im.memory_plan.shared_bytes > 0)
        im.fill(im.arena->data(), im.memory_plan.shared_bytes / dtype_bytes(im.dtype), im.dtype,
                seed);
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(im.origin.get()), "refilling the activation arena");
}

void Engine::fill_workspaces(std::optional<uint64_t> seed) {
    Impl& im = *impl_;
    std::vector<const DeviceBuffer*> buffers;
    for (const DeviceBuffer& w : im.workspaces) buffers.push_back(&w);
    for (const auto& lane : im.lanes) buffers.push_back(&lane->cublas_workspace);
    for (const DeviceBuffer* b : buffers) {
        if (b->bytes() == 0) continue;
        if (seed)
            im.fill(b->get(), int64_t(b->bytes() / sizeof(float)), DType::F32, *seed);
        else
            IOSTUNE_CUDA_CHECK(cudaMemsetAsync(b->get(), 0, b->bytes(), im.origin.get()),
                               "zeroing a workspace");
    }
    IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(im.origin.get()), "filling the workspaces");
}

namespace {

// "[0x7f1234, +4096)"
std::string byte_range(const void* p, size_t bytes) { return fmt::format("[{}, +{})", p, bytes); }

// FNV-1a over 64-bit words (a diagnostic's "same bytes or not", not a hash for storage).
uint64_t device_checksum(const void* p, size_t bytes) {
    std::vector<uint64_t> words((bytes + 7) / 8, 0);
    if (bytes > 0)
        IOSTUNE_CUDA_CHECK(cudaMemcpy(words.data(), p, bytes, cudaMemcpyDeviceToHost),
                           "reading weights back for a checksum");
    uint64_t h = 1469598103934665603ull;
    for (const uint64_t w : words) h = (h ^ w) * 1099511628211ull;
    return h;
}

}  // namespace

std::string Engine::op_bindings(int op_id) const {
    const Impl& im = *impl_;
    if (op_id < 0 || op_id >= im.graph.size())
        throw Error(fmt::format("op_bindings: no op {} in '{}'", op_id, im.graph.name()));
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "waiting for the engine's work");
    const engine_internal::OpWeights& w = im.weights_of(op_id);
    std::string text;
    using Named = std::pair<const char*, const DeviceBuffer*>;
    for (const auto& [name, buffer] : {Named{"weights", &w.weight}, Named{"weights2", &w.weight2},
                                       Named{"bias", &w.bias},
                                       Named{"depthwise weights", &w.depthwise},
                                       Named{"slopes", &w.slope}})
        if (buffer->bytes() > 0)
            text += fmt::format("{}{} {} #{:016x}", text.empty() ? "" : ", ", name,
                                byte_range(buffer->get(), buffer->bytes()),
                                device_checksum(buffer->get(), buffer->bytes()));
    const auto view = [](const TensorView& v) { return byte_range(v.data, size_t(v.extent_bytes())); };
    for (const ConvStep& step : im.execs[size_t(op_id)].convs)
        text += fmt::format("; {}: reads {} (its view {}), writes {} (into {}), weight {}, bias {}",
                            step.context, view(step.input()), view(step.source()),
                            view(step.output()), view(step.target()), step.weight(), step.bias());
    text += fmt::format("; output view {}", view(im.views[size_t(op_id)]));
    return text;
}

CudaGraphExec Engine::capture_perturbed(const Schedule& schedule, const Perturbation& perturbation) {
    prepare(schedule);
    impl_->captured = true;
    return capture_graph(
        impl_->origin.get(),
        [&](cudaStream_t s) { impl_->launch_schedule(schedule, s, &perturbation); },
        "a perturbed schedule");
}

CudaGraphExec Engine::capture_stage(const Stage& stage) {
    impl_->captured = true;  // as capture()
    return capture_graph(impl_->origin.get(), [&](cudaStream_t s) { launch_stage(stage, s); },
                        fmt::format("stage {}", stage_signature(stage)));
}

cudaStream_t Engine::origin_stream() const { return impl_->origin.get(); }

void Engine::flush_l2(cudaStream_t stream) {
    impl_->ensure_l2_flush();
    IOSTUNE_CUDA_CHECK(cudaMemsetAsync(impl_->l2_flush.get(), 0, impl_->l2_flush.bytes(), stream),
                       "flushing the L2 cache");
}

void Engine::set_input(const HostTensor& input) { set_input(0, input); }

void Engine::set_input(int index, const HostTensor& input) { impl_->write_input(index, input); }

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

float* Engine::input_device(int index) {
    return static_cast<float*>(impl_->input_port(index).float_view.data);
}
const float* Engine::output_device(int index) const {
    const Impl::OutputPort& port = impl_->output_port(index);
    return static_cast<const float*>(port.convert ? port.float_view.data
                                                  : impl_->views[size_t(port.op)].data);
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

size_t EngineMemory::total() const {
    return weights + merged_weights + io + arena + workspaces + other;
}

EngineMemory Engine::memory() const {
    const Impl& im = *impl_;
    EngineMemory m;
    m.weights = im.weights->bytes();
    m.weights_shared = im.options.weights != nullptr;
    m.io = im.io_region.bytes();
    m.arena = im.arena->bytes();
    m.arena_shared = im.arena_given;
    m.other += im.arena->room();  // allocated, never used (EngineOptions::arena_offset, _room)
    for (const DeviceBuffer& w : im.workspaces) m.workspaces += w.bytes();
    for (const auto& lane : im.lanes) m.workspaces += lane->cublas_workspace.bytes();
    for (const auto& [s, merge] : im.merges) {
        m.merged_weights += merge.weight.bytes() + merge.bias.bytes();
        m.other += merge.own_output.bytes() + (merge.conv ? merge.conv->owned_bytes() : 0);
    }
    for (const auto& e : im.execs)
        for (const ConvStep& step : e.convs) m.other += step.owned_bytes();
    for (const DeviceBuffer& b : im.retired) m.other += b.bytes();
    for (const auto& a : im.retired_arenas) m.other += a->bytes();
    for (const ConvStep& step : im.retired_steps) m.other += step.owned_bytes();
    m.other += im.l2_flush.bytes();
    return m;
}

size_t Engine::device_memory_bytes() const { return memory().total(); }

const MemoryPlan& Engine::memory_plan() const { return impl_->memory_plan; }

std::shared_ptr<const EngineWeights> Engine::weights() const { return impl_->weights; }

void Engine::release_retired() {
    IOSTUNE_CUDA_CHECK(cudaDeviceSynchronize(), "finishing work before freeing retired memory");
    impl_->retired.clear();
    impl_->retired_arenas.clear();
    impl_->retired_steps.clear();
    impl_->retired_transposes.clear();
    impl_->captured = false;  // the caller's promise: no graph captured so far runs again
}

MemoryPlanOptions Engine::memory_plan_options(const EngineOptions& options) {
    MemoryPlanOptions p;
    p.precision = options.precision;
    p.layout = options.layout.value_or(default_layout(options.precision));
    p.concat_in_place = options.concat_in_place;
    p.pad_input_channels = options.pad_input_channels;
    p.reuse = options.reuse_memory;
    return p;
}

MemoryPlan Engine::plan_memory_for(const Graph& graph, const Schedule& schedule,
                                   const EngineOptions& options) {
    return plan_memory(graph, schedule, memory_plan_options(options));
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

std::vector<ConvChoices> Engine::conv_runners_up(size_t ranks_wanted) const {
    // Steps of one signature run one choice (a staged step has a key of its own since call166):
    // each signature's runners-up are its last step's, as conv_choices() reports its choice.
    std::map<std::string, const std::vector<ConvChoice>*> last;
    for (const auto& e : impl_->execs)
        for (const ConvStep& step : e.convs) last[step.signature] = &step.runners_up;
    std::vector<ConvChoices> ranks(std::min(ranks_wanted, kMostRunnersUp));
    for (const auto& [signature, runners_up] : last)
        for (size_t k = 0; k < runners_up->size() && k < ranks.size(); ++k)
            ranks[k].emplace(signature, (*runners_up)[k]);
    return ranks;
}

namespace {
// The planned convolutions (ops' and merge stages') for which `counted` holds.
template <class EngineImpl, class Predicate>
int count_convs(const EngineImpl& impl, Predicate counted) {
    int count = 0;
    for (const auto& e : impl.execs)
        for (const ConvStep& step : e.convs) count += counted(step) ? 1 : 0;
    for (const auto& [signature, m] : impl.merges) count += m.conv && counted(*m.conv) ? 1 : 0;
    return count;
}
}  // namespace

int Engine::pinned_conv_count() const {
    return count_convs(*impl_, [](const ConvStep& step) { return step.pinned; });
}

int Engine::quick_conv_count() const {
    return count_convs(*impl_, [](const ConvStep& step) { return step.choice.quick; });
}

bool Engine::set_conv_choice(const std::string& signature, const ConvChoice& choice) {
    Impl& impl = *impl_;
    impl.require_not_capturing(impl.origin.get(), "switching a convolution's kernel");
    // A step whose views need a staging buffer it has not got cannot run that path.
    const auto runs = [&](ConvStep& step) {
        return impl.configure(step, choice) &&
               !(step.input_staged() && step.input().data == nullptr) &&
               !(step.output_staged() && step.output().data == nullptr);
    };
    Impl::ConvSwitch done{signature, {}, std::nullopt};
    if (const auto it = impl.options.conv_choices.find(signature);
        it != impl.options.conv_choices.end())
        done.pinned_before = it->second;
    for (size_t op = 0; op < impl.execs.size(); ++op)
        for (size_t k = 0; k < impl.execs[op].convs.size(); ++k) {
            ConvStep& step = impl.execs[op].convs[k];
            if (step.signature != signature) continue;
            done.steps.emplace_back(op, k, step.choice);
            if (!runs(step)) {
                impl.switches.push_back(std::move(done));
                undo_conv_choice();
                return false;
            }
        }
    if (done.steps.empty()) return false;
    // Pinned, so that a step planned again (another schedule's alignments) keeps it too.
    impl.options.conv_choices[signature] = choice;
    impl.record_conv_plans(signature);
    impl.switches.push_back(std::move(done));
    return true;
}

void Engine::undo_conv_choice() {
    Impl& impl = *impl_;
    if (impl.switches.empty()) return;
    const Impl::ConvSwitch undo = std::move(impl.switches.back());
    impl.switches.pop_back();
    for (const auto& [op, k, before] : undo.steps) {
        ConvStep* step = op < impl.execs.size() && k < impl.execs[op].convs.size()
                             ? &impl.execs[op].convs[k]
                             : nullptr;
        if (step == nullptr || step->signature != undo.signature || !impl.configure(*step, before))
            throw InternalError(fmt::format("undoing a switch of the convolution {}: a step is "
                                            "gone or no longer runs its earlier choice {} ({}); "
                                            "please report it with the model",
                                            undo.signature, before.algorithm, before.path));
    }
    if (undo.pinned_before)
        impl.options.conv_choices[undo.signature] = *undo.pinned_before;
    else
        impl.options.conv_choices.erase(undo.signature);
    impl.record_conv_plans(undo.signature);
}

void Engine::Impl::record_conv_plans(const std::string& signature) {
    for (OpExec& e : execs) {
        const bool holds = std::any_of(e.convs.begin(), e.convs.end(), [&](const ConvStep& s) {
            return s.signature == signature;
        });
        if (!holds) continue;
        e.plan.path.clear();
        e.plan.algorithms.clear();
        e.plan.candidates.clear();
        e.plan.conv_signatures.clear();
        e.plan.workspace_bytes = 0;
        for (const ConvStep& step : e.convs) record_conv(e.plan, step);
    }
}

int Engine::conv_count() const {
    return count_convs(*impl_, [](const ConvStep&) { return true; });
}

}  // namespace iostune
