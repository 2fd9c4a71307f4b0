// Measured refinement: local moves on a whole schedule, each judged end to end by a
// ScheduleEvaluator (on a GPU: the schedule captured as one CUDA Graph and timed, as replay runs
// it), so what the search keeps is what replay measures, not a sum of stages timed alone.
//
// It starts from the fastest of the candidates it is given (the DP's schedule and the baselines,
// both forms), so it never ends slower than any of them; on a GPU the few timed within a few
// percent of the fastest are timed again in turns, and the fastest in turns is the start (one
// at a time, a drift of the clocks once put the DP's schedule 3% ahead of nimble's, which was
// 0.8% faster in turns: NASNet-A TF32 b1, call143). Then:
//   1. recombines blocks: for each block, the candidates' schedules of that block are tried in
//      place of the current one (blocks are cut at single tensors, so they interact little);
//   2. hill-climbs with random local moves until the evaluation or time budget is spent:
//        join     two consecutive stages become one (groups: the union's connected parts)
//        split    a stage becomes two (its groups, or one group's ops, cut in two)
//        push     the last op of a group moves to the next stage
//        pull     the first op of a group moves to the stage before
//        merge    mergeable convolutions of a stage become a merge stage (or a merge stage
//                 becomes concurrent again)
//        regroup  two groups of a stage become one (they then share a lane)
//        form     staged <-> dataflow
//      Once 1000 moves in a row find no schedule not timed before (a local optimum whose
//      neighbours are all timed), moves are made two at a time, then three; after a kept
//      change, one at a time again. The refinement ends when the budget does, or when three
//      at a time find nothing new either.
//      A move is kept when it is faster than the current schedule by more than `min_gain`
//      (relative), twice: measured, the gain is timed again in turns with the current
//      schedule, so measurement noise does not walk the schedule around.
// Between the start and step 1, priority levels (RefineOptions::priority_variants) are tried on
// the start in turns; levels kept there are checked again at the end, with and without, and
// dropped unless they still gain `min_gain` (the moves change the lanes they were chosen for).
// Deterministic for a given seed and evaluator when only max_evaluations bounds it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/schedule_evaluator.h"
#include "src/graph.h"
#include "src/schedule.h"
#include "src/stopwatch.h"

namespace iostune {

struct RefineCandidate {
    std::string name;  // "ios-both", "nimble", ...
    Schedule schedule;
    // The forms to try it in; none: both. (The sequential schedule is only sequential staged:
    // in dataflow form it runs every op as soon as its inputs are ready, on up to eight lanes,
    // which is a candidate of its own, "asap".)
    std::optional<ScheduleForm> only_form = std::nullopt;
};

struct PriorityVariant {
    std::string name;         // "critical", "scheduled graded"...
    std::vector<int> levels;  // one per op
};

// The start's contest (on a GPU) times at most this many candidates again, in turns.
constexpr size_t kStartContestSize = 4;

// What the refinement times before any move, whatever its time: each candidate in each of its
// forms, then the start's contest in turns (`in_turns`), then the start once more (`plain`
// counts the first and the last).
struct RefineFirstTimings {
    int plain = 0;
    int in_turns = 0;
};
RefineFirstTimings refine_first_timings(const std::vector<RefineCandidate>& candidates);

struct RefineOptions {
    uint64_t seed = 1;
    int max_evaluations = 1 << 30;
    double time_budget_s = 30;  // wall time of the whole refinement (<= 0: no refinement moves)
    double min_gain = 0.003;    // relative improvement a move needs to be kept
    // A measured evaluator's gain is timed again, beside the current schedule, before it is
    // kept (a simulated one is exact: never).
    bool confirm_gains = true;
    // The most random moves made at once once single moves find nothing new (1: never more).
    int max_compound_steps = 3;
    // Diagnostic: check every schedule's output, not only the faster ones' (a disagreement
    // names the evaluation it happened at). `search` sets it from IOSTUNE_CHECK_EVERY_SCHEDULE.
    bool check_every = false;
    bool recombine_blocks = true;
    // Applied to every schedule before it is evaluated (a MemoryFitter's fit: memory_fit.h), so
    // candidates, recombined blocks and moves are judged, and kept, as they will run. Unset: none.
    std::function<Schedule(const Schedule&)> fit;
    // Called once with the start (the fastest candidate) before any change is tried: the
    // search's kernel moves, which choose each convolution's kernel on it. True when it changed
    // what the evaluator runs: the start is then timed again, and every change is judged against
    // it on the new kernels (so the refined schedule keeps their gain, and a candidate timed on
    // the old ones cannot win the final contest by them alone). Its time counts in the budget.
    // The start contest's other entries were ranked on the old kernels: after the moves they are
    // timed again beside the result (RefineResult::rival_check).
    std::function<bool(const Schedule&)> on_start;
    // Priority levels to try on the start (Schedule::priorities, one per op each; named), given
    // the start after on_start and before any move: timed in turns beside the start as it is,
    // the fastest kept when it gains more than min_gain (and computes the right thing). Moves
    // then keep it. Unset, or no variants: no trial.
    std::function<std::vector<PriorityVariant>(const Schedule& start)> priority_variants;
};

// One schedule of the priority trial: its levels' name, its timing in turns, and how many
// hand-overs between a lane's streams its levels make (priority_handovers).
struct PriorityTiming {
    std::string name;
    double latency_ms = 0;
    int handovers = 0;
};

struct RefineStep {
    std::string move;  // "start nimble (dataflow)", "block 3 from ios-both", "join (dataflow)"...
    double latency_ms = 0;
};

struct CandidateTiming {
    std::string name;
    ScheduleForm form = ScheduleForm::Staged;
    double latency_ms = 0;
};

// A candidate timed again in the start's contest: its first timing and its timing in turns.
struct StartContestEntry {
    std::string label;  // "nimble (dataflow)"
    double first_ms = 0;
    double in_turns_ms = 0;
};

// One schedule of a contest timed in turns: its label and its timing.
struct ContestTiming {
    std::string label;  // "result", "ios-both (dataflow)"
    double latency_ms = 0;
};

struct RefineResult {
    Schedule schedule;
    double latency_ms = 0;
    std::string start;          // the candidate it started from
    std::vector<RefineStep> kept;  // every change that was kept, in order
    int evaluations = 0;
    int failed = 0;             // candidates the evaluator could not run
    // Schedules whose output differed from the sequential schedule's (the faster ones, or every
    // one with check_every; never kept; each is an engine bug to report); the first one's
    // difference, evaluation and schedule JSON.
    int disagreed = 0;
    std::string first_disagreement;
    double seconds = 0;
    // Each candidate's latency in each form, as evaluated at the start (a form that failed or
    // repeated an earlier candidate's schedule is missing).
    std::vector<CandidateTiming> candidates;
    // The candidates timed first within kStartContestMargin of the fastest, timed again in
    // turns to choose the start (measured evaluators only; empty when one stood alone).
    std::vector<StartContestEntry> start_contest;
    // The start's latency before on_start changed what runs (0: it changed nothing).
    double start_before_on_start_ms = 0;
    // The priority trial (RefineOptions::priority_variants): "none" (the start as it was) and
    // each variant, timed in turns; empty when none was tried.
    std::vector<PriorityTiming> priority_trial;
    // The trial was not made for want of time: none was left, or at what the start's contest
    // took a schedule it would not fit what was.
    bool priority_trial_out_of_time = false;
    // The closing check of kept levels: the result with and without them, timed in turns
    // ({0, 0}: not made). Kept only when "with" still gains min_gain; else they are dropped,
    // and their step leaves `kept`.
    struct {
        double with_ms = 0, without_ms = 0;
    } priority_check;
    // When on_start changed what runs: the result ("result", first) and the start contest's
    // other entries timed again in turns after the moves, on the kernels on_start chose. A rival
    // faster by min_gain (computing the right thing) became the result, as a start of its own
    // (`start` and `kept` say so; the moves' steps are gone with the schedule they changed).
    // Empty when not made.
    std::vector<ContestTiming> rival_check;
    // How near the moves came (block recombinations included): how many were timed, the least
    // ratio of a move's first timing to the schedule it moved from (0: none timed), and how many
    // that passed the margin then failed their second timing. A start no move beats, with the
    // least ratio just above 1 - min_gain, sits among neighbours within the timing's noise.
    int moves_timed = 0;
    double least_move_ratio = 0;
    int unconfirmed = 0;
    // Whether the result is one of the candidates unchanged (nothing after the start was kept).
    bool unchanged() const { return kept.size() == 1; }
};

// Throws iostune::Error when no candidate can be evaluated.
RefineResult refine_schedule(const Graph& graph, const std::vector<RefineCandidate>& candidates,
                             ScheduleEvaluator& evaluator, const RefineOptions& options);

// One random local move (see above), or the schedule unchanged when the move found no place
// to apply. Exposed for tests: every result must validate.
Schedule random_move(const Graph& graph, const Schedule& schedule, uint64_t& rng_state,
                     std::string& move_name);

}  // namespace iostune
