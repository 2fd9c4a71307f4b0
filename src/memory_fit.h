// Concurrency within a memory limit (issue 31, docs/memory.md "Memory limit"). Buffers of ops
// that may run at the same time cannot share bytes, so a concurrent schedule's arena grows with
// how much it runs at once: NASNet-A's nimble schedule needs 2.0x (staged) to 2.6x (dataflow)
// what the sequential order keeps live at its peak. A MemoryFitter bounds that cost: in a
// schedule whose arena exceeds `ratio` x the sequential order's liveness bound, the heaviest
// stages are cut into sub-stages (their groups one sub-stage after another, which any order of
// independent groups allows), and a dataflow schedule gets barriers (Schedule::barriers) where
// the work in flight between two of them would hold too much, so it stays dataflow in between.
// A dataflow schedule that barriers cannot fit runs staged. The search fits every schedule it
// times, so what it measures and stores is what fits (TuningOptions::memory_limit).
//
// Which stages to cut comes from an estimate per stage of what its launches hold at once:
// the buffers live into it (produced before, read in or after it), plus per group its own
// buffers at their peak in the group's order and the outputs it leaves for later stages. Groups
// are packed first-fit into sub-stages under the limit, then the real plan decides: if its arena
// is still above the limit, the estimate's limit shrinks by the excess and the cuts are made
// again (a few rounds; the smallest arena found is kept when none fits). Deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "src/graph.h"
#include "src/memory_planner.h"
#include "src/schedule.h"

namespace iostune {

// The limit issue 31 asks of concurrent schedules (`search --memory-limit 1.3`): 1.3x the
// sequential liveness bound. Not the default: on the H100 it cost NASNet-A 11-12% latency at
// batch 1 (docs/memory.md), so a search keeps every schedule's concurrency unless asked.
inline constexpr double kSuggestedMemoryLimit = 1.3;

class MemoryFitter {
public:
    // ratio <= 0: no limit (fit returns every schedule unchanged).
    MemoryFitter(const Graph& graph, const MemoryPlanOptions& options, double ratio);

    double ratio() const { return ratio_; }
    bool limited() const { return ratio_ > 0; }
    // The largest set of buffers live at one point of the sequential schedule's order.
    int64_t lower_bound_bytes() const { return lower_bound_; }
    int64_t limit_bytes() const { return limit_; }  // 0 when not limited
    // The plan's arena (shared and I/O regions) for `schedule` under these options.
    int64_t arena_bytes(const Schedule& schedule) const;

    // `schedule` without its barriers (taken as an earlier fit's, placed afresh) when that
    // arena fits; else it with stages cut (and barriers, if dataflow) until it fits, or the
    // smallest arena the cuts reached. Valid whenever `schedule` is.
    Schedule fit(const Schedule& schedule) const;
    // `schedule` itself, its barriers included, when its arena fits; else fit(schedule). For a
    // schedule whose barriers mean something of their own (back to back: one model after the
    // other), which fit() would clear and place afresh.
    Schedule fit_as_built(const Schedule& schedule) const;

private:
    const Graph& graph_;
    MemoryPlanOptions options_;
    double ratio_ = 0;
    int64_t lower_bound_ = 0;
    int64_t limit_ = 0;
    mutable std::map<std::string, Schedule> fitted_;  // by the schedule's JSON
};

}  // namespace iostune
