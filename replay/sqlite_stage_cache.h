// The stage cache kept in the schedule store: every measurement is committed as it is made, so a
// search that is killed keeps them, and the next search of the same device, batch and precision
// reuses every one.
#pragma once

#include <cstdint>
#include <string>

#include "db/schedule_store.h"
#include "search/stage_cache.h"

namespace iostune {

class SqliteStageCache final : public StageCache {
public:
    // Serves keys whose device is `device_label` (the CacheScope device of the cost model) from
    // the store's row `device_id`. `store` must outlive the cache.
    SqliteStageCache(db::ScheduleStore& store, std::int64_t device_id, std::string device_label);

    std::optional<StageMeasurement> get(const StageCacheKey& key) override;
    void put(const StageCacheKey& key, const StageMeasurement& measurement) override;

private:
    void check_device(const StageCacheKey& key) const;

    db::ScheduleStore& store_;
    std::int64_t device_id_;
    std::string device_label_;
};

}  // namespace iostune
