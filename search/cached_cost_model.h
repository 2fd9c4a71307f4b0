// A cost model that remembers: it answers from a StageCache when it can and asks the wrapped
// model (measured or simulated) only about stages it has never seen, storing each answer, so a
// second search of the same model on the same device costs no measurements at all.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "search/cost_model.h"
#include "search/stage_cache.h"

namespace iostune {

struct CacheScope {
    std::string device;     // the GPU the inner model measures on, or "sim:<profile>"
    std::string precision;  // math mode of the measurements, e.g. "tf32"
};

class CachedCostModel final : public CostModel {
public:
    // Maps a graph to the structural part of the key; fingerprint() unless told otherwise.
    using GraphKey = std::function<std::string(const Graph&)>;

    // `inner` and `cache` must outlive this model.
    CachedCostModel(CostModel& inner, StageCache& cache, CacheScope scope, GraphKey graph_key = {});

    StageMeasurement measure(const Graph& graph, const Stage& stage) override;
    std::string name() const override { return "cached:" + inner_.name(); }
    bool simulated() const override { return inner_.simulated(); }

    StageCacheKey key(const Graph& graph, const Stage& stage) const;
    int64_t hits() const { return hits_; }
    int64_t misses() const { return misses_; }

private:
    CostModel& inner_;
    StageCache& cache_;
    CacheScope scope_;
    GraphKey graph_key_;
    int64_t hits_ = 0;
    int64_t misses_ = 0;
};

}  // namespace iostune
