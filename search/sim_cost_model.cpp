#include "search/sim_cost_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"

namespace iostune {

SimCostModel::SimCostModel(const DeviceProfile& device, Precision precision)
    : device_(device), precision_(precision) {}

double SimCostModel::op_seconds(const Graph& graph, int op_id) const {
    double total = 0.0;
    for (const auto& kernel : op_kernels(graph, op_id))
        total += time_kernel(kernel, device_, precision_).time_s;
    return total;
}

double SimCostModel::stage_seconds(const Graph& graph, const Stage& stage) const {
    if (stage.groups.empty()) throw Error("stage has no groups");
    for (const auto& group : stage.groups) {
        if (group.empty()) throw Error(fmt::format("stage {} has an empty group",
                                                   stage_signature(stage)));
        for (int id : group)
            if (id < 0 || id >= graph.size())
                throw Error(fmt::format("stage {}: op {} is not in graph '{}' ({} ops)",
                                        stage_signature(stage), id, graph.name(), graph.size()));
    }

    if (stage.strategy == StageStrategy::Merge) {
        if (stage.groups.size() != 1)
            throw Error(fmt::format("merge stage {} must have exactly one group",
                                    stage_signature(stage)));
        const auto& ops = stage.groups.front();
        if (ops.size() == 1) return op_seconds(graph, ops.front());
        std::string why;
        if (!can_merge(graph, ops, &why))
            throw Error(fmt::format("merge stage {} is not mergeable: {}", stage_signature(stage),
                                    why));
        if (merge_kind(graph, ops) == MergeKind::Batched) {
            double total = 0.0;
            for (const KernelEstimate& k : batched_sepconv_kernels(graph, ops))
                total += time_kernel(k, device_, precision_).time_s;
            return total;
        }
        return time_kernel(merged_conv_kernel(graph, ops), device_, precision_).time_s;
    }

    double longest_group = 0.0;
    double machine_flops = 0.0, machine_bytes = 0.0;
    for (const auto& group : stage.groups) {
        double group_time = 0.0;
        for (int id : group) {
            for (const auto& kernel : op_kernels(graph, id)) {
                const KernelTiming t = time_kernel(kernel, device_, precision_);
                group_time += t.time_s;
                machine_flops += t.machine_flops_s;
                machine_bytes += t.machine_bytes_s;
            }
        }
        longest_group = std::max(longest_group, group_time);
    }
    const double machine_bound = std::max(machine_flops, machine_bytes);
    const double syncs = double(stage.groups.size() - 1) * device_.stream_sync_s;
    return std::max(longest_group, machine_bound) + syncs;
}

StageMeasurement SimCostModel::measure(const Graph& graph, const Stage& stage) {
    StageMeasurement m;
    m.simulated = true;
    m.repeats = 0;
    m.spread_ms = 0.0;
    try {
        m.latency_ms = stage_seconds(graph, stage) * 1e3;
    } catch (const Error& e) {
        m.ok = false;
        m.error = e.what();
    }
    return m;
}

}  // namespace iostune
