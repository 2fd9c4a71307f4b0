// A StageCache that lives as long as the process: for tests, and for searches with no DB.
#pragma once

#include <map>

#include "search/stage_cache.h"

namespace iostune {

class InMemoryStageCache final : public StageCache {
public:
    std::optional<StageMeasurement> get(const StageCacheKey& key) override;
    void put(const StageCacheKey& key, const StageMeasurement& measurement) override;
    size_t size() const { return entries_.size(); }

private:
    std::map<StageCacheKey, StageMeasurement> entries_;
};

}  // namespace iostune
