// Everything one schedule store holds, read into memory: what `iostune db merge` reads from
// each part (and from the target, inside its write transaction) before it writes anything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/records.h"
#include "db/schedule_store.h"

namespace iostune::db {

struct StoreSnapshot {
    std::string path;
    std::vector<DeviceRecord> devices;
    std::vector<ModelRecord> models;
    std::vector<ScheduleRecord> schedules;
    std::vector<StageRecord> stages;

    // The rows an id of this store refers to; throw iostune::Error for an id the store lacks.
    const DeviceRecord& device(std::int64_t id) const;
    const ModelRecord& model(std::int64_t id) const;
};

// Reads `store` whole after checking it: undamaged (PRAGMA integrity_check), every reference
// resolving (PRAGMA foreign_key_check), every JSON column parsing. Throws iostune::Error naming
// the file and what is wrong.
StoreSnapshot read_snapshot(const ScheduleStore& store);
// Opens `path` read-only (OpenMode::ReadOnly: this build's schema only) and reads it whole.
StoreSnapshot read_snapshot(const std::string& path);

// The identity of a row across stores, whose ids differ: a device by every identifying field,
// a schedule by its key, search settings, provenance and creation time, a stage measurement by
// its cache key. Text keys for maps; fields are joined by a separator no value holds.
std::string device_identity(const DeviceRecord& device);
std::string schedule_identity(const StoreSnapshot& store, const ScheduleRecord& schedule);
std::string stage_identity(const StoreSnapshot& store, const StageRecord& stage);

}  // namespace iostune::db
