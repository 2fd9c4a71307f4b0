// What a schedule's memory plan costs, on the CPU, as `iostune show --memory` reports it: the
// arena (activations, scratch, inputs and outputs), the liveness lower bound of the sequential
// order beside it, an estimate of the workspaces, and the weights.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "src/graph.h"
#include "src/memory_planner.h"
#include "src/schedule.h"

namespace iostune {

struct MemorySummary {
    int64_t activation_bytes = 0;  // the plan's arena: shared region + I/O region
    int64_t shared_bytes = 0;      // of which reused by liveness
    int64_t io_bytes = 0;          // of which inputs and outputs (never reused)
    // The largest set of buffers live at one point of the sequential schedule's order: what no
    // plan of this model in that order can go below. activation_bytes over it is the cost of the
    // schedule's concurrency (and of the planner's packing).
    int64_t lower_bound_bytes = 0;
    // What no plan of this schedule can go below (concurrency_lower_bound): how much of the
    // arena above the bound is the schedule's concurrency rather than the planner's packing.
    int64_t schedule_floor_bytes = 0;
    // An estimate (the GPU's figure depends on the algorithms it chooses): each workspace slot
    // at the cap a convolution's algorithm may take, plus cuBLAS's workspace per lane.
    int64_t workspace_bytes = 0;
    int workspace_slots = 0;
    int lanes = 0;
    int64_t workspace_cap_bytes = 0;
    int64_t weight_bytes = 0;  // the weights the engine uploads (merged weights included)
    int buffers = 0;           // buffers in the plan
    double ratio() const {
        return lower_bound_bytes > 0 ? double(activation_bytes) / double(lower_bound_bytes) : 0;
    }
};

MemorySummary summarize_memory(const Graph& graph, const Schedule& schedule,
                               const MemoryPlanOptions& options,
                               int64_t workspace_cap_bytes = kDefaultWorkspaceCapBytes);

// activation_bytes, lower_bound_bytes, workspace_bytes (with workspace_estimated: true),
// weight_bytes and the details.
nlohmann::json memory_summary_to_json(const MemorySummary& summary);

// Lines of "name  value" for a table, the estimate labelled as one.
std::string format_memory_summary(const MemorySummary& summary);

}  // namespace iostune
