#include "src/memory_summary.h"

#include <fmt/format.h>

namespace iostune {

namespace {

std::string mib(int64_t bytes) { return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20)); }

}  // namespace

MemorySummary summarize_memory(const Graph& graph, const Schedule& schedule,
                               const MemoryPlanOptions& options, int64_t workspace_cap_bytes) {
    const MemoryPlan plan = plan_memory(graph, schedule, options);
    MemorySummary s;
    s.activation_bytes = plan.activation_bytes();
    s.shared_bytes = plan.shared_bytes;
    s.io_bytes = plan.io_bytes;
    s.lower_bound_bytes =
        schedule == sequential_schedule(graph)
            ? plan.lower_bound_bytes
            : plan_memory(graph, sequential_schedule(graph), options).lower_bound_bytes;
    s.schedule_floor_bytes =
        concurrency_lower_bound(graph, plan, StreamProgram(graph, schedule));
    s.workspace_bytes = workspace_bytes_estimate(plan, workspace_cap_bytes);
    s.workspace_slots = plan.workspace_slots;
    s.lanes = plan.lanes;
    s.workspace_cap_bytes = workspace_cap_bytes;
    s.weight_bytes = weight_bytes(graph, options, &schedule);
    s.buffers = int(plan.buffers.size());
    return s;
}

nlohmann::json memory_summary_to_json(const MemorySummary& s) {
    return {{"activation_bytes", s.activation_bytes},
            {"shared_bytes", s.shared_bytes},
            {"io_bytes", s.io_bytes},
            {"lower_bound_bytes", s.lower_bound_bytes},
            {"activation_to_lower_bound", s.ratio()},
            {"schedule_floor_bytes", s.schedule_floor_bytes},
            {"workspace_bytes", s.workspace_bytes},
            {"workspace_estimated", true},
            {"workspace_slots", s.workspace_slots},
            {"lanes", s.lanes},
            {"workspace_cap_bytes", s.workspace_cap_bytes},
            {"weight_bytes", s.weight_bytes},
            {"buffers", s.buffers}};
}

std::string format_memory_summary(const MemorySummary& s) {
    std::string text;
    text += fmt::format("{:<12} {} in one arena: {} reused by liveness, {} inputs and outputs "
                        "({} buffers)\n",
                        "activations", mib(s.activation_bytes), mib(s.shared_bytes),
                        mib(s.io_bytes), s.buffers);
    text += fmt::format("{:<12} {}: the largest set of tensors live at once in the sequential "
                        "order; the arena is {:.3f}x that\n",
                        "lower bound", mib(s.lower_bound_bytes), s.ratio());
    text += fmt::format("{:<12} {}: no plan of this schedule can be smaller (what its launches "
                        "may hold at once)\n",
                        "floor", mib(s.schedule_floor_bytes));
    text += fmt::format("{:<12} {} (ESTIMATE: {} workspace{} at the {} cap, for the convolutions "
                        "that can run at once, + {} lane{} x {} cuBLAS; the GPU's is its chosen "
                        "algorithms' largest, often far less)\n",
                        "workspaces", mib(s.workspace_bytes), s.workspace_slots,
                        s.workspace_slots == 1 ? "" : "s", mib(s.workspace_cap_bytes),
                        std::max(s.lanes, 1), s.lanes > 1 ? "s" : "", mib(kCublasWorkspaceBytes));
    text += fmt::format("{:<12} {}\n", "weights", mib(s.weight_bytes));
    return text;
}

}  // namespace iostune
