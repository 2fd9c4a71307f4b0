#include "tuning/kernel_moves.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace iostune {

std::vector<KernelMove> kernel_move_candidates(const std::vector<OpPlan>& plans,
                                               const ConvChoices& current,
                                               const std::vector<ConvChoices>& tried) {
    std::map<std::string, int> holders;  // signature -> convolutions of ops that hold it
    for (const OpPlan& plan : plans)
        for (const std::string& signature : plan.conv_signatures) ++holders[signature];
    std::vector<KernelMove> moves;
    for (const auto& [signature, count] : holders) {
        const auto now = current.find(signature);
        if (now == current.end()) continue;
        std::vector<ConvChoice> distinct;  // kernels not yet a move of this signature
        for (const ConvChoices& choices : tried) {
            const auto it = choices.find(signature);
            if (it == choices.end() || same_kernel(it->second, now->second)) continue;
            const bool seen =
                std::any_of(distinct.begin(), distinct.end(),
                            [&](const ConvChoice& c) { return same_kernel(c, it->second); });
            if (seen) continue;
            distinct.push_back(it->second);
            moves.push_back({signature, it->second, now->second.time_ms * count});
        }
    }
    std::stable_sort(moves.begin(), moves.end(), [](const KernelMove& a, const KernelMove& b) {
        return a.weight_ms > b.weight_ms;  // (holders' map order settles ties: by signature)
    });
    return moves;
}

KernelMovesResult move_kernels(const std::vector<KernelMove>& moves, const ConvChoices& current,
                               KernelMoveEvaluator& evaluator, const KernelMovesOptions& options) {
    KernelMovesResult result;
    result.candidates = int(moves.size());
    result.choices = current;
    for (const KernelMove& move : moves) {
        if (options.out_of_time()) {
            result.out_of_time = true;
            break;
        }
        const auto now = result.choices.find(move.signature);
        if (now == result.choices.end()) continue;
        if (same_kernel(now->second, move.choice)) continue;  // an earlier move made it
        if (!evaluator.apply(move.signature, move.choice)) {
            ++result.refused;
            continue;
        }
        auto [kept_ms, applied_ms] = evaluator.time_applied();
        if (result.timed++ == 0) result.start_ms = kept_ms;
        result.end_ms = kept_ms;
        const double ratio = applied_ms / kept_ms;
        if (result.least_ratio == 0 || ratio < result.least_ratio) result.least_ratio = ratio;
        bool better = applied_ms < kept_ms * (1 - options.min_gain);
        if (better) {  // timed again in turns: of many noisy timings some look faster by luck
            std::tie(kept_ms, applied_ms) = evaluator.time_applied();
            better = applied_ms < kept_ms * (1 - options.min_gain);
            if (!better) ++result.unconfirmed;
        }
        if (better) {
            const std::string why = evaluator.difference();
            if (!why.empty()) {
                better = false;
                if (result.disagreed++ == 0)
                    result.first_disagreement = fmt::format("{}: {}", move.signature, why);
            }
        }
        if (better) {
            evaluator.keep();
            result.choices[move.signature] = move.choice;
            result.kept.push_back(move.signature);
        } else {
            evaluator.undo();
        }
    }
    if (result.kept.empty()) return result;
    std::tie(result.check_start_ms, result.check_kept_ms) = evaluator.time_start_and_kept();
    if (result.check_kept_ms < result.check_start_ms * (1 - options.min_gain)) return result;
    for (auto it = result.kept.rbegin(); it != result.kept.rend(); ++it) {
        evaluator.undo_kept();
        result.choices[*it] = current.at(*it);
        ++result.reverted;
    }
    result.kept.clear();
    return result;
}

EngineKernelEvaluator::EngineKernelEvaluator(Engine& engine, const Schedule& schedule,
                                             std::function<std::string()> difference,
                                             MeasureOptions timing, int per_turn)
    : engine_(engine),
      schedule_(schedule),
      difference_(std::move(difference)),
      timing_(timing),
      per_turn_(per_turn),
      start_(engine.capture(schedule)) {}

bool EngineKernelEvaluator::apply(const std::string& signature, const ConvChoice& choice) {
    applied_ = CudaGraphExec();  // captured with the kernels before: no longer what is applied
    return engine_.set_conv_choice(signature, choice);
}

void EngineKernelEvaluator::undo() {
    applied_ = CudaGraphExec();
    engine_.undo_conv_choice();
}

std::pair<double, double> EngineKernelEvaluator::time_applied() {
    if (!applied_.valid()) applied_ = engine_.capture(schedule_);
    const std::vector<LatencyStats> turns =
        measure_interleaved({&before(), &applied_}, engine_.origin_stream(), timing_, per_turn_);
    return {turns[0].median_ms, turns[1].median_ms};
}

std::pair<double, double> EngineKernelEvaluator::time_start_and_kept() {
    const std::vector<LatencyStats> turns =
        measure_interleaved({&start_, &before()}, engine_.origin_stream(), timing_, per_turn_);
    return {turns[0].median_ms, turns[1].median_ms};
}

void EngineKernelEvaluator::undo_kept() {
    // The kept switches stay on the engine's undo stack (a move not kept was undone at once).
    applied_ = CudaGraphExec();
    kept_ = CudaGraphExec();  // no longer what runs; time_applied() falls back to the start's
    engine_.undo_conv_choice();
}

void EngineKernelEvaluator::keep() {
    if (!applied_.valid()) applied_ = engine_.capture(schedule_);
    kept_ = std::move(applied_);
    applied_ = CudaGraphExec();
}

}  // namespace iostune
