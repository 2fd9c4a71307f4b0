// The refinement's evaluator on a GPU: a whole schedule captured as one CUDA Graph on the
// tuning job's engine (its weights, input and convolution choices) and timed as replay times it.
#pragma once

#include <functional>
#include <string>

#include "search/schedule_evaluator.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"

namespace iostune {

class MeasuredScheduleEvaluator final : public ScheduleEvaluator {
public:
    // Timing of each evaluation: repeats of back-to-back launches (timing.h) lasting at least a
    // millisecond each, so a schedule of a few hundred microseconds is timed over a few launches
    // per sample and one evaluation costs tens of milliseconds.
    // `difference` runs a schedule and says how its output differs from the sequential
    // schedule's ("" when it agrees).
    using OutputCheck = std::function<std::string(const Schedule&)>;
    MeasuredScheduleEvaluator(Engine& engine, OutputCheck difference,
                              MeasureOptions timing = {3, 15, 1, 1.0, 0, RepeatMode::BackToBack});

    ScheduleMeasurement measure(const Schedule& schedule) override;
    bool agrees(const Schedule& schedule, std::string& why) override;
    std::string name() const override;
    bool simulated() const override { return false; }

private:
    Engine& engine_;
    OutputCheck difference_;
    MeasureOptions timing_;
    TimingEvents events_;
};

}  // namespace iostune
