#include "db/store_snapshot.h"

#include <fmt/format.h>

#include <algorithm>

#include "src/error.h"

namespace iostune::db {

namespace {

// Unit separator: never part of a name, version, fingerprint or timestamp iostune writes.
constexpr std::string_view kSeparator = "\x1f";

template <typename Record>
const Record& find_by_id(const std::vector<Record>& rows, std::int64_t id, const std::string& path,
                         std::string_view what) {
    const auto found = std::find_if(rows.begin(), rows.end(),
                                    [id](const Record& row) { return row.id == id; });
    if (found == rows.end())
        throw Error(fmt::format("Schedule database '{}' refers to {} #{}, which it does not hold; "
                                "the file is damaged. Restore it or tune its keys again.",
                                path, what, id));
    return *found;
}

void check_whole(const ScheduleStore& store) {
    const std::string integrity = store.integrity_check();
    if (integrity != "ok")
        throw Error(fmt::format("Schedule database '{}' is damaged (SQLite integrity check: {}). "
                                "Restore it from a backup or tune its keys again.",
                                store.path(), integrity));
    const std::string references = store.foreign_key_check();
    if (!references.empty())
        throw Error(fmt::format("Schedule database '{}' is inconsistent ({}). Restore it from a "
                                "backup or tune its keys again.",
                                store.path(), references));
}

}  // namespace

const DeviceRecord& StoreSnapshot::device(std::int64_t id) const {
    return find_by_id(devices, id, path, "device");
}

const ModelRecord& StoreSnapshot::model(std::int64_t id) const {
    return find_by_id(models, id, path, "model");
}

StoreSnapshot read_snapshot(const ScheduleStore& store) {
    check_whole(store);
    StoreSnapshot snapshot;
    snapshot.path = store.path();
    snapshot.devices = store.devices();
    snapshot.models = store.models();
    snapshot.schedules = store.schedules();
    snapshot.stages = store.stage_measurements();
    return snapshot;
}

StoreSnapshot read_snapshot(const std::string& path) {
    const ScheduleStore store = ScheduleStore::open(path, OpenMode::ReadOnly);
    return read_snapshot(store);
}

std::string device_identity(const DeviceRecord& device) {
    return fmt::format("{1}{0}{2}{0}{3}{0}{4}{0}{5}{0}{6}{0}{7}", kSeparator, device.name,
                       device.cc_major, device.cc_minor, device.sm_count, device.driver_version,
                       device.cuda_version, device.cudnn_version);
}

std::string schedule_identity(const StoreSnapshot& store, const ScheduleRecord& schedule) {
    return fmt::format("{1}{0}{2}{0}{3}{0}{4}{0}{5}{0}{6}{0}{7}{0}{8}{0}{9}{0}{10}{0}{11}",
                       kSeparator, store.model(schedule.model_id).fingerprint,
                       device_identity(store.device(schedule.device_id)), schedule.batch,
                       schedule.precision, schedule.layout, schedule.strategy, schedule.r,
                       schedule.s, schedule.created_at, schedule.tool_version, schedule.git_commit);
}

std::string stage_identity(const StoreSnapshot& store, const StageRecord& stage) {
    return fmt::format("{1}{0}{2}{0}{3}{0}{4}{0}{5}", kSeparator,
                       device_identity(store.device(stage.device_id)), stage.batch,
                       stage.precision, stage.layout, stage.stage_key);
}

}  // namespace iostune::db
