#include "tuning/measured_schedule_evaluator.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"
#include "src/engine/arena_placements.h"

namespace iostune {

namespace {
// Samples of one schedule in a row, after a launch not timed (timing.h: the first launch after
// another graph's is slower): 25 repeats in 5 turns.
constexpr int kSamplesPerTurn = 5;
}  // namespace

MeasuredScheduleEvaluator::MeasuredScheduleEvaluator(Engine& engine, OutputCheck difference,
                                                     MeasureOptions timing,
                                                     std::vector<size_t> placements)
    : engine_(engine),
      difference_(std::move(difference)),
      timing_(timing),
      placements_(std::move(placements)) {}

bool MeasuredScheduleEvaluator::agrees(const Schedule& schedule, std::string& why) {
    why = difference_(schedule);
    return why.empty();
}

std::string MeasuredScheduleEvaluator::name() const {
    return fmt::format("measured end to end ({})", to_string(engine_.options().precision));
}

void MeasuredScheduleEvaluator::fit_repeats(double budget_s, int plain, int in_turns,
                                            double launch_ms, double capture_s,
                                            int min_repeats) {
    const size_t places = std::max<size_t>(placements_.size(), 1);
    const double captures_s = double(plain + in_turns * int(places)) * capture_s;
    timing_ = repeats_within_placed(timing_, budget_s - captures_s, plain, in_turns,
                                    kSamplesPerTurn, places, launch_ms, min_repeats);
}

ScheduleMeasurement MeasuredScheduleEvaluator::measure(const Schedule& schedule) {
    ScheduleMeasurement m;
    try {
        const CudaGraphExec exec = engine_.capture(schedule);
        const LatencyStats stats = measure_graph(exec, engine_.origin_stream(), timing_, events_);
        m.latency_ms = stats.median_ms;
        m.spread_ms = stats.p90_ms - stats.p10_ms;
    } catch (const Error& e) {
        // A schedule the engine cannot run (a merge cuDNN refuses, say) is no candidate.
        m.ok = false;
        m.error = e.what();
    }
    return m;
}

std::vector<ScheduleMeasurement> MeasuredScheduleEvaluator::measure_in_turns(
    const std::vector<Schedule>& schedules) {
    const PlacedTimings timed =
        time_placed_in_turns(engine_, schedules, timing_, kSamplesPerTurn, placements_);
    std::vector<ScheduleMeasurement> out(schedules.size());
    for (size_t k = 0; k < schedules.size(); ++k) {
        if (!timed.stats[k]) {
            out[k].ok = false;
            out[k].error = timed.errors[k];
            continue;
        }
        out[k].latency_ms = timed.stats[k]->median_ms;
        out[k].spread_ms = timed.stats[k]->p90_ms - timed.stats[k]->p10_ms;
    }
    return out;
}

}  // namespace iostune
