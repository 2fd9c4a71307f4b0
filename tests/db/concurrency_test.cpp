// Several writer processes at once, and a writer killed mid-way: SQLite's locking and WAL must
// make both safe. Children are real processes (fork), as concurrent `iostune search` runs are.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "db/schedule_store.h"
#include "tests/db/db_test_support.h"

using iostune::db::DeviceRecord;
using iostune::db::OpenMode;
using iostune::db::ScheduleRecord;
using iostune::db::ScheduleStore;
using iostune::db::StageRecord;
using iostune::db::testing::TempDir;

namespace {

DeviceRecord h100() { return {0, "NVIDIA H100 80GB HBM3", 9, 0, 132, "580.65", "13.0", "9.19"}; }

StageRecord measurement(std::int64_t device_id, const std::string& key, double latency_ms) {
    StageRecord record;
    record.device_id = device_id;
    record.batch = 1;
    record.precision = "fp32";
    record.stage_key = key;
    record.latency_ms = latency_ms;
    record.spread_ms = 0.01;
    record.repeats = 10;
    return record;
}

// Runs `work` in a child process; the child never returns into Catch. Exit code 0 = success.
template <typename Work>
pid_t spawn(Work work) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int code = 0;
        try {
            work();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "writer %d failed: %s\n", static_cast<int>(getpid()), e.what());
            code = 1;
        }
        _exit(code);
    }
    return pid;
}

// What a search killed while creating the DB leaves: an SQLite header in WAL mode, no tables,
// schema version 0.
void write_header_only_db(const std::string& path) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
}

int wait_for(pid_t pid) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return status;
}

}  // namespace

TEST_CASE("several writer processes at once all succeed and lose nothing", "[db]") {
    constexpr int kWriters = 4;
    constexpr int kRowsEach = 15;
    TempDir dir;
    const std::string path = dir.file("iostune.db");

    // The children create the DB themselves, all at once, as parallel first searches would.
    int start[2];
    REQUIRE(pipe(start) == 0);
    std::vector<pid_t> children;
    for (int writer = 0; writer < kWriters; ++writer) {
        children.push_back(spawn([&, writer] {
            close(start[1]);
            char go = 0;
            if (read(start[0], &go, 1) < 0) throw std::runtime_error("start pipe");
            ScheduleStore store = ScheduleStore::open(path, OpenMode::CreateIfMissing);
            const auto device = store.upsert_device(h100());
            const auto model_id = store.upsert_model({0, "inception_v3", "fp-inception", {{"ops", 1}}});
            for (int row = 0; row < kRowsEach; ++row) {
                store.put_stage_measurement(
                    measurement(device, fmt::format("w{}/stage{}", writer, row), 0.1 * (row + 1)));
                ScheduleRecord schedule;
                schedule.model_id = model_id;
                schedule.device_id = device;
                schedule.precision = "fp32";
                schedule.strategy = "ios-both";
                schedule.measured_ms = 1.0 + writer + 0.01 * row;
                schedule.schedule = {{"writer", writer}, {"row", row}};
                store.add_schedule(schedule);
            }
        }));
    }
    close(start[0]);
    close(start[1]);  // releases every child at once
    for (pid_t child : children) {
        const int status = wait_for(child);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }

    ScheduleStore store = ScheduleStore::open(path, OpenMode::MustExist);
    CHECK(store.integrity_check() == "ok");
    const auto device = store.upsert_device(h100());
    CHECK(device == 1);  // concurrent upserts of one device made one row
    CHECK(store.stage_measurements(device, 1, "fp32", "nchw").size() == kWriters * kRowsEach);
    const auto keys = store.list_keys();
    REQUIRE(keys.size() == 1);
    CHECK(keys[0].schedules == kWriters * kRowsEach);
    CHECK(keys[0].measured == kWriters * kRowsEach);
    CHECK(store.best_schedule("fp-inception", device, 1, "fp32")->measured_ms == Approx(1.0));
}

TEST_CASE("a writer killed mid-way leaves every committed measurement readable", "[db]") {
    constexpr int kCommitsBeforeKill = 25;
    TempDir dir;
    const std::string path = dir.file("iostune.db");
    std::int64_t device = 0;
    {
        ScheduleStore store = ScheduleStore::open(path, OpenMode::CreateIfMissing);
        device = store.upsert_device(h100());
    }

    // The child reports each committed index through a pipe and keeps writing until killed.
    int committed[2];
    REQUIRE(pipe(committed) == 0);
    const pid_t child = spawn([&] {
        close(committed[0]);
        ScheduleStore store = ScheduleStore::open(path, OpenMode::MustExist);
        for (int i = 0; i < 1000000; ++i) {
            store.put_stage_measurement(measurement(device, fmt::format("stage{}", i), 0.5 + i));
            if (write(committed[1], &i, sizeof i) != sizeof i) throw std::runtime_error("pipe");
        }
    });
    close(committed[1]);
    int last = -1;
    while (last + 1 < kCommitsBeforeKill) {
        REQUIRE(read(committed[0], &last, sizeof last) == sizeof last);
    }
    REQUIRE(kill(child, SIGKILL) == 0);
    const int status = wait_for(child);
    close(committed[0]);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);

    ScheduleStore store = ScheduleStore::open(path, OpenMode::MustExist);
    CHECK(store.integrity_check() == "ok");
    for (int i = 0; i <= last; ++i) {
        const auto row = store.stage_measurement(device, 1, "fp32", "nchw", fmt::format("stage{}", i));
        REQUIRE(row);
        CHECK(row->latency_ms == Approx(0.5 + i));
    }
    // The killed writer may have committed a few more before the signal landed, never fewer.
    const auto before_resume = store.stage_measurements(device, 1, "fp32", "nchw").size();
    CHECK(before_resume >= static_cast<std::size_t>(last + 1));

    // A new writer continues where it stopped.
    store.put_stage_measurement(measurement(device, "resumed", 9.0));
    CHECK(store.stage_measurement(device, 1, "fp32", "nchw", "resumed")->latency_ms == Approx(9.0));
    CHECK(store.stage_measurements(device, 1, "fp32", "nchw").size() == before_resume + 1);
}

// The rerun after a killed `iostune tune` opened such a DB from two searches at once, and one
// read schema version 0 before the other's migration and its tables after it: "not an iostune
// database". The check now reads both in one snapshot.
TEST_CASE("openers racing on a DB killed before its schema was written all succeed", "[db]") {
    constexpr int kRounds = 40;
    constexpr int kOpeners = 6;
    TempDir dir;
    for (int round = 0; round < kRounds; ++round) {
        const std::string path = dir.file(fmt::format("round{}.db", round));
        write_header_only_db(path);
        int start[2];
        REQUIRE(pipe(start) == 0);
        std::vector<pid_t> children;
        for (int opener = 0; opener < kOpeners; ++opener) {
            children.push_back(spawn([&] {
                close(start[1]);
                char go = 0;
                if (read(start[0], &go, 1) < 0) throw std::runtime_error("start pipe");
                ScheduleStore::open(path, OpenMode::CreateIfMissing).upsert_device(h100());
            }));
        }
        close(start[0]);
        close(start[1]);
        int failed = 0;
        for (pid_t child : children) {
            const int status = wait_for(child);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
        }
        INFO("round " << round);
        REQUIRE(failed == 0);
        CHECK(ScheduleStore::open(path, OpenMode::MustExist).integrity_check() == "ok");
    }
}
