// The concurrency audit of a memory plan (issue 29): for every pair of launches of a stream
// program that may run at the same time (StreamProgram::may_overlap: ordered by no data, event
// or stream order), the bytes one writes must not be bytes the other reads or writes, and they
// must not share a workspace slot; and no launch may touch two different buffers that share
// bytes (its staging scratch and its output, say). On the CPU, before capture: the engine runs
// it on every plan it applies for a schedule (Engine::Impl::apply_plan), before binding anything
// to it, and CI runs it for every zoo model, strategy, form, precision and layout.
//
// Two accesses of one buffer overlap when their channel ranges do (concurrent producers of one
// concat write disjoint slices); accesses of two buffers overlap when the buffers' byte ranges
// in one region do. Buffers the plan does not hold (a merge stage planned outside it has a
// buffer of its own) cannot overlap anything.
#pragma once

#include <vector>

#include "src/buffer_access.h"
#include "src/graph.h"
#include "src/memory_planner.h"
#include "src/stream_program.h"

namespace iostune {

struct MemoryConflict {
    // launch_a < launch_b, and they may overlap; or launch_a == launch_b, whose accesses of two
    // different buffers share bytes
    int launch_a = 0, launch_b = 0;
    BufferAccess a, b;               // the accesses that touch the same bytes
    int workspace_slot = -1;         // >= 0: they share this workspace slot instead
};

// Every conflict, in launch order (at most `limit`).
std::vector<MemoryConflict> find_memory_conflicts(const Graph& graph, const MemoryPlan& plan,
                                                  const StreamProgram& program,
                                                  size_t limit = 16);

// Throws iostune::InternalError (a bug: see error.h) naming both launches (their ops, stage,
// group and lane), the buffers and their bytes, on the first conflict.
void audit_memory(const Graph& graph, const MemoryPlan& plan, const StreamProgram& program);

// The message audit_memory throws for `conflict`.
std::string describe_conflict(const Graph& graph, const MemoryPlan& plan,
                              const StreamProgram& program, const MemoryConflict& conflict);

}  // namespace iostune
