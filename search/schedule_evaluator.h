// The refinement's view of hardware: what a whole schedule costs end to end, as replay runs it
// (one CUDA Graph of its stream program). Implementations: measured (tuning/, the engine on this
// GPU) and simulated (timeline_sim.h, an analytic estimate labelled as such wherever it shows).
#pragma once

#include <string>
#include <vector>

#include "src/schedule.h"

namespace iostune {

struct ScheduleMeasurement {
    double latency_ms = 0;
    double spread_ms = 0;     // p90 - p10 of the repeats (0 for estimates)
    bool ok = true;           // false: the schedule could not run (error says why)
    std::string error;
    bool simulated = false;
};

class ScheduleEvaluator {
public:
    virtual ~ScheduleEvaluator() = default;
    // The schedule must be valid for the evaluator's graph.
    virtual ScheduleMeasurement measure(const Schedule& schedule) = 0;
    // Several schedules timed against each other: on a GPU in turns (each round a few samples
    // of every schedule), so a drift of the clocks over the seconds it takes weighs on all
    // alike; two measurements one after the other do not ensure that. By default each one
    // measured.
    virtual std::vector<ScheduleMeasurement> measure_in_turns(
        const std::vector<Schedule>& schedules) {
        std::vector<ScheduleMeasurement> out;
        for (const Schedule& s : schedules) out.push_back(measure(s));
        return out;
    }
    // Whether the schedule computes what the sequential schedule computes; the refinement asks
    // before it keeps a faster schedule, so a schedule that is fast because it is wrong is never
    // kept. Estimates compute nothing: true. `why` gets the difference when not.
    virtual bool agrees(const Schedule& /*schedule*/, std::string& /*why*/) { return true; }
    virtual std::string name() const = 0;
    virtual bool simulated() const = 0;
};

}  // namespace iostune
