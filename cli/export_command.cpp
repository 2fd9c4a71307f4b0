// `iostune export`: writes a model (zoo or file) in the JSON model format, optionally with a
// weights file.
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "src/model_json.h"
#include "src/operator_info.h"
#include "src/weights.h"

namespace iostune::cli {

namespace {

constexpr uint64_t kDefaultSeed = 1;

struct ExportOptions {
    std::string model;
    std::string output;
    std::string weights;
    std::optional<uint64_t> seed;
};

void run_export(const ExportOptions& options) {
    // Written as given: search and replay fuse it again when they load it.
    Graph graph = load_model_spec(options.model, 1, Fusion::None);
    // Keep weights a model file brought with it, unless a seed asks for fresh ones.
    const bool seeded = !options.weights.empty() &&
                        (options.seed || graph.weights_state() == WeightsState::Absent);
    if (seeded) init_random_weights(graph, options.seed.value_or(kDefaultSeed));
    save_model(graph, options.output, options.weights);
    fmt::print("wrote {} ({} ops, fingerprint {})\n", options.output, graph.size(), fingerprint(graph));
    if (!options.weights.empty()) {
        const GraphTotals t = totals(graph);
        fmt::print("wrote {} ({} float32 parameters, {})\n", options.weights, t.params,
                   seeded ? fmt::format("seeded random, seed {}", options.seed.value_or(kDefaultSeed))
                          : std::string("from the input model"));
    }
}

}  // namespace

void add_export_command(CLI::App& app) {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "export", "Write a model in the iostune JSON model format (docs/model-format.md)");
    add_model_option(cmd, options->model);
    cmd->add_option("-o,--output", options->output, "model file to write (.json)")->required();
    CLI::Option* weights = cmd->add_option(
        "-w,--weights", options->weights,
        "also write the parameters to this raw float32 file (seeded random for a zoo model)");
    cmd->add_option("-s,--seed", options->seed,
                    fmt::format("seed for random weights (default {})", kDefaultSeed))
        ->needs(weights);
    cmd->callback([options] { run_export(*options); });
}

}  // namespace iostune::cli
