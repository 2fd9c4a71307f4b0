// `iostune replay`: load the stored schedule through the replay library, run it as one CUDA
// Graph and report like trtexec: latency percentiles, throughput, host enqueue time, GPU time.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/batch_replay_report.h"
#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/positive_number.h"
#include "cli/precision_options.h"
#include "db/schedule_store.h"
#include "iostune/replay.h"
#include "profiler/profile_report.h"
#include "replay/device_match.h"
#include "replay/replay_timing.h"
#include "replay/replay_validation.h"
#include "replay/schedule_selection.h"
#include "search/baselines.h"
#include "search/model_set_baselines.h"
#include "src/engine/arena_placements.h"
#include "src/memory_fit.h"
#include "src/conv_choices.h"
#include "src/engine/device_info.h"
#include "src/engine/engine.h"
#include "src/error.h"
#include "src/model_set.h"

namespace iostune::cli {

namespace {

struct ReplayCommandOptions {
    ModelSetChoice models;
    int batch = 1;
    int iterations = 200;
    std::string db = db::kDefaultDatabasePath;
    bool validate = false;
    int perturb = 0;  // perturbed rounds of the concurrency check (with --validate)
    bool fallback_sequential = false;
    std::string precision = "tf32";
    std::string layout = "auto";
    bool native_io = false;
    std::string times_out;
    std::string schedule_source = "db";
    std::string schedule_file;  // a schedule's JSON, e.g. from a search's bug report
    std::string form;  // of a baseline computed here; empty: its own (back to back: members')
    double memory_limit = 0;      // a baseline computed here fitted into it (0: as it is)
    std::int64_t schedule_id = 0;
    std::string format = "table";
    int warmup = 20;
    std::vector<int> batch_sizes;  // several tuned sizes: cli/batch_replay_report.h
    std::vector<int> requests;
    bool no_memory_reuse = false;
    std::size_t arena_offset = 0;  // --arena-offset
    int placements = 1;            // --placements
    std::string conv_objective = "alone";
    std::string conv_choices_in, conv_choices_out;  // --conv-choices, --conv-choices-out
};

// A model set's models one after another, each with its best schedule stored for it alone on
// this GPU (same batch and precision) in --db, or its sequential schedule when it has none.
// `choices` gets the convolution choices stored with those schedules, combined: each member's
// schedule runs the kernels it was measured with, as the set's own stored schedule does (a
// member without a stored schedule, or a signature two members chose apart, is noted). With
// --conv-choices it stays empty: the kernels given there run instead.
Schedule stored_back_to_back(const Graph& set, const ReplayCommandOptions& o,
                             ConvChoices& choices) {
    if (set.members().empty())
        throw Error("--schedule-source back-to-back runs the models of a model set one after "
                    "another; give --model several times");
    const db::ScheduleStore store = db::ScheduleStore::open(o.db, db::OpenMode::MustExist);
    const db::DeviceRecord device = to_device_record(query_device_info());
    std::vector<std::string> sources;
    std::vector<ConvChoices> stored_choices;
    Schedule schedule = back_to_back_schedule(
        set,
        [&](const GraphMember& m) -> std::optional<MemberSchedule> {
            const ScheduleQuery query{m.name, m.fingerprint, o.batch, o.precision, {}};
            const ScheduleChoice choice =
                select_schedule(store, query, [&] { return device; }, true);
            if (!choice.schedule) return std::nullopt;
            const std::string source =
                fmt::format("schedule #{} ({})", choice.schedule->id, choice.schedule->strategy);
            stored_choices.push_back(conv_choices_from_json(choice.schedule->conv_choices,
                                                            source + " in '" + o.db + "'"));
            return MemberSchedule{schedule_from_json(choice.schedule->schedule), source};
        },
        sources);
    for (const std::string& line : sources) fmt::print(stderr, "back-to-back: {}\n", line);
    if (!o.conv_choices_in.empty()) {
        fmt::print(stderr, "back-to-back: the kernels of --conv-choices run, not those stored "
                           "with the members' schedules\n");
        return schedule;
    }
    int differing = 0;
    choices = combined_choices(stored_choices, &differing);
    fmt::print(stderr,
               "back-to-back: the kernels stored with the members' schedules are pinned ({} "
               "choices{})\n",
               choices.size(),
               differing > 0 ? fmt::format("; {} chosen apart by two members run the first "
                                           "member's kernel",
                                           differing)
                             : std::string());
    return schedule;
}

// Every output of the replay (every output of every model) against its model's sequential
// schedule run alone on the same weights and inputs, in the same precision and layout
// (replay/replay_validation.h): the schedule must not change the result beyond the precision's
// rounding.
// The concurrency check: a difference is a missing dependency or a shared buffer, an engine bug.
void check_perturbed(Replayer& replayer, const ReplayCommandOptions& o) {
    const Replayer::PerturbationCheck check = replayer.perturbation_check(o.perturb);
    if (!check.mismatches.empty())
        throw Error(fmt::format("perturbed replay: {} of {} rounds changed an output, so the "
                                "schedule has a race (a missing dependency or a shared buffer); "
                                "this is an iostune bug, please report it with the model. "
                                "First: {}",
                                check.mismatches.size(), check.rounds, check.mismatches.front()));
    fmt::print(o.format == "json" ? stderr : stdout,
               "perturbed  {} rounds with seeded delays on the schedule's lanes: every output "
               "bit for bit the same\n",
               check.rounds);
}

void validate_output(Replayer& replayer, const ReplayCommandOptions& o) {
    if (o.native_io)
        throw Error("--validate compares float outputs; drop --native-io to validate the schedule");
    const Graph graph = load_models(o.models.specs, o.batch, o.models.shared_input);
    const ReplayValidation v = validate_replay(replayer, graph);
    const bool set = !graph.members().empty();
    // With --format json, stdout carries only the JSON object.
    fmt::print(o.format == "json" ? stderr : stdout,
               "Validation: PASSED ({}, max |diff| {:.3g}, tolerance {:.3g}{})\n",
               v.outputs == 1 ? std::string("output equals the sequential schedule's")
               : set ? fmt::format("each of the {} outputs equals its model's sequential "
                                   "schedule run alone",
                                   v.outputs)
                     : fmt::format("each of the {} outputs equals the sequential schedule's",
                                   v.outputs),
               v.max_abs_diff, v.tolerance,
               v.outputs == 1 ? std::string() : ", in " + describe_output(graph, v.closest));
}

// "'p2' 1x256x56x56, 'p3' 1x256x28x28, ...": a model's outputs in order.
std::string output_list(const ReplayInfo& info) {
    std::string list;
    for (size_t k = 0; k < info.output_shapes.size(); ++k) {
        const auto& d = info.output_shapes[k];
        list += fmt::format("{}'{}' {}x{}x{}x{}", k == 0 ? "" : ", ", info.output_names[k], d[0],
                            d[1], d[2], d[3]);
    }
    return list;
}

void print_report(const ReplayInfo& info, const ReplayTiming& t) {
    fmt::print("=== Performance summary ===\n");
    fmt::print("Throughput: {:.2f} inferences/s ({:.2f} graph launches/s, batch {})\n",
               t.throughput_per_s, t.throughput_per_s / info.batch, info.batch);
    fmt::print(
        "Latency: min = {:.4f} ms, max = {:.4f} ms, mean = {:.4f} ms, median = {:.4f} ms, "
        "percentile(90%) = {:.4f} ms, percentile(95%) = {:.4f} ms, percentile(99%) = "
        "{:.4f} ms\n",
        t.min_ms, t.max_ms, t.mean_ms, t.median_ms, t.p90_ms, t.p95_ms, t.p99_ms);
    fmt::print("Enqueue Time: median = {:.4f} ms per inference (host, one cudaGraphLaunch)\n",
               t.enqueue_median_ms);
    fmt::print("GPU Compute Time: total = {:.3f} ms over {} iterations\n", t.total_gpu_ms,
               t.iterations);
    if (const std::vector<double>& m = t.placement_median_ms; !m.empty()) {
        const auto [least, most] = std::minmax_element(m.begin(), m.end());
        fmt::print("Placements: {} of the activation arena, medians {:.4f} ms (spread {:.1f}%); "
                   "the figures above pool them\n",
                   m.size(), fmt::join(m, " / "), 100.0 * (*most / *least - 1.0));
    }
    if (info.stored_measured_ms)
        fmt::print("Search measured: {:.4f} ms (this run: {:+.1f}%)\n", *info.stored_measured_ms,
                   100.0 * (t.median_ms / *info.stored_measured_ms - 1.0));
    // trtexec's warnings: a noisy run, or one where the host cannot keep the GPU busy.
    if (t.cv() > 0.10)
        fmt::print(
            "Warning: the GPU latency varies a lot (coefficient of variation {:.1f}%); "
            "another process may be using the GPU, or clocks are changing.\n",
            100.0 * t.cv());
    if (t.enqueue_median_ms >= 0.8 * t.median_ms)
        fmt::print(
            "Warning: enqueue-bound: launching takes {:.4f} ms of the {:.4f} ms an "
            "inference lasts on the GPU; throughput is limited by the host (try a larger "
            "batch).\n",
            t.enqueue_median_ms, t.median_ms);
}

void write_times(const std::string& path, const ReplayTiming& t) {
    std::ofstream out(path);
    out << nlohmann::json{{"latency_ms", t.latency_ms}, {"enqueue_ms", t.enqueue_ms}}.dump(1)
        << '\n';
    if (!out)
        throw Error(
            fmt::format("cannot write '{}'; check the folder exists and is writable", path));
}

// Everything one replay measured, as one JSON object (the only thing printed with --format json).
nlohmann::json replay_json(const ReplayInfo& info, const ReplayTiming& t, int warmup) {
    nlohmann::json j = {{"model", info.model},
                         {"members", info.members},
                         {"set_inputs", info.set_inputs.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json(info.set_inputs)},
                         {"batch", info.batch},
                         {"precision", info.precision},
                         {"layout", info.layout},
                         {"storage", info.storage},
                         {"native_io", info.native_io},
                         {"fingerprint", info.fingerprint},
                         {"strategy", info.strategy},
                         {"schedule_id", info.schedule_id},
                         {"sequential_fallback", info.sequential_fallback},
                         {"stages", info.stages},
                         {"form", info.form},
                         {"prioritised_ops", info.prioritised_ops},
                         {"graph_nodes", info.graph_nodes},
                         {"convolutions", info.convolutions},
                         {"pinned_convolutions", info.pinned_convolutions},
                         {"weight_bytes", info.weight_bytes},
                         {"activation_bytes", info.activation_bytes},
                         {"workspace_bytes", info.workspace_bytes},
                         {"device_memory_bytes", info.device_memory_bytes},
                         {"device", device_to_json(query_device_info())},
                         {"warmup", warmup},
                         {"stored_measured_ms", info.stored_measured_ms
                                                    ? nlohmann::json(*info.stored_measured_ms)
                                                    : nlohmann::json(nullptr)},
                         {"placements", info.placements},
                         {"placement_median_ms", t.placement_median_ms},
                         {"enqueue_ms", t.enqueue_ms}};
    j.update(timing_stats_json(t));
    return j;
}

// --batch-sizes: one graph per tuned size, requests of any size on them.
void run_batch_sizes(const ReplayCommandOptions& o, const ReplayOptions& options) {
    if (o.models.specs.size() != 1)
        throw Error("--batch-sizes replays one model; a model set takes --batch",
                    ErrorKind::BadInput);
    if (o.schedule_source != "db" && o.schedule_source != "sequential")
        throw Error(fmt::format("--batch-sizes replays the stored schedules (or the sequential "
                                "one), not the baseline '{}': use --batch for it",
                                o.schedule_source),
                    ErrorKind::BadInput);
    BatchReplayRequest request;
    request.model = o.models.specs.front();
    request.batch_sizes = o.batch_sizes;
    request.requests = o.requests;
    request.options = options;
    request.iterations = o.iterations;
    request.warmup = o.warmup;
    request.validate = o.validate;
    request.format = o.format;
    run_batch_replay(request);
}

// The JSON document in the file an option names; what the file should hold goes in the errors.
nlohmann::json read_json_file(const std::string& path, const char* option, const char* what) {
    std::ifstream in(path);
    if (!std::filesystem::is_regular_file(path) || !in)
        throw Error(fmt::format("{}: cannot read '{}' {}", option, path, what),
                    ErrorKind::BadInput);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded())
        throw Error(fmt::format("{}: '{}' is not JSON {}", option, path, what),
                    ErrorKind::BadInput);
    return doc;
}

void run_replay(const ReplayCommandOptions& o) {
    ReplayOptions options;
    options.db_path = o.db;
    options.batch = o.batch;
    options.precision = o.precision;
    options.layout = o.layout;
    options.native_io = o.native_io;
    options.fallback_sequential = o.fallback_sequential;
    options.schedule_source = o.schedule_source;
    options.shared_input = o.models.shared_input;
    options.reuse_memory = !o.no_memory_reuse;
    // Refused here, before any GPU work; the engine would refuse it too.
    if (const size_t align = EngineOptions::kArenaOffsetAlignment; o.arena_offset % align != 0)
        throw Error(fmt::format("--arena-offset {} is not a multiple of {} bytes (the alignment "
                                "the kernels' vector loads need): give a multiple of {}",
                                o.arena_offset, align, align),
                    ErrorKind::BadInput);
    options.arena_offset = o.arena_offset;
    options.placements = o.placements;
    options.conv_objective = o.conv_objective;
    if (!o.conv_choices_in.empty()) {
        // A stored schedule runs the kernels stored with it: pinning others would be ignored.
        if (o.schedule_source == "db" && o.schedule_file.empty())
            throw Error("--conv-choices pins kernels for a baseline (--schedule-source) or a "
                        "--schedule-file; a stored schedule runs the kernels stored with it",
                        ErrorKind::BadInput);
        const nlohmann::json doc = read_json_file(o.conv_choices_in, "--conv-choices",
                                                  "(what `replay --conv-choices-out` writes)");
        // Checked here so that the error names the file (the Replayer parses it again).
        conv_choices_from_json(doc, fmt::format("--conv-choices '{}'", o.conv_choices_in));
        options.conv_choices_json = doc.dump();
    }
    if (!o.batch_sizes.empty()) {
        options.schedule_id = o.schedule_id;
        run_batch_sizes(o, options);
        return;
    }
    const bool search_baseline = o.schedule_source == "greedy" || o.schedule_source == "nimble" ||
                                 o.schedule_source == "opara" || o.schedule_source == "streams" ||
                                 o.schedule_source == "back-to-back";
    if (search_baseline && o.schedule_id == 0) {
        // The search's baselines are the tuning tools' (the replay library has no search): the
        // schedule is computed here and handed over. Opara without a profile orders ops by the
        // simulated model's resource estimates.
        const Graph graph = load_models(o.models.specs, o.batch, o.models.shared_input);
        options.schedule_source = "given";
        ConvChoices members_choices;
        const Schedule baseline = o.schedule_source == "back-to-back"
                                      ? stored_back_to_back(graph, o, members_choices)
                                      : make_baseline(o.schedule_source, graph, nullptr);
        // Empty when --conv-choices names others (then those run, as for every baseline).
        if (!members_choices.empty())
            options.conv_choices_json = conv_choices_to_json(members_choices).dump();
        // Back to back keeps each member's own form (its barriers) unless --form asks for one.
        const bool as_built = o.form.empty() && o.schedule_source == "back-to-back";
        Schedule schedule = as_built ? baseline
                                     : with_form(baseline, o.form == "dataflow"
                                                               ? ScheduleForm::Dataflow
                                                               : ScheduleForm::Staged);
        if (o.memory_limit > 0) {
            // As a search with this limit would time it (memory_fit.h), on the CPU plan.
            MemoryPlanOptions plan;
            plan.precision = precision_from_string(o.precision);
            plan.layout = layout_choice(o.layout).value_or(default_layout(plan.precision));
            const MemoryFitter fitter(graph, plan, o.memory_limit);
            schedule = as_built ? fitter.fit_as_built(schedule) : fitter.fit(schedule);
        }
        options.schedule_json = schedule_to_json(schedule).dump();
        options.schedule_name = o.schedule_source;
    }
    if (!o.schedule_file.empty()) {
        // Checked against the model by the Replayer, like any given schedule.
        const char* what = "(a schedule as iostune writes it: {\"blocks\": [...], \"form\": ...})";
        const nlohmann::json doc = read_json_file(o.schedule_file, "--schedule-file", what);
        options.schedule_source = "given";
        try {
            options.schedule_json = schedule_to_json(schedule_from_json(doc)).dump();
        } catch (const Error& e) {
            throw Error(fmt::format("--schedule-file: '{}' is no schedule {}: {}", o.schedule_file,
                                    what, e.what()),
                        ErrorKind::BadInput);
        }
        options.schedule_name = "file:" + o.schedule_file;
    }
    options.schedule_id = o.schedule_id;
    // Opened before the engine plans (which takes a while), so a bad path fails at once.
    std::ofstream choices_out;
    const auto cannot_write = [&] {
        return Error(fmt::format("--conv-choices-out: cannot write '{}'", o.conv_choices_out),
                     ErrorKind::BadInput);
    };
    if (!o.conv_choices_out.empty()) {
        choices_out.open(o.conv_choices_out);
        if (!choices_out) throw cannot_write();
    }
    Replayer replayer(o.models.specs, options);
    const ReplayInfo& info = replayer.info();
    const bool table = o.format == "table";
    if (choices_out.is_open()) {
        // Before validating: a run that fails is the one whose choices are wanted.
        choices_out << nlohmann::json::parse(replayer.conv_choices_json()).dump(1) << "\n";
        choices_out.close();
        if (!choices_out) throw cannot_write();
    }

    if (table) {
        fmt::print("model      {} (batch {}, {}, fingerprint {})\n", info.model, info.batch,
                   info.precision, info.fingerprint);
        if (!info.members.empty())
            fmt::print("set        {} models, {} input{}, one CUDA Graph, {} outputs (every "
                       "model's, model after model)\n",
                       info.members.size(), info.set_inputs, info.set_inputs == "shared" ? "" : "s",
                       info.output_shapes.size());
        else if (info.output_shapes.size() > 1)
            fmt::print("outputs    {}: {}\n", info.output_shapes.size(), output_list(info));
        fmt::print("engine     {} activations in {}; input/output {}\n", info.storage, info.layout,
                   info.native_io ? "in that storage (--native-io, no conversion)"
                                  : "float NCHW (converted inside the graph)");
        fmt::print("device     {}\n", info.device);
        if (!o.schedule_file.empty())
            fmt::print("schedule   {} (no database)\n", info.strategy);
        else if (o.schedule_source != "db")
            fmt::print("schedule   {} (computed from the graph, no database)\n", info.strategy);
        else if (info.sequential_fallback)
            fmt::print("schedule   SEQUENTIAL fallback: {}\n", info.fallback_reason);
        else
            fmt::print("schedule   #{} {} from {}\n", info.schedule_id, info.strategy, o.db);
        fmt::print("graph      {} stages ({}) captured as one CUDA Graph of {} nodes{}\n",
                   info.stages, info.form, info.graph_nodes,
                   info.prioritised_ops > 0
                       ? fmt::format("; {} ops at a raised stream priority", info.prioritised_ops)
                       : std::string());
        if (info.schedule_id != 0)
            fmt::print("kernels    {} of {} convolutions run the algorithm stored with the schedule\n",
                       info.pinned_convolutions, info.convolutions);
        const auto mib = [](std::size_t bytes) { return double(bytes) / (1 << 20); };
        fmt::print("memory     {:.1f} MiB on the device: weights {:.1f}, activations {:.1f} ({}), "
                   "workspaces {:.1f}\n",
                   mib(info.device_memory_bytes), mib(info.weight_bytes),
                   mib(info.activation_bytes),
                   o.no_memory_reuse ? "every one its own bytes: --no-memory-reuse"
                                     : "one arena, reused by liveness",
                   mib(info.workspace_bytes));
    }
    if (o.validate) validate_output(replayer, o);
    if (o.perturb > 0) check_perturbed(replayer, o);

    const ReplayTiming timing = replayer.benchmark(o.iterations, nullptr, o.warmup);
    if (table) print_report(info, timing);
    else fmt::print("{}\n", replay_json(info, timing, o.warmup).dump(1));
    if (!o.times_out.empty()) {
        write_times(o.times_out, timing);
        if (table) fmt::print("per-iteration times written to {}\n", o.times_out);
    }
}

}  // namespace

void add_replay_command(CLI::App& app) {
    auto o = std::make_shared<ReplayCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "replay", "Run a model with its stored schedule as one CUDA Graph and report latency");
    add_model_set_options(cmd, o->models);
    CLI::Option* batch = cmd->add_option("-b,--batch", o->batch, "batch size")
                             ->check(positive_whole_number())
                             ->capture_default_str();
    CLI::Option* sizes =
        cmd->add_option("--batch-sizes", o->batch_sizes,
                        "several tuned batch sizes (e.g. 1,4,16), one CUDA Graph each: requests "
                        "of any size run on the smallest that holds them (padded), above the "
                        "largest in chunks")
            ->delimiter(',')
            ->check(positive_whole_number())
            ->excludes(batch);
    cmd->add_option("--requests", o->requests,
                    "with --batch-sizes: the request sizes to time (default: the tuned sizes)")
        ->delimiter(',')
        ->check(positive_whole_number())
        ->needs(sizes);
    cmd->add_option("--iters", o->iterations, "timed iterations")
        ->check(positive_whole_number())
        ->capture_default_str();
    cmd->add_option("--db", o->db, "schedule database (must exist)")->capture_default_str();
    auto* validate = cmd->add_flag("--validate", o->validate,
                                   "check the output against the sequential schedule's before "
                                   "timing");
    cmd->add_option("--perturb", o->perturb,
                    "with --validate: replay N more times with seeded delays on the schedule's "
                    "stream lanes and require every output bit for bit the same (races show as "
                    "differences)")
        ->check(CLI::Range(1, 10000))
        ->needs(validate);
    cmd->add_flag("--fallback-sequential", o->fallback_sequential,
                  "run the sequential schedule when no stored schedule may be used, instead of "
                  "failing");
    add_precision_option(cmd, o->precision, "precision the schedule was searched in");
    add_layout_option(cmd, o->layout,
                      "activation layout of a baseline or the sequential fallback: nchw, nhwc, or "
                      "auto (nchw for strict fp32, nhwc otherwise); a stored schedule runs in its own");
    cmd->add_flag("--native-io", o->native_io,
                  "time the graph on input/output in the engine's own storage (fp16/bf16, its "
                  "layout), without the float NCHW conversions");
    cmd->add_flag("--no-memory-reuse", o->no_memory_reuse,
                  "give every activation bytes of its own (no arena reuse): to measure what the "
                  "liveness-planned arena saves");
    cmd->add_option("--arena-offset", o->arena_offset,
                    "place every activation this many bytes further into its allocation (a "
                    "multiple of 256): to measure how much the latency depends on where the "
                    "buffers land");
    cmd->add_option("--placements", o->placements,
                    "time at this many placements of the activation arena, a little over 1 MiB "
                    "apart, and report the samples pooled (and each one's median): a latency "
                    "that does not rest on where the buffers happen to land (docs/memory.md)")
        ->check(CLI::Range(1, kMaxPlacements))
        ->excludes("--batch-sizes")
        ->capture_default_str();
    cmd->add_option("--conv-objective", o->conv_objective,
                    fmt::format("how convolutions a schedule does not pin are chosen: alone "
                                "(fastest on an idle GPU) or corun (of those within {:.0f}% of "
                                "it, the fastest two at once)",
                                100 * kCoRunSlack))
        ->check(CLI::IsMember({"alone", "corun"}))
        ->capture_default_str();
    cmd->add_option("--conv-choices", o->conv_choices_in,
                    "pin these convolution choices (a file --conv-choices-out wrote) for a "
                    "schedule not from the database; the rest are chosen by --conv-objective")
        ->excludes("--batch-sizes");
    cmd->add_option("--conv-choices-out", o->conv_choices_out,
                    "write the convolution choices this replay runs (JSON, before --validate) "
                    "here")
        ->excludes("--batch-sizes");
    cmd->add_option("--export-times", o->times_out, "write per-iteration times (JSON) here");
    cmd->add_option("--schedule-source", o->schedule_source,
                    "db: the best stored schedule; or a baseline computed from the graph without "
                    "a database: sequential, greedy, nimble, opara; for a model set also streams "
                    "(each model on its own stream) and back-to-back (each model's best stored "
                    "schedule, one model after another)")
        ->check(CLI::IsMember({"db", "sequential", "greedy", "nimble", "opara", "streams",
                               "back-to-back"}))
        ->capture_default_str();
    cmd->add_option("--form", o->form,
                    "how a baseline's stages run: staged (each stage a barrier, the default) or "
                    "dataflow (each launch waits for its inputs only); a stored schedule runs in "
                    "its own, back-to-back in each model's own unless this is given")
        ->check(CLI::IsMember({"staged", "dataflow"}));
    cmd->add_option("--memory-limit", o->memory_limit,
                    "fit a baseline into RATIO x the sequential liveness bound first, as a search "
                    "with that limit times it (docs/memory.md); 0: as it is")
        ->check(number_from_zero());
    cmd->add_option("--schedule-id", o->schedule_id,
                    "replay exactly this stored schedule (ids: `iostune report`, or the search's "
                    "schedule_id) instead of the best one for the model, batch and precision")
        ->check(positive_whole_number());
    cmd->add_option("--schedule-file", o->schedule_file,
                    "replay the schedule in this JSON file (iostune's schedule JSON, as a search's "
                    "error report prints it) instead of a stored one")
        ->excludes("--schedule-source")
        ->excludes("--schedule-id")
        ->excludes("--batch-sizes");
    cmd->add_option("--warmup", o->warmup, "untimed launches before timing")
        ->check(whole_number_from_zero())
        ->capture_default_str();
    cmd->add_option("--format", o->format, "table (trtexec-like report) or json (one object)")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
    cmd->callback([o] { run_replay(*o); });
}

}  // namespace iostune::cli
