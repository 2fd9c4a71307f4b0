// Where a schedule's result departs from the sequential schedule's, for the search's error report
// when its final check fails (a bug in the engine: the report is what the next person debugs).
//
// Four questions, each answered on the tuning job's engine as it is at that moment:
//  - run whole again, does the schedule still disagree (or was it one unlucky run)?
//  - does the sequential schedule still compute the reference taken at the start (or has
//    the engine's state, its weights or planned convolutions, changed since)? If not, the first
//    op that changed: its plan and bindings then and now, and which of the two the CPU
//    reference (src/reference) computes on the same inputs.
//  - does any op's output depend on what its workspace held before it ran?
//  - run one launch at a time in the program's order, each op's output read as soon as it is
//    written (before a later launch may reuse its memory), which op differs first from the
//    sequential schedule's run the same way, and how was it planned? When none does, the wrong
//    result needs launches running at once: a race, or a kernel whose result depends on what
//    runs beside it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/engine/engine.h"
#include "src/schedule.h"

namespace iostune {

// Every op's output and plan with `schedule`'s memory plan, its launches run one at a time. Taken
// of the sequential schedule at the start (a diagnostic run does: IOSTUNE_CHECK_EVERY_SCHEDULE),
// it lets the diagnosis name the first op whose result changed since.
struct OpSnapshot {
    std::vector<HostTensor> outputs;  // by op id
    std::vector<OpPlan> plans;
    // By op id: Engine::op_bindings after the last launch (empty when not asked for: reading
    // every weight back is the costly part of a snapshot).
    std::vector<std::string> bindings;
};
// What every workspace holds before each launch of a snapshot: what the launch before left,
// zeros, or seeded values. A kernel whose result depends on it (one that expects a zeroed
// workspace, say) differs between the last two.
enum class WorkspaceBefore { AsLeft, Zeros, Seeded };
OpSnapshot snapshot_ops(Engine& engine, const Schedule& schedule,
                        WorkspaceBefore workspaces = WorkspaceBefore::AsLeft,
                        bool with_bindings = true);
// "" when no op's output depends on what its workspace held before it ran, else which op does
// first, and its plan (snapshots of `schedule` with zeroed and with seeded workspaces).
std::string workspace_dependence(Engine& engine, const Schedule& schedule);

// `difference` runs a schedule whole and says how its outputs differ from the reference taken at
// the start ("" when they agree), as the search's check does. Never throws: a diagnosis that
// fails says so in its text.
std::string diagnose_divergence(Engine& engine, const Schedule& failing,
                                const Schedule& sequential,
                                const std::function<std::string(const Schedule&)>& difference,
                                const OpSnapshot* sequential_at_start = nullptr);

}  // namespace iostune
