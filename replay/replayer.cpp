#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <utility>

#include "db/schedule_store.h"
#include "iostune/replay.h"
#include "replay/device_match.h"
#include "replay/gpu_check.h"
#include "replay/model_spec.h"
#include "replay/replay_target.h"
#include "replay/replay_timing.h"
#include "replay/request_graph.h"
#include "replay/schedule_selection.h"
#include "src/engine/arena_placements.h"
#include "src/engine/cuda_check.h"
#include "src/engine/device_info.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"
#include "src/error.h"
#include "src/precision.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/stream_program.h"

namespace iostune {

namespace {

std::array<int, 4> dims(const Shape& s) { return {s.n, s.c, s.h, s.w}; }

// What every ReplayInfo says about the graph: its shapes and, for a model set, its models.
void describe_graph(const Graph& graph, ReplayInfo& info) {
    info.model = graph.name();
    info.input_shape = dims(graph.input_shape());
    info.output_shape = dims(graph.output_shape());
    for (int k = 0; k < graph.input_count(); ++k) info.input_shapes.push_back(dims(graph.input_shape(k)));
    for (const GraphOutput& out : output_origins(graph)) {
        info.output_shapes.push_back(dims(graph.op(out.op).output));
        info.output_names.push_back(graph.op(out.op).name);
        info.output_models.push_back(out.member);
    }
    for (const GraphMember& m : graph.members()) info.members.push_back(m.name);
    if (const auto inputs = set_inputs_of(graph)) info.set_inputs = to_string(*inputs);
}

// "resnet50", or a model set's "a+b", for messages.
std::string models_label(const std::vector<std::string>& models) {
    std::string joined;
    for (const std::string& m : models) joined += (joined.empty() ? "" : "+") + m;
    return joined;
}

// The stored schedule, checked against this graph; a schedule that does not fit is refused like
// any other mismatch (or replaced by the sequential one when the caller allows it).
Schedule schedule_to_run(const Graph& graph, ScheduleChoice& choice, bool fallback_sequential) {
    if (!choice.schedule) return sequential_schedule(graph);
    try {
        Schedule schedule = schedule_from_json(choice.schedule->schedule);
        validate(graph, schedule);
        return schedule;
    } catch (const Error& e) {
        const std::string reason =
            fmt::format("stored schedule #{} does not fit model '{}' ({}); re-run `iostune search`",
                        choice.schedule->id, graph.name(), e.what());
        if (!fallback_sequential) throw Error(reason, ErrorKind::MissingSchedule);
        choice.schedule.reset();
        choice.fallback_reason = reason;
        return sequential_schedule(graph);
    }
}

// The engine options every replay shares: precision, device and the caller's choice of I/O.
EngineOptions engine_options_for(const ReplayOptions& options, TensorLayout layout) {
    EngineOptions engine_options;
    engine_options.precision = precision_from_string(options.precision);
    engine_options.layout = layout;
    engine_options.device = options.device;
    engine_options.float_io = !options.native_io;
    engine_options.reuse_memory = options.reuse_memory;
    engine_options.arena_offset = options.arena_offset;
    if (options.placements < 1 || options.placements > kMaxPlacements)
        throw Error(fmt::format("{} arena placements to benchmark at: give 1 to {}",
                                options.placements, kMaxPlacements),
                    ErrorKind::BadInput);
    if (options.placements > 1)  // room to move the region among them (benchmark())
        engine_options.arena_room = options.arena_offset + arena_room(options.placements);
    engine_options.conv_objective = conv_objective_from_string(options.conv_objective);
    if (!options.conv_choices_json.empty()) {
        const nlohmann::json choices = nlohmann::json::parse(options.conv_choices_json, nullptr,
                                                             false);
        if (choices.is_discarded())
            throw Error("the convolution choices given to pin are not JSON (they are what "
                        "Replayer::conv_choices_json() or `replay --conv-choices-out` writes)",
                        ErrorKind::BadInput);
        engine_options.conv_choices = conv_choices_from_json(choices, "the choices given to pin");
    }
    return engine_options;
}

// The engine's memory planned for the schedule it replays from the start: it never holds every
// activation at once.
EngineOptions planned_for(EngineOptions options, const Schedule& schedule) {
    options.schedule = schedule;
    return options;
}

// The layout a baseline or the sequential fallback runs in: the caller's, or the precision's.
TensorLayout requested_layout(const ReplayOptions& options) {
    if (options.layout == "auto") return default_layout(precision_from_string(options.precision));
    return tensor_layout_from_string(options.layout);
}

// "sequential", or the name a given schedule goes by.
std::string baseline_name(const ReplayOptions& options) {
    return options.schedule_source == "given" ? options.schedule_name : options.schedule_source;
}

Schedule given_schedule(const ReplayOptions& options, const std::string& model) {
    try {
        return schedule_from_json(nlohmann::json::parse(options.schedule_json));
    } catch (const std::exception& e) {
        throw Error(fmt::format("the given schedule '{}' for '{}' is not a schedule in iostune's "
                                "JSON ({}); pass the JSON `iostune search --schedule-out` writes",
                                options.schedule_name, model, e.what()));
    }
}

void require_float_io(const ReplayInfo& info, const char* call) {
    if (info.native_io)
        throw Error(fmt::format("Replayer::{} takes float NCHW data, but this Replayer was built "
                                "with native_io: fill native_input_buffer(), launch(), and read "
                                "native_output_buffer() ({} {})",
                                call, info.storage, info.layout));
}

}  // namespace

struct Replayer::Impl {
    ReplayInfo info;
    Engine engine;
    Schedule schedule;  // what `exec` runs (the perturbation check captures it again)
    CudaGraphExec exec;
    std::optional<RequestGraph> request;  // built by the first launch_from()
    std::vector<void*> graph_inputs;  // the buffers the graphs read their inputs from
    bool copies_outside = false;  // the request graph could not be built: launch() and copies
    // run()'s request, kept so that a request allocates nothing: its inputs, their bytes.
    std::vector<const void*> float_sources;
    std::vector<size_t> float_bytes;
    std::vector<size_t> input_elements, output_elements;

    // Plans the engine, warms up and captures the one CUDA Graph every run launches.
    explicit Impl(ReplayTarget target)
        : info(std::move(target.info)),
          engine(std::move(target.graph), planned_for(target.engine_options, target.schedule)),
          schedule(std::move(target.schedule)) {
        exec = engine.capture(schedule);
        const EngineMemory memory = engine.memory();
        info.weight_bytes = memory.weights + memory.merged_weights;
        info.activation_bytes = memory.io + memory.arena;
        info.workspace_bytes = memory.workspaces;
        info.device_memory_bytes = memory.total();
        info.shared_weight_bytes = memory.weights_shared ? memory.weights : 0;
        info.shared_arena_bytes = memory.arena_shared ? memory.arena : 0;
        info.layout = to_string(engine.layout());
        info.storage = to_string(engine.storage_type());
        info.native_io = !target.engine_options.float_io;
        info.graph_nodes = exec.node_count();
        info.convolutions = engine.conv_count();
        info.pinned_convolutions = engine.pinned_conv_count();
        const Graph& g = engine.graph();
        for (int k = 0; k < g.input_count(); ++k) {
            input_elements.push_back(size_t(g.input_shape(k).elements()));
            graph_inputs.push_back(info.native_io ? engine.native_input(k).data
                                                  : static_cast<void*>(engine.input_device(k)));
        }
        for (int id : g.outputs()) output_elements.push_back(size_t(g.op(id).output.elements()));
        float_sources.resize(input_elements.size());
        for (size_t n : input_elements) float_bytes.push_back(n * sizeof(float));
    }

    size_t input_size(int index) const {
        if (index < 0 || index >= int(input_elements.size()))
            throw Error(fmt::format("'{}' has {} input(s); there is no input {}", info.model,
                                    input_elements.size(), index));
        return input_elements[size_t(index)];
    }
    size_t output_size(int index) const {
        if (index < 0 || index >= int(output_elements.size()))
            throw Error(fmt::format("'{}' has {} output(s); there is no output {}", info.model,
                                    output_elements.size(), index));
        return output_elements[size_t(index)];
    }
    // run() and run_host(): the caller's inputs in, one graph launch, the outputs out, on
    // `stream` (host: from and to host memory, waiting for the result). No allocation: this is
    // every request's path.
    void copy_and_launch(std::span<const float* const> inputs, std::span<float* const> outputs,
                         bool host, cudaStream_t stream) {
        const char* call = host ? "run_host" : "run";
        require_float_io(info, call);
        require_counts(inputs.size(), outputs.size(), call);
        if (host) {
            for (size_t k = 0; k < inputs.size(); ++k)
                IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(engine.input_device(int(k)), inputs[k],
                                                   input_elements[k] * sizeof(float),
                                                   cudaMemcpyHostToDevice, stream),
                                   "copying the replay input");
            exec.launch(stream);
        } else {
            std::copy(inputs.begin(), inputs.end(), float_sources.begin());
            launch_from(float_sources.data(), float_bytes.data(), stream);
        }
        for (size_t k = 0; k < outputs.size(); ++k)
            IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(outputs[k], engine.output_device(int(k)),
                                               output_elements[k] * sizeof(float),
                                               host ? cudaMemcpyDeviceToHost
                                                    : cudaMemcpyDeviceToDevice,
                                               stream),
                               "copying the replay output");
        if (host)
            IOSTUNE_CUDA_CHECK(cudaStreamSynchronize(stream), "waiting for the replay to finish");
    }

    void launch_from(const void* const* inputs, const size_t* bytes, cudaStream_t stream) {
        const std::span<const void* const> sources(inputs, input_elements.size());
        const std::span<const size_t> sizes(bytes, input_elements.size());
        // Captured a second time (nothing runs: the first capture warmed up), not copied from
        // the first graph: cudaGraphClone refuses some cuDNN graphs (TF32 Inception V3 on the
        // H100: "operation not supported").
        if (!request && !copies_outside) {
            try {
                request.emplace(engine.record(schedule, false), graph_inputs, sources, sizes);
            } catch (const Error&) {
                copies_outside = true;  // a graph CUDA cannot extend: the copies go before it
                cudaGetLastError();     // not sticky; cleared so later checks do not see it
            }
        }
        if (request) return request->launch(sources, sizes, stream);
        for (size_t k = 0; k < sources.size(); ++k)
            IOSTUNE_CUDA_CHECK(cudaMemcpyAsync(graph_inputs[k], sources[k], sizes[k],
                                               cudaMemcpyDeviceToDevice, stream),
                               fmt::format("copying input {} into the graph's buffer", k));
        exec.launch(stream);
    }

    void require_counts(size_t inputs, size_t outputs, const char* call) const {
        if (inputs != input_elements.size() || outputs != output_elements.size())
            throw Error(fmt::format(
                "Replayer::{} got {} input(s) and {} output(s); '{}' takes {} and returns {}{}",
                call, inputs, outputs, info.model, input_elements.size(), output_elements.size(),
                info.members.empty() ? ""
                                     : " (a model set: every output of every model, model after "
                                       "model; one input per model unless shared_input)"));
    }
};

namespace {

ReplayTarget resolve_from_store(const std::vector<std::string>& models,
                                const ReplayOptions& options) {
    const std::string model = models_label(models);
    const TensorLayout fallback_layout = requested_layout(options);  // checks both options' names
    // Store first, then model, then key: each failure is reported before the GPU is touched.
    const db::ScheduleStore store =
        db::ScheduleStore::open(options.db_path, db::OpenMode::MustExist);
    Graph graph = load_models(models, options.batch, options.shared_input);
    std::string model_args;
    for (const std::string& m : models) {
        if (!model_args.empty()) model_args += ' ';
        model_args += "--model ";
        model_args += m;
    }
    if (options.shared_input) model_args += " --shared-input";
    const ScheduleQuery query{graph.name(), fingerprint(graph), options.batch, options.precision,
                              model_args};

    std::optional<DeviceInfo> device_info;
    auto this_device = [&] {
        if (!device_info) {
            if (const std::string why = gpu_unavailable_reason(); !why.empty())
                throw Error(
                    fmt::format("replaying '{}' needs an NVIDIA GPU, and this machine has "
                                "none usable ({}); run it on the GPU machine",
                                model, why),
                    ErrorKind::NoGpu);
            device_info = query_device_info(options.device);
        }
        return to_device_record(*device_info);
    };
    ScheduleChoice choice =
        options.schedule_id != 0
            ? select_schedule_by_id(store, options.schedule_id, query, this_device,
                                    options.fallback_sequential)
            : select_schedule(store, query, this_device, options.fallback_sequential);
    this_device();
    const Schedule schedule = schedule_to_run(graph, choice, options.fallback_sequential);

    ReplayInfo info;
    describe_graph(graph, info);
    info.fingerprint = query.fingerprint;
    info.device = describe_device(to_device_record(*device_info));
    info.batch = options.batch;
    info.precision = options.precision;
    info.stages = int(schedule.flat_stages().size());
    info.form = to_string(schedule.form);
    info.prioritised_ops = prioritised_ops(schedule);
    EngineOptions engine_options = engine_options_for(
        options, choice.schedule ? tensor_layout_from_string(choice.schedule->layout) : fallback_layout);
    if (choice.schedule) {
        engine_options.conv_choices = conv_choices_from_json(
            choice.schedule->conv_choices,
            fmt::format("schedule #{} in '{}'", choice.schedule->id, store.path()));
        info.schedule_id = choice.schedule->id;
        info.strategy = choice.schedule->strategy;
        info.stored_measured_ms = choice.schedule->measured_ms;
        info.stored_sequential_ms = choice.schedule->sequential_ms;
    } else {
        info.strategy = "sequential";
        info.sequential_fallback = true;
        info.fallback_reason = choice.fallback_reason;
    }

    return {std::move(graph), schedule, std::move(info), std::move(engine_options)};
}

ReplayTarget resolve_without_store(const std::vector<std::string>& models,
                                   const ReplayOptions& options) {
    const std::string model = models_label(models);
    if (options.schedule_source != "sequential" && options.schedule_source != "given")
        throw Error(fmt::format("unknown schedule source '{}'; use db, sequential or given (a "
                                "schedule in ReplayOptions::schedule_json)",
                                options.schedule_source));
    const EngineOptions engine_options = engine_options_for(options, requested_layout(options));
    Graph graph = load_models(models, options.batch, options.shared_input);
    const Schedule schedule = options.schedule_source == "sequential"
                                  ? sequential_schedule(graph)
                                  : given_schedule(options, graph.name());
    try {
        validate(graph, schedule);
    } catch (const Error& e) {
        if (options.schedule_source != "given") throw;
        throw Error(fmt::format("the given schedule '{}' does not fit '{}' at batch {}: {}",
                                options.schedule_name, graph.name(), options.batch, e.what()),
                    ErrorKind::BadInput);
    }
    if (const std::string why = gpu_unavailable_reason(); !why.empty())
        throw Error(fmt::format("replaying '{}' needs an NVIDIA GPU, and this machine has none "
                                "usable ({}); run it on the GPU machine",
                                model, why),
                    ErrorKind::NoGpu);
    ReplayInfo info;
    describe_graph(graph, info);
    info.fingerprint = fingerprint(graph);
    info.device = describe_device(to_device_record(query_device_info(options.device)));
    info.batch = options.batch;
    info.precision = options.precision;
    info.stages = int(schedule.flat_stages().size());
    info.form = to_string(schedule.form);
    info.prioritised_ops = prioritised_ops(schedule);
    info.strategy = "baseline:" + baseline_name(options);
    return {std::move(graph), schedule, std::move(info), engine_options};
}

// The arena that holds every target's memory plan (the largest MemoryPlan::shared_bytes).
size_t shared_arena_bytes(const std::vector<ReplayTarget>& targets) {
    int64_t bytes = 0;
    for (const ReplayTarget& t : targets)
        bytes = std::max(bytes,
                         Engine::plan_memory_for(t.graph, t.schedule, t.engine_options).shared_bytes);
    return size_t(bytes);
}

}  // namespace

ReplayTarget resolve_replay(const std::vector<std::string>& models, const ReplayOptions& options) {
    if (options.schedule_id != 0 && options.schedule_source != "db")
        throw Error(fmt::format("a schedule id (#{}) picks a stored schedule; it cannot be combined "
                                "with the baseline '{}': drop one of the two",
                                options.schedule_id, baseline_name(options)));
    ReplayTarget target = options.schedule_source == "db"
                              ? resolve_from_store(models, options)
                              : resolve_without_store(models, options);
    target.info.placements = options.placements;
    return target;
}

Replayer::Replayer(const std::string& model, const ReplayOptions& options)
    : Replayer(std::vector<std::string>{model}, options) {}

Replayer::Replayer(const std::vector<std::string>& models, const ReplayOptions& options)
    : impl_(std::make_unique<Impl>(resolve_replay(models, options))) {}

Replayer::Replayer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::vector<Replayer> Replayer::sharing_memory(std::vector<ReplayTarget> targets) {
    // One arena for all: nothing in it is kept between launches, and the sizes' graphs never
    // run at the same time. Not with reuse off, whose point is that every activation keeps its
    // bytes (read after the launch).
    bool reuse = targets.size() > 1;
    for (const ReplayTarget& t : targets) reuse = reuse && t.engine_options.reuse_memory;
    if (reuse) {
        const auto arena = std::make_shared<DeviceArena>(
            shared_arena_bytes(targets), targets.front().engine_options.arena_offset);
        for (ReplayTarget& t : targets) t.engine_options.arena = arena;
    }
    // The first engine of each layout uploads the weights; the others use them (the graphs are
    // one model at several batch sizes: the same weights, in one precision).
    std::map<TensorLayout, std::shared_ptr<const EngineWeights>> uploaded;
    std::vector<Replayer> replayers;
    for (ReplayTarget& t : targets) {
        const TensorLayout layout = Engine::memory_plan_options(t.engine_options).layout;
        if (const auto w = uploaded.find(layout); w != uploaded.end())
            t.engine_options.weights = w->second;
        replayers.push_back(Replayer(std::make_unique<Impl>(std::move(t))));
        uploaded.emplace(layout, replayers.back().impl_->engine.weights());
    }
    return replayers;
}

Replayer::~Replayer() = default;
Replayer::Replayer(Replayer&&) noexcept = default;
Replayer& Replayer::operator=(Replayer&&) noexcept = default;

const ReplayInfo& Replayer::info() const { return impl_->info; }
std::string Replayer::conv_choices_json() const {
    return conv_choices_to_json(impl_->engine.conv_choices()).dump();
}
int Replayer::input_count() const { return int(impl_->input_elements.size()); }
int Replayer::output_count() const { return int(impl_->output_elements.size()); }
int Replayer::output_index(int model, int output) const {
    return iostune::output_index(impl_->engine.graph(), model, output);
}
size_t Replayer::input_elements(int index) const { return impl_->input_size(index); }
size_t Replayer::output_elements(int index) const { return impl_->output_size(index); }

void Replayer::launch(cudaStream_t stream) { impl_->exec.launch(stream); }
void Replayer::launch_from(const void* const* inputs, const std::size_t* bytes,
                           cudaStream_t stream) {
    impl_->launch_from(inputs, bytes, stream);
}

namespace {

// "output 0 ('fc'): element 17 is 0.1234 instead of 0.1235", or "" when the bits agree.
std::string first_difference(const Graph& graph, int k, const HostTensor& got,
                             const HostTensor& want) {
    for (size_t i = 0; i < want.data.size(); ++i)
        if (std::memcmp(&got.data[i], &want.data[i], sizeof(float)) != 0)
            return fmt::format("{}: element {} is {} instead of {}", describe_output(graph, k), i,
                               got.data[i], want.data[i]);
    return "";
}

}  // namespace

Replayer::PerturbationCheck Replayer::perturbation_check(int rounds, std::uint64_t seed) {
    Impl& im = *impl_;
    if (rounds < 1) throw Error(fmt::format("--perturb needs at least 1 round (got {})", rounds));
    im.engine.set_random_inputs(11);
    im.engine.refill_arena(seed);
    im.exec.launch(im.engine.origin_stream());
    const std::vector<HostTensor> reference = im.engine.read_outputs();
    const StreamProgram program(im.engine.graph(), im.schedule);
    PerturbationCheck check;
    for (int r = 0; r < rounds; ++r) {
        Perturbation p;
        p.seed = seed;
        p.round = r;
        std::string described;
        perturbation_delays(program, p, &described);
        const CudaGraphExec perturbed = im.engine.capture_perturbed(im.schedule, p);
        im.engine.refill_arena(seed + 1 + uint64_t(r));  // a stale read now reads other values
        perturbed.launch(im.engine.origin_stream());
        const std::vector<HostTensor> outputs = im.engine.read_outputs();
        for (size_t k = 0; k < outputs.size(); ++k) {
            const std::string diff =
                first_difference(im.engine.graph(), int(k), outputs[k], reference[k]);
            if (diff.empty()) continue;
            check.mismatches.push_back(described + ": " + diff);
            break;  // one line per round: its first differing output
        }
        ++check.rounds;
    }
    return check;
}
float* Replayer::input_buffer(int index) { return impl_->engine.input_device(index); }
const float* Replayer::output_buffer(int index) const {
    return impl_->engine.output_device(index);
}
void* Replayer::native_input_buffer(int index) { return impl_->engine.native_input(index).data; }
const void* Replayer::native_output_buffer(int index) const {
    return impl_->engine.native_output(index).data;
}

void Replayer::run(const float* input, float* output, cudaStream_t stream) {
    const float* inputs[] = {input};
    float* outputs[] = {output};
    impl_->copy_and_launch(inputs, outputs, false, stream);
}

void Replayer::run_host(const float* input, float* output, cudaStream_t stream) {
    const float* inputs[] = {input};
    float* outputs[] = {output};
    impl_->copy_and_launch(inputs, outputs, true, stream);
}

void Replayer::run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs,
                   cudaStream_t stream) {
    impl_->copy_and_launch(inputs, outputs, false, stream);
}

void Replayer::run_host(const std::vector<const float*>& inputs,
                        const std::vector<float*>& outputs, cudaStream_t stream) {
    impl_->copy_and_launch(inputs, outputs, true, stream);
}

ReplayTiming Replayer::benchmark(int iterations, cudaStream_t stream, int warmup) {
    if (iterations <= 0)
        throw Error(fmt::format("benchmark iterations must be positive, got {}", iterations));
    MeasureOptions measure;
    measure.warmup = warmup;
    measure.repeats = iterations;
    measure.number = 1;
    measure.min_warmup_ms = 300;  // as the search's end-to-end measurement, so the two compare
    Impl& im = *impl_;
    if (im.info.placements <= 1)
        return to_replay_timing(measure_graph(im.exec, stream, measure), iterations,
                                im.info.batch);
    // At each placement its share of the iterations, on a graph captured there; the samples
    // pooled. The engine ends where it began, where `exec` (and a request graph) point.
    const size_t home = im.engine.arena_offset();
    const std::vector<size_t> offsets = arena_placements(im.info.placements);
    const int places = int(offsets.size());
    measure.repeats = (iterations + places - 1) / places;
    std::vector<double> samples, enqueue, medians;
    for (const size_t offset : offsets) {
        im.engine.place_arena(home + offset);
        const CudaGraphExec exec = im.engine.capture(im.schedule);
        LatencyStats here = measure_graph(exec, stream, measure);
        medians.push_back(here.median_ms);
        samples.insert(samples.end(), here.samples_ms.begin(), here.samples_ms.end());
        enqueue.insert(enqueue.end(), here.enqueue_ms.begin(), here.enqueue_ms.end());
    }
    im.engine.place_arena(home);
    ReplayTiming timing = to_replay_timing(summarize(std::move(samples), std::move(enqueue), 1),
                                           measure.repeats * places, im.info.batch);
    timing.placement_median_ms = std::move(medians);
    return timing;
}

}  // namespace iostune
