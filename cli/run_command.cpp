// `iostune run`: one inference of a model on a raw float32 NCHW input (as trtexec's
// --loadInputs reads it), on the CPU reference or the GPU engine, written as raw float32.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/gpu_required.h"
#include "cli/model_source.h"
#include "cli/positive_number.h"
#include "cli/precision_options.h"
#include "db/schedule_store.h"
#include "iostune/replay.h"
#include "src/engine/engine.h"
#include "src/error.h"
#include "src/host_memory.h"
#include "src/memory_needs.h"
#include "src/quoted.h"
#include "src/shape_limits.h"
#include "src/reference/reference.h"
#include "src/schedule.h"
#include "src/weights.h"

namespace iostune::cli {

namespace {

static_assert(std::endian::native == std::endian::little,
              "raw tensor files are little-endian float32, read and written as host memory");

constexpr uint64_t kInputSeed = 1;
constexpr uint64_t kWeightSeed = 1;  // the engine's default, so CPU and GPU runs agree

struct RunOptions {
    std::string model;
    int batch = 1;
    std::string input;
    std::string output;
    std::string backend = "cpu";
    std::string schedule = "sequential";
    std::string db = db::kDefaultDatabasePath;
    std::string precision = "fp32";
    std::string layout = "auto";
    std::optional<uint64_t> seed;
};

HostTensor read_input(const std::string& path, const Graph& graph) {
    const Shape shape = graph.input_shape();
    const uint64_t want = uint64_t(shape.elements()) * sizeof(float);
    std::error_code ec;
    const uint64_t have = std::filesystem::file_size(path, ec);
    if (ec) throw Error(fmt::format("cannot read input file '{}': {}", path, ec.message()));
    if (have != want)
        throw Error(
            fmt::format("input file '{}' holds {} bytes, but model {} at batch {} takes a "
                        "{} float32 NCHW tensor ({} bytes); check --batch and the image "
                        "size",
                        path, have, quoted_name(graph.name()), shape.n, shape_text(shape), want));
    HostTensor input(shape);
    std::ifstream file(path, std::ios::binary);
    file.read(reinterpret_cast<char*>(input.data.data()), std::streamsize(want));
    if (!file) throw Error(fmt::format("cannot read input file '{}'", path));
    return input;
}

// Every output of the graph, concatenated in its order (most models have one; a detector
// backbone with an FPN or a model set has several).
void write_outputs(const std::string& path, const std::vector<HostTensor>& outputs) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    for (const HostTensor& t : outputs)
        file.write(reinterpret_cast<const char*>(t.data.data()),
                   std::streamsize(t.data.size() * sizeof(float)));
    if (!file) throw Error(fmt::format("cannot write output file '{}'", path));
}

std::vector<HostTensor> run_gpu_sequential(const Graph& graph, const HostTensor& input,
                                           const RunOptions& o) {
    EngineOptions options;
    options.precision = precision_from_string(o.precision);
    options.layout = layout_choice(o.layout);
    options.weight_seed = kWeightSeed;
    Engine engine(graph, options);
    engine.set_input(input);
    const CudaGraphExec exec = engine.capture(sequential_schedule(engine.graph()));
    exec.launch(engine.origin_stream());
    return engine.read_outputs();
}

std::vector<HostTensor> run_gpu_best(const RunOptions& o, const Graph& graph,
                                     const HostTensor& input) {
    ReplayOptions options;
    options.db_path = o.db;
    options.batch = o.batch;
    options.precision = o.precision;
    Replayer replayer(o.model, options);
    const ReplayInfo& info = replayer.info();
    fmt::print("schedule: {} (id {}, {} stages) for {} on {}\n", info.strategy, info.schedule_id,
               info.stages, info.model, info.device);
    std::vector<HostTensor> outputs;
    std::vector<float*> buffers;
    for (int id : graph.outputs()) outputs.emplace_back(graph.op(id).output);
    for (HostTensor& t : outputs) buffers.push_back(t.data.data());
    replayer.run_host({input.data.data()}, buffers, nullptr);
    return outputs;
}

// Runs `allocate`; an allocation that fails although the memory check passed (another process
// took the memory meanwhile) says what it was for.
template <class F>
auto allocating(const std::string& what, F&& allocate) {
    try {
        return allocate();
    } catch (const std::bad_alloc&) {
        throw Error(fmt::format("out of host memory allocating {}", what));
    }
}

// The host memory the run takes, counted from the shapes before anything is allocated: the
// weights still to be seeded, the input and, on the CPU, every tensor the reference holds at
// once; on the GPU the outputs read back (the engine checks the device itself).
void check_host_memory(const Graph& graph, bool gpu) {
    const MemoryNeeds needs = reference_memory_needs(graph);
    int64_t bytes = needs.weights + needs.inputs;
    if (gpu)
        for (int id : graph.outputs())
            bytes += graph.op(id).output.elements() * int64_t(sizeof(float));
    else
        bytes += needs.activations;
    require_host_memory(bytes, fmt::format("the weights, input and tensors of model {} at batch "
                                           "{} on the {}",
                                           quoted_name(graph.name()), graph.batch(),
                                           gpu ? "GPU engine's host side" : "CPU reference"));
}

void run_inference(const RunOptions& o) {
    const bool gpu = o.backend == "gpu";
    if (!gpu && o.schedule != "sequential")
        throw Error(
            "the CPU backend runs the reference op by op; --schedule best needs "
            "--backend gpu");
    if (gpu) require_gpu("`iostune run --backend gpu`");
    Graph graph = load_model_spec(o.model, o.batch);
    check_host_memory(graph, gpu);
    if (graph.weights_state() == WeightsState::Absent)
        allocating("the model's seeded weights", [&] { init_random_weights(graph, kWeightSeed); });
    const HostTensor input = allocating("the input", [&] {
        return o.input.empty() ? random_input(graph.input_shape(), o.seed.value_or(kInputSeed))
                               : read_input(o.input, graph);
    });

    std::vector<HostTensor> outputs;
    if (!gpu)
        outputs = reference_run_outputs(graph, {input});
    else if (o.schedule == "sequential")
        outputs = run_gpu_sequential(graph, input, o);
    else
        outputs = run_gpu_best(o, graph, input);
    write_outputs(o.output, outputs);
    std::vector<std::string> shapes;
    for (const HostTensor& t : outputs) shapes.push_back(shape_text(t.shape));
    fmt::print("wrote {}: {} float32 NCHW{} ({}, {} schedule{}; input {})\n", o.output,
               fmt::join(shapes, " + "), outputs.size() > 1 ? ", the outputs one after another" : "",
               gpu ? "GPU engine" : "CPU reference", o.schedule,
               gpu ? fmt::format(", {} {}", o.precision, o.layout) : std::string(),
               o.input.empty() ? fmt::format("seeded random, seed {}", o.seed.value_or(kInputSeed))
                               : o.input);
}

}  // namespace

void add_run_command(CLI::App& app) {
    auto o = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand(
        "run", "Run one inference on a raw float32 NCHW input; write the raw float32 output");
    add_model_option(cmd, o->model);
    cmd->add_option("-b,--batch", o->batch, "batch size")->check(positive_whole_number());
    CLI::Option* input = cmd->add_option(
        "-i,--input", o->input,
        "raw little-endian float32 NCHW input (default: seeded random, uniform in [-1, 1))");
    cmd->add_option("-o,--output", o->output, "raw float32 output file to write")->required();
    cmd->add_option("--backend", o->backend, "cpu (the fp32 reference) or gpu (the engine)")
        ->check(CLI::IsMember({"cpu", "gpu"}));
    cmd->add_option("--schedule", o->schedule,
                    "sequential, or best: the schedule `iostune search` stored (gpu only)")
        ->check(CLI::IsMember({"sequential", "best"}));
    cmd->add_option("--db", o->db, "schedule database for --schedule best");
    add_precision_option(cmd, o->precision, "GPU precision (the output is float32 in each)");
    add_layout_option(cmd, o->layout,
                      "GPU activation layout for --schedule sequential: nchw, nhwc, or auto "
                      "(nchw for strict fp32, nhwc otherwise); --schedule best runs the stored one's");
    cmd->add_option("-s,--seed", o->seed,
                    fmt::format("seed of the random input (default {})", kInputSeed))
        ->excludes(input);
    cmd->callback([o] { run_inference(*o); });
}

}  // namespace iostune::cli
