// A SIMULATED end-to-end latency: a schedule's stream program (src/stream_program.h) played out
// on the analytic device profile. Each launch starts when the launch before it on its lane and
// every launch it waits for have ended, plus the profile's launch cost (and a synchronisation
// cost per wait); launches that run at once share the machine: while the fractions of the
// machine they need (their FLOPs at the peak or their bytes at the bandwidth, over their time
// alone) add up to more than one, each advances that much slower. So staged and dataflow forms,
// lanes, merges and concurrency all change the estimate, as they change the measured latency.
// Deterministic. Used where no GPU is (tests, --cost sim) and always labelled simulated.
#pragma once

#include <string>

#include "search/schedule_evaluator.h"
#include "search/sim_cost_model.h"
#include "src/graph.h"
#include "src/stream_program.h"

namespace iostune {

// Estimated milliseconds of the whole program.
double simulate_program_ms(const Graph& graph, const StreamProgram& program,
                           const SimCostModel& model);

class SimulatedScheduleEvaluator final : public ScheduleEvaluator {
public:
    SimulatedScheduleEvaluator(const Graph& graph, SimCostModel model)
        : graph_(graph), model_(std::move(model)) {}
    ScheduleMeasurement measure(const Schedule& schedule) override;
    std::string name() const override { return model_.name() + " timeline"; }
    bool simulated() const override { return true; }

private:
    const Graph& graph_;
    SimCostModel model_;
};

}  // namespace iostune
