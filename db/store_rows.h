// The store's row writers, without transactions of their own: ScheduleStore wraps each in one
// (schedule_store.h), and a merge runs many in a single one (store_merge.h). Values reach SQL
// through bound parameters only.
#pragma once

#include <cstdint>

#include "db/records.h"
#include "db/sqlite_handle.h"

namespace iostune::db {

// The id of the row equal on every identifying field, inserting it if there is none.
std::int64_t insert_or_find_device(Connection& connection, const DeviceRecord& device);
// Keyed by fingerprint: an existing model keeps its id and name.
std::int64_t insert_or_find_model(Connection& connection, const ModelRecord& model);

// A new schedule row; returns its id. An empty tool_version or git_commit is stamped with this
// build's, an empty created_at with the current time (a merged row keeps its own).
std::int64_t insert_schedule(Connection& connection, const ScheduleRecord& record);

// Writes stage measurements, replacing any row of the same key; one prepared statement for
// many rows. An empty tool_version is stamped with this build's, an empty measured_at with the
// current time.
class StageWriter {
public:
    explicit StageWriter(Connection& connection);
    void put(const StageRecord& record);

private:
    Statement insert_;
};

}  // namespace iostune::db
