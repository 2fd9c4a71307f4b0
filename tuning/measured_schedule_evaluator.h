// The refinement's evaluator on a GPU: a whole schedule captured as one CUDA Graph on the
// tuning job's engine (its weights, input and convolution choices) and timed as replay times it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "search/schedule_evaluator.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"

namespace iostune {

class MeasuredScheduleEvaluator final : public ScheduleEvaluator {
public:
    // Timing of each evaluation: as replay times (timing.h's EachRepeat: one launch per sample,
    // from an idle stream), so the refinement ranks schedules as replay will. Timed back to back
    // instead (launches queued behind each other, the host's trip hidden), the refinement kept
    // GoogLeNet TF32 moves worth 0.2388 ms that replay measured at 0.2552, slower than greedy
    // (H100, call68). One evaluation costs a few milliseconds plus the capture.
    // `difference` runs a schedule and says how its output differs from the sequential
    // schedule's ("" when it agrees).
    using OutputCheck = std::function<std::string(const Schedule&)>;
    // `placements`: arena offsets (arena_placements.h) at which measure_in_turns times the
    // schedules it compares, sharing its repeats among them (the engine must have the room);
    // empty or one: where the arena is.
    static MeasureOptions default_timing() { return {3, 25, 1, 0, 0, RepeatMode::EachRepeat}; }
    MeasuredScheduleEvaluator(Engine& engine, OutputCheck difference,
                              MeasureOptions timing = default_timing(),
                              std::vector<size_t> placements = {});

    // The timing of each evaluation, and its repeats cut (never below `min_repeats`) so that
    // `plain` schedules timed one by one and `in_turns` timed together at every placement, each
    // captured (`capture_s` a capture), fit `budget_s` at `launch_ms` a launch.
    const MeasureOptions& timing() const { return timing_; }
    void fit_repeats(double budget_s, int plain, int in_turns, double launch_ms, double capture_s,
                     int min_repeats);

    ScheduleMeasurement measure(const Schedule& schedule) override;
    // Captured one by one, timed in turns of a few samples each (measure_interleaved) with the
    // same warm-up and repeats, at each placement; a schedule the engine cannot run is not ok
    // and is left out.
    std::vector<ScheduleMeasurement> measure_in_turns(
        const std::vector<Schedule>& schedules) override;
    bool agrees(const Schedule& schedule, std::string& why) override;
    std::string name() const override;
    bool simulated() const override { return false; }

private:
    Engine& engine_;
    OutputCheck difference_;
    MeasureOptions timing_;
    std::vector<size_t> placements_;
    TimingEvents events_;
};

}  // namespace iostune
