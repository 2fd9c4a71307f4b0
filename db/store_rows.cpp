#include "db/store_rows.h"

#include <string>

#include "iostune/version.h"

namespace iostune::db {

namespace {

std::string stamp_or(const std::string& given, const char* build_value) {
    return given.empty() ? std::string(build_value) : given;
}

// NULL for an empty timestamp, so that the statement's COALESCE stamps the current time.
void bind_time_or_now(Statement& statement, int index, const std::string& time) {
    if (time.empty())
        statement.bind_null(index);
    else
        statement.bind_text(index, time);
}

constexpr const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

}  // namespace

std::int64_t insert_or_find_device(Connection& connection, const DeviceRecord& device) {
    // DO UPDATE of a column to itself makes RETURNING yield the existing row's id too.
    Statement upsert(connection,
                     "INSERT INTO devices (name, cc_major, cc_minor, sm_count, driver_version, "
                     "cuda_version, cudnn_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                     "ON CONFLICT (name, cc_major, cc_minor, sm_count, driver_version, "
                     "cuda_version, cudnn_version) DO UPDATE SET name = excluded.name "
                     "RETURNING id");
    upsert.bind_text(1, device.name)
        .bind_int(2, device.cc_major)
        .bind_int(3, device.cc_minor)
        .bind_int(4, device.sm_count)
        .bind_text(5, device.driver_version)
        .bind_text(6, device.cuda_version)
        .bind_text(7, device.cudnn_version);
    upsert.step();
    const std::int64_t id = upsert.column_int(0);
    upsert.run();
    return id;
}

std::int64_t insert_or_find_model(Connection& connection, const ModelRecord& model) {
    Statement upsert(connection,
                     "INSERT INTO models (name, fingerprint, graph_json) VALUES (?1, ?2, ?3) "
                     "ON CONFLICT (fingerprint) DO UPDATE SET fingerprint = excluded.fingerprint "
                     "RETURNING id");
    upsert.bind_text(1, model.name).bind_text(2, model.fingerprint).bind_text(3, model.graph.dump());
    upsert.step();
    const std::int64_t id = upsert.column_int(0);
    upsert.run();
    return id;
}

std::int64_t insert_schedule(Connection& connection, const ScheduleRecord& record) {
    Statement insert(connection,
                     std::string("INSERT INTO schedules (model_id, device_id, batch, precision, "
                                 "strategy, r, s, predicted_ms, measured_ms, sequential_ms, "
                                 "search_stats_json, schedule_json, tool_version, git_commit, "
                                 "conv_choices_json, layout, arena_bytes, created_at) VALUES (?1, "
                                 "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                                 "?16, ?17, COALESCE(?18, ") +
                         kNow + "))");
    insert.bind_int(1, record.model_id)
        .bind_int(2, record.device_id)
        .bind_int(3, record.batch)
        .bind_text(4, record.precision)
        .bind_text(5, record.strategy)
        .bind_int(6, record.r)
        .bind_int(7, record.s)
        .bind_optional_double(8, record.predicted_ms)
        .bind_optional_double(9, record.measured_ms)
        .bind_optional_double(10, record.sequential_ms)
        .bind_text(11, record.search_stats.dump())
        .bind_text(12, record.schedule.dump())
        .bind_text(13, stamp_or(record.tool_version, kVersion))
        .bind_text(14, stamp_or(record.git_commit, kGitCommit))
        .bind_text(15, record.conv_choices.dump())
        .bind_text(16, record.layout);
    if (record.arena_bytes) insert.bind_int(17, *record.arena_bytes);
    else insert.bind_null(17);
    bind_time_or_now(insert, 18, record.created_at);
    insert.run();
    return sqlite3_last_insert_rowid(connection.get());
}

StageWriter::StageWriter(Connection& connection)
    : insert_(connection,
              std::string("INSERT OR REPLACE INTO stage_measurements (device_id, batch, "
                          "precision, stage_key, latency_ms, spread_ms, repeats, ok, error, "
                          "simulated, tool_version, layout, measured_at) VALUES (?1, ?2, ?3, ?4, "
                          "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, COALESCE(?13, ") +
                  kNow + "))") {}

void StageWriter::put(const StageRecord& record) {
    insert_.reset()
        .bind_int(1, record.device_id)
        .bind_int(2, record.batch)
        .bind_text(3, record.precision)
        .bind_text(4, record.stage_key)
        .bind_double(5, record.latency_ms)
        .bind_double(6, record.spread_ms)
        .bind_int(7, record.repeats)
        .bind_int(8, record.ok ? 1 : 0)
        .bind_text(9, record.error)
        .bind_int(10, record.simulated ? 1 : 0)
        .bind_text(11, stamp_or(record.tool_version, kVersion))
        .bind_text(12, record.layout);
    bind_time_or_now(insert_, 13, record.measured_at);
    insert_.run();
}

}  // namespace iostune::db
