// RAII owners of SQLite handles: a connection, a prepared statement, a write transaction.
// Every SQLite return code is checked; failures throw iostune::Error naming the DB file, the SQL
// and what to do. Values only ever reach SQL through sqlite3_bind_*.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace iostune::db {

// Throws iostune::Error for return code `rc` of `db`, saying what was being done and on which SQL.
[[noreturn]] void throw_sqlite_error(sqlite3* db, int rc, const std::string& path,
                                     std::string_view doing, std::string_view sql);

class Connection {
public:
    // sqlite3_open_v2 with `flags` (SQLITE_OPEN_* bits); extended result codes are always on.
    Connection(std::string path, int flags);
    ~Connection();
    Connection(Connection&& other) noexcept;
    Connection& operator=(Connection&& other) noexcept;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    sqlite3* get() const { return db_; }
    const std::string& path() const { return path_; }

    // Runs constant SQL (DDL, PRAGMA, BEGIN/COMMIT) that takes no values and returns no rows.
    void exec(std::string_view sql);

private:
    sqlite3* db_ = nullptr;
    std::string path_;
};

class Statement {
public:
    Statement(const Connection& connection, std::string_view sql);
    ~Statement();
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // Parameters are numbered from 1, as in SQLite's ?NNN.
    Statement& bind_int(int index, std::int64_t value);
    Statement& bind_double(int index, double value);
    Statement& bind_text(int index, std::string_view value);
    Statement& bind_null(int index);
    Statement& bind_optional_double(int index, const std::optional<double>& value);

    // Advances to the next row: true when a row is ready, false when the statement is done.
    bool step();
    // Runs a statement that returns no rows (INSERT/UPDATE/DELETE) to completion.
    void run();
    // Makes the prepared statement ready to run again: back to before its first step, every
    // parameter unbound (NULL). One statement then serves many rows without re-preparing.
    Statement& reset();

    // Columns are numbered from 0.
    std::int64_t column_int(int column) const;
    double column_double(int column) const;
    std::string column_text(int column) const;
    bool column_is_null(int column) const;
    std::optional<double> column_optional_double(int column) const;

private:
    void check_bind(int rc, int index);

    const Connection* connection_;
    sqlite3_stmt* stmt_ = nullptr;
    std::string sql_;
};

// BEGIN IMMEDIATE: takes the write lock up front, so concurrent writers wait (busy timeout)
// instead of failing when a read transaction tries to upgrade. Rolls back unless committed.
class Transaction {
public:
    explicit Transaction(Connection& connection);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    void commit();

private:
    Connection& connection_;
    bool open_ = true;
};

}  // namespace iostune::db
