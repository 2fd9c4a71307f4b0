// One tuning job, what `iostune search` runs: build the cost model (measured on this GPU through
// the store's stage cache, or simulated), run the IOS DP, then refine the best of its schedule
// and the baselines by local moves judged end to end (search/schedule_refinement.h: on a GPU
// each candidate captured as one CUDA Graph and timed, as replay runs it; simulated, on the
// analytic timeline), check every output against the sequential schedule's, and store device,
// model and schedule rows; return a summary. All within TuningOptions::time_budget_s.
//
// Stage measurements are committed one by one as the search makes them, so a killed job leaves
// a valid store and the next job on the same device/batch/precision measures nothing twice.
// On a GPU the searched schedule is timed end to end beside the sequential schedule and the
// `contenders` baselines (schedule_contest.h). When one of those measured faster, the searched
// schedule is kept for the record and the faster one is stored beside it, so replay (which takes
// the fastest measured row) never gets a schedule that loses to a baseline it was timed against.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "src/conv_choices.h"
#include "tuning/schedule_contest.h"
#include "src/memory_fit.h"
#include "search/ios_search.h"
#include "search/search_stats.h"
#include "src/engine/timing.h"
#include "src/graph.h"
#include "src/schedule.h"
#include "src/stopwatch.h"
#include "src/tensor_layout.h"

namespace iostune {

enum class CostChoice {
    Auto,      // measured if a GPU can be used, otherwise simulated (with a notice)
    Measured,  // stage latencies measured on this GPU; an error without one
    Sim,       // the analytic device model: estimates only, nothing can be measured end to end
};
CostChoice cost_choice_from_string(const std::string& name);  // "auto" | "measured" | "sim"

struct TuningOptions {
    SearchOptions search;
    CostChoice cost = CostChoice::Auto;
    std::string db_path = "iostune.db";
    std::string precision = "tf32";   // "fp32", "tf32", "fp16" or "bf16"
    // The engine's activation layout. Unset: on a GPU, the sequential schedule is timed end to
    // end in NCHW and in NHWC and the search runs in the faster; simulated, default_layout().
    std::optional<TensorLayout> layout;
    std::string sim_device = "h100";  // device profile of the simulated cost model
    int device = 0;                   // CUDA device ordinal
    // Baselines timed end to end beside the searched schedule (and sequential, always): greedy,
    // nimble, opara. Opara uses the analytic H100 resource estimates here (no profile run).
    std::vector<std::string> contenders = {"greedy", "nimble"};
    // End-to-end timing of each schedule, as replay measures.
    MeasureOptions end_to_end{20, 200, 1, 0, 300};
    // Wall time of the whole job, layout choice, DP, refinement and checks (<= 0: no limit; the
    // DP then runs to the end and the refinement for a fixed time). docs/search.md.
    double time_budget_s = 60;
    // The DP's share of what the layout choice left of the budget (the rest: the end-to-end
    // phase's checks, refinement and final timings). docs/search.md, "The pipeline".
    double dp_share = 0.4;
    // Samples per turn when kernel moves are timed in turns (measure_interleaved): 1, each sample
    // the first launch after the other graph's; more, each turn opens with a launch not timed,
    // as the contests time. At 1, GoogLeNet fp16 kept kernels that replay 2.4-5.9% slower than
    // those it started from; at 5, the kept ones replayed 1.4-4.0% faster on every key that kept
    // any (call172; docs/search-log.md, "Kernel moves timed as replay runs, and the DP's share").
    int kernel_move_turn = 5;
    // How many of each convolution's runners-up (its next fastest kernels alone, within
    // kCoRunSlack; conv_choices.h) the kernel moves try after the other objective's choice:
    // 0 to kMostRunnersUp. Slower alone, some may run better beside a branch.
    int kernel_runners_up = int(kRunnersUp);
    // Stage measurements with L2 flushed before each repeat (MeasuredCostModel::cold_timing);
    // kept apart from warm ones in the stage cache.
    bool cold_stage_timing = false;
    uint64_t seed = 1;  // of the refinement's moves
    // Every schedule the job times and stores keeps its arena within this many times the
    // sequential order's liveness bound (src/memory_fit.h, e.g. kSuggestedMemoryLimit);
    // <= 0 (the default): no limit, the fastest schedule whatever it holds.
    double memory_limit = 0;
    // How the end-to-end phase chooses convolutions (ConvObjective, conv_choices.h): with more
    // than one, each is tried on the refinement's candidates and the faster kept. `iostune
    // search` passes both by default (--conv-objective auto); alone here keeps library callers
    // and tests on the kernels they had. (Co-run choices once ended in wrong results: a merged
    // op's staging scratch placed over its own views, fixed in call85; docs/search-log.md.)
    std::vector<ConvObjective> conv_objectives = {ConvObjective::Alone};
    // Placements of the arena (arena_placements.h) at which the end-to-end phase times every
    // comparison in turns (the refinement's start contest, its confirmations and checks, the
    // close contest), each schedule's samples pooled over them, so that a gain owed to where
    // the buffers happen to land does not decide. 3 since call165 (docs/search-log.md, "Placement":
    // a latency moves up to 4% with the placement; three cost no search time); 1: where the
    // arena lies.
    int placements = 3;
    // The share of the time budget in which convolutions are chosen by timing all their
    // candidates; one planned after it is chosen quickly from a few (EngineOptions::
    // time_convolutions_by). A first search of EfficientNet-B1 (115 convolutions, batch 3,
    // 201 px, TF32) spent 45 s choosing them, then ran every phase after on a spent 20 s budget
    // (call175); the zoo's keys choose theirs in 3-18 s of 60, within this share.
    double conv_timing_share = 0.4;
    // The instant that share ends, set by run_tuning_job at its start (engine_options_for passes
    // it on); unset, e.g. without a budget: every convolution is timed in full.
    std::optional<SteadyClock::time_point> time_convolutions_by;
};

struct TuningSummary {
    std::string model;
    std::string set_inputs;  // a model set's: "shared" or "separate"; "" for one model
    int set_members = 0;
    std::string fingerprint;
    int batch = 0;
    std::string precision;
    std::string layout;                   // what the search ran in: "nchw" or "nhwc"
    // How its convolutions were chosen: "alone" or "corun" (on a GPU; "" when simulated).
    std::string conv_objective;
    std::vector<ContestEntry> layout_ms;  // sequential end to end per layout, when timed to choose
    std::string strategy;  // the search's, e.g. "ios-both"
    int r = 0, s = 0;      // 0 when not pruned
    std::string cost_model;
    bool simulated = false;
    std::string device;  // what the numbers hold for
    std::string db_path;
    std::int64_t schedule_id = 0;       // the searched schedule's row
    std::int64_t best_schedule_id = 0;  // the row replay will use (a baseline's if it won)
    std::string kept_strategy;          // that row's: the search's own, or the faster baseline's
    bool sequential_kept = false;       // kept_strategy is "sequential"
    std::vector<ContestEntry> baseline_ms;  // end to end: sequential, then the contenders
    int stages = 0;
    int sequential_stages = 0;
    // The stored schedule's latency as the search measured it end to end (estimated on the
    // simulated timeline): what its refinement kept.
    double predicted_ms = 0;
    double dp_predicted_ms = 0;               // the DP's own schedule: the sum of its stages
    std::optional<double> dp_measured_ms;     // and end to end (its faster form)
    std::string refined_from;                 // the candidate the refinement started from
    int refine_changes = 0;                   // changes it kept after that
    // The sequential schedule as the search's model gives it: simulated, on the timeline (like
    // predicted_ms); measured, the sum of its single-op stages (like dp_predicted_ms).
    double sequential_predicted_ms = 0;
    std::optional<double> measured_ms;   // end to end, CUDA graph (GPU only)
    std::optional<double> sequential_ms;
    std::optional<double> measured_cv;
    std::optional<double> max_abs_diff;  // schedule output vs sequential output
    std::optional<double> tolerance;
    std::int64_t stages_costed = 0;  // cost-model calls this job made (cache misses)
    std::int64_t cache_hits = 0;     // stage costs found in the store
    double search_seconds = 0;
    double total_seconds = 0;
    SearchStats search_stats;  // per block: the space explored and the work it took
    nlohmann::json stats;      // what was stored as the schedule row's search statistics
    Schedule schedule;
};

// `notice` receives lines the user should see while the job runs (which cost model, fallbacks).
// Throws iostune::Error for bad options, no GPU when one is needed, a store that cannot be
// opened, or a schedule whose output differs from the sequential one.
TuningSummary run_tuning_job(const Graph& graph, const TuningOptions& options,
                             const std::function<void(const std::string&)>& notice);

}  // namespace iostune
