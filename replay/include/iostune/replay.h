// iostune replay: run a model with the schedule `iostune search` stored for it, as one CUDA Graph.
//
// The only header a production program needs (find_package(iostune), link iostune::replay):
//
//   iostune::ReplayOptions options;
//   options.db_path = "iostune.db";
//   options.batch = 1;
//   iostune::Replayer replayer("inception_v3", options);   // or "model.json", "model.onnx"
//   replayer.run(d_input, d_output, stream);               // device buffers, async on `stream`
//
// Everything is resolved when the Replayer is built: the schedule is looked up for (model
// fingerprint, this GPU, batch, precision), checked against the graph, the engine plans its
// memory and algorithms in the schedule's precision and layout, warms up and captures one CUDA
// Graph. A run is then one graph launch (which copies the input in itself: launch_from) and
// the output copy. Input and output are float NCHW whatever the precision (the conversion to
// fp16/bf16 channels-last and back is inside the graph), unless ReplayOptions::native_io hands
// the caller the engine's own buffers. A schedule searched for another graph, another GPU or
// another cuDNN major version is refused with a message saying what differs, unless
// `fallback_sequential` asks for the sequential schedule instead.
//
// A model set (several models searched as one graph by `iostune search --model A --model B`):
//
//   iostune::Replayer set({"resnet50", "resnet50_variant.onnx"}, options);  // options.shared_input
//   set.run({d_input}, {d_out_a, d_out_b}, stream);  // one input if shared, else one per model
//
// runs every model in one CUDA Graph and returns every output of every model: the models in the
// order given, each model's outputs in its own order (most models have one; a detector backbone
// with an FPN returns one per level, and so does a single such model: output_count() of them).
// output_index(model, output) says which output that is; ReplayInfo::output_names names them.
//
// One Replayer owns one set of activation buffers: runs on different streams must be ordered by
// the caller (or use one Replayer per stream).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iostune {

struct ReplayOptions {
    std::string db_path = "iostune.db";  // must exist; it is only read
    int batch = 1;
    // The precision the schedule was searched in: "fp32", "tf32", "fp16" or "bf16".
    std::string precision = "tf32";
    // Activation layout for a baseline or the sequential fallback: "auto" (NCHW for strict fp32,
    // NHWC otherwise), "nchw" or "nhwc". A stored schedule runs in the layout it was searched in.
    std::string layout = "auto";
    // Input and output in the engine's own storage (ReplayInfo::storage and ::layout, the model's
    // own channel count) instead of float NCHW, with no conversion in the captured graph: fill
    // native_input_buffer(), launch(), read native_output_buffer(). run() and run_host() then
    // refuse, since they take float NCHW data.
    bool native_io = false;
    // Instead of refusing (no schedule for the key, or one for another graph/GPU/cuDNN), run the
    // sequential schedule; info().fallback_reason says why.
    bool fallback_sequential = false;
    int device = 0;  // CUDA device ordinal
    // Where the schedule comes from: "db" (the best stored one, the default), "sequential" (one
    // op at a time, from the graph, without any database), or "given": the schedule in
    // `schedule_json` (iostune's schedule JSON for this model, e.g. a baseline the tuning tools
    // computed: `iostune replay --schedule-source greedy`), reported as "baseline:<schedule_name>".
    std::string schedule_source = "db";
    std::string schedule_json;
    std::string schedule_name = "given";
    // Replay exactly this stored schedule (a row id from `iostune report` or the search's
    // schedule_id) instead of the best one for (model, GPU, batch, precision); 0: the best one.
    // Only with schedule_source "db".
    std::int64_t schedule_id = 0;
    // A model set's models all read one input (its first model's); otherwise each its own.
    bool shared_input = false;
    // false: every activation keeps bytes of its own, as before the liveness-planned arena (a
    // diagnostic: what the arena saves, and that it costs no latency; `replay --no-memory-reuse`).
    bool reuse_memory = true;
    // Bytes left unused before the activation arena's region, a multiple of 256 (a diagnostic:
    // how much the latency depends on where the buffers land; `replay --arena-offset`).
    std::size_t arena_offset = 0;
    // benchmark() times the schedule at this many placements of that region (1 to 8, a little
    // over 1 MiB apart from arena_offset; the room is allocated) and pools the samples: where
    // the buffers land can move a latency by a few percent (docs/memory.md, "The engine on the
    // plan"), so a comparison of two schedules should not rest on one placement. 1: where it
    // lies. A single-size Replayer's option (not a BatchReplayer's).
    int placements = 1;
    // How convolutions the schedule does not pin (a baseline's, a schedule stored without
    // choices) are chosen: "alone" (the fastest on an idle GPU) or "corun" (of those within 25%
    // of it, the fastest two at once: docs/search-log.md).
    std::string conv_objective = "alone";
    // Convolution choices to pin for a schedule not from the database (a baseline, a given
    // schedule, the sequential fallback), as conv_choices_json() writes them; convolutions it
    // does not name are chosen by conv_objective. Empty: none. A stored schedule pins its own.
    std::string conv_choices_json;
};

// What was loaded, for logs and reports.
struct ReplayInfo {
    std::string model;        // graph name
    std::string fingerprint;  // structural fingerprint of the graph
    std::string device;       // this GPU, e.g. "NVIDIA H100 80GB HBM3 (cc 9.0, cuDNN 9.19.0)"
    int batch = 0;
    std::string precision;
    std::string layout;   // of the activations: "nchw" or "nhwc"
    std::string storage;  // element type of activations and weights: "float", "half", "bfloat16"
    bool native_io = false;
    std::int64_t schedule_id = 0;  // row in the store; 0 when running the sequential fallback
    std::string strategy;          // e.g. "ios-both"; "sequential" for the fallback
    bool sequential_fallback = false;
    std::string fallback_reason;  // why the stored schedule was not used (fallback only)
    std::optional<double> stored_measured_ms;    // what the search measured for this schedule
    std::optional<double> stored_sequential_ms;  // and for the sequential one, same run
    int stages = 0;
    std::string form;  // "staged" (every stage a barrier) or "dataflow" (launches wait for inputs)
    int prioritised_ops = 0;  // ops the schedule runs at a raised CUDA stream priority
    std::size_t graph_nodes = 0;        // nodes of the captured CUDA Graph
    // Planned convolutions (a SepConv has two), and how many of them run the algorithm stored
    // with the schedule (the rest chose theirs by measurement when the Replayer was built).
    int convolutions = 0;
    int pinned_convolutions = 0;
    std::array<int, 4> input_shape{};   // N, C, H, W (the first input's)
    std::array<int, 4> output_shape{};  // N, C, H, W (the first output's)
    // Every input and output: every output of every model (models in order, each model's
    // outputs in its own order; most models have one), and one input per model of a set unless
    // shared.
    std::vector<std::array<int, 4>> input_shapes, output_shapes;
    // Per output, in the same order: the name of the op computing it, and the model it belongs
    // to (its index in `members`; 0 for a single model).
    std::vector<std::string> output_names;
    std::vector<int> output_models;
    // Device memory the Replayer holds, in bytes: the weights (a merge stage's stacked ones
    // too), the activations (its memory plan's arena: activations, scratch, inputs and outputs,
    // shared by liveness), the cuDNN/cuBLAS workspaces, and all of it together (with what the
    // plan does not cover).
    std::size_t weight_bytes = 0, activation_bytes = 0, workspace_bytes = 0;
    std::size_t device_memory_bytes = 0;
    // Of the above, what this Replayer shares with the other tuned sizes of a BatchReplayer
    // (0 for a Replayer of its own): the weights another size's graph uploaded (in
    // weight_bytes), and the arena all the sizes use (in activation_bytes).
    std::size_t shared_weight_bytes = 0, shared_arena_bytes = 0;
    int placements = 1;  // of the arena, that benchmark() pools over (ReplayOptions::placements)
    std::vector<std::string> members;  // a model set's models, in order; empty for one model
    std::string set_inputs;            // a model set's "shared" or "separate"; "" for one model
};

// What a Replayer runs, resolved before it takes GPU memory (internal: replay/replay_target.h).
struct ReplayTarget;

// Latency of repeated graph launches, as trtexec reports it.
struct ReplayTiming {
    int iterations = 0;
    std::vector<double> latency_ms;  // GPU time of each launch (CUDA events)
    std::vector<double> enqueue_ms;  // host time to enqueue each launch
    double min_ms = 0, mean_ms = 0, median_ms = 0, p90_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
    double stddev_ms = 0;
    double enqueue_median_ms = 0;
    double total_gpu_ms = 0;      // sum of latency_ms
    double throughput_per_s = 0;  // inferences (batch items) per second at the median latency
    // With ReplayOptions::placements > 1: the median at each placement, in order (the fields
    // above are over all of them pooled); empty otherwise.
    std::vector<double> placement_median_ms;
    double cv() const { return mean_ms > 0 ? stddev_ms / mean_ms : 0.0; }
};

class Replayer {
public:
    // `model`: a zoo model name or a model file: .json (with its weights file if it names one)
    // or .onnx (imported on load, its initializers as the weights).
    // Throws iostune::Error (a std::runtime_error) with a message saying what to do.
    Replayer(const std::string& model, const ReplayOptions& options = {});
    // A model set: several models (same forms as above), searched together as one graph.
    Replayer(const std::vector<std::string>& models, const ReplayOptions& options = {});
    ~Replayer();
    Replayer(Replayer&&) noexcept;
    Replayer& operator=(Replayer&&) noexcept;
    Replayer(const Replayer&) = delete;
    Replayer& operator=(const Replayer&) = delete;

    const ReplayInfo& info() const;
    // The convolution algorithms this replay runs (per convolution signature: cuDNN algorithm,
    // math type, fused or not) as JSON, in the form the schedule store keeps: an engine that
    // checks this replay pins them to run the same kernels without timing the candidates again.
    std::string conv_choices_json() const;

    // The concurrency check (`iostune replay --validate --perturb N`): runs the schedule once as
    // captured, then `rounds` more times as graphs with seeded spin kernels delaying chosen
    // launches (one lane in even rounds, about half of the lanes in odd ones), and compares
    // every output bit for bit with the first run. A schedule with complete dependencies agrees
    // every time; each disagreement is named (round, lanes delayed, output, first differing
    // value). Not part of a production run: it captures extra graphs. Needs float I/O or not.
    struct PerturbationCheck {
        int rounds = 0;
        std::vector<std::string> mismatches;  // one per round that differed; empty: none did
    };
    PerturbationCheck perturbation_check(int rounds, std::uint64_t seed = 1);
    int input_count() const;   // 1, or a model set's number of separate inputs
    // Every output of every model: 1 for most models, one per level for a detector backbone
    // with an FPN, a model set's members' outputs one model after another.
    int output_count() const;
    // The index (for output_elements(), output_buffer(), run()) of output `output` of model
    // `model` (0 for a single model); throws iostune::Error when there is none.
    int output_index(int model, int output = 0) const;
    std::size_t input_elements(int index = 0) const;   // N*C*H*W of input `index`
    std::size_t output_elements(int index = 0) const;  // N*C*H*W of output `index`

    // Device buffers: copies `input` in, launches the graph, copies the output to `output`, all
    // enqueued on `stream` (returns without waiting). One input and one output only (a model
    // with several outputs takes the vector form below).
    void run(const float* input, float* output, cudaStream_t stream);
    // Host data: as run(), and returns once `output` holds the result.
    void run_host(const float* input, float* output, cudaStream_t stream);
    // Any number of inputs and outputs (a model set, a model with several outputs):
    // input_count() inputs, output_count() outputs in output order, device buffers (run) or
    // host buffers (run_host, which waits).
    void run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs,
             cudaStream_t stream);
    void run_host(const std::vector<const float*>& inputs, const std::vector<float*>& outputs,
                  cudaStream_t stream);
    // Only the graph launch: the input is read from input_buffer() (native_input_buffer() with
    // native_io), the result left in output_buffer() (native_output_buffer()), for callers that
    // fill and read the engine's buffers themselves.
    void launch(cudaStream_t stream);
    // launch() with the inputs copied in by the graph itself: bytes[k] (> 0) from device pointer
    // inputs[k] into input k's buffer (input_buffer(), or native_input_buffer() with
    // native_io), input_count() of each. One launch, no copy enqueued before it: what run() and
    // BatchReplayer do. The first call builds a second instantiation of the graph.
    void launch_from(const void* const* inputs, const std::size_t* bytes, cudaStream_t stream);
    float* input_buffer(int index = 0);               // float NCHW
    const float* output_buffer(int index = 0) const;  // float NCHW
    // The engine's own input and output: ReplayInfo::storage elements in ReplayInfo::layout
    // order, input_elements() / output_elements() of them (packed).
    void* native_input_buffer(int index = 0);
    const void* native_output_buffer(int index = 0) const;

    // `iterations` timed launches on `stream` after `warmup` untimed ones.
    ReplayTiming benchmark(int iterations, cudaStream_t stream, int warmup = 20);

private:
    struct Impl;
    explicit Replayer(std::unique_ptr<Impl> impl);
    // A BatchReplayer's tuned sizes, which never run at the same time: one arena sized for the
    // largest plan, one copy of the weights per layout (replay/replay_target.h).
    friend class BatchReplayer;
    static std::vector<Replayer> sharing_memory(std::vector<ReplayTarget> targets);

    std::unique_ptr<Impl> impl_;
};

}  // namespace iostune
