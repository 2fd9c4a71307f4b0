#include "search/cached_cost_model.h"

#include <chrono>
#include <utility>

#include "search/graph_structure.h"
#include "src/error.h"
#include "src/model_json.h"
#include "src/stopwatch.h"

namespace iostune {
using Clock = SteadyClock;

CachedCostModel::CachedCostModel(CostModel& inner, StageCache& cache, CacheScope scope,
                                 GraphKey graph_key)
    : inner_(inner), cache_(cache), scope_(std::move(scope)), graph_key_(std::move(graph_key)) {
    if (scope_.device.empty()) throw Error("cached cost model: the cache scope names no device");
    if (scope_.precision.empty())
        throw Error("cached cost model: the cache scope names no precision");
    if (!graph_key_) graph_key_ = [](const Graph& graph) { return fingerprint(graph); };
}

StageCacheKey CachedCostModel::key(const Graph& graph, const Stage& stage) const {
    if (!keyed_structure_ || !same_structure(graph, *keyed_structure_)) {
        keyed_graph_key_ = graph_key_(graph);
        keyed_structure_ = structure_of(graph);
    }
    return StageCacheKey{scope_.device, graph.batch(), scope_.precision, scope_.layout,
                         keyed_graph_key_ + "|" + stage_signature(stage)};
}

nlohmann::json CachedCostModel::work_seconds() const {
    nlohmann::json work = inner_.work_seconds();
    work["cache_lookup_s"] = lookup_s_;
    work["cache_store_s"] = store_s_;
    return work;
}

StageMeasurement CachedCostModel::measure(const Graph& graph, const Stage& stage) {
    const StageCacheKey k = key(graph, stage);
    const auto lookup_begin = Clock::now();
    const std::optional<StageMeasurement> cached = cache_.get(k);
    lookup_s_ += seconds_since(lookup_begin);
    // An estimate must never stand in for a measurement (or the reverse), whatever the scope says.
    if (cached && cached->simulated == inner_.simulated()) {
        ++hits_;
        return *cached;
    }
    ++misses_;
    StageMeasurement fresh = inner_.measure(graph, stage);
    const auto store_begin = Clock::now();
    cache_.put(k, fresh);  // failures too: a stage that cannot run is not retried every search
    store_s_ += seconds_since(store_begin);
    return fresh;
}

}  // namespace iostune
