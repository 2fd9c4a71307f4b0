#include "search/in_memory_stage_cache.h"

namespace iostune {

std::optional<StageMeasurement> InMemoryStageCache::get(const StageCacheKey& key) {
    const auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
}

void InMemoryStageCache::put(const StageCacheKey& key, const StageMeasurement& measurement) {
    entries_.insert_or_assign(key, measurement);
}

}  // namespace iostune
