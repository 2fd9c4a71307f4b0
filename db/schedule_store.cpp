#include "db/schedule_store.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <utility>

#include "db/schema.h"
#include "db/store_rows.h"
#include "src/error.h"

namespace iostune::db {

namespace {

// Binds a device's seven identifying columns as parameters ?1..?7 (devices' unique key).
void bind_device(Statement& statement, const DeviceRecord& device) {
    statement.bind_text(1, device.name)
        .bind_int(2, device.cc_major)
        .bind_int(3, device.cc_minor)
        .bind_int(4, device.sm_count)
        .bind_text(5, device.driver_version)
        .bind_text(6, device.cuda_version)
        .bind_text(7, device.cudnn_version);
}

namespace fs = std::filesystem;

// The first 16 bytes of every SQLite 3 database file.
constexpr std::array<char, 16> kSqliteHeader = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                                'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

// Checked before SQLite sees the file: SQLite would report a foreign file only at the first
// query, and in create mode an empty path component or a directory gives confusing messages.
// Returns whether the file exists with content.
bool check_file_before_open(const std::string& path, OpenMode mode) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) {
        if (mode != OpenMode::CreateIfMissing) {
            throw Error(fmt::format(
                "Schedule database '{}' does not exist. Run `iostune search` first to create it, "
                "or pass the path of an existing database.",
                path), ErrorKind::MissingSchedule);
        }
        return false;
    }
    if (!fs::is_regular_file(status)) {
        throw Error(fmt::format(
            "Schedule database path '{}' is not a regular file; pass the path of a database file.",
            path));
    }
    const auto size = fs::file_size(path, ec);
    if (ec) {
        throw Error(fmt::format("Cannot read the size of schedule database '{}': {}. Check its "
                                "permissions.",
                                path, ec.message()));
    }
    if (size == 0) {
        if (mode != OpenMode::CreateIfMissing) {
            throw Error(fmt::format(
                "Schedule database '{}' is an empty file, not an iostune database. Run `iostune "
                "search` to fill it, or pass the path of an existing database.",
                path), ErrorKind::MissingSchedule);
        }
        return false;
    }
    std::array<char, 16> header{};
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        throw Error(fmt::format("Cannot open schedule database '{}' for reading. Check its "
                                "permissions.",
                                path));
    }
    file.read(header.data(), static_cast<std::streamsize>(header.size()));
    if (file.gcount() != static_cast<std::streamsize>(header.size()) || header != kSqliteHeader) {
        throw Error(fmt::format(
            "'{}' is not an SQLite database (file is not a database: its first bytes are not the "
            "SQLite header); it was left untouched. Pass the path of an iostune database, or move "
            "this file away and run `iostune search` to create a new one.",
            path));
    }
    return true;
}

// Applies the per-connection settings. Only after the schema version was checked may anything
// write: switching to WAL rewrites the file header.
void configure(Connection& connection) {
    const int rc = sqlite3_busy_timeout(connection.get(), kBusyTimeoutMs);
    if (rc != SQLITE_OK) {
        throw_sqlite_error(connection.get(), rc, connection.path(), "setting the busy timeout", "");
    }
    connection.exec("PRAGMA foreign_keys = ON");
}

// Switching to WAL needs an exclusive lock, and SQLite does not call the busy handler for it, so
// processes creating one database at once would fail at once with SQLITE_BUSY: retry until the
// busy timeout instead.
void enable_wal(Connection& connection) {
    std::string mode;
    auto read_mode = [](void* out, int columns, char** values, char**) {
        if (columns > 0 && values[0]) *static_cast<std::string*>(out) = values[0];
        return 0;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    int rc = SQLITE_OK;
    while (true) {
        rc = sqlite3_exec(connection.get(), "PRAGMA journal_mode = WAL", read_mode, &mode, nullptr);
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (rc != SQLITE_OK)
        throw_sqlite_error(connection.get(), rc, connection.path(), "switching to WAL journaling",
                           "PRAGMA journal_mode = WAL");
    if (mode != "wal") {
        throw Error(fmt::format(
            "Schedule database '{}' could not switch to WAL journaling (SQLite kept '{}'); WAL "
            "needs a local file system with shared memory. Put the database on a local disk.",
            connection.path(), mode));
    }
    // In WAL mode NORMAL keeps every committed transaction through a killed process (only a power
    // loss may drop the last commits) and spares one fsync per stage measurement, which made a
    // search of thousands of stages wait on the disk rather than compute.
    connection.exec("PRAGMA synchronous = NORMAL");
}

nlohmann::json parse_json_column(const Statement& row, int column, const std::string& path,
                                 std::string_view what) {
    try {
        return nlohmann::json::parse(row.column_text(column));
    } catch (const nlohmann::json::exception& e) {
        throw Error(fmt::format("Schedule database '{}' holds malformed {} JSON ({}); the row was "
                                "written by something other than iostune or is damaged.",
                                path, what, e.what()));
    }
}

constexpr std::string_view kScheduleColumns =
    "s.id, s.model_id, s.device_id, s.batch, s.precision, s.strategy, s.r, s.s, s.predicted_ms, "
    "s.measured_ms, s.sequential_ms, s.search_stats_json, s.schedule_json, s.tool_version, "
    "s.git_commit, s.created_at, s.conv_choices_json, s.layout, s.arena_bytes";
constexpr int kScheduleColumnCount = 19;

ScheduleRecord read_schedule(const Statement& row, const std::string& path) {
    ScheduleRecord record;
    record.id = row.column_int(0);
    record.model_id = row.column_int(1);
    record.device_id = row.column_int(2);
    record.batch = static_cast<int>(row.column_int(3));
    record.precision = row.column_text(4);
    record.strategy = row.column_text(5);
    record.r = static_cast<int>(row.column_int(6));
    record.s = static_cast<int>(row.column_int(7));
    record.predicted_ms = row.column_optional_double(8);
    record.measured_ms = row.column_optional_double(9);
    record.sequential_ms = row.column_optional_double(10);
    record.search_stats = parse_json_column(row, 11, path, "search statistics");
    record.schedule = parse_json_column(row, 12, path, "schedule");
    record.tool_version = row.column_text(13);
    record.git_commit = row.column_text(14);
    record.created_at = row.column_text(15);
    record.conv_choices = parse_json_column(row, 16, path, "convolution choices");
    record.layout = row.column_text(17);
    if (!row.column_is_null(18)) record.arena_bytes = row.column_int(18);
    return record;
}

constexpr std::string_view kDeviceColumns =
    "d.id, d.name, d.cc_major, d.cc_minor, d.sm_count, d.driver_version, d.cuda_version, "
    "d.cudnn_version";

// A row of "SELECT id, name, fingerprint, graph_json FROM models".
ModelRecord model_row(const Statement& row, const std::string& path) {
    ModelRecord model;
    model.id = row.column_int(0);
    model.name = row.column_text(1);
    model.fingerprint = row.column_text(2);
    model.graph = parse_json_column(row, 3, path, "model graph");
    return model;
}

DeviceRecord read_device(const Statement& row, int first) {
    DeviceRecord device;
    device.id = row.column_int(first);
    device.name = row.column_text(first + 1);
    device.cc_major = static_cast<int>(row.column_int(first + 2));
    device.cc_minor = static_cast<int>(row.column_int(first + 3));
    device.sm_count = static_cast<int>(row.column_int(first + 4));
    device.driver_version = row.column_text(first + 5);
    device.cuda_version = row.column_text(first + 6);
    device.cudnn_version = row.column_text(first + 7);
    return device;
}

// A report query's row: the schedule's columns, then model name and fingerprint, then the
// device's columns. The caller fills in the ratios.
ReportRow read_report_row(const Statement& row, const std::string& path) {
    ReportRow report;
    report.schedule = read_schedule(row, path);
    report.model_name = row.column_text(kScheduleColumnCount);
    report.fingerprint = row.column_text(kScheduleColumnCount + 1);
    report.device = read_device(row, kScheduleColumnCount + 2);
    return report;
}

constexpr std::string_view kStageColumns =
    "device_id, batch, precision, stage_key, latency_ms, spread_ms, repeats, ok, error, simulated, "
    "tool_version, measured_at, layout";

StageRecord read_stage(const Statement& row) {
    StageRecord record;
    record.device_id = row.column_int(0);
    record.batch = static_cast<int>(row.column_int(1));
    record.precision = row.column_text(2);
    record.stage_key = row.column_text(3);
    record.latency_ms = row.column_double(4);
    record.spread_ms = row.column_double(5);
    record.repeats = static_cast<int>(row.column_int(6));
    record.ok = row.column_int(7) != 0;
    record.error = row.column_text(8);
    record.simulated = row.column_int(9) != 0;
    record.tool_version = row.column_text(10);
    record.measured_at = row.column_text(11);
    record.layout = row.column_text(12);
    return record;
}

std::optional<double> ratio(const std::optional<double>& numerator,
                            const std::optional<double>& denominator) {
    if (!numerator || !denominator || *denominator <= 0.0) return std::nullopt;
    return *numerator / *denominator;
}

}  // namespace

ScheduleStore ScheduleStore::open(const std::string& path, OpenMode mode) {
    const bool has_content = check_file_before_open(path, mode);
    if (mode == OpenMode::ReadOnly) return open_read_only(path);
    // A must-exist DB is opened without SQLITE_OPEN_CREATE, so SQLite itself can never create it.
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
                      (mode == OpenMode::CreateIfMissing ? SQLITE_OPEN_CREATE : 0);
    Connection connection(path, flags);
    configure(connection);
    if (has_content) check_migratable(connection);
    enable_wal(connection);
    migrate(connection);
    return ScheduleStore(std::move(connection));
}

ScheduleStore ScheduleStore::open_read_only(const std::string& path) {
    Connection connection(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
    configure(connection);
    check_migratable(connection);
    const int found = db::schema_version(connection);
    if (found != latest_schema_version()) {
        throw Error(fmt::format(
            "Schedule database '{}' has schema version {}, this iostune build reads version {} "
            "here; it was left untouched. Open it once for writing with this build (`iostune "
            "report --db {}` migrates an older one), or use the build that wrote it.",
            path, found, latest_schema_version(), path));
    }
    return ScheduleStore(std::move(connection));
}

ScheduleStore::ScheduleStore(Connection connection)
    : connection_(std::make_unique<Connection>(std::move(connection))) {}

int ScheduleStore::schema_version() const { return db::schema_version(*connection_); }

std::int64_t ScheduleStore::upsert_device(const DeviceRecord& device) {
    Transaction transaction(*connection_);
    const std::int64_t id = insert_or_find_device(*connection_, device);
    transaction.commit();
    return id;
}

std::optional<DeviceRecord> ScheduleStore::device(std::int64_t id) const {
    Statement query(*connection_, fmt::format("SELECT {} FROM devices d WHERE d.id = ?1", kDeviceColumns));
    query.bind_int(1, id);
    if (!query.step()) return std::nullopt;
    return read_device(query, 0);
}

std::int64_t ScheduleStore::upsert_model(const ModelRecord& model) {
    Transaction transaction(*connection_);
    const std::int64_t id = insert_or_find_model(*connection_, model);
    transaction.commit();
    return id;
}

std::optional<std::int64_t> ScheduleStore::find_device(const DeviceRecord& device) const {
    Statement query(*connection_,
                    "SELECT id FROM devices WHERE name = ?1 AND cc_major = ?2 AND cc_minor = ?3 "
                    "AND sm_count = ?4 AND driver_version = ?5 AND cuda_version = ?6 AND "
                    "cudnn_version = ?7");
    bind_device(query, device);
    if (!query.step()) return std::nullopt;
    return query.column_int(0);
}

std::vector<DeviceRecord> ScheduleStore::devices() const {
    Statement query(*connection_,
                    fmt::format("SELECT {} FROM devices d ORDER BY d.id", kDeviceColumns));
    std::vector<DeviceRecord> out;
    while (query.step()) out.push_back(read_device(query, 0));
    return out;
}

std::optional<ModelRecord> ScheduleStore::model_by_fingerprint(const std::string& fingerprint) const {
    Statement query(*connection_,
                    "SELECT id, name, fingerprint, graph_json FROM models WHERE fingerprint = ?1");
    query.bind_text(1, fingerprint);
    if (!query.step()) return std::nullopt;
    return model_row(query, path());
}

std::optional<ModelRecord> ScheduleStore::model(std::int64_t id) const {
    Statement query(*connection_,
                    "SELECT id, name, fingerprint, graph_json FROM models WHERE id = ?1");
    query.bind_int(1, id);
    if (!query.step()) return std::nullopt;
    return model_row(query, path());
}

std::vector<ModelRecord> ScheduleStore::models() const {
    Statement query(*connection_, "SELECT id, name, fingerprint, graph_json FROM models ORDER BY id");
    std::vector<ModelRecord> out;
    while (query.step()) out.push_back(model_row(query, path()));
    return out;
}

std::int64_t ScheduleStore::add_schedule(const ScheduleRecord& record) {
    ScheduleRecord row = record;
    row.created_at.clear();  // a new row is stamped with the time it is stored
    Transaction transaction(*connection_);
    const std::int64_t id = insert_schedule(*connection_, row);
    transaction.commit();
    return id;
}

std::optional<ScheduleRecord> ScheduleStore::schedule(std::int64_t id) const {
    Statement query(*connection_,
                    fmt::format("SELECT {} FROM schedules s WHERE s.id = ?1", kScheduleColumns));
    query.bind_int(1, id);
    if (!query.step()) return std::nullopt;
    return read_schedule(query, path());
}

std::vector<ScheduleRecord> ScheduleStore::schedules() const {
    Statement query(*connection_,
                    fmt::format("SELECT {} FROM schedules s ORDER BY s.id", kScheduleColumns));
    std::vector<ScheduleRecord> out;
    while (query.step()) out.push_back(read_schedule(query, path()));
    return out;
}

std::optional<ScheduleRecord> ScheduleStore::best_schedule(const std::string& fingerprint,
                                                           std::int64_t device_id, int batch,
                                                           const std::string& precision) const {
    Statement query(*connection_,
                    fmt::format("SELECT {} FROM schedules s JOIN models m ON m.id = s.model_id "
                                "WHERE m.fingerprint = ?1 AND s.device_id = ?2 AND s.batch = ?3 "
                                "AND s.precision = ?4 AND s.measured_ms IS NOT NULL "
                                "ORDER BY s.measured_ms ASC, s.id DESC LIMIT 1",
                                kScheduleColumns));
    query.bind_text(1, fingerprint).bind_int(2, device_id).bind_int(3, batch).bind_text(4, precision);
    if (!query.step()) return std::nullopt;
    return read_schedule(query, path());
}

nlohmann::json ScheduleStore::conv_choices_on(const DeviceRecord& device) const {
    Statement query(*connection_,
                    "SELECT s.conv_choices_json FROM schedules s JOIN devices d ON d.id = "
                    "s.device_id WHERE d.name = ?1 AND d.cc_major = ?2 AND d.cc_minor = ?3 AND "
                    "d.sm_count = ?4 AND d.driver_version = ?5 AND d.cuda_version = ?6 AND "
                    "d.cudnn_version = ?7 ORDER BY s.id");
    bind_device(query, device);
    nlohmann::json merged = nlohmann::json::object();
    while (query.step()) {
        const nlohmann::json row = parse_json_column(query, 0, path(), "convolution choices");
        if (!row.is_object()) continue;
        for (const auto& [signature, choice] : row.items())
            if (!merged.contains(signature) || !is_quick_choice(choice) ||
                is_quick_choice(merged[signature]))
                merged[signature] = choice;
    }
    return merged;
}

std::vector<ScheduleKey> ScheduleStore::list_keys() const {
    Statement query(*connection_,
                    "SELECT m.name, m.fingerprint, d.id, d.name, s.batch, s.precision, count(*), "
                    "count(s.measured_ms) FROM schedules s "
                    "JOIN models m ON m.id = s.model_id JOIN devices d ON d.id = s.device_id "
                    "GROUP BY m.id, d.id, s.batch, s.precision "
                    "ORDER BY m.name, m.fingerprint, d.id, s.batch, s.precision");
    std::vector<ScheduleKey> keys;
    while (query.step()) {
        ScheduleKey key;
        key.model_name = query.column_text(0);
        key.fingerprint = query.column_text(1);
        key.device_id = query.column_int(2);
        key.device_name = query.column_text(3);
        key.batch = static_cast<int>(query.column_int(4));
        key.precision = query.column_text(5);
        key.schedules = static_cast<int>(query.column_int(6));
        key.measured = static_cast<int>(query.column_int(7));
        keys.push_back(std::move(key));
    }
    return keys;
}

std::optional<StageRecord> ScheduleStore::stage_measurement(std::int64_t device_id, int batch,
                                                            const std::string& precision,
                                                            const std::string& layout,
                                                            const std::string& stage_key) const {
    Statement query(*connection_,
                    fmt::format("SELECT {} FROM stage_measurements WHERE device_id = ?1 AND "
                                "batch = ?2 AND precision = ?3 AND layout = ?4 AND stage_key = ?5",
                                kStageColumns));
    query.bind_int(1, device_id)
        .bind_int(2, batch)
        .bind_text(3, precision)
        .bind_text(4, layout)
        .bind_text(5, stage_key);
    if (!query.step()) return std::nullopt;
    return read_stage(query);
}

void ScheduleStore::put_stage_measurement(const StageRecord& record) {
    put_stage_measurements({record});
}

void ScheduleStore::put_stage_measurements(const std::vector<StageRecord>& records) {
    Transaction transaction(*connection_);
    // Prepared once for the whole batch (the stage cache commits up to 1,000 rows at a time).
    StageWriter writer(*connection_);
    for (StageRecord record : records) {
        record.measured_at.clear();  // stamped with the time it is stored
        writer.put(record);
    }
    transaction.commit();
}

std::vector<StageRecord> ScheduleStore::stage_measurements(std::int64_t device_id, int batch,
                                                           const std::string& precision,
                                                           const std::string& layout) const {
    Statement query(*connection_,
                    fmt::format("SELECT {} FROM stage_measurements WHERE device_id = ?1 AND "
                                "batch = ?2 AND precision = ?3 AND layout = ?4 ORDER BY stage_key",
                                kStageColumns));
    query.bind_int(1, device_id).bind_int(2, batch).bind_text(3, precision).bind_text(4, layout);
    std::vector<StageRecord> records;
    while (query.step()) records.push_back(read_stage(query));
    return records;
}

std::vector<StageRecord> ScheduleStore::stage_measurements() const {
    Statement query(*connection_,
                    fmt::format("SELECT {} FROM stage_measurements ORDER BY device_id, batch, "
                                "precision, layout, stage_key",
                                kStageColumns));
    std::vector<StageRecord> records;
    while (query.step()) records.push_back(read_stage(query));
    return records;
}

std::vector<ReportRow> ScheduleStore::report_best() const {
    // Rank the measured schedules of each key; rank 1 is what best_schedule would return.
    Statement query(
        *connection_,
        fmt::format("WITH ranked AS (SELECT s.*, row_number() OVER (PARTITION BY s.model_id, "
                    "s.device_id, s.batch, s.precision ORDER BY s.measured_ms ASC, s.id DESC) "
                    "AS rank FROM schedules s WHERE s.measured_ms IS NOT NULL) "
                    "SELECT {}, m.name, m.fingerprint, {} FROM ranked s "
                    "JOIN models m ON m.id = s.model_id JOIN devices d ON d.id = s.device_id "
                    "WHERE s.rank = 1 ORDER BY m.name, m.fingerprint, d.id, s.batch, s.precision",
                    kScheduleColumns, kDeviceColumns));
    std::vector<ReportRow> rows;
    while (query.step()) {
        ReportRow row = read_report_row(query, path());
        row.speedup = ratio(row.schedule.sequential_ms, row.schedule.measured_ms);
        if (const auto predicted = ratio(row.schedule.predicted_ms, row.schedule.measured_ms)) {
            row.prediction_error = *predicted - 1.0;
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<ReportRow> ScheduleStore::report_estimates() const {
    Statement query(
        *connection_,
        fmt::format("WITH ranked AS (SELECT s.*, row_number() OVER (PARTITION BY s.model_id, "
                    "s.device_id, s.batch, s.precision ORDER BY s.predicted_ms IS NULL, "
                    "s.predicted_ms ASC, s.id DESC) AS rank, count(s.measured_ms) OVER (PARTITION "
                    "BY s.model_id, s.device_id, s.batch, s.precision) AS measured "
                    "FROM schedules s) "
                    "SELECT {}, m.name, m.fingerprint, {} FROM ranked s "
                    "JOIN models m ON m.id = s.model_id JOIN devices d ON d.id = s.device_id "
                    "WHERE s.rank = 1 AND s.measured = 0 "
                    "ORDER BY m.name, m.fingerprint, d.id, s.batch, s.precision",
                    kScheduleColumns, kDeviceColumns));
    std::vector<ReportRow> rows;
    while (query.step()) {
        ReportRow row = read_report_row(query, path());
        row.speedup = ratio(row.schedule.sequential_ms, row.schedule.predicted_ms);
        rows.push_back(std::move(row));
    }
    return rows;
}

std::optional<ReportRow> ScheduleStore::report_key(const std::string& fingerprint,
                                                   std::int64_t device_id, int batch,
                                                   const std::string& precision) const {
    // Measured rows first (fastest first), then estimates (lowest prediction first): the order
    // in which report_best() and report_estimates() pick a key's row.
    Statement query(
        *connection_,
        fmt::format("SELECT {}, m.name, m.fingerprint, {} FROM schedules s "
                    "JOIN models m ON m.id = s.model_id JOIN devices d ON d.id = s.device_id "
                    "WHERE m.fingerprint = ?1 AND s.device_id = ?2 AND s.batch = ?3 AND "
                    "s.precision = ?4 ORDER BY s.measured_ms IS NULL, s.measured_ms ASC, "
                    "s.predicted_ms IS NULL, s.predicted_ms ASC, s.id DESC LIMIT 1",
                    kScheduleColumns, kDeviceColumns));
    query.bind_text(1, fingerprint).bind_int(2, device_id).bind_int(3, batch).bind_text(4, precision);
    if (!query.step()) return std::nullopt;
    ReportRow row = read_report_row(query, path());
    if (row.schedule.measured_ms) {
        row.speedup = ratio(row.schedule.sequential_ms, row.schedule.measured_ms);
        if (const auto predicted = ratio(row.schedule.predicted_ms, row.schedule.measured_ms))
            row.prediction_error = *predicted - 1.0;
    } else {
        row.speedup = ratio(row.schedule.sequential_ms, row.schedule.predicted_ms);
    }
    return row;
}

std::string ScheduleStore::integrity_check() const {
    Statement query(*connection_, "PRAGMA integrity_check");
    std::string findings;
    while (query.step()) {
        if (!findings.empty()) findings += '\n';
        findings += query.column_text(0);
    }
    return findings;
}

std::string ScheduleStore::foreign_key_check() const {
    Statement query(*connection_, "PRAGMA foreign_key_check");
    std::string findings;
    while (query.step()) {
        if (!findings.empty()) findings += '\n';
        findings += fmt::format("table {} row {} refers to a missing {} row", query.column_text(0),
                                query.column_int(1), query.column_text(2));
    }
    return findings;
}

std::string describe_keys(const std::vector<ScheduleKey>& keys) {
    if (keys.empty()) return "  (none)";
    std::string text;
    for (const ScheduleKey& key : keys) {
        if (!text.empty()) text += '\n';
        text += fmt::format("  {} (fingerprint {}) on device {} '{}', batch {}, {}: {} schedule{}, "
                            "{} measured",
                            key.model_name, key.fingerprint.substr(0, 12), key.device_id,
                            key.device_name, key.batch, key.precision, key.schedules,
                            key.schedules == 1 ? "" : "s", key.measured);
    }
    return text;
}

}  // namespace iostune::db
