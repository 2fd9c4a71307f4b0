#include "profiler/model_profile.h"

#include <algorithm>
#include <map>

#include "profiler/occupancy.h"
#include "src/engine/cuda_stream.h"
#include "src/operator_info.h"
#include "src/weights.h"

namespace iostune {

namespace {

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + long(mid), values.end());
    return values[mid];
}

// Union of the [start, end) intervals of every record, in ns.
uint64_t busy_ns(const ActivityTrace& run) {
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (const auto& k : run.kernels) spans.emplace_back(k.start_ns, k.end_ns);
    for (const auto& t : run.transfers) spans.emplace_back(t.start_ns, t.end_ns);
    std::sort(spans.begin(), spans.end());
    uint64_t total = 0, cur_start = 0, cur_end = 0;
    bool open = false;
    for (const auto& [s, e] : spans) {
        if (open && s <= cur_end) {
            cur_end = std::max(cur_end, e);
            continue;
        }
        if (open) total += cur_end - cur_start;
        cur_start = s, cur_end = e, open = true;
    }
    if (open) total += cur_end - cur_start;
    return total;
}

std::pair<uint64_t, uint64_t> extent_ns(const ActivityTrace& run) {
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto& k : run.kernels) first = std::min(first, k.start_ns), last = std::max(last, k.end_ns);
    for (const auto& t : run.transfers) first = std::min(first, t.start_ns), last = std::max(last, t.end_ns);
    return {first == UINT64_MAX ? 0 : first, last};
}

// Each op's kernels of one run, in launch order.
std::vector<std::vector<const KernelRecord*>> kernels_by_op(const ActivityTrace& run, int op_count) {
    std::vector<std::vector<const KernelRecord*>> by_op(static_cast<size_t>(op_count));
    for (const auto& k : run.kernels)
        if (k.op_id >= 0 && k.op_id < op_count) by_op[size_t(k.op_id)].push_back(&k);
    for (auto& kernels : by_op)
        std::sort(kernels.begin(), kernels.end(),
                  [](const KernelRecord* a, const KernelRecord* b) { return a->start_ns < b->start_ns; });
    return by_op;
}

ActivityTrace run_op_by_op(Engine& engine, ActivityCollector& collector, cudaStream_t stream) {
    for (const Op& op : engine.graph().ops()) {
        OpScope scope(op.id);
        engine.launch_op(op.id, stream);
    }
    return collector.collect();
}

}  // namespace

ModelProfile profile_model(Engine& engine, const ProfileOptions& options) {
    const Graph& graph = engine.graph();
    ModelProfile profile;
    profile.model = graph.name();
    profile.batch = graph.batch();
    profile.precision = engine.options().precision;
    profile.layout = engine.layout();
    profile.device = query_device_info(engine.options().device);
    profile.iterations = std::max(1, options.iterations);
    if (options.measure_ceilings) profile.ceilings = measure_device_ceilings(profile.precision);

    CudaStream stream;
    std::vector<std::vector<double>> op_times(size_t(graph.size()));
    // kernel_runs[op][position]: that kernel's duration in each run (while every run launched
    // the same number of kernels for the op).
    std::vector<std::vector<std::vector<double>>> kernel_runs(size_t(graph.size()));
    std::vector<bool> same_kernel_count(size_t(graph.size()), true);
    std::vector<double> spans;
    ActivityCollector collector;
    // Real data in every activation: kernels are never timed on zeros or on uninitialised memory.
    engine.set_random_inputs(7);
    run_op_by_op(engine, collector, stream.get());  // warm-up, discarded
    for (int it = 0; it < profile.iterations; ++it) {
        ActivityTrace run = run_op_by_op(engine, collector, stream.get());
        std::vector<double> per_op(size_t(graph.size()), 0.0);
        for (const auto& k : run.kernels)
            if (k.op_id >= 0 && k.op_id < graph.size()) per_op[size_t(k.op_id)] += k.duration_us();
        for (const auto& t : run.transfers)
            if (t.op_id >= 0 && t.op_id < graph.size()) per_op[size_t(t.op_id)] += t.duration_us();
        for (size_t i = 0; i < per_op.size(); ++i) op_times[i].push_back(per_op[i]);
        const auto by_op = kernels_by_op(run, graph.size());
        for (size_t i = 0; i < by_op.size(); ++i) {
            if (it == 0) kernel_runs[i].resize(by_op[i].size());
            if (by_op[i].size() != kernel_runs[i].size()) same_kernel_count[i] = false;
            if (!same_kernel_count[i]) continue;
            for (size_t k = 0; k < by_op[i].size(); ++k)
                kernel_runs[i][k].push_back(by_op[i][k]->duration_us());
        }
        const auto [first, last] = extent_ns(run);
        spans.push_back(double(last - first) / 1e3);
        if (it + 1 == profile.iterations) {
            profile.gpu_busy_fraction = last > first ? double(busy_ns(run)) / double(last - first) : 0;
            profile.last_run = std::move(run);
        }
    }
    profile.span_us = median(spans);

    const SmLimits sm = current_device_sm_limits();
    const auto plans = engine.op_plans();
    const auto last_run_kernels = kernels_by_op(profile.last_run, graph.size());
    for (const Op& op : graph.ops()) {
        OpProfile p;
        p.op_id = op.id;
        p.name = op.name;
        p.kind = op.kind;
        p.attrs = op.attrs;
        p.inputs = op.inputs;
        for (int src : op.inputs) p.input_shapes.push_back(graph.tensor_shape(src));
        p.output = op.output;
        p.latency_us = median(op_times[size_t(op.id)]);
        p.flops = flops(graph, op.id);
        p.bytes = bytes_moved(graph, op.id, element_bytes(profile.precision));
        p.intensity = p.bytes > 0 ? double(p.flops) / double(p.bytes) : 0;
        p.roofline = roofline_bound(profile.ceilings, p.flops, p.bytes, p.latency_us);
        p.compute_bound = p.roofline.compute_bound;
        for (const auto& plan : plans)
            if (plan.op_id == op.id) {
                p.engine_path = plan.path;
                p.engine_algorithms = plan.algorithms;
                p.engine_candidates = plan.candidates;
            }
        if (same_kernel_count[size_t(op.id)]) {
            const auto& last = last_run_kernels[size_t(op.id)];
            for (size_t k = 0; k < last.size(); ++k)
                p.kernel_times.push_back({last[k]->name, median(kernel_runs[size_t(op.id)][k])});
        }
        const KernelRecord* longest = nullptr;
        for (const auto& k : profile.last_run.kernels) {
            if (k.op_id != op.id) continue;
            ++p.kernels;
            if (!longest || k.duration_us() > longest->duration_us()) longest = &k;
        }
        for (const auto& t : profile.last_run.transfers) p.transfers += t.op_id == op.id;
        if (longest) {
            p.main_kernel = longest->name;
            p.grid = fmt::format("{}x{}x{}", longest->grid_x, longest->grid_y, longest->grid_z);
            p.block = fmt::format("{}x{}x{}", longest->block_x, longest->block_y, longest->block_z);
            p.blocks = longest->blocks();
            p.threads_per_block = longest->threads_per_block();
            p.registers_per_thread = longest->registers_per_thread;
            p.shared_bytes = longest->static_shared_bytes + longest->dynamic_shared_bytes;
            const auto occ = theoretical_occupancy(sm, p.threads_per_block, p.registers_per_thread,
                                                   p.shared_bytes);
            p.occupancy = occ.occupancy;
            p.occupancy_limited_by = occ.limited_by;
        }
        profile.op_sum_us += p.latency_us;
        profile.ops.push_back(std::move(p));
    }

    // Longest path through the DAG, each op weighted by its isolated latency.
    std::vector<double> finish(size_t(graph.size()), 0.0);
    for (const Op& op : graph.ops()) {
        double start = 0;
        for (int src : op.inputs)
            if (!is_graph_input(src)) start = std::max(start, finish[size_t(src)]);
        finish[size_t(op.id)] = start + profile.ops[size_t(op.id)].latency_us;
        profile.critical_path_us = std::max(profile.critical_path_us, finish[size_t(op.id)]);
    }
    return profile;
}

}  // namespace iostune
