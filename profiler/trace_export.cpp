#include "profiler/trace_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/error.h"

namespace iostune {

namespace {

std::string op_label(const Graph& graph, int64_t op_id) {
    if (op_id < 0 || op_id >= graph.size()) return "(no operator)";
    return graph.op(int(op_id)).name;
}

}  // namespace

void write_chrome_trace(const std::string& path, const ActivityTrace& trace, const Graph& graph) {
    uint64_t origin = UINT64_MAX;
    for (const auto& k : trace.kernels) origin = std::min(origin, k.start_ns);
    for (const auto& t : trace.transfers) origin = std::min(origin, t.start_ns);
    if (origin == UINT64_MAX) origin = 0;
    auto us = [&](uint64_t ns) { return double(ns - origin) / 1e3; };

    nlohmann::json events = nlohmann::json::array();
    for (const auto& k : trace.kernels) {
        events.push_back({{"name", op_label(graph, k.op_id)},
                          {"cat", "kernel"},
                          {"ph", "X"},
                          {"ts", us(k.start_ns)},
                          {"dur", k.duration_us()},
                          {"pid", 0},
                          {"tid", k.stream_id},
                          {"args",
                           {{"kernel", k.name},
                            {"op_id", k.op_id},
                            {"grid", fmt::format("{}x{}x{}", k.grid_x, k.grid_y, k.grid_z)},
                            {"block", fmt::format("{}x{}x{}", k.block_x, k.block_y, k.block_z)},
                            {"registers_per_thread", k.registers_per_thread},
                            {"shared_bytes", k.static_shared_bytes + k.dynamic_shared_bytes}}}});
    }
    for (const auto& t : trace.transfers) {
        events.push_back({{"name", fmt::format("{} {}", t.what, op_label(graph, t.op_id))},
                          {"cat", t.kind == TransferKind::Memcpy ? "memcpy" : "memset"},
                          {"ph", "X"},
                          {"ts", us(t.start_ns)},
                          {"dur", t.duration_us()},
                          {"pid", 0},
                          {"tid", t.stream_id},
                          {"args", {{"bytes", t.bytes}, {"op_id", t.op_id}}}});
    }
    nlohmann::json doc = {{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ms"},
                          {"otherData", {{"model", graph.name()}, {"batch", graph.batch()}}}};
    std::ofstream out(path);
    if (!out) throw Error(fmt::format("cannot write trace file '{}': check the folder exists and is writable", path));
    out << doc.dump(1) << '\n';
    if (!out) throw Error(fmt::format("writing trace file '{}' failed (disk full?)", path));
}

}  // namespace iostune
