#include "db/schema.h"

#include <fmt/format.h>

#include "iostune/version.h"
#include "src/error.h"

namespace iostune::db {

namespace {

// Version 1: the first released schema. Never edit a released step: add a new one below.
constexpr std::string_view kCreateDevices = R"sql(
CREATE TABLE devices (
    id             INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL,
    cc_major       INTEGER NOT NULL,
    cc_minor       INTEGER NOT NULL,
    sm_count       INTEGER NOT NULL,
    driver_version TEXT    NOT NULL,
    cuda_version   TEXT    NOT NULL,
    cudnn_version  TEXT    NOT NULL,
    UNIQUE (name, cc_major, cc_minor, sm_count, driver_version, cuda_version, cudnn_version)
))sql";

constexpr std::string_view kCreateModels = R"sql(
CREATE TABLE models (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    fingerprint TEXT NOT NULL UNIQUE,
    graph_json  TEXT NOT NULL
))sql";

constexpr std::string_view kCreateSchedules = R"sql(
CREATE TABLE schedules (
    id                INTEGER PRIMARY KEY,
    model_id          INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
    device_id         INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    batch             INTEGER NOT NULL CHECK (batch > 0),
    precision         TEXT    NOT NULL,
    strategy          TEXT    NOT NULL,
    r                 INTEGER NOT NULL,
    s                 INTEGER NOT NULL,
    predicted_ms      REAL,
    measured_ms       REAL,
    sequential_ms     REAL,
    search_stats_json TEXT    NOT NULL,
    schedule_json     TEXT    NOT NULL,
    tool_version      TEXT    NOT NULL,
    git_commit        TEXT    NOT NULL,
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
))sql";

constexpr std::string_view kCreateStageMeasurements = R"sql(
CREATE TABLE stage_measurements (
    device_id    INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    batch        INTEGER NOT NULL CHECK (batch > 0),
    precision    TEXT    NOT NULL,
    stage_key    TEXT    NOT NULL,
    latency_ms   REAL    NOT NULL,
    spread_ms    REAL    NOT NULL,
    repeats      INTEGER NOT NULL,
    ok           INTEGER NOT NULL,
    error        TEXT    NOT NULL,
    tool_version TEXT    NOT NULL,
    measured_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (device_id, batch, precision, stage_key)
))sql";

// Version 2: version 1 could not tell analytic estimates from measurements, so a cache filled by
// the simulated cost model would have been reused as measured. Old rows were all measured.
// It also indexes schedules by key, for best_schedule and the reports.
constexpr std::string_view kAddSimulatedFlag =
    "ALTER TABLE stage_measurements ADD COLUMN simulated INTEGER NOT NULL DEFAULT 0";
constexpr std::string_view kIndexSchedulesByKey =
    "CREATE INDEX schedules_by_key ON schedules (model_id, device_id, batch, precision, measured_ms)";

// Version 3: each schedule keeps the engine's convolution choices (src/conv_choices.h), so a
// replay runs the kernels its search measured. Older rows have none ('{}'): chosen afresh.
constexpr std::string_view kAddConvChoices =
    "ALTER TABLE schedules ADD COLUMN conv_choices_json TEXT NOT NULL DEFAULT '{}'";

// Version 4: the engine's activation layout (NCHW or channels-last NHWC) is part of its plan.
// Each schedule records the layout it was searched and measured in; stage measurements are keyed
// by it, so a channels-last search never reuses an NCHW stage time. SQLite cannot change a
// primary key in place: the cache table is rebuilt, its rows (all NCHW until now) kept.
constexpr std::string_view kAddScheduleLayout =
    "ALTER TABLE schedules ADD COLUMN layout TEXT NOT NULL DEFAULT 'nchw'";
constexpr std::string_view kCreateStageMeasurementsV4 = R"sql(
CREATE TABLE stage_measurements_v4 (
    device_id    INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    batch        INTEGER NOT NULL CHECK (batch > 0),
    precision    TEXT    NOT NULL,
    layout       TEXT    NOT NULL,
    stage_key    TEXT    NOT NULL,
    latency_ms   REAL    NOT NULL,
    spread_ms    REAL    NOT NULL,
    repeats      INTEGER NOT NULL,
    ok           INTEGER NOT NULL,
    error        TEXT    NOT NULL,
    tool_version TEXT    NOT NULL,
    measured_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    simulated    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (device_id, batch, precision, layout, stage_key)
))sql";
constexpr std::string_view kCopyStageMeasurementsV4 = R"sql(
INSERT INTO stage_measurements_v4 (device_id, batch, precision, layout, stage_key, latency_ms,
    spread_ms, repeats, ok, error, tool_version, measured_at, simulated)
SELECT device_id, batch, precision, 'nchw', stage_key, latency_ms, spread_ms, repeats, ok, error,
    tool_version, measured_at, simulated FROM stage_measurements)sql";
constexpr std::string_view kDropStageMeasurementsV3 = "DROP TABLE stage_measurements";
constexpr std::string_view kRenameStageMeasurementsV4 =
    "ALTER TABLE stage_measurements_v4 RENAME TO stage_measurements";

// Version 5: each schedule records the bytes of its memory plan's arena (activations, scratch,
// inputs and outputs: src/memory_planner.h) in its precision and layout, computed on the CPU
// when it is stored. Older rows have none (NULL).
constexpr std::string_view kAddArenaBytes = "ALTER TABLE schedules ADD COLUMN arena_bytes INTEGER";

std::string newer_version_message(const Connection& connection, int found) {
    return fmt::format(
        "Database '{}' has schema version {}, newer than this iostune build understands (up to "
        "{}); it was left untouched. Use the iostune version that wrote it or a newer one (this "
        "is {} {}), or pass a different database file.",
        connection.path(), found, latest_schema_version(), kVersion, kGitCommit);
}

}  // namespace

const std::vector<Migration>& migrations() {
    static const std::vector<Migration> steps = {
        {1, {kCreateDevices, kCreateModels, kCreateSchedules, kCreateStageMeasurements}},
        {2, {kAddSimulatedFlag, kIndexSchedulesByKey}},
        {3, {kAddConvChoices}},
        {4, {kAddScheduleLayout, kCreateStageMeasurementsV4, kCopyStageMeasurementsV4,
             kDropStageMeasurementsV3, kRenameStageMeasurementsV4}},
        {5, {kAddArenaBytes}},
    };
    return steps;
}

int latest_schema_version() { return migrations().back().to; }

int schema_version(const Connection& connection) {
    Statement query(connection, "PRAGMA user_version");
    query.step();
    return static_cast<int>(query.column_int(0));
}

void check_migratable(const Connection& connection) {
    // One statement, so one snapshot: read apart, another process's migration could commit
    // between the version (0) and the tables (some), and a fresh DB would look foreign.
    // Reading the schema makes SQLite parse its pages, so a damaged file fails here, before
    // anything (the switch to WAL, a migration) writes to it.
    Statement query(connection,
                    "SELECT (SELECT user_version FROM pragma_user_version), "
                    "(SELECT count(*) FROM sqlite_schema WHERE type = 'table')");
    query.step();
    const int found = static_cast<int>(query.column_int(0));
    const int tables = static_cast<int>(query.column_int(1));
    if (found > latest_schema_version()) throw Error(newer_version_message(connection, found));
    if (found == 0 && tables > 0) {
        throw Error(fmt::format(
            "Database '{}' is an SQLite file but not an iostune database (it has tables and no "
            "iostune schema version); it was left untouched. Pass a different database file.",
            connection.path()));
    }
}

void migrate(Connection& connection) {
    if (schema_version(connection) == latest_schema_version()) return;
    Transaction transaction(connection);
    const int found = schema_version(connection);
    if (found > latest_schema_version()) throw Error(newer_version_message(connection, found));
    for (const Migration& step : migrations()) {
        if (step.to <= found) continue;
        for (std::string_view statement : step.statements) connection.exec(statement);
    }
    // PRAGMA takes no bound parameters; the value is this build's own constant, not input.
    connection.exec(fmt::format("PRAGMA user_version = {}", latest_schema_version()));
    transaction.commit();
}

}  // namespace iostune::db
