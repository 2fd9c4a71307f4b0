// `iostune show`: a summary of one model (a model file or a zoo name); with --memory, what a
// schedule of it holds on the device (src/memory_summary.h), computed on the CPU.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/positive_number.h"
#include "cli/precision_options.h"
#include "db/schedule_store.h"
#include "search/baselines.h"
#include "src/error.h"
#include "src/fusion.h"
#include "src/memory_fit.h"
#include "src/memory_summary.h"
#include "src/model_json.h"
#include "src/model_summary.h"

namespace iostune::cli {

namespace {

struct ShowOptions {
    std::string model;
    int batch = 1;
    bool memory = false;
    std::string precision = "tf32";
    std::string layout = "auto";
    std::string schedule_source = "sequential";
    std::string form = "staged";
    double memory_limit = 0;  // 0: the baseline as it is
    std::string db;
    std::string format = "table";
};

std::string describe_weights(WeightsState state, int64_t params) {
    switch (state) {
        case WeightsState::Absent: return "none (structure only)";
        case WeightsState::SeededRandom: return fmt::format("seeded random ({} values)", params);
        case WeightsState::Loaded: return fmt::format("loaded from the weights file ({} values)", params);
    }
    return "?";
}

void show_model(const FusedGraph& fused) {
    const FusionCounts& f = fused.counts;
    const ModelSummary s = summarize(fused.graph);
    std::vector<std::string> kinds;
    for (const auto& [kind, count] : s.ops_by_kind) kinds.push_back(fmt::format("{} {}", to_string(kind), count));
    fmt::print("{:<12} {}\n", "model", s.name);
    fmt::print("{:<12} {} x {} x {} (C x H x W), batch {}\n", "input", s.input.c, s.input.h, s.input.w,
               s.input.n);
    fmt::print("{:<12} {} ({})\n", "ops", s.ops, fmt::join(kinds, ", "));
    fmt::print("{:<12} {} ops into their producers (conv+relu {}, conv+activation {}, "
               "conv+prelu {}, add+relu {}, sepconv+relu {}, conv+add {}, add+add {}, "
               "concat+relu {}){}{}{}\n",
               "fused", f.fused(), f.conv_relu, f.conv_activation, f.conv_prelu, f.add_relu,
               f.sepconv_relu, f.conv_add, f.add_add, f.relu_concat,
               f.pre_relu_dropped > 0
                   ? fmt::format("; {} sepconv read an input its producer rectified",
                                 f.pre_relu_dropped)
                   : std::string(),
               f.relu_concat_slice > 0
                   ? fmt::format("; {} concat+relu kept the ReLU on one input",
                                 f.relu_concat_slice)
                   : std::string(),
               f.add_of_branches > 0
                   ? fmt::format("; {} conv+add left apart (the add waits for a longer branch)",
                                 f.add_of_branches)
                   : std::string());
    fmt::print("{:<12} {} ops that computed what an earlier op computes\n", "dropped",
               f.duplicates);
    fmt::print("{:<12} {}\n", "blocks", s.blocks);
    fmt::print("{:<12} {} ops, width {}\n", "largest", s.largest_block_ops, s.largest_block_width);
    fmt::print("{:<12} {:.3f} (batch {})\n", "GFLOPs", s.gflops, s.input.n);
    fmt::print("{:<12} {} ({:.2f} M)\n", "params", s.params, double(s.params) / 1e6);
    fmt::print("{:<12} {}\n", "fingerprint", s.fingerprint);
    fmt::print("{:<12} {}\n", "weights", describe_weights(s.weights, s.params));
}

// The schedule whose memory is shown, with its name and the layout it runs in.
struct ShownSchedule {
    Schedule schedule;
    std::string name;
    TensorLayout layout = TensorLayout::Nchw;
};

// The best stored schedule of (model, batch, precision) in --db on any device: the fastest
// measured one, else (a database of simulated searches) the lowest prediction.
ShownSchedule stored_schedule(const Graph& graph, const ShowOptions& o) {
    const db::ScheduleStore store = db::ScheduleStore::open(o.db, db::OpenMode::MustExist);
    const std::string key = fingerprint(graph);
    const auto of_key = [&](const db::ReportRow& row) {
        return row.fingerprint == key && row.schedule.batch == o.batch &&
               row.schedule.precision == o.precision;
    };
    std::optional<db::ReportRow> best;
    for (db::ReportRow& row : store.report_best())  // one per device: the fastest of them
        if (of_key(row) && (!best || *row.schedule.measured_ms < *best->schedule.measured_ms))
            best = std::move(row);
    for (db::ReportRow& row : store.report_estimates())
        if (!best && of_key(row)) best = std::move(row);
    if (!best)
        throw Error(fmt::format("'{}' holds no schedule of '{}' at batch {} in {}; it has:\n{}",
                                o.db, graph.name(), o.batch, o.precision,
                                db::describe_keys(store.list_keys())));
    const db::ScheduleRecord& s = best->schedule;
    return {schedule_from_json(s.schedule),
            fmt::format("schedule #{} ({}, {} on {})", s.id, s.strategy,
                        s.measured_ms ? "measured" : "estimated", best->device.name),
            tensor_layout_from_string(s.layout)};
}

ShownSchedule chosen_schedule(const Graph& graph, const ShowOptions& o) {
    if (!o.db.empty()) return stored_schedule(graph, o);
    const Precision precision = precision_from_string(o.precision);
    const ScheduleForm form = o.form == "dataflow" ? ScheduleForm::Dataflow : ScheduleForm::Staged;
    ShownSchedule shown{with_form(make_baseline(o.schedule_source, graph), form),
                        fmt::format("{} ({})", o.schedule_source, o.form),
                        layout_choice(o.layout).value_or(default_layout(precision))};
    if (o.memory_limit > 0) {
        // As a search with --memory-limit would time it.
        MemoryPlanOptions plan;
        plan.precision = precision;
        plan.layout = shown.layout;
        const Schedule fitted = MemoryFitter(graph, plan, o.memory_limit).fit(shown.schedule);
        shown.name += fitted == shown.schedule
                          ? fmt::format(", within --memory-limit {:g} as it is", o.memory_limit)
                          : fmt::format(", fitted to --memory-limit {:g} ({}{}, {} stages before)",
                                        o.memory_limit, to_string(fitted.form),
                                        fitted.barriers.empty()
                                            ? std::string()
                                            : fmt::format(" with {} barriers", fitted.barriers.size()),
                                        shown.schedule.flat_stages().size());
        shown.schedule = fitted;
    }
    return shown;
}

void show_memory(const Graph& graph, const ShowOptions& o) {
    const ShownSchedule shown = chosen_schedule(graph, o);
    MemoryPlanOptions plan;
    plan.precision = precision_from_string(o.precision);
    plan.layout = shown.layout;
    const MemorySummary s = summarize_memory(graph, shown.schedule, plan);
    if (o.format == "json") {
        nlohmann::json doc = memory_summary_to_json(s);
        doc["model"] = graph.name();
        doc["batch"] = o.batch;
        doc["precision"] = o.precision;
        doc["layout"] = to_string(shown.layout);
        doc["schedule"] = shown.name;
        fmt::print("{}\n", doc.dump(1));
        return;
    }
    fmt::print("{:<12} {}, batch {}, {} {}\n", "model", graph.name(), o.batch, o.precision,
               to_string(shown.layout));
    fmt::print("{:<12} {}: {} stages, {} lane{}\n", "schedule", shown.name,
               shown.schedule.flat_stages().size(), s.lanes, s.lanes == 1 ? "" : "s");
    fmt::print("{}", format_memory_summary(s));
}

void run_show(const ShowOptions& o) {
    // Summarised as search and replay run it: fused.
    const FusedGraph fused = fuse_epilogues(load_model_spec(o.model, o.batch, Fusion::None));
    if (!o.memory) {
        if (o.format != "table" || !o.db.empty())
            throw Error("--format json and --db describe a schedule's memory: add --memory");
        show_model(fused);
        return;
    }
    show_memory(fused.graph, o);
}

}  // namespace

void add_show_command(CLI::App& app) {
    auto options = std::make_shared<ShowOptions>();
    CLI::App* cmd = app.add_subcommand(
        "show", "Summarise a model: structure, blocks, cost, fingerprint; --memory: what a "
                "schedule of it holds on the GPU (computed on the CPU)");
    cmd->add_option("model", options->model, kModelOptionHelp)->required();
    cmd->add_option("-b,--batch", options->batch, "batch size for the GFLOPs figure")
        ->check(positive_whole_number())
        ->capture_default_str();
    cmd->add_flag("--memory", options->memory,
                  "the memory plan of a schedule: arena bytes (activations, scratch, inputs, "
                  "outputs), the liveness lower bound, workspaces (estimated) and weights");
    add_precision_option(cmd, options->precision, "precision of the plan (element size)");
    add_layout_option(cmd, options->layout,
                      "activation layout of the plan: nchw, nhwc, or auto (nchw for strict "
                      "fp32, nhwc otherwise); a stored schedule has its own");
    auto* source = cmd->add_option("--schedule-source", options->schedule_source,
                                   "the schedule whose memory is shown: a baseline computed from "
                                   "the graph")
                       ->check(CLI::IsMember({"sequential", "greedy", "nimble", "opara"}))
                       ->capture_default_str();
    cmd->add_option("--form", options->form,
                    "how the baseline's stages run: staged (each stage a barrier) or dataflow")
        ->check(CLI::IsMember({"staged", "dataflow"}))
        ->capture_default_str();
    cmd->add_option("--db", options->db,
                    "show the best schedule stored for the model, batch and precision instead "
                    "(on any device; must exist)")
        ->excludes(source);
    cmd->add_option("--memory-limit", options->memory_limit,
                    "fit the baseline into RATIO x the sequential liveness bound, as a search "
                    "does (docs/memory.md); 0: as it is")
        ->check(number_from_zero())
        ->excludes("--db");
    cmd->add_option("--format", options->format, "table or json (with --memory)")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
    cmd->callback([options] { run_show(*options); });
}

}  // namespace iostune::cli
