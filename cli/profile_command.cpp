// `iostune profile`: per-operator CUPTI profile of a model on this machine's GPU.
#include <fmt/format.h>

#include <fstream>
#include <string>

#include "cli/commands.h"
#include "cli/gpu_required.h"
#include "cli/model_source.h"
#include "cli/positive_number.h"
#include "cli/precision_options.h"
#include "profiler/model_profile.h"
#include "profiler/profile_report.h"
#include "profiler/trace_export.h"
#include "src/error.h"

namespace iostune::cli {

namespace {

struct ProfileOptions {
    std::string model;
    int batch = 1;
    std::string precision = "tf32";
    std::string layout = "auto";
    int iterations = 5;
    int top = 25;
    std::string trace_path;
    std::string json_path;
};

void run_profile(const ProfileOptions& o) {
    require_gpu("iostune profile");
    Graph graph = load_model_spec(o.model, o.batch);
    EngineOptions engine_options;
    engine_options.precision = precision_from_string(o.precision);
    engine_options.layout = layout_choice(o.layout);
    Engine engine(std::move(graph), engine_options);
    iostune::ProfileOptions profile_options;
    profile_options.iterations = o.iterations;
    const ModelProfile profile = profile_model(engine, profile_options);
    fmt::print("{}", format_profile_table(profile, o.top));
    if (!o.trace_path.empty()) {
        write_chrome_trace(o.trace_path, profile.last_run, engine.graph());
        fmt::print("trace of the last run written to {} (open in ui.perfetto.dev)\n", o.trace_path);
    }
    if (!o.json_path.empty()) {
        std::ofstream out(o.json_path);
        if (!out) throw Error(fmt::format("cannot write '{}': check the folder exists", o.json_path));
        out << profile_to_json(profile).dump(2) << '\n';
        fmt::print("profile written to {}\n", o.json_path);
    }
}

}  // namespace

void add_profile_command(CLI::App& app) {
    auto options = std::make_shared<ProfileOptions>();
    CLI::App* cmd = app.add_subcommand(
        "profile", "Profile a model op by op on this GPU with CUPTI (per-operator table, trace)");
    add_model_option(cmd, options->model);
    cmd->add_option("--batch,-b", options->batch, "batch size")->check(positive_whole_number());
    add_precision_option(cmd, options->precision, "precision to profile in");
    add_layout_option(cmd, options->layout,
                      "activation layout: nchw, nhwc, or auto (nchw for strict fp32, nhwc otherwise)");
    cmd->add_option("--iterations", options->iterations, "measured runs after one warm-up")
        ->check(positive_whole_number());
    cmd->add_option("--top", options->top, "operators shown in the table")->check(positive_whole_number());
    cmd->add_option("--trace", options->trace_path, "write a Chrome/Perfetto trace (JSON) here");
    cmd->add_option("--json", options->json_path, "write the full profile as JSON here");
    cmd->callback([options] { run_profile(*options); });
}

}  // namespace iostune::cli
