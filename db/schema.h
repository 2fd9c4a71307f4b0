// The store's schema and its migrations. The schema version lives in PRAGMA user_version; each
// migration step brings a DB from version N-1 to N, so a DB of any older version is brought
// forward one step at a time, and a DB newer than this build is refused without being touched.
#pragma once

#include <string_view>
#include <vector>

#include "db/sqlite_handle.h"

namespace iostune::db {

// One migration step: the constant SQL that turns a version-(to-1) DB into a version-`to` DB.
struct Migration {
    int to = 0;
    std::vector<std::string_view> statements;
};

// Every step, in order; the last one's `to` is the version this build writes.
const std::vector<Migration>& migrations();
int latest_schema_version();

// PRAGMA user_version (0 for a new, empty DB). Reads only.
int schema_version(const Connection& connection);

// Throws iostune::Error, touching nothing, when the DB cannot be migrated by this build: its
// version is newer than latest_schema_version(), or it is version 0 but already holds tables
// (an SQLite file of some other program).
void check_migratable(const Connection& connection);

// Applies the missing steps in one BEGIN IMMEDIATE transaction. The version is re-read under the
// write lock, so processes opening a fresh DB at the same moment migrate it exactly once.
void migrate(Connection& connection);

}  // namespace iostune::db
