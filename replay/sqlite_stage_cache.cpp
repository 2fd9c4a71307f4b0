#include "replay/sqlite_stage_cache.h"

#include <fmt/format.h>

#include <utility>

#include "src/error.h"

namespace iostune {

SqliteStageCache::SqliteStageCache(db::ScheduleStore& store, std::int64_t device_id,
                                   std::string device_label)
    : store_(store), device_id_(device_id), device_label_(std::move(device_label)) {}

void SqliteStageCache::check_device(const StageCacheKey& key) const {
    // One cache serves one device row; another device's key here would mix measurements.
    if (key.device != device_label_)
        throw Error(fmt::format("stage cache of device '{}' asked for a stage of device '{}'",
                                device_label_, key.device));
}

std::optional<StageMeasurement> SqliteStageCache::get(const StageCacheKey& key) {
    check_device(key);
    const std::optional<db::StageRecord> record =
        store_.stage_measurement(device_id_, key.batch, key.precision, key.stage);
    if (!record) return std::nullopt;
    StageMeasurement m;
    m.latency_ms = record->latency_ms;
    m.spread_ms = record->spread_ms;
    m.repeats = record->repeats;
    m.ok = record->ok;
    m.error = record->error;
    m.simulated = record->simulated;
    return m;
}

void SqliteStageCache::put(const StageCacheKey& key, const StageMeasurement& measurement) {
    check_device(key);
    db::StageRecord record;
    record.device_id = device_id_;
    record.batch = key.batch;
    record.precision = key.precision;
    record.stage_key = key.stage;
    record.latency_ms = measurement.latency_ms;
    record.spread_ms = measurement.spread_ms;
    record.repeats = measurement.repeats;
    record.ok = measurement.ok;
    record.error = measurement.error;
    record.simulated = measurement.simulated;
    store_.put_stage_measurement(record);
}

}  // namespace iostune
