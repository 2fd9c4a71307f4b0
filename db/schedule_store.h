// The schedule store: one SQLite file (default iostune.db) holding devices, models, searched
// schedules and the stage-latency cache, with the queries behind `iostune report`.
//
// Opening sets WAL, a 10 s busy timeout and foreign keys, and migrates an older schema forward.
// Files that are not SQLite, damaged, of another program, or of a newer iostune are refused with
// one message (path + what to do) and left byte-for-byte as they were. Every write is one
// BEGIN IMMEDIATE transaction, so concurrent search processes queue instead of failing, and a
// process killed mid-search keeps every measurement it committed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/records.h"
#include "db/sqlite_handle.h"

namespace iostune::db {

inline constexpr const char* kDefaultDatabasePath = "iostune.db";
inline constexpr int kBusyTimeoutMs = 10000;

enum class OpenMode {
    CreateIfMissing,  // search: a new file gets the schema
    MustExist,        // replay, report: a missing or empty file is an error, nothing is created
    // db merge's parts: opened read-only, never migrated nor switched to WAL; a schema other than
    // this build's is refused (a part is only read, so it cannot be brought forward here).
    ReadOnly,
};

struct StoreSnapshot;  // db/store_snapshot.h
struct MergeSummary;   // db/store_merge.h

// One connection; not for use from several threads at once (open one store per thread).
class ScheduleStore {
public:
    // Throws iostune::Error on any failure; see the file comment for what is refused.
    static ScheduleStore open(const std::string& path, OpenMode mode);

    const std::string& path() const { return connection_->path(); }
    int schema_version() const;

    // Returns the id of the row equal on every field, inserting it if there is none.
    std::int64_t upsert_device(const DeviceRecord& device);
    std::optional<DeviceRecord> device(std::int64_t id) const;
    // The id of the row equal on every identifying field, without inserting one.
    std::optional<std::int64_t> find_device(const DeviceRecord& device) const;
    std::vector<DeviceRecord> devices() const;  // every device, by id

    // Keyed by fingerprint: an existing model keeps its id and name. Returns the id.
    std::int64_t upsert_model(const ModelRecord& model);
    std::optional<ModelRecord> model_by_fingerprint(const std::string& fingerprint) const;
    std::optional<ModelRecord> model(std::int64_t id) const;
    std::vector<ModelRecord> models() const;  // every model, by id

    // Inserts a new row (record.id and created_at are ignored; an empty tool_version/git_commit
    // is stamped with this build's). Returns the new id.
    std::int64_t add_schedule(const ScheduleRecord& record);
    std::optional<ScheduleRecord> schedule(std::int64_t id) const;
    std::vector<ScheduleRecord> schedules() const;  // every schedule, by id

    // The schedule with the lowest measured latency for the key, in whichever layout it was
    // measured; rows never measured end to end are not candidates (a prediction alone is no
    // proof). Ties go to the newest row.
    std::optional<ScheduleRecord> best_schedule(const std::string& fingerprint,
                                                std::int64_t device_id, int batch,
                                                const std::string& precision) const;
    // Every convolution choice (src/conv_choices.h) stored with the schedules of `device` (a
    // row equal on every field), newer rows overriding older, as one JSON object: an engine that
    // pins them times each convolution shape once per device, not once per process. A choice
    // made in a hurry (is_quick_choice) never overrides one timed in full.
    nlohmann::json conv_choices_on(const DeviceRecord& device) const;
    // Every key that has schedules, for "no schedule for this key; the DB has: ..." messages.
    std::vector<ScheduleKey> list_keys() const;

    // The cost cache. put replaces any row of the same key and commits at once.
    std::optional<StageRecord> stage_measurement(std::int64_t device_id, int batch,
                                                 const std::string& precision,
                                                 const std::string& layout,
                                                 const std::string& stage_key) const;
    void put_stage_measurement(const StageRecord& record);
    // Several in one transaction (one commit instead of one per row): all are kept or none.
    void put_stage_measurements(const std::vector<StageRecord>& records);
    // Every cached stage of one (device, batch, precision, layout), ordered by stage key.
    std::vector<StageRecord> stage_measurements(std::int64_t device_id, int batch,
                                                const std::string& precision,
                                                const std::string& layout) const;
    std::vector<StageRecord> stage_measurements() const;  // every cached stage

    // Best measured schedule per (model, device, batch, precision), ordered by model, device,
    // batch, precision.
    std::vector<ReportRow> report_best() const;
    // For each key with no measured schedule at all (searched with the simulated cost model), the
    // schedule with the lowest predicted latency; same order as report_best(). These are
    // estimates: report them as such, and never replay them as measured. Their speedup is
    // sequential_ms / predicted_ms (both estimates); prediction_error is empty.
    std::vector<ReportRow> report_estimates() const;
    // One key's row as the reports show it: its best measured schedule, or when none was
    // measured, its best estimate; empty when the key has no schedule.
    std::optional<ReportRow> report_key(const std::string& fingerprint, std::int64_t device_id,
                                        int batch, const std::string& precision) const;

    // PRAGMA integrity_check: "ok", or SQLite's findings one per line.
    std::string integrity_check() const;
    // PRAGMA foreign_key_check: "" when every row's references resolve, else one line per row.
    std::string foreign_key_check() const;

    // Adds the rows of `parts` that this store lacks, in one transaction, or throws and adds
    // nothing (a part that conflicts with this store). Defined in db/store_merge.cpp.
    MergeSummary merge_from(const std::vector<StoreSnapshot>& parts);

private:
    explicit ScheduleStore(Connection connection);
    static ScheduleStore open_read_only(const std::string& path);

    // Held through a pointer so the store stays movable while statements point at the connection.
    std::unique_ptr<Connection> connection_;
};

// "  resnet50 (fingerprint ab12...) on device 1 'NVIDIA H100', batch 1, fp32: 3 schedules,
// 2 measured" per line; "  (none)" when empty.
std::string describe_keys(const std::vector<ScheduleKey>& keys);

}  // namespace iostune::db
