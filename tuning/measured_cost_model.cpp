#include "tuning/measured_cost_model.h"

#include <chrono>

#include "search/graph_structure.h"
#include "src/engine/device_info.h"
#include "src/error.h"
#include "src/stopwatch.h"
#include "src/weights.h"

namespace iostune {
using Clock = SteadyClock;

MeasuredCostModel::MeasuredCostModel(EngineOptions engine_options, MeasureOptions timing)
    : engine_options_(engine_options), timing_(timing),
      device_name_(query_device_info(engine_options.device).name) {}

MeasuredCostModel::~MeasuredCostModel() = default;


std::string MeasuredCostModel::name() const {
    return fmt::format("measured:{} ({}{})", device_name_, to_string(engine_options_.precision),
                       cold_caches() ? ", cold L2" : "");
}

nlohmann::json MeasuredCostModel::work_seconds() const {
    return {{"calls", work_.calls},
            {"engine_setup_s", work_.engine_setup_s},
            {"capture_s", work_.capture_s},
            {"timing_s", work_.timing_s},
            {"measure_s", work_.total_s},
            {"merge_calls", work_.merge_calls},
            {"merge_capture_s", work_.merge_capture_s}};
}

Engine& MeasuredCostModel::engine_for(const Graph& graph) {
    // The engine's own copy of the graph says whether it still fits: same structure and batch,
    // as the fingerprint/batch key it stands for, at a fraction of fingerprint()'s cost.
    if (!engine_ || !same_structure(graph, engine_->graph())) {
        const auto begin = Clock::now();
        engine_.reset();
        engine_ = std::make_unique<Engine>(graph, engine_options_);
        // One full run so every activation holds real data: stages are never timed on zeros.
        engine_->set_random_inputs(7);
        engine_->launch_schedule(sequential_schedule(graph), engine_->origin_stream());
        engine_->synchronize();
        work_.engine_setup_s += seconds_since(begin);
    }
    return *engine_;
}

StageMeasurement MeasuredCostModel::measure(const Graph& graph, const Stage& stage) {
    const auto begin = Clock::now();
    StageMeasurement m;
    try {
        Engine& engine = engine_for(graph);
        const auto capture_begin = Clock::now();
        const CudaGraphExec exec = engine.capture_stage(stage);
        const auto timing_begin = Clock::now();
        const double capture_s = std::chrono::duration<double>(timing_begin - capture_begin).count();
        work_.capture_s += capture_s;
        if (stage.strategy == StageStrategy::Merge) {
            ++work_.merge_calls;
            work_.merge_capture_s += capture_s;
        }
        const LatencyStats stats =
            measure_graph(exec, engine.origin_stream(), timing_, events_,
                          [&engine](cudaStream_t s) { engine.flush_l2(s); });
        work_.timing_s += seconds_since(timing_begin);
        m.latency_ms = stats.median_ms;
        m.spread_ms = stats.p90_ms - stats.p10_ms;
        m.repeats = int(stats.samples_ms.size());
    } catch (const Error& e) {
        // A stage that cannot run is recorded as such; the search skips it.
        m.ok = false;
        m.error = e.what();
    }
    ++work_.calls;
    work_.total_s += seconds_since(begin);
    return m;
}

}  // namespace iostune
