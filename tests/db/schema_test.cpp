// Opening, creating and migrating the store, and refusing files it must not touch.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "db/schedule_store.h"
#include "db/schema.h"
#include "db/sqlite_handle.h"
#include "src/error.h"
#include "tests/db/db_test_support.h"

using iostune::db::Connection;
using iostune::db::OpenMode;
using iostune::db::ScheduleStore;
using iostune::db::Statement;
using iostune::db::testing::read_bytes;
using iostune::db::testing::TempDir;
using iostune::db::testing::write_bytes;
using Catch::Matchers::Contains;

namespace {

std::string query_text(const Connection& connection, const std::string& sql) {
    Statement query(connection, sql);
    REQUIRE(query.step());
    return query.column_text(0);
}

bool has_schema_object(const Connection& connection, const std::string& type, const std::string& name) {
    Statement query(connection, "SELECT count(*) FROM sqlite_schema WHERE type = ?1 AND name = ?2");
    query.bind_text(1, type).bind_text(2, name);
    query.step();
    return query.column_int(0) == 1;
}

// The version-1 schema exactly as the first release wrote it, typed out independently of
// db/schema.cpp so a drifting migration list is caught.
void make_version1_db(const std::string& path) {
    Connection connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    connection.exec(R"sql(
CREATE TABLE devices (id INTEGER PRIMARY KEY, name TEXT NOT NULL, cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL, sm_count INTEGER NOT NULL, driver_version TEXT NOT NULL,
  cuda_version TEXT NOT NULL, cudnn_version TEXT NOT NULL,
  UNIQUE (name, cc_major, cc_minor, sm_count, driver_version, cuda_version, cudnn_version));
CREATE TABLE models (id INTEGER PRIMARY KEY, name TEXT NOT NULL, fingerprint TEXT NOT NULL UNIQUE,
  graph_json TEXT NOT NULL);
CREATE TABLE schedules (id INTEGER PRIMARY KEY,
  model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
  device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  batch INTEGER NOT NULL CHECK (batch > 0), precision TEXT NOT NULL, strategy TEXT NOT NULL,
  r INTEGER NOT NULL, s INTEGER NOT NULL, predicted_ms REAL, measured_ms REAL, sequential_ms REAL,
  search_stats_json TEXT NOT NULL, schedule_json TEXT NOT NULL, tool_version TEXT NOT NULL,
  git_commit TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE TABLE stage_measurements (
  device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  batch INTEGER NOT NULL CHECK (batch > 0), precision TEXT NOT NULL, stage_key TEXT NOT NULL,
  latency_ms REAL NOT NULL, spread_ms REAL NOT NULL, repeats INTEGER NOT NULL, ok INTEGER NOT NULL,
  error TEXT NOT NULL, tool_version TEXT NOT NULL,
  measured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (device_id, batch, precision, stage_key));
INSERT INTO devices VALUES (1, 'NVIDIA H100', 9, 0, 132, '580.65', '13.0', '9.19');
INSERT INTO stage_measurements (device_id, batch, precision, stage_key, latency_ms, spread_ms,
  repeats, ok, error, tool_version) VALUES (1, 1, 'fp32', 'fp:c:[1,2]', 0.25, 0.01, 20, 1, '', '0.0.9');
INSERT INTO models VALUES (1, 'tiny', 'fp-tiny', '{}');
INSERT INTO schedules (id, model_id, device_id, batch, precision, strategy, r, s, measured_ms,
  search_stats_json, schedule_json, tool_version, git_commit)
  VALUES (5, 1, 1, 1, 'tf32', 'ios-both', 3, 8, 1.25, '{}', '{"blocks": []}', '0.0.9', 'abc');
PRAGMA user_version = 1;
)sql");
}

// The message of the iostune::Error that opening `path` throws; fails the test if none is thrown.
std::string open_error(const std::string& path, OpenMode mode) {
    try {
        ScheduleStore::open(path, mode);
    } catch (const iostune::Error& e) {
        return e.what();
    }
    FAIL("opening " << path << " did not throw iostune::Error");
    return {};
}

}  // namespace

TEST_CASE("a new database gets the latest schema in WAL mode", "[db]") {
    TempDir dir;
    const std::string path = dir.file("iostune.db");
    {
        ScheduleStore store = ScheduleStore::open(path, OpenMode::CreateIfMissing);
        CHECK(store.schema_version() == iostune::db::latest_schema_version());
        CHECK(store.schema_version() == 5);
        CHECK(store.integrity_check() == "ok");
    }
    Connection check(path, SQLITE_OPEN_READONLY);
    CHECK(query_text(check, "PRAGMA journal_mode") == "wal");
    for (const char* table : {"devices", "models", "schedules", "stage_measurements"}) {
        CHECK(has_schema_object(check, "table", table));
    }
    CHECK(has_schema_object(check, "index", "schedules_by_key"));
    // Reopening an up-to-date DB changes nothing and still works in must-exist mode.
    ScheduleStore again = ScheduleStore::open(path, OpenMode::MustExist);
    CHECK(again.schema_version() == 5);
}

TEST_CASE("a version-1 database is migrated forward and keeps its rows", "[db]") {
    TempDir dir;
    const std::string path = dir.file("old.db");
    make_version1_db(path);

    ScheduleStore store = ScheduleStore::open(path, OpenMode::MustExist);
    CHECK(store.schema_version() == 5);

    // Version 4: the stage cache is keyed by layout too; every earlier row was NCHW.
    CHECK_FALSE(store.stage_measurement(1, 1, "fp32", "nhwc", "fp:c:[1,2]"));
    const auto old_row = store.stage_measurement(1, 1, "fp32", "nchw", "fp:c:[1,2]");
    REQUIRE(old_row);
    CHECK(old_row->latency_ms == Approx(0.25));
    CHECK(old_row->tool_version == "0.0.9");
    CHECK_FALSE(old_row->simulated);  // v1 rows were all measured

    // Version 3: an old schedule has no convolution choices; a replay chooses them afresh.
    const auto old_schedule = store.schedule(5);
    REQUIRE(old_schedule);
    CHECK(old_schedule->measured_ms == Approx(1.25));
    CHECK(old_schedule->conv_choices == nlohmann::json::object());
    CHECK(old_schedule->layout == "nchw");  // version 4: schedules before it ran NCHW
    CHECK_FALSE(old_schedule->arena_bytes);  // version 5: no memory plan was recorded

    iostune::db::StageRecord estimate = *old_row;
    estimate.stage_key = "fp:m:[3,4]";
    estimate.simulated = true;
    store.put_stage_measurement(estimate);
    const auto stored = store.stage_measurement(1, 1, "fp32", "nchw", "fp:m:[3,4]");
    REQUIRE(stored);
    CHECK(stored->simulated);
    // The same stage in NHWC is another row.
    estimate.layout = "nhwc";
    estimate.latency_ms = 0.125;
    store.put_stage_measurement(estimate);
    CHECK(store.stage_measurement(1, 1, "fp32", "nhwc", "fp:m:[3,4]")->latency_ms == Approx(0.125));
    CHECK(store.stage_measurement(1, 1, "fp32", "nchw", "fp:m:[3,4]")->latency_ms == Approx(0.25));

    Connection check(path, SQLITE_OPEN_READONLY);
    CHECK(has_schema_object(check, "index", "schedules_by_key"));
    CHECK(store.integrity_check() == "ok");
}

TEST_CASE("a database from a newer iostune is refused and left byte-for-byte unchanged", "[db]") {
    TempDir dir;
    const std::string path = dir.file("newer.db");
    {
        // Rollback-journal mode: switching it to WAL would rewrite header bytes 18-19.
        Connection newer(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        newer.exec("CREATE TABLE future_table (x INTEGER); PRAGMA user_version = 7;");
    }
    const auto before = read_bytes(path);
    REQUIRE_FALSE(before.empty());

    for (OpenMode mode : {OpenMode::MustExist, OpenMode::CreateIfMissing}) {
        CHECK_THAT(open_error(path, mode),
                   Contains(path) && Contains("version 7") &&
                                                        Contains("newer") &&
                                                        Contains("left untouched"));
    }
    CHECK(read_bytes(path) == before);
    CHECK_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST_CASE("a file that is not a database is refused and left unchanged", "[db]") {
    TempDir dir;
    const std::string path = dir.file("notes.txt");
    write_bytes(path, "model,latency\nresnet50,1.25\n");
    const auto before = read_bytes(path);

    for (OpenMode mode : {OpenMode::MustExist, OpenMode::CreateIfMissing}) {
        CHECK_THAT(open_error(path, mode),
                   Contains(path) &&
                                                        Contains("not an SQLite database") &&
                                                        Contains("iostune search"));
    }
    CHECK(read_bytes(path) == before);
    CHECK_FALSE(std::filesystem::exists(path + "-wal"));
    CHECK_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST_CASE("a damaged database is refused with one clear error and not modified", "[db]") {
    TempDir dir;
    const std::string path = dir.file("damaged.db");
    {
        ScheduleStore store = ScheduleStore::open(path, OpenMode::CreateIfMissing);
        store.upsert_device({0, "NVIDIA H100", 9, 0, 132, "580.65", "13.0", "9.19"});
    }
    // Keep the 100-byte file header valid, garble the schema page's b-tree behind it.
    auto bytes = read_bytes(path);
    REQUIRE(bytes.size() > 4096);
    for (std::size_t i = 100; i < 4096; ++i) bytes[i] = static_cast<char>(0xA5);
    write_bytes(path, std::string(bytes.begin(), bytes.end()));

    CHECK_THAT(open_error(path, OpenMode::MustExist),
                   Contains(path) && Contains("damaged"));
    CHECK(read_bytes(path) == bytes);
}

TEST_CASE("must-exist mode never creates a database", "[db]") {
    TempDir dir;
    const std::string missing = dir.file("missing.db");
    CHECK_THAT(open_error(missing, OpenMode::MustExist),
                   Contains(missing) && Contains("does not exist") &&
                                                    Contains("iostune search"));
    CHECK_FALSE(std::filesystem::exists(missing));

    const std::string empty = dir.file("empty.db");
    write_bytes(empty, "");
    CHECK_THAT(open_error(empty, OpenMode::MustExist),
                        Contains(empty) && Contains("empty"));
    CHECK(std::filesystem::file_size(empty) == 0);

    CHECK_THAT(open_error(dir.file("no/such/folder/x.db"), OpenMode::CreateIfMissing),
                        Contains("no/such/folder/x.db"));
}

TEST_CASE("an SQLite file of another program is refused, unchanged", "[db]") {
    TempDir dir;
    const std::string path = dir.file("other.sqlite");
    {
        Connection other(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        other.exec("CREATE TABLE photos (id INTEGER PRIMARY KEY, file TEXT)");
    }
    const auto before = read_bytes(path);
    CHECK_THAT(open_error(path, OpenMode::CreateIfMissing),
                        Contains(path) && Contains("not an iostune database"));
    CHECK(read_bytes(path) == before);
}
