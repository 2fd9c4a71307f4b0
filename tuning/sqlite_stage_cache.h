// The stage cache kept in the schedule store. Measurements are written in batches, one
// transaction per batch: a commit per stage cost more than some stages take to measure. A batch
// is committed once its oldest measurement is `max_age_s` old (checked at every get and put) or
// it holds `max_pending` of them, and when the cache is flushed or destroyed; so a search killed
// mid-way loses at most the measurements of its last second (by default, and at most 1,000),
// keeps a valid database, and the next search of the same device, batch, precision and layout
// reuses every measurement that was committed.
//
// Reads are served from memory: the first get or put of a (batch, precision, layout) loads that
// part of the device's stored measurements in one query. Rows another process writes afterwards are
// not seen by this cache; at worst such a stage is measured again and its row replaced.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "db/schedule_store.h"
#include "search/stage_cache.h"

namespace iostune {

struct StageCacheBatching {
    double max_age_s = 1.0;  // 0: every measurement is committed at once
    int max_pending = 1000;
};

class SqliteStageCache final : public StageCache {
public:
    // Serves keys whose device is `device_label` (the CacheScope device of the cost model) from
    // the store's row `device_id`. `store` must outlive the cache.
    SqliteStageCache(db::ScheduleStore& store, std::int64_t device_id, std::string device_label,
                     StageCacheBatching batching = {});
    // Commits what is pending; a failure is reported on stderr (call flush() to get it thrown).
    ~SqliteStageCache() override;
    SqliteStageCache(const SqliteStageCache&) = delete;
    SqliteStageCache& operator=(const SqliteStageCache&) = delete;

    std::optional<StageMeasurement> get(const StageCacheKey& key) override;
    void put(const StageCacheKey& key, const StageMeasurement& measurement) override;

    // Commits every pending measurement now. Throws iostune::Error if the store refuses; the
    // measurements then stay pending.
    void flush();
    int pending() const { return int(pending_.size()); }
    std::int64_t committed() const { return committed_; }  // measurements committed so far

private:
    using Measurements = std::unordered_map<std::string, StageMeasurement>;  // by stage key

    void check_device(const StageCacheKey& key) const;
    Measurements& loaded(const StageCacheKey& key);  // the key's (batch, precision, layout)
    void flush_if_due();

    db::ScheduleStore& store_;
    std::int64_t device_id_;
    std::string device_label_;
    StageCacheBatching batching_;
    std::map<std::tuple<int, std::string, std::string>, Measurements> loaded_;
    std::vector<db::StageRecord> pending_;
    std::chrono::steady_clock::time_point oldest_pending_;
    std::int64_t committed_ = 0;
};

}  // namespace iostune
