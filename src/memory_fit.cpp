#include "src/memory_fit.h"

#include <algorithm>
#include <map>
#include <vector>

#include "src/buffer_access.h"
#include "src/stream_program.h"

namespace iostune {

namespace {

constexpr int kFitRounds = 6;
constexpr int kRelaxRounds = 2;
constexpr double kRelaxStep = 1.1;
constexpr double kShrinkStep = 0.9;

// What each stage of a staged program holds at once, by the estimate in memory_fit.h.
struct StageEstimate {
    int64_t live_in = 0;                // buffers live into the stage (and I/O region)
    std::vector<int64_t> group_peak;    // each group's own buffers at their peak
    std::vector<int64_t> group_out;     // each group's outputs read by later stages
    int64_t total() const {
        int64_t bytes = live_in;
        for (size_t g = 0; g < group_peak.size(); ++g) bytes += group_peak[g] + group_out[g];
        return bytes;
    }
};

std::vector<StageEstimate> estimate_stages(const Graph& graph, const Schedule& staged,
                                           const MemoryPlan& plan) {
    const StreamProgram program(graph, staged);
    const std::vector<Stage> stages = staged.flat_stages();
    std::vector<StageEstimate> est(stages.size());
    for (size_t s = 0; s < stages.size(); ++s) {
        est[s].live_in = plan.io_bytes;
        est[s].group_peak.assign(stages[s].groups.size(), 0);
        est[s].group_out.assign(stages[s].groups.size(), 0);
    }
    // Each launch's position within its group (launches of a group are in order).
    const std::vector<Launch>& launches = program.launches();
    std::vector<int> position(launches.size(), 0);
    std::map<std::pair<int, int>, int> next;
    for (size_t l = 0; l < launches.size(); ++l)
        position[l] = next[{launches[l].stage, launches[l].group}]++;

    std::vector<std::vector<int>> uses(plan.buffers.size());
    const auto accesses = launch_accesses(graph, plan, program);
    for (size_t l = 0; l < accesses.size(); ++l)
        for (const BufferAccess& a : accesses[l]) uses[size_t(a.buffer)].push_back(int(l));

    // Per (stage, group): its own buffers' [first, last] positions, for the peak sweep.
    std::map<std::pair<int, int>, std::vector<std::pair<int, int64_t>>> deltas;
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
        if (plan.buffers[b].pinned || uses[b].empty()) continue;
        const int64_t bytes = plan.buffers[b].bytes;
        const Launch& first = launches[size_t(uses[b].front())];
        int last_stage = first.stage;
        bool one_group = true;
        for (int l : uses[b]) {
            last_stage = std::max(last_stage, launches[size_t(l)].stage);
            one_group = one_group && launches[size_t(l)].stage == first.stage &&
                        launches[size_t(l)].group == first.group;
        }
        if (one_group) {
            int lo = position[size_t(uses[b].front())], hi = lo;
            for (int l : uses[b]) {
                lo = std::min(lo, position[size_t(l)]);
                hi = std::max(hi, position[size_t(l)]);
            }
            auto& d = deltas[{first.stage, first.group}];
            d.emplace_back(2 * lo, bytes);       // allocated at its first use
            d.emplace_back(2 * hi + 1, -bytes);  // free after its last
            continue;
        }
        // Left for later stages (or shared by groups of one stage: live throughout it).
        if (last_stage > first.stage)
            est[size_t(first.stage)].group_out[size_t(first.group)] += bytes;
        else
            est[size_t(first.stage)].live_in += bytes;
        for (int s = first.stage + 1; s <= last_stage; ++s) est[size_t(s)].live_in += bytes;
    }
    for (auto& [key, d] : deltas) {
        std::sort(d.begin(), d.end());
        int64_t live = 0, peak = 0;
        for (const auto& [at, change] : d) peak = std::max(peak, live += change);
        est[size_t(key.first)].group_peak[size_t(key.second)] = peak;
    }
    return est;
}

// Each stage of `staged` whose estimate exceeds the limit becomes sub-stages: its groups packed
// first-fit, in order, each sub-stage's outputs live into the next.
Schedule cut_stages(const Schedule& staged, const std::vector<StageEstimate>& est,
                    int64_t estimate_limit) {
    Schedule result;
    result.priorities = staged.priorities;
    size_t flat = 0;
    for (const std::vector<Stage>& block : staged.blocks) {
        std::vector<Stage>& out = result.blocks.emplace_back();
        for (const Stage& stage : block) {
            const StageEstimate& e = est[flat++];
            if (stage.strategy != StageStrategy::Concurrent || stage.groups.size() < 2 ||
                e.total() <= estimate_limit) {
                out.push_back(stage);
                continue;
            }
            int64_t base = e.live_in, bytes = base;
            Stage part;
            int64_t part_out = 0;
            for (size_t g = 0; g < stage.groups.size(); ++g) {
                const int64_t need = e.group_peak[g] + e.group_out[g];
                if (!part.groups.empty() && bytes + need > estimate_limit) {
                    out.push_back(std::move(part));
                    part = Stage{};
                    base += part_out;
                    bytes = base;
                    part_out = 0;
                }
                part.groups.push_back(stage.groups[g]);
                bytes += need;
                part_out += e.group_out[g];
            }
            out.push_back(std::move(part));
        }
    }
    return result;
}

// `staged` in dataflow form with barriers: between two barriers everything may run at once, so
// a window of stages is estimated as what is live into its first stage plus every group's own
// peak and outputs; a barrier goes before the stage that would take the window over the limit.
Schedule with_barriers(const Schedule& staged, const std::vector<StageEstimate>& est,
                       int64_t estimate_limit) {
    Schedule result = with_form(staged, ScheduleForm::Dataflow);
    int64_t window = 0;
    for (size_t s = 0; s < est.size(); ++s) {
        const int64_t added = est[s].total() - est[s].live_in;
        if (s == 0 || window + added > estimate_limit) {
            if (s > 0) result.barriers.push_back(int(s));
            window = est[s].live_in;
        }
        window += added;
    }
    return result;
}

}  // namespace

MemoryFitter::MemoryFitter(const Graph& graph, const MemoryPlanOptions& options, double ratio)
    : graph_(graph), options_(options), ratio_(ratio) {
    lower_bound_ = plan_memory(graph, sequential_schedule(graph), options).lower_bound_bytes;
    if (limited()) limit_ = int64_t(ratio * double(lower_bound_));
}

int64_t MemoryFitter::arena_bytes(const Schedule& schedule) const {
    return plan_memory(graph_, schedule, options_).activation_bytes();
}

Schedule MemoryFitter::fit(const Schedule& schedule) const {
    if (!limited()) return schedule;
    const std::string key = schedule_to_json(schedule).dump();
    if (auto it = fitted_.find(key); it != fitted_.end()) return it->second;
    const auto remember = [&](const Schedule& s) { return fitted_[key] = s; };
    Schedule base = schedule;
    base.barriers.clear();  // the fitter's own, from an earlier fit: placed afresh
    // The smallest arena tried; rounds stop at the first that fits.
    Schedule best = base;
    int64_t best_bytes = arena_bytes(base);
    if (best_bytes <= limit_) return remember(base);
    const auto consider = [&](const Schedule& s) {
        const int64_t bytes = arena_bytes(s);
        if (bytes < best_bytes) {
            best = s;
            best_bytes = bytes;
        }
        return bytes;
    };
    const auto estimates = [&](const Schedule& staged) {
        return estimate_stages(graph_, staged, plan_memory(graph_, staged, options_));
    };
    // Cuts (and for dataflow, barriers) at the estimate's limit; while the plan's arena is
    // still above the limit, the estimate is asked for that much less. The estimate counts
    // every output as live through its window, so once a round fits, a looser estimate limit is
    // tried too (fewer cuts and barriers, more concurrency) for as long as the plan still fits.
    const Schedule staged = with_form(base, ScheduleForm::Staged);
    const std::vector<StageEstimate> staged_estimates = estimates(staged);  // every round's
    const auto rounds = [&](ScheduleForm form) {
        const auto make = [&](int64_t estimate_limit) {
            const Schedule s = cut_stages(staged, staged_estimates, estimate_limit);
            return form == ScheduleForm::Dataflow
                       ? with_barriers(s, estimates(s), estimate_limit)
                       : s;
        };
        int64_t estimate_limit = limit_;
        for (int round = 0; round < kFitRounds; ++round) {
            const Schedule s = make(estimate_limit);
            const int64_t bytes = consider(s);
            if (bytes > limit_) {
                // At least kShrinkStep less each round: a plan a hair above the limit would
                // otherwise ask for a hair less, round after round.
                estimate_limit = int64_t(double(estimate_limit) *
                                         std::min(kShrinkStep, double(limit_) / double(bytes)));
                continue;
            }
            best = s;  // fits: now as loose as it may be
            for (int relax = 0; relax < kRelaxRounds; ++relax) {
                estimate_limit = int64_t(double(estimate_limit) * kRelaxStep);
                const Schedule looser = make(estimate_limit);
                if (looser == best || arena_bytes(looser) > limit_) break;
                best = looser;
            }
            return true;
        }
        return false;
    };
    // A dataflow schedule stays dataflow if barriers can fit it; staged is the fallback.
    if (base.form == ScheduleForm::Dataflow && rounds(ScheduleForm::Dataflow))
        return remember(best);
    if (base.form == ScheduleForm::Dataflow && consider(staged) <= limit_) return remember(best);
    rounds(ScheduleForm::Staged);
    return remember(best);
}

Schedule MemoryFitter::fit_as_built(const Schedule& schedule) const {
    if (!limited() || arena_bytes(schedule) <= limit_) return schedule;
    return fit(schedule);
}

}  // namespace iostune
