// A cost model that remembers: it answers from a StageCache when it can and asks the wrapped
// model (measured or simulated) only about stages it has never seen, storing each answer, so a
// second search of the same model on the same device costs no measurements at all.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "search/cost_model.h"
#include "search/stage_cache.h"

namespace iostune {

struct CacheScope {
    std::string device;     // the GPU the inner model measures on, or "sim:<profile>"
    std::string precision;  // of the measurements, e.g. "tf32"
    std::string layout = "nchw";  // the engine's activation layout
};

class CachedCostModel final : public CostModel {
public:
    // Maps a graph to the structural part of the key; fingerprint() unless told otherwise. It
    // must depend on the structure alone (same_structure() in graph_structure.h): it is
    // computed once per structure, not per stage.
    using GraphKey = std::function<std::string(const Graph&)>;

    // `inner` and `cache` must outlive this model.
    CachedCostModel(CostModel& inner, StageCache& cache, CacheScope scope, GraphKey graph_key = {});

    StageMeasurement measure(const Graph& graph, const Stage& stage) override;
    std::string name() const override { return "cached:" + inner_.name(); }
    bool simulated() const override { return inner_.simulated(); }
    // The inner model's account plus "cache_lookup_s" and "cache_store_s": time in the
    // StageCache's get and put.
    nlohmann::json work_seconds() const override;

    StageCacheKey key(const Graph& graph, const Stage& stage) const;
    int64_t hits() const { return hits_; }
    int64_t misses() const { return misses_; }

private:
    CostModel& inner_;
    StageCache& cache_;
    CacheScope scope_;
    GraphKey graph_key_;
    // The last graph's structure and its graph key: every stage of a search has the same graph.
    mutable std::optional<Graph> keyed_structure_;
    mutable std::string keyed_graph_key_;
    int64_t hits_ = 0;
    int64_t misses_ = 0;
    double lookup_s_ = 0;
    double store_s_ = 0;
};

}  // namespace iostune
