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
// Graph. A run is then one graph launch plus the input/output copies. Input and output are float
// NCHW whatever the precision (the conversion to fp16/bf16 channels-last and back is inside the
// graph), unless ReplayOptions::native_io hands the caller the engine's own buffers. A schedule
// searched for another graph, another GPU or another cuDNN major version is refused with a
// message saying what differs, unless `fallback_sequential` asks for the sequential schedule
// instead.
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
    std::size_t graph_nodes = 0;        // nodes of the captured CUDA Graph
    // Planned convolutions (a SepConv has two), and how many of them run the algorithm stored
    // with the schedule (the rest chose theirs by measurement when the Replayer was built).
    int convolutions = 0;
    int pinned_convolutions = 0;
    std::array<int, 4> input_shape{};   // N, C, H, W
    std::array<int, 4> output_shape{};  // N, C, H, W
};

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
    double cv() const { return mean_ms > 0 ? stddev_ms / mean_ms : 0.0; }
};

class Replayer {
public:
    // `model`: a zoo model name or a model file: .json (with its weights file if it names one)
    // or .onnx (imported on load, its initializers as the weights).
    // Throws iostune::Error (a std::runtime_error) with a message saying what to do.
    Replayer(const std::string& model, const ReplayOptions& options = {});
    ~Replayer();
    Replayer(Replayer&&) noexcept;
    Replayer& operator=(Replayer&&) noexcept;
    Replayer(const Replayer&) = delete;
    Replayer& operator=(const Replayer&) = delete;

    const ReplayInfo& info() const;
    std::size_t input_elements() const;   // N*C*H*W of the model's input
    std::size_t output_elements() const;  // N*C*H*W of its output

    // Device buffers: copies `input` in, launches the graph, copies the output to `output`, all
    // enqueued on `stream` (returns without waiting).
    void run(const float* input, float* output, cudaStream_t stream);
    // Host data: as run(), and returns once `output` holds the result.
    void run_host(const float* input, float* output, cudaStream_t stream);
    // Only the graph launch: the input is read from input_buffer() (native_input_buffer() with
    // native_io), the result left in output_buffer() (native_output_buffer()), for callers that
    // fill and read the engine's buffers themselves.
    void launch(cudaStream_t stream);
    float* input_buffer();               // float NCHW
    const float* output_buffer() const;  // float NCHW
    // The engine's own input and output: ReplayInfo::storage elements in ReplayInfo::layout
    // order, input_elements() / output_elements() of them (packed).
    void* native_input_buffer();
    const void* native_output_buffer() const;

    // `iterations` timed launches on `stream` after `warmup` untimed ones.
    ReplayTiming benchmark(int iterations, cudaStream_t stream, int warmup = 20);

private:
    void init_without_store(const std::string& model, const ReplayOptions& options);

    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace iostune
