// The search's only view of hardware: what a stage costs. Implementations: measured (engine +
// profiler on the GPU, in profiler/), simulated (analytic device model), cached (wraps either).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "src/graph.h"
#include "src/schedule.h"

namespace iostune {

struct StageMeasurement {
    double latency_ms = 0.0;  // median over repeats (or the model's estimate)
    double spread_ms = 0.0;   // p90 - p10 of the repeats (0 for estimates)
    int repeats = 0;
    bool ok = true;           // false: the stage failed to run; the search treats it as unusable
    std::string error;        // why it failed
    bool simulated = false;   // true for estimates from the analytic model
};

class CostModel {
public:
    virtual ~CostModel() = default;
    // Latency of running `stage` of `graph` (at the graph's batch size) as replay would.
    virtual StageMeasurement measure(const Graph& graph, const Stage& stage) = 0;
    // Short name shown to users, e.g. "measured", "sim:h100".
    virtual std::string name() const = 0;
    virtual bool simulated() const = 0;
    // Where the model's own time went so far: seconds per activity plus call counts (e.g.
    // {"calls": 10, "capture_s": 0.2, "timing_s": 0.9}), for search statistics; {} when the
    // model keeps no account.
    virtual nlohmann::json work_seconds() const { return nlohmann::json::object(); }
};

}  // namespace iostune
