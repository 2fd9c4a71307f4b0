#include "db/sqlite_handle.h"

#include <fmt/format.h>

#include <utility>

#include "src/error.h"

namespace iostune::db {

namespace {

// What a user can do about the common failure classes.
std::string_view advice_for(int rc) {
    switch (rc & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return "Another process held the database lock past the busy timeout; wait for it to "
                   "finish and retry.";
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
            return "The file is damaged or not an iostune database; restore a backup, or move it "
                   "away and run `iostune search` to create a new one.";
        case SQLITE_READONLY:
        case SQLITE_CANTOPEN:
        case SQLITE_PERM:
            return "Check that the path exists and that you may read and write it (and its "
                   "folder, for the -wal and -shm files).";
        case SQLITE_FULL:
        case SQLITE_IOERR:
            return "Check free disk space and the health of the file system.";
        default:
            return "";
    }
}

}  // namespace

void throw_sqlite_error(sqlite3* db, int rc, const std::string& path, std::string_view doing,
                        std::string_view sql) {
    // The connection's message is more specific than the code's, when it is about this code.
    const char* detail = (db != nullptr && sqlite3_extended_errcode(db) == rc) ? sqlite3_errmsg(db)
                                                                                : sqlite3_errstr(rc);
    std::string message = fmt::format("SQLite error on database '{}' while {}: {} (code {})", path,
                                      doing, detail, rc);
    if (!sql.empty()) message += fmt::format("; SQL: {}", sql);
    const std::string_view advice = advice_for(rc);
    if (!advice.empty()) message += fmt::format(". {}", advice);
    throw Error(message);
}

Connection::Connection(std::string path, int flags) : path_(std::move(path)) {
    const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags | SQLITE_OPEN_EXRESCODE, nullptr);
    if (rc != SQLITE_OK) {
        // sqlite3_open_v2 hands back a handle even on failure, to carry the message; free it.
        sqlite3* failed = std::exchange(db_, nullptr);
        try {
            throw_sqlite_error(failed, rc, path_, "opening it", "");
        } catch (...) {
            sqlite3_close_v2(failed);
            throw;
        }
    }
}

Connection::~Connection() {
    // close_v2 defers the close until every statement is finalized; it cannot fail on a valid handle.
    if (db_ != nullptr) sqlite3_close_v2(db_);
}

Connection::Connection(Connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
    if (this != &other) {
        if (db_ != nullptr) sqlite3_close_v2(db_);
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

void Connection::exec(std::string_view sql) {
    const std::string text(sql);
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, path_, "running SQL", sql);
}

Statement::Statement(const Connection& connection, std::string_view sql)
    : connection_(&connection), sql_(sql) {
    const int rc = sqlite3_prepare_v3(connection.get(), sql_.data(), static_cast<int>(sql_.size()),
                                      0, &stmt_, nullptr);
    if (rc != SQLITE_OK) throw_sqlite_error(connection.get(), rc, connection.path(), "preparing SQL", sql_);
}

Statement::~Statement() {
    // finalize repeats the last step's error, which was already reported; nothing to check here.
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : connection_(other.connection_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      sql_(std::move(other.sql_)) {}

void Statement::check_bind(int rc, int index) {
    if (rc != SQLITE_OK) {
        throw_sqlite_error(connection_->get(), rc, connection_->path(),
                           fmt::format("binding parameter {}", index), sql_);
    }
}

Statement& Statement::bind_int(int index, std::int64_t value) {
    check_bind(sqlite3_bind_int64(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind_double(int index, double value) {
    check_bind(sqlite3_bind_double(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
    check_bind(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                   SQLITE_UTF8),
               index);
    return *this;
}

Statement& Statement::bind_null(int index) {
    check_bind(sqlite3_bind_null(stmt_, index), index);
    return *this;
}

Statement& Statement::bind_optional_double(int index, const std::optional<double>& value) {
    return value ? bind_double(index, *value) : bind_null(index);
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw_sqlite_error(connection_->get(), rc, connection_->path(), "running SQL", sql_);
}

void Statement::run() {
    while (step()) {
    }
}

Statement& Statement::reset() {
    // sqlite3_reset's result repeats the last step's error, which step() already threw; it
    // cannot fail otherwise, and neither can sqlite3_clear_bindings.
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return *this;
}

std::int64_t Statement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::column_text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    if (text == nullptr) return {};
    return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

bool Statement::column_is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::optional<double> Statement::column_optional_double(int column) const {
    if (column_is_null(column)) return std::nullopt;
    return column_double(column);
}

Transaction::Transaction(Connection& connection) : connection_(connection) {
    connection_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
    // Reached without commit() only while an exception unwinds: undo, and let that exception speak.
    if (open_) sqlite3_exec(connection_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    connection_.exec("COMMIT");
    open_ = false;
}

}  // namespace iostune::db
