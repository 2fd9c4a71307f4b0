#include "profiler/profile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "src/attr_fields.h"

namespace iostune {

namespace {

std::string shorten(const std::string& text, size_t width) {
    return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

nlohmann::json shape_to_json(const Shape& s) { return {s.n, s.c, s.h, s.w}; }

// The op's attributes under the names of the JSON model format (docs/model-format.md).
nlohmann::json attrs_to_json(const OpAttrs& attrs) {
    nlohmann::json out = nlohmann::json::object();
    std::visit([&](const auto& a) {
        for_each_attr_field(a, [&](const char* name, const auto& value) {
            if constexpr (is_nested_attrs_v<std::remove_cvref_t<decltype(value)>>) {
                if (value) out[name] = attrs_to_json(*value);
            } else {
                out[name] = value;
            }
        });
    }, attrs);
    return out;
}

}  // namespace

std::string format_profile_table(const ModelProfile& p, int top) {
    std::vector<size_t> order(p.ops.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return p.ops[a].latency_us > p.ops[b].latency_us; });

    std::string out = fmt::format("{} batch {} on {} ({} {}), {} measured runs\n", p.model,
                                  p.batch, p.device.summary(), to_string(p.precision),
                                  to_string(p.layout), p.iterations);
    if (p.ceilings.flops_per_s > 0)
        out += fmt::format("measured ceilings: {:.1f} TFLOP/s, {:.2f} TB/s, ridge {:.1f} FLOP/B\n",
                           p.ceilings.flops_per_s / 1e12, p.ceilings.bytes_per_s / 1e12,
                           p.ceilings.ridge_flops_per_byte());
    out += fmt::format("{:>4} {:<36} {:<8} {:>9} {:>6} {:>4} {:>14} {:>9} {:>4} {:>7} {:>5} {:>7} {:<7} {:>5}\n",
                       "#", "operator", "kind", "time(us)", "%", "krn", "grid", "block", "reg",
                       "smem(B)", "occ", "FLOP/B", "bound", "roof");
    const int shown = std::min<int>(top, int(order.size()));
    for (int i = 0; i < shown; ++i) {
        const OpProfile& op = p.ops[order[size_t(i)]];
        out += fmt::format(
            "{:>4} {:<36} {:<8} {:>9.1f} {:>5.1f}% {:>4} {:>14} {:>9} {:>4} {:>7} {:>4.0f}% {:>7.1f} {:<7} {}\n",
            op.op_id, shorten(op.name, 36), to_string(op.kind), op.latency_us,
            p.op_sum_us > 0 ? 100.0 * op.latency_us / p.op_sum_us : 0.0, op.kernels, op.grid,
            op.block, op.registers_per_thread, op.shared_bytes, 100.0 * op.occupancy,
            op.intensity, p.ceilings.flops_per_s > 0 ? (op.compute_bound ? "compute" : "memory") : "-",
            op.roofline.bound_us > 0 ? fmt::format("{:>4.0f}%", 100.0 * op.roofline.fraction) : "    -");
    }
    if (shown < int(order.size()))
        out += fmt::format("     ... {} more operators\n", order.size() - size_t(shown));
    if (p.ceilings.flops_per_s > 0)
        out += "roof: the op's roofline bound (max of FLOPs at the FLOP/s ceiling, bytes at the "
               "bandwidth ceiling) over its time; 100% = as fast as the ceilings allow\n";
    out += fmt::format(
        "total: {} ops, op sum {:.1f} us, run span {:.1f} us, GPU busy {:.1f}%, critical path "
        "{:.1f} us\n",
        p.ops.size(), p.op_sum_us, p.span_us, 100.0 * p.gpu_busy_fraction, p.critical_path_us);
    return out;
}

nlohmann::json device_to_json(const DeviceInfo& device) {
    return {{"name", device.name},
            {"compute_capability", device.compute_capability()},
            {"sm_count", device.sm_count},
            {"driver", device.driver_string()},
            {"cuda_runtime", device.runtime_string()},
            {"cudnn", device.cudnn_string()}};
}

nlohmann::json profile_to_json(const ModelProfile& p) {
    nlohmann::json ops = nlohmann::json::array();
    for (const OpProfile& op : p.ops) {
        nlohmann::json input_shapes = nlohmann::json::array();
        for (const Shape& s : op.input_shapes) input_shapes.push_back(shape_to_json(s));
        nlohmann::json kernel_times = nlohmann::json::array();
        for (const KernelTime& k : op.kernel_times) kernel_times.push_back({{"name", k.name}, {"us", k.us}});
        ops.push_back({{"id", op.op_id},
                       {"name", op.name},
                       {"kind", to_string(op.kind)},
                       {"attrs", attrs_to_json(op.attrs)},
                       {"inputs", op.inputs},
                       {"input_shapes", std::move(input_shapes)},
                       {"output_shape", shape_to_json(op.output)},
                       {"latency_us", op.latency_us},
                       {"kernels", op.kernels},
                       {"transfers", op.transfers},
                       {"main_kernel", op.main_kernel},
                       {"grid", op.grid},
                       {"block", op.block},
                       {"registers_per_thread", op.registers_per_thread},
                       {"shared_bytes", op.shared_bytes},
                       {"theoretical_occupancy", op.occupancy},
                       {"occupancy_limited_by", op.occupancy_limited_by},
                       {"flops", op.flops},
                       {"bytes", op.bytes},
                       {"flops_per_byte", op.intensity},
                       {"bound", op.compute_bound ? "compute" : "memory"},
                       {"roofline_us", op.roofline.bound_us},
                       {"roofline_fraction", op.roofline.fraction},
                       {"kernel_times", std::move(kernel_times)},
                       {"engine_path", op.engine_path},
                       {"engine_algorithms", op.engine_algorithms},
                       {"engine_candidates", op.engine_candidates}});
    }
    return {{"model", p.model},
            {"batch", p.batch},
            {"precision", to_string(p.precision)},
            {"layout", to_string(p.layout)},
            {"device", device_to_json(p.device)},
            {"ceilings",
             {{"flops_per_s", p.ceilings.flops_per_s}, {"bytes_per_s", p.ceilings.bytes_per_s}}},
            {"iterations", p.iterations},
            {"op_sum_us", p.op_sum_us},
            {"span_us", p.span_us},
            {"gpu_busy_fraction", p.gpu_busy_fraction},
            {"critical_path_us", p.critical_path_us},
            {"ops", std::move(ops)}};
}

}  // namespace iostune
