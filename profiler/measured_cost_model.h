// The cost model the search uses on a GPU: each stage is measured the way replay runs it —
// captured as a small CUDA Graph, replayed after warm-up between CUDA events, median of repeats.
#pragma once

#include <memory>
#include <string>

#include "search/cost_model.h"
#include "src/engine/engine.h"
#include "src/engine/timing.h"

namespace iostune {

class MeasuredCostModel : public CostModel {
public:
    // Stage timings default to 3 warm-up launches and 15 repeats of at least 0.05 ms each:
    // stable to a few percent on an idle H100 while keeping a search's thousands of calls cheap.
    explicit MeasuredCostModel(EngineOptions engine_options = {},
                               MeasureOptions timing = {3, 15, 1, 0.05});
    ~MeasuredCostModel() override;

    StageMeasurement measure(const Graph& graph, const Stage& stage) override;
    std::string name() const override;
    bool simulated() const override { return false; }

    int calls() const { return calls_; }
    double seconds_spent() const { return seconds_; }  // wall time inside measure()

private:
    Engine& engine_for(const Graph& graph);

    EngineOptions engine_options_;
    MeasureOptions timing_;
    std::unique_ptr<Engine> engine_;
    std::string engine_key_;
    std::string device_name_;
    int calls_ = 0;
    double seconds_ = 0;
};

}  // namespace iostune
