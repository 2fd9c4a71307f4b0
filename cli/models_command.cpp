// `iostune models`: the model zoo with the figures that matter for scheduling.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "src/error.h"
#include "src/model_summary.h"
#include "src/zoo/zoo.h"

namespace iostune::cli {

namespace {

struct ModelsOptions {
    std::string format = "table";
};

void print_table(const std::vector<ModelSummary>& models) {
    size_t name_width = 5;
    for (const auto& m : models) name_width = std::max(name_width, m.name.size());
    fmt::print("{:<{}}  {:>5}  {:>6}  {:>17}  {:>19}  {:>8}  {:>10}\n", "model", name_width, "ops",
               "blocks", "largest block ops", "largest block width", "GFLOPs", "params (M)");
    for (const auto& m : models)
        fmt::print("{:<{}}  {:>5}  {:>6}  {:>17}  {:>19}  {:>8.3f}  {:>10.2f}\n", m.name, name_width,
                   m.ops, m.blocks, m.largest_block_ops, m.largest_block_width, m.gflops,
                   double(m.params) / 1e6);
    fmt::print("GFLOPs at batch 1; a block's width is its largest set of ops that may run at once; "
               "the largest block is the widest (most ops on a tie).\n");
}

void print_json(const std::vector<ModelSummary>& models) {
    // ordered_json keeps the keys in the documented order, name first.
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& m : models)
        out.push_back({{"name", m.name},
                       {"ops", m.ops},
                       {"blocks", m.blocks},
                       {"largest_block_ops", m.largest_block_ops},
                       {"largest_block_width", m.largest_block_width},
                       {"gflops", m.gflops},
                       {"params", m.params}});
    fmt::print("{}\n", out.dump(2));
}

void run_models(const ModelsOptions& options) {
    std::vector<ModelSummary> models;
    std::vector<std::string> failures;
    // One model that fails to build must not hide the others: list what builds, then fail.
    for (const std::string& name : zoo_model_names()) {
        try {
            models.push_back(summarize(build_zoo_model(name, 1)));
        } catch (const Error& e) {
            failures.push_back(fmt::format("{}: {}", name, e.what()));
        }
    }
    if (options.format == "json") print_json(models);
    else print_table(models);
    if (!failures.empty())
        throw Error(fmt::format("{} zoo model(s) failed to build:\n  {}", failures.size(),
                                fmt::join(failures, "\n  ")));
}

}  // namespace

void add_models_command(CLI::App& app) {
    auto options = std::make_shared<ModelsOptions>();
    CLI::App* cmd = app.add_subcommand("models", "List the built-in model zoo");
    cmd->add_option("-f,--format", options->format, "output format")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
    cmd->callback([options] { run_models(*options); });
}

}  // namespace iostune::cli
