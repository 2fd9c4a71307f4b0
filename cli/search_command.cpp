// `iostune search`: the tuning job (tuning/tuning_job.h) on one model or a model set (--model
// given several times, model_set.h): cost model, IOS search,
// validation, end-to-end measurement on a GPU, and a row in the schedule store; then a summary
// (table or JSON). Simulated latencies are always labelled as estimates.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/positive_number.h"
#include "cli/precision_options.h"
#include "db/schedule_store.h"
#include "replay/device_match.h"
#include "tuning/stored_key.h"
#include "tuning/tuning_job.h"
#include "tuning/tuning_summary_json.h"
#include "search/device_profile.h"
#include "search/search_stats.h"
#include "src/engine/arena_placements.h"
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
    double time_budget_s = TuningOptions{}.time_budget_s;
    double dp_share = TuningOptions{}.dp_share;
    int kernel_move_turn = TuningOptions{}.kernel_move_turn;
    int kernel_runners_up = TuningOptions{}.kernel_runners_up;
    double memory_limit = TuningOptions{}.memory_limit;
    int placements = TuningOptions{}.placements;
    std::string stage_timing = "warm";
    std::string conv_objective = "auto";
    std::uint64_t seed = TuningOptions{}.seed;
    bool skip_stored = false;
};

std::string ms(const std::optional<double>& value) {
    return value ? fmt::format("{:.4f} ms", *value) : std::string("-");
}

// "layout 18.6, DP 17.2, end to end 20.5, rest 1.9": where the total went, the phases of a
// second or more in the order they ran (the stats' phase_seconds), the others together.
std::string phase_breakdown(const nlohmann::json& phases, double total_s) {
    static const std::pair<const char*, const char*> kOrder[] = {
        {"start", "start"},     {"layout", "layout"},         {"calibration", "calibration"},
        {"search", "DP"},       {"handover", "handover"},     {"refine", "refinement"},
        {"end_to_end", "end to end"}, {"wrap_up", "wrap-up"}, {"store", "store"}};
    std::string text;
    double shown_s = 0;
    for (const auto& [key, label] : kOrder) {
        if (!phases.contains(key) || phases[key].get<double>() < 1.0) continue;
        shown_s += phases[key].get<double>();
        text += fmt::format("{}{} {:.1f}", text.empty() ? "" : ", ", label,
                            phases[key].get<double>());
    }
    return text.empty() ? text : fmt::format(" ({}, rest {:.1f})", text, total_s - shown_s);
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
    if (!t.conv_objective.empty())
        fmt::print("kernels    convolutions chosen {}\n",
                   t.conv_objective == "corun"
                       ? fmt::format("to co-run (of those within {:.0f}% of the fastest, the "
                                     "fastest two at once)",
                                     100 * kCoRunSlack)
                   : t.conv_objective == "mixed"
                       ? std::string("for one objective, then switched op by op to another "
                                     "timed kernel where the schedule ran faster (kernel moves)")
                       : std::string("to run alone (the fastest on an idle GPU)"));
    fmt::print("search     {}, pruning {}, cost model {}{}\n", t.strategy, pruning, t.cost_model,
               t.simulated ? " (ESTIMATES, not measurements)" : "");
    fmt::print("           {:.2f} s, {} stages costed, {} found in the store\n", t.search_seconds,
               t.stages_costed, t.cache_hits);
    fmt::print("schedule   {} stages for {} ops, {}: refined from {} ({} change{} kept)\n",
               t.stages, t.sequential_stages, to_string(t.schedule.form), t.refined_from,
               t.refine_changes, t.refine_changes == 1 ? "" : "s");
    if (t.simulated) {
        fmt::print(
            "latency    {:.4f} ms predicted vs {:.4f} ms sequential, estimated speedup "
            "{:.2f}x (simulated timeline); the DP's schedule: {:.4f} ms as the sum of its "
            "stages (simulated)\n",
            t.predicted_ms, t.sequential_predicted_ms, t.sequential_predicted_ms / t.predicted_ms,
            t.dp_predicted_ms);
    } else {
        fmt::print(
            "latency    {} measured end to end vs {} sequential (speedup {:.2f}x); the "
            "search's own timing {:.4f} ms ({:+.1f}%)\n",
            ms(t.measured_ms), ms(t.sequential_ms), *t.sequential_ms / *t.measured_ms,
            t.predicted_ms, 100.0 * (t.predicted_ms / *t.measured_ms - 1.0));
        fmt::print("dp         the DP's own schedule: {:.4f} ms as the sum of its stages, {} end "
                   "to end ({:+.1f}%)\n",
                   t.dp_predicted_ms, ms(t.dp_measured_ms),
                   100.0 * (t.dp_predicted_ms / *t.dp_measured_ms - 1.0));
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
    fmt::print("total      {:.2f} s{}\n\n{}", t.total_seconds,
               phase_breakdown(t.stats.value("phase_seconds", nlohmann::json::object()),
                               t.total_seconds),
               format_stats_table(t.search_stats));
}

nlohmann::json optional_json(const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// --skip-stored found the key done: the same fields as a search's summary, for `iostune tune`.
nlohmann::json stored_json(const StoredKey& stored, const std::string& db) {
    const db::ReportRow& row = stored.best;
    const db::ScheduleRecord& s = row.schedule;
    const bool estimate = !s.measured_ms;
    const auto sequential_predicted = s.search_stats.find("sequential_predicted_ms");
    return {{"skipped", true},
            {"model", row.model_name},
            {"fingerprint", row.fingerprint},
            {"batch", s.batch},
            {"precision", s.precision},
            {"layout", s.layout},
            {"device", describe_device(row.device)},
            {"db", db},
            {"simulated", estimate},
            {"best_schedule_id", s.id},
            {"kept_strategy", s.strategy},
            {"measured_latency_ms", optional_json(s.measured_ms)},
            {"sequential_latency_ms", estimate ? nlohmann::json(nullptr) : optional_json(s.sequential_ms)},
            {"predicted_latency_ms", optional_json(s.predicted_ms)},
            {"sequential_predicted_latency_ms",
             estimate ? optional_json(s.sequential_ms)
                      : sequential_predicted != s.search_stats.end() ? *sequential_predicted
                                                                      : nlohmann::json(nullptr)},
            {"search_seconds", optional_json(stored.search_seconds)},
            {"created_at", s.created_at}};
}

void print_stored(const StoredKey& stored, const SearchCommandOptions& o) {
    if (o.format == "json") {
        fmt::print("{}\n", stored_json(stored, o.db).dump(2));
        return;
    }
    const db::ScheduleRecord& s = stored.best.schedule;
    fmt::print("stored     {} (batch {}, {}) on {} already has schedule #{} in {}: {}, {}; not "
               "searched again (--skip-stored)\n",
               stored.best.model_name, s.batch, s.precision, describe_device(stored.best.device),
               s.id, o.db, s.strategy,
               s.measured_ms ? fmt::format("{:.4f} ms measured", *s.measured_ms)
                             : fmt::format("{:.4f} ms predicted (estimate)", s.predicted_ms.value_or(0)));
}

void write_schedule_out(const std::string& path, const nlohmann::json& schedule,
                        std::int64_t schedule_id, const std::string& db) {
    std::ofstream out(path);
    out << schedule.dump(2) << "\n";
    if (!out)
        throw Error(
            fmt::format("cannot write the schedule to '{}'; check the directory exists "
                        "and is writable (the schedule is stored as #{} in {})",
                        path, schedule_id, db));
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
    options.time_budget_s = o.time_budget_s;
    options.dp_share = o.dp_share;
    options.kernel_move_turn = o.kernel_move_turn;
    options.kernel_runners_up = o.kernel_runners_up;
    options.memory_limit = o.memory_limit;
    options.placements = o.placements;
    options.cold_stage_timing = o.stage_timing == "cold";
    options.conv_objectives = o.conv_objective == "auto"
                                  ? std::vector<ConvObjective>{ConvObjective::Alone,
                                                               ConvObjective::CoRun}
                                  : std::vector<ConvObjective>{
                                        conv_objective_from_string(o.conv_objective)};
    options.seed = o.seed;
    // The model is loaded before the job opens the store, so an unknown one leaves no file behind.
    const Graph graph = load_models(o.models.specs, o.batch, o.models.shared_input);
    if (o.skip_stored) {
        const std::optional<StoredKey> stored = stored_result(graph, options);
        if (stored && stored->untimed_convolutions > 0)
            fmt::print(stderr,
                       "stored schedule #{} ran {} convolution shape{} chosen quickly when its "
                       "search ran short of time: searching again to time {} in full "
                       "(--skip-stored skips finished keys only)\n",
                       stored->best.schedule.id, stored->untimed_convolutions,
                       stored->untimed_convolutions == 1 ? "" : "s",
                       stored->untimed_convolutions == 1 ? "it" : "them");
        else if (stored) {
            if (!o.schedule_out.empty())
                write_schedule_out(o.schedule_out, stored->best.schedule.schedule,
                                   stored->best.schedule.id, o.db);
            print_stored(*stored, o);
            return;
        }
    }
    const TuningSummary summary = run_tuning_job(
        graph, options, [](const std::string& line) { fmt::print(stderr, "{}\n", line); });

    if (!o.schedule_out.empty())
        write_schedule_out(o.schedule_out, schedule_to_json(summary.schedule), summary.schedule_id,
                           o.db);
    if (o.format == "json") {
        fmt::print("{}\n", tuning_summary_json(summary).dump(2));
        return;
    }
    print_summary_table(summary);
}

// The subcommand's options, bound to `o`; add_search_command adds the run.
CLI::App* define_search_command(CLI::App& app, SearchCommandOptions& o_ref) {
    SearchCommandOptions* o = &o_ref;  // `o->`, as the definitions read with the shared pointer
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
    cmd->add_option("--time-budget", o->time_budget_s,
                    "seconds for the whole search (layout, DP, measured refinement, checks); "
                    "convolutions still unchosen at 40% of it are chosen from a few candidates "
                    "(later searches time them in full); 0: no limit (docs/search.md)")
        ->check(CLI::Range(0.0, 86400.0))
        ->capture_default_str();
    cmd->add_option("--dp-share", o->dp_share,
                    "of the time budget the layout choice left, the IOS DP's share (the rest: "
                    "the measured refinement, checks and final timings; docs/search.md)")
        ->check(CLI::Range(0.05, 0.95))
        ->capture_default_str();
    cmd->add_option("--kernel-move-turn", o->kernel_move_turn,
                    "samples per turn when kernel moves are timed against the kept kernels: 1, "
                    "each the first launch after the other graph's; more, each turn after a "
                    "launch not timed, as replay runs (docs/search.md)")
        ->check(CLI::Range(1, 25))
        ->capture_default_str();
    cmd->add_option("--kernel-runners-up", o->kernel_runners_up,
                    "how many of each convolution's next fastest kernels (within 25% alone) the "
                    "kernel moves try where the schedule runs them (docs/search.md)")
        ->check(CLI::Range(0, int(kMostRunnersUp)))
        ->capture_default_str();
    cmd->add_option("--memory-limit", o->memory_limit,
                    "keep every schedule's activation arena within RATIO x the sequential "
                    "liveness bound (e.g. 1.3): concurrent stages are cut and dataflow windows "
                    "barred until it fits, at some latency (docs/memory.md); 0: no limit")
        ->check(number_from_zero())
        ->capture_default_str();
    cmd->add_option("--placements", o->placements,
                    "time every end-to-end comparison in turns at this many placements of the "
                    "activation arena, pooled, so that no gain owed to where buffers happen to "
                    "land decides (docs/search.md); 1: where it lies")
        ->check(CLI::Range(1, kMaxPlacements))
        ->capture_default_str();
    cmd->add_option("--conv-objective", o->conv_objective,
                    fmt::format("how convolutions are chosen end to end: alone (the fastest on "
                                "an idle GPU), corun (of those within {:.0f}% of it, the fastest "
                                "two at once), or auto (both tried on the candidates, the faster "
                                "kept; docs/search.md)",
                                100 * kCoRunSlack))
        ->check(CLI::IsMember({"auto", "alone", "corun"}))
        ->capture_default_str();
    cmd->add_option("--stage-timing", o->stage_timing,
                    "how the DP's stages are timed: warm (repeated back to back) or cold (L2 "
                    "flushed before each repeat)")
        ->check(CLI::IsMember({"warm", "cold"}))
        ->capture_default_str();
    cmd->add_option("--seed", o->seed, "seed of the refinement's random moves")
        ->capture_default_str();
    cmd->add_option("--schedule-out", o->schedule_out,
                    "also write the schedule as JSON to this file");
    cmd->add_flag("--skip-stored", o->skip_stored,
                  "if the database already holds a schedule for this model, batch and precision "
                  "on this GPU (or this simulated device), print it and search nothing (unless "
                  "it ran convolutions chosen quickly, never timed in full since)");
    return cmd;
}

}  // namespace

void add_search_command(CLI::App& app) {
    auto o = std::make_shared<SearchCommandOptions>();
    define_search_command(app, *o)->callback([o] { run_search(*o); });
}

void check_search_arguments(std::vector<std::string> args) {
    CLI::App probe;
    SearchCommandOptions unused;
    define_search_command(probe, unused);
    std::reverse(args.begin(), args.end());  // CLI11 takes the words last first
    probe.parse(args);
}

}  // namespace iostune::cli
