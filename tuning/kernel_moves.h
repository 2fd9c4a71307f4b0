// Kernel moves: each convolution's kernel chosen where it runs, measured end to end.
//
// An engine chooses every convolution for one objective (src/conv_choices.h): the fastest alone,
// or the fastest two at once of those nearly as fast alone. A schedule holds both kinds of op,
// and which kernel suits an op depends on what runs beside it in that schedule, its L2 and its
// launch order, which neither objective's timing sees. The first cut chose by a rule (the alone
// kernel where an op's stage has one group, else the co-run one) and lost on 3 of 4 keys in
// call132 (docs/search-log.md). So, after the refinement, the search tries the other objective's
// choice, then the engine's runners-up (the next fastest kernels alone, conv_choices.h), one
// signature at a time on the refined schedule, on the same engine (its weights, its L2), and
// keeps a switch only when the schedule times faster by the margin twice and still computes
// the sequential schedule's output, as the refinement keeps a schedule move.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/conv_choices.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"
#include "src/schedule.h"

namespace iostune {

struct KernelMove {
    std::string signature;
    ConvChoice choice;     // what to run instead
    double weight_ms = 0;  // the current choice's time per launch times the ops that hold it
};

// For each signature an op of `plans` holds (a merged convolution's is no op's), each choice of
// `tried` (the objective trials' engines, then the runners-up by rank) whose kernel differs
// from `current`'s, once per kernel; heaviest first (the most time at stake), then by signature
// and the order of `tried`, so the order is fixed.
std::vector<KernelMove> kernel_move_candidates(const std::vector<OpPlan>& plans,
                                               const ConvChoices& current,
                                               const std::vector<ConvChoices>& tried);

// What the moves are judged by: one schedule on one engine whose kernels change.
class KernelMoveEvaluator {
public:
    virtual ~KernelMoveEvaluator() = default;
    // Runs `signature` with `choice` from now on; false, nothing changed, when it cannot here.
    virtual bool apply(const std::string& signature, const ConvChoice& choice) = 0;
    // Puts back what the last successful apply() replaced.
    virtual void undo() = 0;
    // The schedule on the kernels kept so far and on those applied since, timed in turns:
    // {kept ms, applied ms}.
    virtual std::pair<double, double> time_applied() = 0;
    // How the applied kernels' output differs from the sequential schedule's ("" when it agrees).
    virtual std::string difference() = 0;
    // The applied kernels become the kept ones.
    virtual void keep() = 0;
    // The kernels before the first apply() and the kept ones, timed in turns: {start, kept} ms.
    virtual std::pair<double, double> time_start_and_kept() = 0;
    // Puts back the last kept switch not yet put back (after the moves: the last kept first).
    virtual void undo_kept() = 0;
};

struct KernelMovesOptions {
    double min_gain = 0.003;  // relative, as the refinement's moves
    std::function<bool()> out_of_time = [] { return false; };  // asked before each move
};

struct KernelMovesResult {
    int candidates = 0;
    int timed = 0;        // moves timed (refused ones are not)
    int refused = 0;      // a choice the engine could not run
    int unconfirmed = 0;  // past the margin once, not the second time
    int disagreed = 0;    // faster, but another output (an engine bug; never kept)
    std::string first_disagreement;
    double least_ratio = 0;   // the least applied/kept ratio of a first timing (0: none timed)
    // The kept kernels' first and last timings (0: none timed): the schedule before the moves
    // and with those kept before the last move timed.
    double start_ms = 0, end_ms = 0;
    bool out_of_time = false;  // stopped before the last candidate
    std::vector<std::string> kept;  // the signatures switched, in order
    ConvChoices choices;             // `current` with the kept switches
    // The kept switches together against the start, timed in turns once the moves end (0: none
    // kept); when together they are not faster by the margin, every one is put back
    // (`reverted` of them) and `kept` is empty.
    double check_start_ms = 0, check_kept_ms = 0;
    int reverted = 0;
};

// Tries each move in order against the kernels kept so far; a move not kept is undone. Each
// kept move passed its margin twice, but of a hundred moves timed some pass by luck and small
// gains need not add up, so the kept ones are then timed together against the start and all put
// back unless faster by the margin: the moves never end slower than they start, as measured.
KernelMovesResult move_kernels(const std::vector<KernelMove>& moves, const ConvChoices& current,
                               KernelMoveEvaluator& evaluator, const KernelMovesOptions& options);

// On a GPU: `schedule` captured on `engine` before and after each switch and timed in turns of
// `per_turn` samples (measure_interleaved; one engine: the same weights, so neither finds the L2
// full of the other's).
class EngineKernelEvaluator final : public KernelMoveEvaluator {
public:
    // `difference`: runs the schedule on the engine as it is and compares its output.
    EngineKernelEvaluator(Engine& engine, const Schedule& schedule,
                          std::function<std::string()> difference, MeasureOptions timing,
                          int per_turn);
    bool apply(const std::string& signature, const ConvChoice& choice) override;
    void undo() override;
    std::pair<double, double> time_applied() override;
    std::string difference() override { return difference_(); }
    void keep() override;
    std::pair<double, double> time_start_and_kept() override;
    void undo_kept() override;

private:
    Engine& engine_;
    const Schedule& schedule_;
    std::function<std::string()> difference_;
    MeasureOptions timing_;
    int per_turn_;
    CudaGraphExec start_;    // captured before any switch: a graph keeps the kernels it captured
    CudaGraphExec kept_;
    CudaGraphExec applied_;  // captured by time_applied()
    // What runs before the move being tried: the kept kernels, or the start's when none is kept.
    const CudaGraphExec& before() const { return kept_.valid() ? kept_ : start_; }
};

}  // namespace iostune
