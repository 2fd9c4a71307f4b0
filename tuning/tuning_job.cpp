#include "tuning/tuning_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "db/schedule_store.h"
#include "replay/device_match.h"
#include "search/baselines.h"
#include "search/model_set_baselines.h"
#include "search/cached_cost_model.h"
#include "search/search_stats.h"
#include "search/sim_cost_model.h"
#include "src/engine/device_info.h"
#include "src/engine/engine.h"
#include "src/error.h"
#include "src/memory_fit.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/precision.h"
#include "src/stopwatch.h"
#include "src/weights.h"
#include "search/schedule_refinement.h"
#include "search/timeline_sim.h"
#include "src/engine/arena_placements.h"
#include "tuning/end_to_end.h"
#include "tuning/job_device.h"
#include "tuning/measured_cost_model.h"
#include "tuning/schedule_contest.h"
#include "tuning/sqlite_stage_cache.h"

namespace iostune {

namespace {

using Clock = SteadyClock;

// The probe of the layout that is not the precision's default may take this share of the budget
// (fastest_layout): GoogLeNet's and Inception V3's NCHW engines took about 4 s (call90).
constexpr double kLayoutProbeShare = 0.15;
// Simulated, the refinement makes this many moves (deterministic for a seed).
constexpr int kSimulatedRefineMoves = 400;
// Sizing the DP's windows to its time (seconds_per_stage): stages timed to estimate, the estimate
// when they were all in the store (measured on the H100, docs/search-log.md), its floor, and the
// fewest stages the DP is sized for however short its time.
constexpr int kCalibrationStages = 16;
constexpr double kDefaultStageSeconds = 0.003;
constexpr double kMinStageSeconds = 0.0005;
constexpr std::int64_t kMinDpStages = 500;

nlohmann::json refine_to_json(const RefineResult& r) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const CandidateTiming& c : r.candidates)
        candidates.push_back({{"name", c.name}, {"form", to_string(c.form)}, {"ms", c.latency_ms}});
    nlohmann::json kept = nlohmann::json::array();
    for (const RefineStep& k : r.kept) kept.push_back({{"move", k.move}, {"ms", k.latency_ms}});
    nlohmann::json contest = nlohmann::json::array();
    for (const StartContestEntry& e : r.start_contest)
        contest.push_back({{"start", e.label}, {"first_ms", e.first_ms}, {"in_turns_ms", e.in_turns_ms}});
    nlohmann::json rivals = nlohmann::json::object();
    for (const ContestTiming& t : r.rival_check) rivals[t.label] = t.latency_ms;
    nlohmann::json priorities = nlohmann::json::object(), handovers = nlohmann::json::object();
    for (const PriorityTiming& t : r.priority_trial) {
        priorities[t.name] = t.latency_ms;
        handovers[t.name] = t.handovers;
    }
    return {{"start", r.start},
            {"latency_ms", r.latency_ms},
            {"priority_trial", std::move(priorities)},
            {"priority_handovers", std::move(handovers)},
            {"priority_trial_out_of_time", r.priority_trial_out_of_time},
            {"priority_check",
             {{"with_ms", r.priority_check.with_ms}, {"without_ms", r.priority_check.without_ms}}},
            {"evaluations", r.evaluations},
            {"failed", r.failed},
            {"disagreed", r.disagreed},
            {"seconds", r.seconds},
            {"moves_timed", r.moves_timed},
            {"least_move_ratio", r.least_move_ratio},
            {"start_before_on_start_ms", r.start_before_on_start_ms},
            {"unconfirmed", r.unconfirmed},
            {"candidates", std::move(candidates)},
            {"start_contest", std::move(contest)},
            {"rival_check", std::move(rivals)},
            {"kept", std::move(kept)}};
}

nlohmann::json timing_json(const LatencyStats& s) {
    return {{"median_ms", s.median_ms},
            {"p90_ms", s.p90_ms},
            {"min_ms", s.min_ms},
            {"max_ms", s.max_ms},
            {"cv", s.cv()},
            {"repeats", s.samples_ms.size()},
            {"enqueue_median_ms", s.enqueue_median_ms}};
}

// The convolution choices the store keeps for this GPU (every schedule measured on it), read
// before the job's first engine: timing each convolution's candidates is nearly all of an
// unpinned engine's set-up (densenet121, 182 convolutions: replay --validate's unpinned check
// engine made it 91 s on the H100, the pinned replay alone 2 s), and a shape timed once on a
// device need not be timed again by every later search. A missing or empty store has none.
ConvChoices stored_conv_choices(const TuningOptions& options) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(options.db_path, ec) ||
        std::filesystem::file_size(options.db_path, ec) == 0 || ec)
        return {};
    const db::ScheduleStore store =
        db::ScheduleStore::open(options.db_path, db::OpenMode::MustExist);
    // A choice made in a hurry (ConvChoice::quick) is timed again, now that others are pinned.
    return timed_in_full(conv_choices_from_json(
        store.conv_choices_on(to_device_record(query_device_info(options.device))),
        fmt::format("the schedules in '{}'", options.db_path)));
}

// Times the sequential schedule end to end in each layout (each on an engine of its own, with
// convolutions chosen for that layout) and returns the faster; `timed` gets the timings and
// `ran` both engines' convolution choices. A layout cuDNN cannot run the model in is no
// candidate (`notices` says why). The precision's default layout goes first. Under a time
// budget the other one is a probe that may take kLayoutProbeShare of it: NCHW's engine for
// NASNet-A took about 165 s to choose its convolutions (depthwise ones: the engine's own kernel is
// channels-last only), RandWire's about 55 s, leaving the DP 1 s of a 60 s budget (call90); a probe
// past its share stops and the default stays (it won 122 of 125 keys timed on the H100).
TensorLayout fastest_layout(const Graph& graph, const TuningOptions& options,
                            const ConvChoices& known, std::vector<ContestEntry>& timed,
                            ConvChoices& ran, std::vector<std::string>& notices) {
    const TensorLayout first = default_layout(precision_from_string(options.precision));
    const TensorLayout second = first == TensorLayout::Nhwc ? TensorLayout::Nchw
                                                            : TensorLayout::Nhwc;
    std::optional<TensorLayout> fastest;
    double fastest_ms = 0;
    for (const TensorLayout layout : {first, second}) {
        EngineOptions engine_options = engine_options_for(options, layout, known);
        const double probe_s = kLayoutProbeShare * options.time_budget_s;
        if (layout == second && options.time_budget_s > 0 && fastest)
            engine_options.choose_by =
                SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                         std::chrono::duration<double>(probe_s));
        try {
            Engine engine(graph, engine_options);
            ran.merge(engine.conv_choices());
            engine.set_random_inputs(7);
            const CudaGraphExec exec = engine.capture(sequential_schedule(graph));
            const double ms =
                measure_graph(exec, engine.origin_stream(), options.end_to_end).median_ms;
            timed.push_back({to_string(layout), ms});
            if (!fastest || ms < fastest_ms) fastest = layout, fastest_ms = ms;
        } catch (const PlanningDeadline& e) {
            const bool too_slow = dynamic_cast<const PlanningTooSlow*>(&e) != nullptr;
            notices.push_back(fmt::format(
                "notice: layout {} not timed: {} ({:.0f}% of the time budget); searching in {}, "
                "the precision's default (--layout {} searches in it)",
                to_string(layout),
                too_slow ? std::string(e.what())
                         : fmt::format("its convolutions were still being chosen after {:.0f} s",
                                       probe_s),
                100 * kLayoutProbeShare, to_string(first), to_string(layout)));
        } catch (const Error& e) {
            notices.push_back(fmt::format("notice: layout {} is no candidate for '{}': {}",
                                          to_string(layout), graph.name(), e.what()));
        }
    }
    if (!fastest) {
        std::string why;
        for (const std::string& line : notices) why += "\n  " + line;
        throw Error(fmt::format("'{}' runs in neither layout in {} on this GPU:{}", graph.name(),
                                options.precision, why));
    }
    return *fastest;
}

// A model set's members one after another, each with its best schedule stored for it alone
// (same device, batch and precision).
Schedule stored_back_to_back(const Graph& set, const db::ScheduleStore& store,
                             std::int64_t device_id, const std::string& precision,
                             std::vector<std::string>& sources) {
    return back_to_back_schedule(
        set,
        [&](const GraphMember& m) -> std::optional<MemberSchedule> {
            const auto row = store.best_schedule(m.fingerprint, device_id, set.batch(), precision);
            if (!row) return std::nullopt;
            return MemberSchedule{schedule_from_json(row->schedule),
                                  fmt::format("schedule #{} ({}, {:.4f} ms alone)", row->id,
                                              row->strategy, row->measured_ms.value_or(0))};
        },
        sources);
}

// Wall seconds one new stage measurement costs, from the graph's first single-op stages (which
// the DP costs anyway); a stage found in the store costs nothing, so when they all were, the
// estimate is kDefaultStageSeconds.
double seconds_per_stage(const Graph& graph, CachedCostModel& cost) {
    const auto single = [&](int id) {
        cost.measure(graph, Stage{StageStrategy::Concurrent, {{id}}});
    };
    single(0);  // the first measurement also builds the measuring engine: not timed
    const auto begin = Clock::now();
    const std::int64_t misses = cost.misses();
    for (int id = 1; id <= std::min(graph.size() - 1, kCalibrationStages); ++id) single(id);
    const std::int64_t measured = cost.misses() - misses;
    if (measured < kCalibrationStages / 2) return kDefaultStageSeconds;
    return std::max(kMinStageSeconds, seconds_since(begin) / double(measured));
}

// Each op's latency alone (a single-op stage), by op id; the DP has costed them all.
std::vector<double> op_latencies_ms(const Graph& graph, CostModel& model) {
    std::vector<double> ms(size_t(graph.size()), 0.0);
    for (const Stage& stage : sequential_schedule(graph).flat_stages()) {
        const StageMeasurement m = model.measure(graph, stage);
        if (!m.ok)
            throw Error(fmt::format("cost model '{}' cannot run op {} of '{}' on its own: {}",
                                    model.name(), stage.groups[0][0], graph.name(), m.error));
        ms[size_t(stage.groups[0][0])] = m.latency_ms;
    }
    return ms;
}

}  // namespace

CostChoice cost_choice_from_string(const std::string& name) {
    if (name == "auto") return CostChoice::Auto;
    if (name == "measured") return CostChoice::Measured;
    if (name == "sim") return CostChoice::Sim;
    throw Error(fmt::format("unknown cost model '{}'; use auto, measured or sim", name));
}

TuningSummary run_tuning_job(const Graph& graph, const TuningOptions& given,
                             const std::function<void(const std::string&)>& notice) {
    const auto begin = Clock::now();
    TuningOptions options = given;
    if (options.time_budget_s > 0 && !options.time_convolutions_by)
        options.time_convolutions_by =
            begin + std::chrono::duration_cast<SteadyClock::duration>(
                        std::chrono::duration<double>(options.conv_timing_share *
                                                      options.time_budget_s));
    const Precision precision = precision_from_string(options.precision);  // before any write
    const std::vector<std::string> contenders = contender_list(options.contenders);

    // Shown once the store is open, so a refused store is the only message the user sees.
    std::vector<std::string> notices;
    const JobDevice where = job_device(options);
    const bool simulate = where.simulated;
    if (!where.no_gpu_reason.empty())
        notices.push_back(fmt::format(
            "notice: no usable GPU ({}): searching with the simulated cost model sim:{}. "
            "Every latency below is an ESTIMATE; nothing is measured end to end.",
            where.no_gpu_reason, options.sim_device));

    // The layout: the caller's; else timed on the GPU, or the precision's default when simulated.
    const ConvChoices known = simulate ? ConvChoices{} : stored_conv_choices(options);
    std::vector<ContestEntry> layout_ms;
    ConvChoices layout_choices;  // stored with the schedule too: the other layout's as well
    TensorLayout layout = options.layout.value_or(default_layout(precision));
    // Where a search's time goes, for its stats. Every second of the total is in one phase:
    // "start" is the device and the stored choices, "calibration" the store and the stage
    // calibration, "handover" the DP's checks and engine teardown, "wrap_up" the memory plans
    // and the record, "store" the write.
    nlohmann::json phase_seconds = {{"start", seconds_since(begin)}};
    auto phase_begin = Clock::now();
    const auto end_phase = [&](const char* name) {
        phase_seconds[name] = seconds_since(phase_begin);
        phase_begin = Clock::now();
    };
    if (!simulate && !options.layout) {
        layout = fastest_layout(graph, options, known, layout_ms, layout_choices, notices);
        end_phase("layout");
    }

    std::unique_ptr<CostModel> inner;
    const db::DeviceRecord& device = where.record;
    std::string device_label;
    std::string device_summary;
    if (simulate) {
        inner = std::make_unique<SimCostModel>(device_profile(options.sim_device), precision);
        device_label = device.name;
        device_summary = describe_device(device);
        if (options.cost == CostChoice::Sim)
            notices.push_back(fmt::format(
                "notice: cost model {} (simulated): every latency is an ESTIMATE, not a "
                "measurement",
                inner->name()));
    } else {
        inner = options.cold_stage_timing
                    ? std::make_unique<MeasuredCostModel>(engine_options_for(options, layout, known),
                                                          MeasuredCostModel::cold_timing())
                    : std::make_unique<MeasuredCostModel>(engine_options_for(options, layout, known));
        const DeviceInfo info = query_device_info(options.device);
        device_label = info.name;
        device_summary = info.summary();
        end_phase("cost_model_setup");
    }

    // Opened only now: bad options and an unknown model never create or touch the file.
    db::ScheduleStore store =
        db::ScheduleStore::open(options.db_path, db::OpenMode::CreateIfMissing);
    for (const std::string& line : notices) notice(line);
    const std::int64_t device_id = store.upsert_device(device);
    const std::string graph_fingerprint = fingerprint(graph);
    const std::int64_t model_id =
        store.upsert_model({0, graph.name(), graph_fingerprint, graph_to_json(graph)});

    SqliteStageCache cache(store, device_id, device_label);
    // Cold-cache stage timings are other numbers than warm ones: their own cache scope (the
    // stage rows' layout column says "nhwc+cold-l2").
    const std::string cache_layout =
        std::string(to_string(layout)) + (!simulate && options.cold_stage_timing ? "+cold-l2" : "");
    CachedCostModel cost(*inner, cache, {device_label, options.precision, cache_layout});

    TuningSummary summary;
    summary.model = graph.name();
    if (const auto inputs = set_inputs_of(graph)) {
        summary.set_inputs = to_string(*inputs);
        summary.set_members = int(graph.members().size());
    }
    summary.fingerprint = graph_fingerprint;
    summary.batch = graph.batch();
    summary.precision = options.precision;
    summary.layout = to_string(layout);
    summary.layout_ms = layout_ms;
    summary.strategy = to_string(options.search.strategy);
    summary.r = options.search.prune ? options.search.max_group_ops : 0;
    summary.s = options.search.prune ? options.search.max_groups : 0;
    summary.cost_model = cost.name();
    summary.simulated = simulate;
    summary.device = device_summary;
    summary.db_path = options.db_path;

    // The time budget: what the layout left, about half for the DP and the rest for the
    // end-to-end phase (checks, refinement, final timings), unless the caller set the DP's own.
    const auto budget_left = [&] { return options.time_budget_s - seconds_since(begin); };
    SearchOptions search_options = options.search;
    if (options.time_budget_s > 0 && search_options.time_budget_s <= 0)
        search_options.time_budget_s = std::max(1.0, options.dp_share * budget_left());
    // On a GPU the stages are measured: the DP's windows narrow until the stages they need fit
    // the DP's time at what a stage measurement costs here.
    if (!simulate && search_options.time_budget_s > 0 && search_options.max_stages == 0) {
        const double per_stage = seconds_per_stage(graph, cost);
        search_options.max_stages = std::max<std::int64_t>(
            kMinDpStages, std::int64_t(search_options.time_budget_s / per_stage));
        notice(fmt::format("search: a stage measurement takes {:.1f} ms here: the DP's windows "
                           "are sized for at most {} stages",
                           1e3 * per_stage, search_options.max_stages));
    }
    notice(fmt::format("search: IOS DP ({}, {}), {}", to_string(search_options.strategy),
                       search_options.prune ? fmt::format("r={} s={}", search_options.max_group_ops,
                                                          search_options.max_groups)
                                            : std::string("no pruning"),
                       search_options.time_budget_s > 0
                           ? fmt::format("at most {:.0f} s", search_options.time_budget_s)
                           : std::string("no time limit")));
    end_phase("calibration");
    const SearchResult result = ios_search(graph, cost, search_options);
    end_phase("search");
    summary.search_seconds = phase_seconds["search"].get<double>();
    validate(graph, result.schedule);
    summary.search_stats = result.stats;
    summary.dp_predicted_ms = result.latency_ms;
    const std::vector<double> op_ms = op_latencies_ms(graph, cost);
    summary.sequential_predicted_ms = std::accumulate(op_ms.begin(), op_ms.end(), 0.0);
    cache.flush();  // the last batch of stage measurements; a failed write is an error here
    summary.stages_costed = cost.misses();
    summary.cache_hits = cost.hits();
    const nlohmann::json cost_seconds = cost.work_seconds();  // before the measuring model goes
    summary.sequential_stages = graph.size();
    inner.reset();  // frees the measuring engine's GPU memory before the end-to-end run

    nlohmann::json stats = {{"cost_model", summary.cost_model},
                            {"simulated", simulate},
                            {"device", device_summary},
                            {"search", stats_to_json(result.stats)},
                            {"search_seconds", summary.search_seconds},
                            {"stages_costed", summary.stages_costed},
                            {"cache_hits", summary.cache_hits},
                            {"cost_seconds", cost_seconds},
                            {"prune", options.search.prune},
                            {"reference_endings", options.search.reference_endings},
                            {"time_budget_s", options.time_budget_s},
                            {"dp_time_budget_s", search_options.time_budget_s > 0
                                                     ? nlohmann::json(search_options.time_budget_s)
                                                     : nlohmann::json(nullptr)},
                            {"placements", arena_placements(options.placements)},
                            {"dp_predicted_ms", summary.dp_predicted_ms},
                            {"dp_schedule", schedule_to_json(result.schedule)},
                            {"sequential_predicted_ms", summary.sequential_predicted_ms},
                            {"layout", summary.layout}};
    for (const ContestEntry& e : layout_ms) stats["layout_sequential_ms"][e.strategy] = e.median_ms;
    db::ScheduleRecord row;
    row.model_id = model_id;
    row.device_id = device_id;
    row.batch = graph.batch();
    row.precision = options.precision;
    row.layout = summary.layout;
    row.strategy = summary.strategy;
    row.r = summary.r;
    row.s = summary.s;

    std::vector<Baseline> baselines;
    for (const std::string& name : contenders)
        baselines.push_back({name, make_baseline(name, graph), {}});
    if (!graph.members().empty()) {
        // A model set always meets what its user has without iostune's co-scheduling.
        std::vector<std::string> sources;
        baselines.push_back({"streams", member_streams_schedule(graph), {}});
        baselines.push_back({"back-to-back",
                             stored_back_to_back(graph, store, device_id, options.precision,
                                                 sources),
                             {}});
        stats["back_to_back_members"] = sources;
        for (const std::string& line : sources) notice("back-to-back baseline: " + line);
    }
    const RefineCandidate searched{summary.strategy, result.schedule};
    // Every schedule timed from here on runs within the memory limit (memory_fit.h).
    const EngineOptions plan_options = engine_options_for(options, layout, known);
    const MemoryFitter fitter(graph, Engine::memory_plan_options(plan_options),
                              options.memory_limit);
    if (fitter.limited())
        notice(fmt::format("memory: every schedule timed is fitted into {:.2f}x the sequential "
                           "liveness bound ({:.1f} MiB)",
                           fitter.ratio(), double(fitter.limit_bytes()) / (1 << 20)));
    RefineResult refine;
    std::optional<Baseline> kept;  // a baseline that measured faster than the refined schedule
    if (simulate) {
        // Estimates on both sides: the report shows them as such. The refinement plays the
        // schedules out on the analytic timeline, a fixed number of moves (deterministic).
        SimulatedScheduleEvaluator evaluator(
            graph, SimCostModel(device_profile(options.sim_device), precision));
        baselines.insert(baselines.begin(), Baseline{"sequential", sequential_schedule(graph), {}});
        const std::vector<RefineCandidate> candidates =
            refine_candidates(graph, searched, baselines);
        RefineOptions refine_options;
        refine_options.seed = options.seed;
        refine_options.max_evaluations = kSimulatedRefineMoves;
        refine_options.time_budget_s = std::numeric_limits<double>::infinity();
        refine_options.fit = [&](const Schedule& s) { return fitter.fit(s); };
        end_phase("handover");
        refine = refine_schedule(graph, candidates, evaluator, refine_options);
        end_phase("refine");
        // Sequential on the same timeline, so the estimated speedup compares like with like.
        for (const CandidateTiming& c : refine.candidates)
            if (c.name == "sequential" && c.form == ScheduleForm::Staged)
                summary.sequential_predicted_ms = c.latency_ms;
        row.sequential_ms = summary.sequential_predicted_ms;
    } else {
        end_phase("handover");
        const auto e2e_budget_left = [&] {
            return options.time_budget_s > 0 ? budget_left()
                                             : std::numeric_limits<double>::infinity();
        };
        EndToEnd e2e = measure_and_refine(graph, searched, std::move(baselines), options, layout,
                                          known, op_ms, e2e_budget_left, fitter, notice);
        end_phase("end_to_end");
        refine = e2e.refine;
        summary.measured_ms = e2e.schedule.median_ms;
        summary.dp_measured_ms = e2e.dp->median_ms;
        summary.sequential_ms = e2e.baselines.front().timing.median_ms;
        summary.measured_cv = e2e.schedule.cv();
        summary.max_abs_diff = e2e.max_abs_diff;
        summary.tolerance = e2e.tolerance;
        const std::vector<ContestEntry> entries =
            contest_entries(summary.strategy, e2e.schedule, e2e.baselines);
        nlohmann::json baseline_timings = nlohmann::json::object();
        for (const Baseline& b : e2e.baselines) {
            summary.baseline_ms.push_back({b.name, b.timing.median_ms});
            baseline_timings[b.name] = timing_json(b.timing);
            baseline_timings[b.name]["form"] = to_string(b.schedule.form);
        }
        const size_t best = e2e.contest_entrants.empty()
                                ? fastest_entry(entries)
                                : fastest_entry(entries, e2e.contest_entrants);
        if (best > 0) kept = e2e.baselines[best - 1];
        summary.kept_strategy = entries[best].strategy;
        summary.sequential_kept = summary.kept_strategy == "sequential";
        row.measured_ms = summary.measured_ms;
        row.sequential_ms = summary.sequential_ms;
        // What the schedule ran with, and what choosing the layout timed in the other one, so
        // that a later search of this model times no convolution again (stored_conv_choices).
        ConvChoices ran = e2e.conv_choices;
        ran.merge(layout_choices);
        row.conv_choices = conv_choices_to_json(ran);
        stats["end_to_end"] = timing_json(e2e.schedule);
        stats["dp_end_to_end"] = timing_json(*e2e.dp);
        stats["dp_end_to_end"]["form"] = to_string(e2e.dp_form);
        stats["baselines_end_to_end"] = baseline_timings;
        stats["validation"] = {{"max_abs_diff", e2e.max_abs_diff}, {"tolerance", e2e.tolerance}};
        // Counted per planned convolution, as `count` and `pinned_from_store` are; the choices
        // (and the store, and `iostune report`) are per shape, which repeated blocks share.
        const auto quick_shapes =
                std::count_if(e2e.conv_choices.begin(), e2e.conv_choices.end(),
                              [](const auto& entry) { return entry.second.quick; });
        stats["convolutions"] = {{"count", e2e.convolutions},
                                 {"shapes", e2e.conv_choices.size()},
                                 {"pinned_from_store", e2e.pinned_convolutions},
                                 {"chosen_quickly", e2e.quick_convolutions},
                                 {"shapes_chosen_quickly", quick_shapes}};
        if (e2e.quick_convolutions > 0)
            notice(fmt::format(
                "convolutions: {} of {} ({} of {} shapes) chosen quickly, from a few candidates, "
                "past {:.0f}% of the time budget; each later search of this model times more of "
                "them in full (a longer --time-budget: all)",
                e2e.quick_convolutions, e2e.convolutions, quick_shapes, e2e.conv_choices.size(),
                100 * options.conv_timing_share));
        stats["kept_strategy"] = summary.kept_strategy;
        stats["close_contest"] = e2e.close_contest;
        stats["final_timing"] = e2e.final_timing;
        if (!e2e.refine_timing.is_null()) stats["refine_timing"] = e2e.refine_timing;
        stats["conv_objective"] = e2e.conv_objective;
        summary.conv_objective = e2e.conv_objective["chosen"].get<std::string>();
        stats["sequential_kept"] = summary.sequential_kept;
    }
    // The refinement's own latency of what it returns: a measurement end to end (an estimate
    // when simulated), which is what the row's prediction is; the DP's sum of stages is kept in
    // the stats beside it.
    summary.schedule = refine.schedule;
    summary.predicted_ms = refine.latency_ms;
    summary.refined_from = refine.start;
    summary.refine_changes = int(refine.kept.size()) - 1;
    summary.stages = int(refine.schedule.flat_stages().size());
    row.predicted_ms = summary.predicted_ms;
    row.schedule = schedule_to_json(refine.schedule);
    // The memory its plan holds (src/memory_planner.h), computed on the CPU as replay plans it.
    row.arena_bytes =
        Engine::plan_memory_for(graph, refine.schedule, plan_options).activation_bytes();
    stats["memory_limit"] = {{"ratio", options.memory_limit > 0 ? nlohmann::json(options.memory_limit)
                                                                : nlohmann::json(nullptr)},
                             {"limit_bytes", fitter.limit_bytes()},
                             {"lower_bound_bytes", fitter.lower_bound_bytes()},
                             {"arena_bytes", *row.arena_bytes}};
    stats["refine"] = refine_to_json(refine);
    if (simulate) summary.kept_strategy = summary.strategy;
    end_phase("wrap_up");
    summary.total_seconds = seconds_since(begin);
    stats["total_seconds"] = summary.total_seconds;
    stats["phase_seconds"] = phase_seconds;
    row.search_stats = stats;
    summary.stats = stats;
    summary.schedule_id = store.add_schedule(row);
    summary.best_schedule_id = summary.schedule_id;

    if (kept) {
        // Stored beside the searched schedule, which stays for the record; replay takes the
        // fastest measured row of the key, so it gets this one.
        db::ScheduleRecord baseline = row;
        baseline.strategy = kept->name;
        baseline.r = 0;
        baseline.s = 0;
        baseline.predicted_ms = kept->name == "sequential"
                                    ? std::optional<double>(summary.sequential_predicted_ms)
                                    : std::nullopt;  // its stages were not all costed
        baseline.measured_ms = kept->timing.median_ms;
        baseline.schedule = schedule_to_json(kept->schedule);
        baseline.arena_bytes =
            Engine::plan_memory_for(graph, kept->schedule, plan_options).activation_bytes();
        baseline.search_stats = {{"cost_model", summary.cost_model},
                                 {"simulated", false},
                                 {"device", device_summary},
                                 {"baseline_of_schedule", summary.schedule_id},
                                 {"end_to_end", timing_json(kept->timing)},
                                 // it runs on the searched row's kernels (db/schedule_origin.h)
                                 {"conv_objective", stats["conv_objective"]}};
        summary.best_schedule_id = store.add_schedule(baseline);
    }
    // The write comes after the record it writes: the summary (not the row) shows its time.
    end_phase("store");
    summary.total_seconds = seconds_since(begin);
    summary.stats["total_seconds"] = summary.total_seconds;
    summary.stats["phase_seconds"] = phase_seconds;
    return summary;
}

}  // namespace iostune
