#include "tuning/tuning_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "db/schedule_store.h"
#include "replay/device_match.h"
#include "search/baselines.h"
#include "search/model_set_baselines.h"
#include "search/cached_cost_model.h"
#include "search/critical_priorities.h"
#include "search/search_stats.h"
#include "search/sim_cost_model.h"
#include "src/engine/device_info.h"
#include "src/engine/engine.h"
#include "src/error.h"
#include "src/memory_fit.h"
#include "src/model_json.h"
#include "src/model_set.h"
#include "src/output_agreement.h"
#include "src/precision.h"
#include "src/stopwatch.h"
#include "src/weights.h"
#include "search/schedule_refinement.h"
#include "search/timeline_sim.h"
#include "src/engine/arena_placements.h"
#include "tuning/job_device.h"
#include "tuning/kernel_moves.h"
#include "tuning/measured_cost_model.h"
#include "tuning/measured_schedule_evaluator.h"
#include "tuning/objective_trial.h"
#include "tuning/output_divergence.h"
#include "tuning/schedule_contest.h"
#include "tuning/sqlite_stage_cache.h"

namespace iostune {

namespace {

using Clock = SteadyClock;

// How a time budget is spent (docs/search.md has the measurements behind the split): the DP
// gets TuningOptions::dp_share of what the layout choice left, the measured refinement this
// share of what the DP left (the rest: checks and the final timings of every schedule kept for
// the record).
constexpr double kRefineShare = 0.75;
// The probe of the layout that is not the precision's default may take this share of the budget
// (fastest_layout): GoogLeNet's and Inception V3's NCHW engines took about 4 s (call90).
constexpr double kLayoutProbeShare = 0.15;
// Without a budget: the refinement's wall time on a GPU, its moves when simulated.
constexpr double kUnboundedRefineSeconds = 60;
// The final timings' repeats are cut to fit what the budget left (repeats_within_placed),
// never below this many.
constexpr int kMinFinalRepeats = 20;
// The refinement's timings are cut to fit its time too, never below this many (two turns of
// the evaluator's five).
constexpr int kMinRefineRepeats = 10;
// A baseline measured faster than the refined schedule by at most this much is timed again
// beside it, in turns, before the contest is decided.
constexpr double kCloseContest = 0.02;
constexpr int kSimulatedRefineMoves = 400;
// A kernel move (kernel_moves.h) is kept when the refined schedule times at least this much
// faster with it, twice (the refinement's margin for a move), each timing as the refinement's
// evaluator times a schedule, launch by launch in turns with the kernels kept so far.
constexpr double kKernelMoveGain = 0.003;
// The kernel moves' most share of the refinement's time (they run first, on its start).
constexpr double kKernelMoveShare = 0.5;
// Sizing the DP's windows to its time (seconds_per_stage): stages timed to estimate, the estimate
// when they were all in the store (measured on the H100, docs/search.md), its floor, and the
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

struct Baseline {
    std::string name;
    Schedule schedule;
    LatencyStats timing;
};

struct EndToEnd {
    RefineResult refine;              // what the refinement tried and kept
    LatencyStats schedule;            // the refined schedule, timed as replay times it
    std::optional<LatencyStats> dp;   // the DP's own schedule (its faster form), likewise
    ScheduleForm dp_form = ScheduleForm::Staged;
    std::vector<Baseline> baselines;  // sequential first, then the contenders: their faster form
    double max_abs_diff = 0, tolerance = 0;
    ConvChoices conv_choices;  // what all ran with; stored so a replay runs the same kernels
    // How they were chosen: {"chosen": "alone"|"corun", "<objective>": {"ms", "from"}, ...}
    nlohmann::json conv_objective;
    int convolutions = 0, pinned_convolutions = 0;  // pinned: timed before, read from the store
    // A close contest timed again in turns: its entrants, each one's times; null when none.
    nlohmann::json close_contest;
    // Entries of the close contest when one ran (0: the refined schedule, k: baselines[k - 1]):
    // the kept schedule is the fastest of them, all timed alike.
    std::vector<size_t> contest_entrants;
    // The final timings' repeats, the launch time they were sized for and the time left.
    nlohmann::json final_timing;
    // The repeats of each of the refinement's timings, when cut to fit its time.
    nlohmann::json refine_timing;
};

// The final contest's entries in the order `contest_entrants` counts them: the refined
// schedule (named `refined_name`) first, then every baseline in order.
std::vector<ContestEntry> contest_entries(const std::string& refined_name,
                                          const LatencyStats& refined,
                                          const std::vector<Baseline>& baselines) {
    std::vector<ContestEntry> entries = {{refined_name, refined.median_ms}};
    for (const Baseline& b : baselines) entries.push_back({b.name, b.timing.median_ms});
    return entries;
}

// `known`: convolution choices timed earlier on this device (stored_conv_choices); those made
// for `objective` are pinned.
EngineOptions engine_options_for(const TuningOptions& options, TensorLayout layout,
                                 const ConvChoices& known,
                                 ConvObjective objective = ConvObjective::Alone) {
    EngineOptions engine_options;
    engine_options.precision = precision_from_string(options.precision);
    engine_options.layout = layout;
    engine_options.device = options.device;
    engine_options.conv_choices = conv_choices_for(known, objective);
    engine_options.conv_objective = objective;
    engine_options.arena_room = arena_room(options.placements);
    return engine_options;
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
    return conv_choices_from_json(
        store.conv_choices_on(to_device_record(query_device_info(options.device))),
        fmt::format("the schedules in '{}'", options.db_path));
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

// The priority levels the refinement tries on its start (docs/search.md, "Critical ops first"),
// from each op's slack with the DP's single-op times: the ops within 2% of the critical path
// above the rest, and the same graded in three levels; each from the data's slack and from the
// slack on the start's own launch order (fewer hand-overs between a lane's streams).
std::vector<PriorityVariant> priority_variants(const Graph& graph, const Schedule& start,
                                               const std::vector<double>& op_ms) {
    const std::vector<double> critical{0.02}, graded{0.25, 0.1, 0.02};
    return {{"critical", critical_priorities(graph, op_ms, critical)},
            {"graded", critical_priorities(graph, op_ms, graded)},
            {"scheduled critical", scheduled_critical_priorities(graph, start, op_ms, critical)},
            {"scheduled graded", scheduled_critical_priorities(graph, start, op_ms, graded)}};
}

// What the refinement starts from: the DP's schedule, every baseline (sequential only staged:
// that is what sequential means) and "asap", the sequential schedule in dataflow form (every op
// as soon as its inputs are ready, on up to eight lanes).
std::vector<RefineCandidate> refine_candidates(const Graph& graph, const RefineCandidate& searched,
                                               const std::vector<Baseline>& baselines) {
    std::vector<RefineCandidate> candidates{searched};
    for (const Baseline& b : baselines) {
        candidates.push_back({b.name, b.schedule});
        if (b.name == "sequential") candidates.back().only_form = ScheduleForm::Staged;
    }
    candidates.push_back({"asap", sequential_schedule(graph), ScheduleForm::Dataflow});
    return candidates;
}

// The end-to-end phase's engine, with its convolutions chosen for the objective that wins
// (docs/search.md, "Kernels chosen for co-running"). With one objective, that one's. With
// several, an engine of each times every refinement candidate in its forms (fitted into the
// memory limit) as replay runs it, and the engine whose fastest candidate is fastest is kept:
// kernels chosen to run alone win where little runs at once, kernels chosen to co-run where
// much does. `record` gets the choice and each one's fastest candidate.
Engine end_to_end_engine(const Graph& graph, const std::vector<RefineCandidate>& candidates,
                         const TuningOptions& options, TensorLayout layout,
                         const ConvChoices& known, const MemoryFitter& fitter,
                         const std::function<double()>& budget_left_s, nlohmann::json& record,
                         std::map<ConvObjective, ConvChoices>& tried_choices,
                         const std::function<void(const std::string&)>& notice) {
    const std::vector<ConvObjective>& objectives = options.conv_objectives;
    if (objectives.empty()) throw Error("the search needs at least one convolution objective");
    const auto engine_for = [&](ConvObjective objective) {
        return Engine(graph, engine_options_for(options, layout, known, objective));
    };
    record = {{"chosen", to_string(objectives.front())}};
    if (objectives.size() == 1) return engine_for(objectives.front());
    std::optional<Engine> chosen;
    double chosen_ms = 0;
    double last_trial_s = 0;
    for (const ConvObjective objective : objectives) {
        const char* chosen_to = objective == ConvObjective::Alone ? "to run alone" : "to co-run";
        // A trial is optional; the refinement and the final timings come after it regardless.
        if (const double left_s = budget_left_s();
            chosen && !another_objective_fits(left_s, last_trial_s)) {
            record[to_string(objective)] = {{"skipped", "time budget"},
                                            {"budget_left_s", left_s},
                                            {"last_trial_s", last_trial_s}};
            notice(fmt::format("convolutions chosen {}: not tried, {:.1f} s of the time budget "
                               "left and a trial took {:.1f} s (the checks, the refinement and "
                               "the final timings need about three trials' time after it)",
                               chosen_to, left_s, last_trial_s));
            continue;
        }
        const auto begin = Clock::now();
        Engine engine = engine_for(objective);
        const double setup_s = seconds_since(begin);
        engine.set_random_inputs(7);
        // Timed as the refinement times (outputs are checked later, on the engine kept).
        std::optional<double> fastest;
        std::string from;
        {
            MeasuredScheduleEvaluator timing(engine, [](const Schedule&) { return std::string(); });
            for (const RefineCandidate& c : candidates) {
                for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow}) {
                    if (c.only_form && *c.only_form != form) continue;
                    // One the engine cannot run is skipped: the refinement reports it.
                    const ScheduleMeasurement m =
                        timing.measure(fitter.fit(with_form(c.schedule, form)));
                    if (!m.ok || (fastest && m.latency_ms >= *fastest)) continue;
                    fastest = m.latency_ms;
                    from = fmt::format("{} ({})", c.name, to_string(form));
                }
            }
        }
        last_trial_s = seconds_since(begin);
        if (!fastest) continue;
        tried_choices[objective] = engine.conv_choices();
        record[to_string(objective)] = {
            {"ms", *fastest}, {"from", from}, {"engine_seconds", setup_s},
            {"trial_seconds", last_trial_s},
            {"pinned", engine.pinned_conv_count()}, {"convolutions", engine.conv_count()}};
        notice(fmt::format("convolutions chosen {}: fastest start {:.4f} ms ({}); engine set up "
                           "in {:.1f} s, {} of {} convolutions pinned from the store",
                           chosen_to, *fastest, from, setup_s, engine.pinned_conv_count(),
                           engine.conv_count()));
        if (!chosen || *fastest < chosen_ms) {
            record["chosen"] = to_string(objective);
            chosen.emplace(std::move(engine));
            chosen_ms = *fastest;
        }
    }
    if (!chosen) return engine_for(objectives.front());  // nothing ran: the refinement says why
    chosen->release_retired();  // the trial's graphs are gone
    return std::move(*chosen);
}

// The faster form of candidate `name` as the refinement timed it (staged if it timed neither).
ScheduleForm faster_form(const RefineResult& refine, const std::string& name) {
    std::optional<CandidateTiming> best;
    for (const CandidateTiming& c : refine.candidates)
        if (c.name == name && (!best || c.latency_ms < best->latency_ms)) best = c;
    return best ? best->form : ScheduleForm::Staged;
}

// Whether the final contest times baseline `b` in both forms: every contender (greedy, nimble,
// ...); not sequential (staged is what sequential means) nor back to back (built in its
// members' forms).
bool both_forms_in_contest(const Baseline& b) {
    return b.name != "sequential" && b.name != "back-to-back";
}

// Samples of one schedule in a row in the close contest's turns, after a launch not timed
// (timing.h: the first launch after another graph's is slower; replay repeats one graph).
constexpr int kContestPerTurn = 10;

// The close contest (schedule_contest.h, close_contest_entrants): when a baseline timed faster
// than the refined schedule by at most kCloseContest, the refined schedule and every baseline
// timed faster than it are timed again together, in turns (measure_interleaved) at every
// placement; those times replace theirs, and the kept schedule is the fastest of them
// (`result.contest_entrants`). Measured one after the other, two schedules differ by the GPU's
// drift and their placement about as much (the contest kept GoogLeNet TF32's greedy by 0.2% in
// call80, by under 1% in call69). Its repeats are the final timings', cut to fit what is left
// (the reserve holds two entrants); when even kMinFinalRepeats would not fit, it is not run.
// `result.close_contest` records it.
void settle_close_contest(Engine& engine, EndToEnd& result, std::vector<Baseline>& baselines,
                          const MeasureOptions& timing, const std::function<double()>& left_s,
                          double capture_s, double launch_ms,
                          const std::vector<size_t>& placements,
                          const std::function<void(const std::string&)>& notice) {
    const std::vector<ContestEntry> entries =
        contest_entries("refined", result.schedule, baselines);
    const std::vector<size_t> entrants = close_contest_entrants(entries, kCloseContest);
    if (entrants.empty()) return;
    std::vector<Schedule> schedules;
    for (const size_t i : entrants)
        schedules.push_back(i == 0 ? result.refine.schedule : baselines[i - 1].schedule);
    const int count = int(entrants.size());
    const double captures_s = double(count * int(placements.size())) * capture_s;
    const double left = left_s();
    const MeasureOptions contest =
        repeats_within_placed(timing, left - captures_s, 0, count, kContestPerTurn,
                              placements.size(), launch_ms, kMinFinalRepeats);
    // Not at all when even its fewest repeats would overrun the time budget: the budget is the
    // user's, and the first timings then decide (as they do for a contest that is not close).
    const double needed_s = captures_s + placed_in_turns_seconds(contest, count, kContestPerTurn,
                                                                 placements.size(), launch_ms);
    if (needed_s > left) {
        notice(fmt::format("close contest: not run, its {} entrants would take {:.1f} s at "
                           "least, {:.1f} s are left of the time budget",
                           count, needed_s, std::max(left, 0.0)));
        result.close_contest = {{"skipped", "out of time"},
                                {"entrants", count},
                                {"least_s", needed_s},
                                {"left_s", left}};
        return;
    }
    const PlacedTimings timed =
        time_placed_in_turns(engine, schedules, contest, kContestPerTurn, placements);
    nlohmann::json record = {{"repeats", contest.repeats},
                             {"placements", placements.size()},
                             {"entrants", nlohmann::json::array()}};
    std::string told;
    for (size_t k = 0; k < entrants.size(); ++k) {
        if (!timed.stats[k])  // each ran in the final timings just before
            throw InternalError("the close contest could not run a schedule the final timings "
                                "ran: " + timed.errors[k]);
        const ContestEntry& e = entries[entrants[k]];
        const LatencyStats& turns = *timed.stats[k];
        record["entrants"].push_back(
            {{"name", e.strategy}, {"first_ms", e.median_ms}, {"in_turns_ms", turns.median_ms}});
        told += fmt::format("{}{} {:.4f} -> {:.4f}", k == 0 ? "" : ", ", e.strategy, e.median_ms,
                            turns.median_ms);
        if (entrants[k] == 0)
            result.schedule = turns;
        else
            baselines[entrants[k] - 1].timing = turns;
    }
    notice(fmt::format("close contest: timed again in turns at {} placement{}, {} repeats each "
                       "(ms): {}",
                       placements.size(), placements.size() == 1 ? "" : "s", contest.repeats,
                       told));
    result.close_contest = std::move(record);
    result.contest_entrants = entrants;
}

// On the refinement's start, before its moves: each convolution's other timed kernels (the
// other objective's choice when both objectives' trials ran, then its first `runner_ups`
// runners-up) tried one signature at a time on the start (kernel_moves.h), on `engine`, timed in
// turns of `per_turn` samples, kept where it times faster twice and computes what the
// sequential schedule does (`difference` of the engine's output as it is). `left_s()`: seconds
// left past the final timings' reserve; a move starts only while it holds one move, its
// confirmation and the closing check of the kept ones together.
// `record["kernel_moves"]` says what happened; "chosen" becomes "mixed" when a move was kept
// (and not put back). True then.
bool kernel_moves(Engine& engine, const Schedule& schedule,
                  const std::map<ConvObjective, ConvChoices>& tried,
                  const std::function<double()>& left_s, double launch_ms, double capture_s,
                  int per_turn, int runner_ups, const std::function<std::string()>& difference,
                  nlohmann::json& record,
                  const std::function<void(const std::string&)>& notice) {
    const auto begin = Clock::now();
    std::vector<ConvChoices> others;
    for (const auto& [objective, choices] : tried) others.push_back(choices);
    const ConvChoices current = engine.conv_choices();
    for (ConvChoices& rank : engine.conv_runners_up(size_t(runner_ups)))
        others.push_back(std::move(rank));
    const std::vector<KernelMove> moves =
        kernel_move_candidates(engine.op_plans(), current, others);
    // A kernel one of the objectives chose for the signature (else a runner-up).
    const auto an_objectives = [&](const std::string& signature, const ConvChoice& choice) {
        return std::any_of(tried.begin(), tried.end(), [&](const auto& t) {
            const auto it = t.second.find(signature);
            return it != t.second.end() && same_kernel(it->second, choice);
        });
    };
    const auto from_objectives = std::count_if(moves.begin(), moves.end(), [&](const auto& m) {
        return an_objectives(m.signature, m.choice);
    });
    nlohmann::json& out = record["kernel_moves"];
    out = {{"candidates", moves.size()}, {"from_objectives", from_objectives},
           {"per_turn", per_turn}, {"runners_up", runner_ups}};
    if (moves.empty()) {
        out["skipped"] = "no convolution has another timed kernel to try";
        return false;
    }
    const MeasureOptions timing{3, 25, 1, 0, 0, RepeatMode::EachRepeat};
    // A move: three captures and two timings of two graphs in turns (at one placement); the
    // check of the kept ones together at the end is one more, held back from the last move's.
    const double move_s =
        3 * capture_s + 3 * placed_in_turns_seconds(timing, 2, per_turn, 1, launch_ms);
    KernelMovesOptions options;
    options.min_gain = kKernelMoveGain;
    options.out_of_time = [&] { return !(left_s() >= move_s); };
    EngineKernelEvaluator evaluator(engine, schedule, difference, timing, per_turn);
    const KernelMovesResult r = move_kernels(moves, current, evaluator, options);
    out["timed"] = r.timed;
    out["refused"] = r.refused;
    out["kept"] = r.kept.size();
    out["unconfirmed"] = r.unconfirmed;
    out["least_ratio"] = r.least_ratio;
    out["start_ms"] = r.start_ms;
    out["end_ms"] = r.end_ms;
    if (r.check_start_ms > 0) {
        out["check_start_ms"] = r.check_start_ms;
        out["check_kept_ms"] = r.check_kept_ms;
        out["reverted"] = r.reverted;
    }
    out["kept_runners_up"] = std::count_if(r.kept.begin(), r.kept.end(), [&](const auto& s) {
        return !an_objectives(s, r.choices.at(s));
    });
    out["out_of_time"] = r.out_of_time;
    out["seconds"] = seconds_since(begin);
    if (r.disagreed > 0) {
        out["disagreed"] = r.disagreed;
        notice(fmt::format("warning: {} kernel switch(es) computed another result ({}); none was "
                           "kept. This is an engine bug: please report it.",
                           r.disagreed, r.first_disagreement));
    }
    if (r.reverted > 0)
        notice(fmt::format("kernels: the {} switches kept were together no faster than the "
                           "start ({:.4f} against {:.4f} ms): all put back",
                           r.reverted, r.check_kept_ms, r.check_start_ms));
    notice(fmt::format("kernels: {} of {} convolution switches kept ({} of the candidates the "
                       "other objective's choice, the rest runners-up; {} timed{}) in {:.1f} s",
                       r.kept.size(), moves.size(), from_objectives, r.timed,
                       r.out_of_time ? ", stopped by the time budget" : "",
                       out["seconds"].get<double>()));
    if (r.kept.empty()) return false;
    out["from"] = record["chosen"];
    record["chosen"] = "mixed";
    return true;
}

// Everything end to end, on one engine (same weights, same input, same per-op algorithms), so
// the only numerical differences come from merged convolutions and the only timing differences
// from the schedules: the sequential output as the reference, every candidate's output in both
// forms checked against it, the measured refinement (schedule_refinement.h), the refined
// schedule's output checked, and the final timings, as replay measures, of the refined
// schedule, the DP's faster form and each baseline's (contenders in both forms, the faster
// standing for it). (With several convolution objectives, the engine is the winner's of
// end_to_end_engine.) `budget_left_s()`: seconds left of the search's budget (infinite without
// one). Once the checks are done, the refinement gets kRefineShare of what is left after the
// final timings' least share; the final timings get the rest.
EndToEnd measure_and_refine(const Graph& graph, const RefineCandidate& searched,
                            std::vector<Baseline> baselines, const TuningOptions& options,
                            TensorLayout layout, const ConvChoices& known,
                            const std::vector<double>& op_ms,
                            const std::function<double()>& budget_left_s,
                            const MemoryFitter& fitter,
                            const std::function<void(const std::string&)>& notice) {
    baselines.insert(baselines.begin(), Baseline{"sequential", sequential_schedule(graph), {}});
    std::vector<RefineCandidate> candidates = refine_candidates(graph, searched, baselines);
    EndToEnd result;
    std::map<ConvObjective, ConvChoices> tried_choices;
    Engine engine = end_to_end_engine(graph, candidates, options, layout, known, fitter,
                                      budget_left_s, result.conv_objective, tried_choices, notice);
    const EngineOptions& engine_options = engine.options();
    engine.set_random_inputs(7);

    // The sequential schedule's result: every graph output (an FPN's levels, a set's models').
    std::vector<HostTensor> reference;
    // Each checked run starts from an arena refilled with seeded values, as perturbed replay's
    // do: a launch reading a tensor before its producer wrote it then reads other values than
    // the same launch left there the run before (which would hide the race).
    uint64_t refills = 0;
    const auto outputs_of = [&](const Schedule& s) {
        const CudaGraphExec exec = engine.capture(s);
        engine.refill_arena(++refills);
        exec.launch(engine.origin_stream());
        return engine.read_outputs();
    };
    // How a schedule's outputs differ from the reference ("" when within tolerance).
    const auto difference = [&](const std::vector<HostTensor>& outputs) -> std::string {
        for (size_t k = 0; k < outputs.size(); ++k) {
            const OutputAgreement a =
                output_agreement(outputs[k], reference[k], engine_options.precision);
            if (!a.agrees())
                return fmt::format(
                    "a different result than the sequential schedule{} (max |difference| {:.3g}, "
                    "tolerance {:.3g})",
                    outputs.size() > 1 ? " in " + describe_output(graph, int(k)) : std::string(),
                    a.max_abs_diff, a.tolerance);
            result.max_abs_diff = std::max(result.max_abs_diff, a.max_abs_diff);
        }
        return "";
    };
    // A diagnostic run (docs/search.md) also keeps every op's output at the start, so that a
    // failed check can name the first op whose result changed since.
    const bool diagnostic = std::getenv("IOSTUNE_CHECK_EVERY_SCHEDULE") != nullptr;
    std::optional<OpSnapshot> sequential_at_start;
    const auto disagreement = [&](const Schedule& s) { return difference(outputs_of(s)); };
    const auto diagnose = [&](const Schedule& s) {
        return diagnose_divergence(engine, s, baselines.front().schedule, disagreement,
                                   sequential_at_start ? &*sequential_at_start : nullptr);
    };
    const auto check = [&](const Schedule& s, const std::string& what) {
        const std::string why = disagreement(s);
        if (why.empty()) return;
        const std::string diagnosis = diagnose(s);
        throw Error(fmt::format("the {} schedule of '{}' computes {}; nothing was stored. This is "
                                "a bug in the engine or the merge rules: please report it with "
                                "the model, this {}\nand this schedule (iostune's JSON; `iostune "
                                "replay --schedule-file F --validate --perturb 20` replays it): {}",
                                what, graph.name(), why, diagnosis, schedule_to_json(s).dump()));
    };
    reference = outputs_of(baselines.front().schedule);
    if (diagnostic) sequential_at_start = snapshot_ops(engine, baselines.front().schedule);
    for (size_t k = 0; k < reference.size(); ++k) {
        require_finite_reference(reference[k], engine_options.precision, name_output(graph, int(k)));
        result.tolerance =
            std::max(result.tolerance, output_tolerance(reference[k], engine_options.precision));
    }
    // Each as the refinement will time it: fitted into the memory limit. One with barriers of
    // its own (back to back in its members' forms) also as built, as the final contest times it.
    for (const RefineCandidate& c : candidates) {
        for (const ScheduleForm form : {ScheduleForm::Staged, ScheduleForm::Dataflow})
            check(fitter.fit(with_form(c.schedule, form)),
                  fmt::format("{} ({})", c.name, to_string(form)));
        if (!c.schedule.barriers.empty())
            check(fitter.fit_as_built(c.schedule), c.name + " (as built)");
    }

    // In a diagnostic run the first schedule of the refinement that disagrees is diagnosed
    // there and then, before later re-plans can hide what changed.
    bool diagnosed = false;
    const std::vector<size_t> placements = arena_placements(options.placements);
    MeasuredScheduleEvaluator evaluator(engine, [&](const Schedule& s) {
        std::string why = disagreement(s);
        if (why.empty() || !diagnostic || diagnosed) return why;
        diagnosed = true;
        notice("refine: the first schedule that disagrees, " + diagnose(s));
        return why;
    }, MeasuredScheduleEvaluator::default_timing(), placements);
    RefineOptions refine_options;
    refine_options.seed = options.seed;
    // What one launch takes, about: the sequential schedule's, as a rule the slowest; and what
    // capturing a schedule takes (NASNet-A's at batch 16: 40 ms, call116). The final timings
    // (the refined schedule, the DP's, each baseline, a close contest's two) need a capture and
    // at least kMinFinalRepeats launches each.
    double capture_s = 0, launch_ms = 0;
    {
        const auto capture_begin = Clock::now();
        const CudaGraphExec sequential_exec = engine.capture(baselines.front().schedule);
        capture_s = seconds_since(capture_begin);
        launch_ms = measure_graph(sequential_exec, engine.origin_stream(),
                                  MeasureOptions{1, 3, 1, 0, 0})
                        .median_ms;
    }
    // The refined schedule, the DP's, each baseline once and the contenders (timed in both
    // forms: below) once more; then a close contest's two, in turns at every placement.
    int final_timings = int(baselines.size()) + 2;
    for (const Baseline& b : baselines) final_timings += both_forms_in_contest(b) ? 1 : 0;
    // A close contest's usual two entrants (more cut its repeats to fit: settle_close_contest),
    // each captured at every placement.
    constexpr int kContestSchedules = 2;
    const int contest_captures = kContestSchedules * int(placements.size());
    const double final_captures_s = (final_timings + contest_captures) * capture_s;
    MeasureOptions least = options.end_to_end;
    least.repeats = std::min(least.repeats, kMinFinalRepeats);
    const double final_reserve_s =
        final_captures_s + timing_seconds(least, final_timings, launch_ms) +
        placed_in_turns_seconds(least, kContestSchedules, kContestPerTurn, placements.size(),
                                launch_ms);
    // Asked only now: the engine, the objective's trial and the checks above took their time.
    const double left_s = budget_left_s();
    refine_options.time_budget_s = std::isfinite(left_s)
                                       ? std::max(0.0, kRefineShare * (left_s - final_reserve_s))
                                       : kUnboundedRefineSeconds;
    // The refinement's first timings run whatever its time (refine_first_timings): their
    // repeats are cut to fit it. At NASNet-A b16 TF32 (12 ms a launch) they took 6.4 s of the
    // 4 s it had, and the final timings overran the budget (call167 on 358e0eb).
    if (std::isfinite(left_s)) {
        const RefineFirstTimings first = refine_first_timings(candidates);
        const int most = evaluator.timing().repeats;
        evaluator.fit_repeats(refine_options.time_budget_s, first.plain, first.in_turns,
                              launch_ms, capture_s, kMinRefineRepeats);
        if (evaluator.timing().repeats < most) {
            result.refine_timing = {{"repeats", evaluator.timing().repeats},
                                    {"of", most},
                                    {"first_timings", first.plain},
                                    {"in_turns", first.in_turns}};
            notice(fmt::format("refine: {} repeats a timing (of {}), so that its first {} "
                               "timings and a contest of {} fit its {:.1f} s",
                               evaluator.timing().repeats, most, first.plain, first.in_turns,
                               refine_options.time_budget_s));
        }
    }
    refine_options.fit = [&](const Schedule& s) { return fitter.fit(s); };
    refine_options.priority_variants = [&](const Schedule& start) {
        return priority_variants(graph, start, op_ms);
    };
    // A diagnostic for wrong results the final check finds (docs/search.md).
    refine_options.check_every = diagnostic;
    // The kernels chosen on the refinement's start, before its moves, within kKernelMoveShare of
    // its time (docs/search.md, "Runners-up": chosen after it, they sped a baseline past the
    // refined schedule in the final contest).
    refine_options.on_start = [&](const Schedule& start) {
        const auto moves_begin = Clock::now();
        const double share_s = kKernelMoveShare * refine_options.time_budget_s;
        return kernel_moves(
            engine, start, tried_choices,
            [&] {
                return std::min(budget_left_s() - final_reserve_s,
                                share_s - seconds_since(moves_begin));
            },
            launch_ms, capture_s, options.kernel_move_turn, options.kernel_runners_up,
            [&] { return disagreement(start); }, result.conv_objective, notice);
    };
    notice(fmt::format("refine: {} candidates in both forms, then kernel moves on the fastest "
                       "and local moves, measured end to end, for {:.0f} s",
                       candidates.size(), refine_options.time_budget_s));
    result.refine = refine_schedule(graph, candidates, evaluator, refine_options);
    notice(fmt::format("refine: {} schedules measured in {:.1f} s; {:.4f} ms from {} ({} changes "
                       "kept)",
                       result.refine.evaluations, result.refine.seconds, result.refine.latency_ms,
                       result.refine.start, result.refine.kept.size() - 1));
    check(result.refine.schedule, "refined");
    if (result.refine.disagreed > 0)
        notice(fmt::format("warning: {} schedule(s) the refinement tried computed {}; none was "
                           "kept. This is an engine bug: please report it.",
                           result.refine.disagreed, result.refine.first_disagreement));

    const double final_left_s = budget_left_s();
    const MeasureOptions final_timing = repeats_within_placed(
        options.end_to_end, final_left_s - final_captures_s, final_timings, kContestSchedules,
        kContestPerTurn, placements.size(), launch_ms, kMinFinalRepeats);
    result.final_timing = {{"repeats", final_timing.repeats},
                           {"launch_ms", launch_ms},
                           {"capture_s", capture_s},
                           {"timings", final_timings},
                           {"contest_placements", placements.size()},
                           {"budget_left_s", std::isfinite(final_left_s)
                                                 ? nlohmann::json(final_left_s)
                                                 : nlohmann::json(nullptr)}};
    if (final_timing.repeats < options.end_to_end.repeats)
        notice(fmt::format("final timings: {} repeats each (of {}), to fit the {:.1f} s left "
                           "({:.1f} s of it for {} captures)",
                           final_timing.repeats, options.end_to_end.repeats, final_left_s,
                           final_captures_s, final_timings + contest_captures));
    // Each distinct schedule is timed once: a refinement that kept its start unchanged stored a
    // baseline's schedule, which the baseline's own timing then timed again, and the close
    // contest raced the two copies (NASNet-A b16 TF32, call167 on 358e0eb: greedy (dataflow)
    // against itself, 12.2064 against 12.2106 ms, 2.6 s of a search that ended 1.3 s past its
    // budget). Copies tie, and a tie goes to the refined schedule (schedule_contest.h).
    std::map<std::string, LatencyStats> timed_before;
    const auto timed = [&](const Schedule& s) {
        const std::string key = schedule_to_json(s).dump();
        if (const auto it = timed_before.find(key); it != timed_before.end()) return it->second;
        const CudaGraphExec exec = engine.capture(s);
        return timed_before[key] = measure_graph(exec, engine.origin_stream(), final_timing);
    };
    result.schedule = timed(result.refine.schedule);
    result.dp_form = faster_form(result.refine, searched.name);
    result.dp = timed(fitter.fit(with_form(searched.schedule, result.dp_form)));
    for (Baseline& b : baselines) {
        // The contest's baselines run in the limit too.
        if (b.name == "back-to-back") {
            // Back to back keeps the form it was built in, each member's own
            // (model_set_baselines.h). (Its dataflow form without barriers runs the models side
            // by side, a candidate the refinement may well start from.)
            b.schedule = fitter.fit_as_built(b.schedule);
            b.timing = timed(b.schedule);
        } else if (!both_forms_in_contest(b)) {
            b.schedule = fitter.fit(with_form(b.schedule, faster_form(result.refine, b.name)));
            b.timing = timed(b.schedule);
        } else {
            // Both forms, on the final kernels: the form faster on the kernels before the
            // moves need not be faster on these, and a baseline whose schedule repeated another
            // candidate's was not timed by the refinement at all (GoogLeNet TF32, call161-162:
            // nimble's is the DP's, so the contest timed it staged, 0.2370 ms; its dataflow form
            // replays 2.5% faster on the stored kernels). The faster is the baseline's timing.
            Schedule dataflow = fitter.fit(with_form(b.schedule, ScheduleForm::Dataflow));
            b.schedule = fitter.fit(with_form(b.schedule, ScheduleForm::Staged));
            b.timing = timed(b.schedule);
            if (LatencyStats t = timed(dataflow); t.median_ms < b.timing.median_ms) {
                b.schedule = std::move(dataflow);
                b.timing = std::move(t);
            }
        }
    }
    settle_close_contest(engine, result, baselines, final_timing, budget_left_s, capture_s,
                         launch_ms, placements, notice);
    // What the timings left; the engine's teardown after this is the end-to-end phase's rest.
    if (const double after_s = budget_left_s(); std::isfinite(after_s))
        result.final_timing["budget_left_after_s"] = after_s;
    result.baselines = std::move(baselines);
    result.conv_choices = engine.conv_choices();
    result.convolutions = engine.conv_count();
    result.pinned_convolutions = engine.pinned_conv_count();
    return result;
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

TuningSummary run_tuning_job(const Graph& graph, const TuningOptions& options,
                             const std::function<void(const std::string&)>& notice) {
    const auto begin = Clock::now();
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
        stats["convolutions"] = {{"count", e2e.convolutions},
                                 {"pinned_from_store", e2e.pinned_convolutions}};
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
                                 {"end_to_end", timing_json(kept->timing)}};
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
