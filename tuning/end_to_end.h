// The search's end-to-end phase (docs/search.md, "The pipeline"): on one engine, every candidate
// schedule's output checked against the sequential schedule's, the measured refinement
// (schedule_refinement.h) with the kernel moves on its start (kernel_moves.h), then the final
// timings of the refined schedule, the DP's and every baseline's, as replay runs them, and the
// close contest among those timed near the refined one (schedule_contest.h). run_tuning_job
// (tuning_job.h) calls it after the DP and stores what it returns.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "search/schedule_refinement.h"
#include "src/conv_choices.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"
#include "src/graph.h"
#include "src/memory_fit.h"
#include "src/schedule.h"
#include "src/tensor_layout.h"
#include "tuning/schedule_contest.h"
#include "tuning/tuning_job.h"

namespace iostune {

// A baseline's schedule (sequential, a contender, a model set's own) and its final timing.
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
    // Planned convolutions (a shape that occurs twice counts twice); pinned: timed before, read
    // from the store; quick: chosen from a few candidates (EngineOptions::time_convolutions_by).
    int convolutions = 0, pinned_convolutions = 0, quick_convolutions = 0;
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
                                          const std::vector<Baseline>& baselines);

// An engine's options for this job: its precision, `layout`, device and arena room, with the
// convolution choices of `known` (timed earlier on this device) made for `objective` pinned.
EngineOptions engine_options_for(const TuningOptions& options, TensorLayout layout,
                                 const ConvChoices& known,
                                 ConvObjective objective = ConvObjective::Alone);

// What the refinement starts from: the DP's schedule (`searched`), every baseline (sequential
// only staged: that is what sequential means) and "asap", the sequential schedule in dataflow
// form (every op as soon as its inputs are ready, on up to eight lanes).
std::vector<RefineCandidate> refine_candidates(const Graph& graph, const RefineCandidate& searched,
                                               const std::vector<Baseline>& baselines);

// Everything end to end, on one engine (same weights, same input, same per-op algorithms), so the
// only numerical differences come from merged convolutions and the only timing differences from the
// schedules: the sequential output as the reference, every candidate's output in both forms checked
// against it, the measured refinement (schedule_refinement.h), the refined schedule's output
// checked, and the final timings, as replay measures, of the refined schedule, the DP's faster form
// and each baseline's (contenders in both forms, the faster standing for it). (With several
// convolution objectives, the engine is the winner of the objective trial, end_to_end.cpp's
// end_to_end_engine.) `budget_left_s()`: seconds left of the search's budget (infinite without
// one). Once the checks are done, the refinement gets kRefineShare of what is left after the final
// timings' least share; the final timings get the rest.
EndToEnd measure_and_refine(const Graph& graph, const RefineCandidate& searched,
                            std::vector<Baseline> baselines, const TuningOptions& options,
                            TensorLayout layout, const ConvChoices& known,
                            const std::vector<double>& op_ms,
                            const std::function<double()>& budget_left_s,
                            const MemoryFitter& fitter,
                            const std::function<void(const std::string&)>& notice);

}  // namespace iostune
