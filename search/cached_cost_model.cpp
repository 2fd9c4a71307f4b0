#include "search/cached_cost_model.h"

#include <utility>

#include "src/error.h"
#include "src/model_json.h"

namespace iostune {

CachedCostModel::CachedCostModel(CostModel& inner, StageCache& cache, CacheScope scope,
                                 GraphKey graph_key)
    : inner_(inner), cache_(cache), scope_(std::move(scope)), graph_key_(std::move(graph_key)) {
    if (scope_.device.empty()) throw Error("cached cost model: the cache scope names no device");
    if (scope_.precision.empty())
        throw Error("cached cost model: the cache scope names no precision");
    if (!graph_key_) graph_key_ = [](const Graph& graph) { return fingerprint(graph); };
}

StageCacheKey CachedCostModel::key(const Graph& graph, const Stage& stage) const {
    return StageCacheKey{scope_.device, graph.batch(), scope_.precision,
                         graph_key_(graph) + "|" + stage_signature(stage)};
}

StageMeasurement CachedCostModel::measure(const Graph& graph, const Stage& stage) {
    const StageCacheKey k = key(graph, stage);
    // An estimate must never stand in for a measurement (or the reverse), whatever the scope says.
    if (auto cached = cache_.get(k); cached && cached->simulated == inner_.simulated()) {
        ++hits_;
        return *cached;
    }
    ++misses_;
    StageMeasurement fresh = inner_.measure(graph, stage);
    cache_.put(k, fresh);  // failures too: a stage that cannot run is not retried every search
    return fresh;
}

}  // namespace iostune
