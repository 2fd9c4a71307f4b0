#include "profiler/measured_cost_model.h"

#include <chrono>

#include "src/engine/device_info.h"
#include "src/error.h"
#include "src/model_json.h"
#include "src/weights.h"

namespace iostune {

MeasuredCostModel::MeasuredCostModel(EngineOptions engine_options, MeasureOptions timing)
    : engine_options_(engine_options), timing_(timing),
      device_name_(query_device_info(engine_options.device).name) {}

MeasuredCostModel::~MeasuredCostModel() = default;

std::string MeasuredCostModel::name() const {
    return fmt::format("measured:{} ({})", device_name_, to_string(engine_options_.math));
}

Engine& MeasuredCostModel::engine_for(const Graph& graph) {
    const std::string key = fmt::format("{}/{}", fingerprint(graph), graph.batch());
    if (!engine_ || key != engine_key_) {
        engine_.reset();
        engine_ = std::make_unique<Engine>(graph, engine_options_);
        engine_key_ = key;
        // One full run so every activation holds real data: stages are never timed on zeros.
        engine_->set_input(random_input(graph.input_shape(), 7));
        engine_->launch_schedule(sequential_schedule(graph), engine_->origin_stream());
        engine_->synchronize();
    }
    return *engine_;
}

StageMeasurement MeasuredCostModel::measure(const Graph& graph, const Stage& stage) {
    const auto begin = std::chrono::steady_clock::now();
    StageMeasurement m;
    try {
        Engine& engine = engine_for(graph);
        const CudaGraphExec exec = engine.capture_stage(stage);
        const LatencyStats stats = measure_graph(exec, engine.origin_stream(), timing_);
        m.latency_ms = stats.median_ms;
        m.spread_ms = stats.p90_ms - stats.p10_ms;
        m.repeats = int(stats.samples_ms.size());
    } catch (const Error& e) {
        // A stage that cannot run is recorded as such; the search skips it.
        m.ok = false;
        m.error = e.what();
    }
    ++calls_;
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return m;
}

}  // namespace iostune
