// The cost model the search uses on a GPU: each stage is measured the way replay runs it —
// captured as a small CUDA Graph, replayed after warm-up between CUDA events, median of repeats.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "search/cost_model.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"

namespace iostune {

// Wall time inside measure(), split by what it was spent on.
struct MeasuredWork {
    std::int64_t calls = 0;
    double engine_setup_s = 0;  // building the engine and its first full run (once per graph)
    double capture_s = 0;       // Engine::capture_stage: warm-up run, capture, instantiation
    // Of which merge stages (the first capture of one also stacks weights, allocates and
    // chooses the merged convolution's algorithm).
    std::int64_t merge_calls = 0;
    double merge_capture_s = 0;
    double timing_s = 0;        // measure_graph: warm-up launches and timed repeats
    double total_s = 0;         // all of measure(), the three above included
};

class MeasuredCostModel : public CostModel {
public:
    // Stage timings default to 3 warm-up launches and 15 repeats of at least 0.05 ms each (the
    // event timer resolves about 0.5 us), enqueued back to back with one synchronisation per
    // stage (RepeatMode::BackToBack in timing.h): stable to a few percent on an idle H100 while
    // keeping a search's hundred thousand calls cheap.
    explicit MeasuredCostModel(EngineOptions engine_options = {},
                               MeasureOptions timing = {3, 15, 1, 0.05, 0,
                                                        RepeatMode::BackToBack});
    // Timing that flushes L2 before every repeat, one launch per repeat (RepeatMode::Cold in
    // timing.h): a stage meets its weights as cold as in a whole schedule whose weights do not
    // fit in L2. The flush is the engine's (Engine::flush_l2).
    static MeasureOptions cold_timing() { return {3, 15, 1, 0, 0, RepeatMode::Cold}; }
    ~MeasuredCostModel() override;

    StageMeasurement measure(const Graph& graph, const Stage& stage) override;
    std::string name() const override;
    bool simulated() const override { return false; }
    // {"calls", "engine_setup_s", "capture_s", "timing_s", "measure_s", "merge_calls",
    //  "merge_capture_s"}
    nlohmann::json work_seconds() const override;

    int calls() const { return int(work_.calls); }
    double seconds_spent() const { return work_.total_s; }  // wall time inside measure()
    const MeasuredWork& work() const { return work_; }

    bool cold_caches() const { return timing_.mode == RepeatMode::Cold; }

private:
    Engine& engine_for(const Graph& graph);

    EngineOptions engine_options_;
    MeasureOptions timing_;
    std::unique_ptr<Engine> engine_;
    TimingEvents events_;  // reused by every measurement
    std::string device_name_;
    MeasuredWork work_;
};

}  // namespace iostune
