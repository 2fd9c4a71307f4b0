// `iostune search`: the tuning job (tuning/tuning_job.h) on one model or a model set (--model
// given several times, model_set.h): cost model, IOS search,
// validation, end-to-end measurement on a GPU, and a row in the schedule store; then a summary
// (table or JSON). Simulated latencies are always labelled as estimates.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/positive_number.h"
#include "cli/precision_options.h"
#include "db/schedule_store.h"
#include "tuning/tuning_job.h"
#include "tuning/tuning_summary_json.h"
#include "search/device_profile.h"
#include "search/search_stats.h"
#include "src/error.h"

namespace iostune::cli {

namespace {

struct SearchCommandOptions {
    ModelSetChoice models;
    int batch = 1;
    std::string strategy = "ios-both";
    int r = 3;
    int s = 8;
    bool no_prune = false;
    bool reference_endings = false;
    std::string cost = "auto";
    std::string db = db::kDefaultDatabasePath;
    std::string device = "h100";
    std::string precision = "tf32";
    std::string layout = "auto";
    std::string format = "table";
    std::string schedule_out;
    std::vector<std::string> contenders = TuningOptions{}.contenders;
    std::int64_t set_part_states = SearchOptions{}.max_set_part_states;
};

std::string ms(const std::optional<double>& value) {
    return value ? fmt::format("{:.4f} ms", *value) : std::string("-");
}

void print_summary_table(const TuningSummary& t) {
    const std::string pruning = t.r > 0 ? fmt::format("r={} s={}", t.r, t.s) : std::string("none");
    fmt::print("model      {} (batch {}, {}, fingerprint {})\n", t.model, t.batch, t.precision,
               t.fingerprint);
    if (!t.set_inputs.empty())
        fmt::print("set        {} models, {} input{}, searched as one graph\n", t.set_members,
                   t.set_inputs, t.set_inputs == "shared" ? "" : "s");
    fmt::print("device     {}\n", t.device);
    std::string layouts;
    for (const ContestEntry& e : t.layout_ms)
        layouts += fmt::format("{}{} {:.4f} ms", layouts.empty() ? "" : ", ", e.strategy, e.median_ms);
    fmt::print("layout     {} activations{}\n", t.layout,
               layouts.empty() ? std::string(" (given, or the precision's default)")
                               : fmt::format(" (the faster sequential schedule: {})", layouts));
    fmt::print("search     {}, pruning {}, cost model {}{}\n", t.strategy, pruning, t.cost_model,
               t.simulated ? " (ESTIMATES, not measurements)" : "");
    fmt::print("           {:.2f} s, {} stages costed, {} found in the store\n", t.search_seconds,
               t.stages_costed, t.cache_hits);
    fmt::print("schedule   {} stages for {} ops\n", t.stages, t.sequential_stages);
    if (t.simulated) {
        fmt::print(
            "latency    {:.4f} ms predicted vs {:.4f} ms sequential, estimated speedup "
            "{:.2f}x (simulated)\n",
            t.predicted_ms, t.sequential_predicted_ms, t.sequential_predicted_ms / t.predicted_ms);
    } else {
        fmt::print(
            "latency    {} measured end to end vs {} sequential (speedup {:.2f}x); "
            "predicted {:.4f} ms ({:+.1f}% vs measured)\n",
            ms(t.measured_ms), ms(t.sequential_ms), *t.sequential_ms / *t.measured_ms,
            t.predicted_ms, 100.0 * (t.predicted_ms / *t.measured_ms - 1.0));
        fmt::print(
            "check      every output equals the sequential schedule's (max |diff| {:.3g}, "
            "tolerance {:.3g})\n",
            *t.max_abs_diff, *t.tolerance);
        std::string timed;
        for (const ContestEntry& e : t.baseline_ms)
            timed += fmt::format("{}{} {:.4f} ms", timed.empty() ? "" : ", ", e.strategy,
                                 e.median_ms);
        fmt::print("baselines  {} (end to end, same engine)\n", timed);
        if (t.measured_cv && *t.measured_cv > 0.05)
            fmt::print("warning    the end-to-end timing is noisy (CV {:.1f}%); is the GPU idle?\n",
                       100.0 * *t.measured_cv);
    }
    if (t.best_schedule_id != t.schedule_id)
        fmt::print(
            "stored     schedule #{}; it measured SLOWER than {} on this device, so the {} "
            "schedule is stored as the best (#{}) and replay will use it\n",
            t.schedule_id, t.kept_strategy, t.kept_strategy, t.best_schedule_id);
    else
        fmt::print(
            "stored     schedule #{} in {}{}\n", t.schedule_id, t.db_path,
            t.simulated ? " (estimate: `iostune replay` needs a schedule measured on a GPU)" : "");
    fmt::print("total      {:.2f} s\n\n{}", t.total_seconds, format_stats_table(t.search_stats));
}

void run_search(const SearchCommandOptions& o) {
    const auto strategy = search_strategy_from_string(o.strategy);
    if (!strategy)
        throw Error(fmt::format("unknown strategy '{}'; use ios-both, ios-parallel or ios-merge",
                                o.strategy));
    TuningOptions options;
    options.cost = cost_choice_from_string(o.cost);
    options.search.strategy = *strategy;
    options.search.prune = !o.no_prune;
    options.search.max_group_ops = o.r;
    options.search.max_groups = o.s;
    options.search.reference_endings = o.reference_endings;
    options.search.max_set_part_states = o.set_part_states;
    options.search.progress = o.format == "table";
    options.db_path = o.db;
    options.precision = o.precision;
    options.layout = layout_choice(o.layout);
    options.sim_device = o.device;
    options.contenders = o.contenders;
    // The model is loaded before the job opens the store, so an unknown one leaves no file behind.
    const Graph graph = load_models(o.models.specs, o.batch, o.models.shared_input);
    const TuningSummary summary = run_tuning_job(
        graph, options, [](const std::string& line) { fmt::print(stderr, "{}\n", line); });

    if (!o.schedule_out.empty()) {
        std::ofstream out(o.schedule_out);
        out << schedule_to_json(summary.schedule).dump(2) << "\n";
        if (!out)
            throw Error(
                fmt::format("cannot write the schedule to '{}'; check the directory exists "
                            "and is writable (the schedule is stored as #{} in {})",
                            o.schedule_out, summary.schedule_id, o.db));
    }
    if (o.format == "json") {
        fmt::print("{}\n", tuning_summary_json(summary).dump(2));
        return;
    }
    print_summary_table(summary);
}

}  // namespace

void add_search_command(CLI::App& app) {
    auto o = std::make_shared<SearchCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "search", "Tune a model: IOS search, validate, measure and store the schedule");
    add_model_set_options(cmd, o->models);
    cmd->add_option("-b,--batch", o->batch, "batch size")
        ->check(positive_whole_number())
        ->capture_default_str();
    cmd->add_option("--strategy", o->strategy, "stage family: ios-both, ios-parallel or ios-merge")
        ->check(CLI::IsMember({"ios-both", "ios-parallel", "ios-merge"}))
        ->capture_default_str();
    auto* r = cmd->add_option("--r", o->r, "pruning: at most r ops per group")
                  ->check(positive_whole_number())
                  ->capture_default_str();
    auto* s = cmd->add_option("--s", o->s, "pruning: at most s groups per stage")
                  ->check(positive_whole_number())
                  ->capture_default_str();
    cmd->add_flag("--no-prune", o->no_prune, "search every schedule (no r/s limits)")
        ->excludes(r, s);
    cmd->add_flag(
        "--reference-endings", o->reference_endings,
        "only the published IOS implementation's endings (one op plus its descendants per "
        "group), for comparison");
    cmd->add_option("--cost", o->cost,
                    "cost model: measured (this GPU), sim (analytic estimates) or auto (measured "
                    "if there is a GPU, otherwise sim with a notice)")
        ->check(CLI::IsMember({"auto", "measured", "sim"}))
        ->capture_default_str();
    cmd->add_option("--db", o->db, "schedule database (created if missing)")->capture_default_str();
    cmd->add_option("--device", o->device, "device profile of the sim cost model")
        ->check(CLI::IsMember(device_profile_names()))
        ->capture_default_str();
    add_precision_option(cmd, o->precision, "precision of the engine the schedule is tuned for");
    add_layout_option(cmd, o->layout,
                      "activation layout: nchw, nhwc, or auto (on a GPU: time the sequential "
                      "schedule in both and search in the faster; simulated: nchw for strict fp32, "
                      "nhwc otherwise)");
    cmd->add_option("--format", o->format, "output: table or json")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
    cmd->add_option("--contenders", o->contenders,
                    "baselines timed end to end beside the searched schedule (and sequential, "
                    "always); the fastest is stored as the best: comma-separated greedy, nimble, "
                    "opara, or none")
        ->delimiter(',')
        ->check(CLI::IsMember({"greedy", "nimble", "opara", "sequential", "none"}))
        ->capture_default_str();
    cmd->add_option("--set-part-states", o->set_part_states,
                    "model sets: the DP's largest part across models, in states; a part above it "
                    "is halved per model (larger: a deeper search, many more stages to measure)")
        ->check(CLI::Range(std::int64_t(2), std::int64_t(1) << 20))
        ->capture_default_str();
    cmd->add_option("--schedule-out", o->schedule_out,
                    "also write the schedule as JSON to this file");
    cmd->callback([o] { run_search(*o); });
}

}  // namespace iostune::cli
