// The RAII SQLite wrappers: a prepared statement reused through reset().
#include <catch2/catch.hpp>

#include <string>

#include "db/sqlite_handle.h"
#include "tests/db/db_test_support.h"

using iostune::db::Connection;
using iostune::db::Statement;
using iostune::db::testing::TempDir;

TEST_CASE("a reset statement runs again with fresh parameters, earlier ones cleared", "[db]") {
    TempDir dir;
    Connection connection(dir.file("handle.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    connection.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");

    Statement insert(connection, "INSERT INTO t (k, v) VALUES (?1, ?2)");
    insert.bind_int(1, 1).bind_text(2, "one");
    insert.run();
    // Without reset, a statement that ran to completion cannot be bound again.
    insert.reset().bind_int(1, 2).bind_text(2, "two");
    insert.run();
    insert.reset().bind_int(1, 3);  // ?2 left unbound: NULL, not the previous row's "two"
    insert.run();

    Statement query(connection, "SELECT k, v FROM t WHERE k >= ?1 ORDER BY k");
    query.bind_int(1, 1);
    REQUIRE(query.step());
    CHECK(query.column_int(0) == 1);
    CHECK(query.column_text(1) == "one");
    REQUIRE(query.step());
    CHECK(query.column_int(0) == 2);
    CHECK(query.column_text(1) == "two");
    REQUIRE(query.step());
    CHECK(query.column_int(0) == 3);
    CHECK(query.column_is_null(1));
    CHECK_FALSE(query.step());

    // A query reset half-way starts again from its first row.
    query.reset().bind_int(1, 2);
    REQUIRE(query.step());
    CHECK(query.column_int(0) == 2);
    query.reset().bind_int(1, 2);
    REQUIRE(query.step());
    CHECK(query.column_int(0) == 2);
    REQUIRE(query.step());
    CHECK(query.column_int(0) == 3);
    CHECK_FALSE(query.step());
}
