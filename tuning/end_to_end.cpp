#include "tuning/end_to_end.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "search/critical_priorities.h"
#include "src/engine/arena_placements.h"
#include "src/error.h"
#include "src/model_set.h"
#include "src/output_agreement.h"
#include "src/stopwatch.h"
#include "tuning/kernel_moves.h"
#include "tuning/measured_schedule_evaluator.h"
#include "tuning/objective_trial.h"
#include "tuning/output_divergence.h"

namespace iostune {

namespace {

using Clock = SteadyClock;

// The measured refinement's share of what the DP left of the time budget (the rest: checks and
// the final timings of every schedule kept for the record; docs/search-log.md has the measurements
// behind the split).
constexpr double kRefineShare = 0.75;
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
// A kernel move (kernel_moves.h) is kept when the refined schedule times at least this much
// faster with it, twice (the refinement's margin for a move), each timing as the refinement's
// evaluator times a schedule, launch by launch in turns with the kernels kept so far.
constexpr double kKernelMoveGain = 0.003;
// The kernel moves' most share of the refinement's time (they run first, on its start).
constexpr double kKernelMoveShare = 0.5;

// The priority levels the refinement tries on its start (docs/search-log.md, "Critical ops first"),
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

// The end-to-end phase's engine, with its convolutions chosen for the objective that wins
// (docs/search-log.md, "Kernels chosen for co-running"). With one objective, that one's. With
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
        notice(fmt::format("kernels: {} not {:.1f}% faster than the start ({:.4f} against "
                           "{:.4f} ms): {}",
                           r.reverted == 1 ? std::string("the switch kept was")
                                           : fmt::format("the {} switches kept were together",
                                                         r.reverted),
                           100 * options.min_gain, r.check_kept_ms, r.check_start_ms,
                           r.reverted == 1 ? "put back" : "all put back"));
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

}  // namespace

std::vector<ContestEntry> contest_entries(const std::string& refined_name,
                                          const LatencyStats& refined,
                                          const std::vector<Baseline>& baselines) {
    std::vector<ContestEntry> entries = {{refined_name, refined.median_ms}};
    for (const Baseline& b : baselines) entries.push_back({b.name, b.timing.median_ms});
    return entries;
}

EngineOptions engine_options_for(const TuningOptions& options, TensorLayout layout,
                                 const ConvChoices& known,
                                 ConvObjective objective) {
    EngineOptions engine_options;
    engine_options.precision = precision_from_string(options.precision);
    engine_options.layout = layout;
    engine_options.device = options.device;
    engine_options.conv_choices = conv_choices_for(known, objective);
    engine_options.conv_objective = objective;
    engine_options.arena_room = arena_room(options.placements);
    engine_options.time_convolutions_by = options.time_convolutions_by;
    return engine_options;
}

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
    // A diagnostic run (docs/search-log.md) also keeps every op's output at the start, so that a
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
    // A diagnostic for wrong results the final check finds (docs/search-log.md).
    refine_options.check_every = diagnostic;
    // The kernels chosen on the refinement's start, before its moves, within kKernelMoveShare of
    // its time (docs/search-log.md, "Runners-up": chosen after it, they sped a baseline past the
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
    result.quick_convolutions = engine.quick_conv_count();
    return result;
}

}  // namespace iostune
