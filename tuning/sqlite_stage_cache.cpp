#include "tuning/sqlite_stage_cache.h"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

#include "src/error.h"
#include "src/stopwatch.h"

namespace iostune {
namespace {

StageMeasurement to_measurement(const db::StageRecord& record) {
    StageMeasurement m;
    m.latency_ms = record.latency_ms;
    m.spread_ms = record.spread_ms;
    m.repeats = record.repeats;
    m.ok = record.ok;
    m.error = record.error;
    m.simulated = record.simulated;
    return m;
}

}  // namespace

SqliteStageCache::SqliteStageCache(db::ScheduleStore& store, std::int64_t device_id,
                                   std::string device_label, StageCacheBatching batching)
    : store_(store), device_id_(device_id), device_label_(std::move(device_label)),
      batching_(batching) {
    if (batching_.max_age_s < 0 || batching_.max_pending < 1)
        throw Error(fmt::format("stage cache batching needs max_age_s >= 0 and max_pending >= 1 "
                                "(got {} and {})",
                                batching_.max_age_s, batching_.max_pending));
}

SqliteStageCache::~SqliteStageCache() {
    try {
        flush();
    } catch (const Error& e) {
        std::fprintf(stderr, "warning: %d stage measurements were not saved: %s\n", pending(),
                     e.what());
    }
}

void SqliteStageCache::check_device(const StageCacheKey& key) const {
    // One cache serves one device row; another device's key here would mix measurements.
    if (key.device != device_label_)
        throw Error(fmt::format("stage cache of device '{}' asked for a stage of device '{}'",
                                device_label_, key.device));
}

SqliteStageCache::Measurements& SqliteStageCache::loaded(const StageCacheKey& key) {
    const auto slot = std::make_tuple(key.batch, key.precision, key.layout);
    if (auto it = loaded_.find(slot); it != loaded_.end()) return it->second;
    Measurements measurements;
    for (const db::StageRecord& record :
         store_.stage_measurements(device_id_, key.batch, key.precision, key.layout))
        measurements.emplace(record.stage_key, to_measurement(record));
    return loaded_.emplace(slot, std::move(measurements)).first->second;
}

void SqliteStageCache::flush() {
    if (pending_.empty()) return;
    store_.put_stage_measurements(pending_);
    committed_ += std::int64_t(pending_.size());
    pending_.clear();
}

void SqliteStageCache::flush_if_due() {
    if (pending_.empty()) return;
    if (seconds_since(oldest_pending_) >= batching_.max_age_s || int(pending_.size()) >= batching_.max_pending) flush();
}

std::optional<StageMeasurement> SqliteStageCache::get(const StageCacheKey& key) {
    check_device(key);
    flush_if_due();
    const Measurements& measurements = loaded(key);
    if (auto it = measurements.find(key.stage); it != measurements.end()) return it->second;
    return std::nullopt;
}

void SqliteStageCache::put(const StageCacheKey& key, const StageMeasurement& measurement) {
    check_device(key);
    loaded(key)[key.stage] = measurement;
    db::StageRecord record;
    record.device_id = device_id_;
    record.batch = key.batch;
    record.precision = key.precision;
    record.layout = key.layout;
    record.stage_key = key.stage;
    record.latency_ms = measurement.latency_ms;
    record.spread_ms = measurement.spread_ms;
    record.repeats = measurement.repeats;
    record.ok = measurement.ok;
    record.error = measurement.error;
    record.simulated = measurement.simulated;
    if (pending_.empty()) oldest_pending_ = std::chrono::steady_clock::now();
    pending_.push_back(std::move(record));
    flush_if_due();
}

}  // namespace iostune
