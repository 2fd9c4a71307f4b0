// The SQLite stage cache's batched commits: what is visible to another connection when, what a
// killed search keeps, and that the next search reuses every committed measurement.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

#include "db/schedule_store.h"
#include "tuning/sqlite_stage_cache.h"
#include "search/cached_cost_model.h"
#include "src/error.h"
#include "tests/db/db_test_support.h"
#include "tests/search/test_graphs.h"

using namespace iostune;
using db::OpenMode;
using db::ScheduleStore;
using db::testing::TempDir;

namespace {

constexpr const char* kDevice = "NVIDIA H100 80GB HBM3";

db::DeviceRecord h100() { return {0, kDevice, 9, 0, 132, "580.65", "13.0", "9.19"}; }

StageCacheKey key(int i, const std::string& precision = "tf32") {
    return {kDevice, 1, precision, "nchw", "fp|stage" + std::to_string(i)};
}

StageMeasurement measurement(double latency_ms) {
    StageMeasurement m;
    m.latency_ms = latency_ms;
    m.spread_ms = 0.001;
    m.repeats = 15;
    return m;
}

// Rows another connection sees: what is committed.
size_t committed_rows(const std::string& path, std::int64_t device,
                      const std::string& precision = "tf32") {
    return ScheduleStore::open(path, OpenMode::MustExist)
        .stage_measurements(device, 1, precision, "nchw")
        .size();
}

// A measuring model that counts its calls; latency 0.01 ms per (first op id + 1).
class CountingModel final : public CostModel {
public:
    StageMeasurement measure(const Graph&, const Stage& stage) override {
        ++calls;
        return measurement(0.01 * (stage.groups[0][0] + 1));
    }
    std::string name() const override { return "counting"; }
    bool simulated() const override { return false; }
    int calls = 0;
};

// Distinct stages by op id; the counting model runs nothing, so ids need not exist in the graph.
Stage single(int op) { return Stage{StageStrategy::Concurrent, {{op}}}; }

struct Fixture {
    TempDir dir;
    std::string path = dir.file("iostune.db");
    ScheduleStore store = ScheduleStore::open(path, OpenMode::CreateIfMissing);
    std::int64_t device = store.upsert_device(h100());
};

}  // namespace

TEST_CASE("stage measurements are committed in batches of max_pending", "[stagecache]") {
    Fixture f;
    SqliteStageCache cache(f.store, f.device, kDevice, StageCacheBatching{3600.0, 3});
    cache.put(key(0), measurement(0.5));
    cache.put(key(1), measurement(0.6));
    CHECK(cache.pending() == 2);
    CHECK(committed_rows(f.path, f.device) == 0);
    // Pending measurements are served all the same.
    REQUIRE(cache.get(key(1)));
    CHECK(cache.get(key(1))->latency_ms == 0.6);
    CHECK_FALSE(cache.get(key(2)));

    cache.put(key(2), measurement(0.7));
    CHECK(cache.pending() == 0);
    CHECK(cache.committed() == 3);
    CHECK(committed_rows(f.path, f.device) == 3);

    cache.put(key(3), measurement(0.8));
    cache.flush();
    CHECK(committed_rows(f.path, f.device) == 4);
    cache.flush();  // nothing pending: nothing to do
    CHECK(cache.committed() == 4);
}

TEST_CASE("a pending batch is committed once it is max_age_s old", "[stagecache]") {
    Fixture f;
    SqliteStageCache cache(f.store, f.device, kDevice, StageCacheBatching{0.05, 1000});
    cache.put(key(0), measurement(0.5));
    CHECK(committed_rows(f.path, f.device) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    CHECK_FALSE(cache.get(key(9)));  // a lookup is enough to notice the age
    CHECK(cache.pending() == 0);
    CHECK(committed_rows(f.path, f.device) == 1);

    SECTION("max_age_s 0 commits every measurement at once") {
        SqliteStageCache at_once(f.store, f.device, kDevice, StageCacheBatching{0.0, 1000});
        at_once.put(key(1), measurement(0.6));
        CHECK(at_once.pending() == 0);
        CHECK(committed_rows(f.path, f.device) == 2);
    }
}

TEST_CASE("the cache commits what is pending when destroyed, and a new one reads it back",
          "[stagecache]") {
    Fixture f;
    {
        SqliteStageCache cache(f.store, f.device, kDevice, StageCacheBatching{3600.0, 1000});
        for (int i = 0; i < 5; ++i) cache.put(key(i), measurement(0.1 * i));
        StageMeasurement failed;
        failed.ok = false;
        failed.error = "cannot merge";
        cache.put(key(5), failed);
        cache.put(key(0, "fp32"), measurement(9.0));
        CHECK(committed_rows(f.path, f.device) == 0);
    }
    CHECK(committed_rows(f.path, f.device) == 6);
    CHECK(committed_rows(f.path, f.device, "fp32") == 1);

    SqliteStageCache again(f.store, f.device, kDevice);
    for (int i = 0; i < 5; ++i) {
        REQUIRE(again.get(key(i)));
        CHECK(again.get(key(i))->latency_ms == Approx(0.1 * i));
        CHECK(again.get(key(i))->repeats == 15);
    }
    REQUIRE(again.get(key(5)));
    CHECK_FALSE(again.get(key(5))->ok);
    CHECK(again.get(key(5))->error == "cannot merge");
    CHECK(again.get(key(0, "fp32"))->latency_ms == 9.0);
    CHECK_FALSE(again.get(key(6)));
    CHECK_THROWS_AS(again.get(StageCacheKey{"another GPU", 1, "tf32", "nchw", "fp|stage0"}), Error);
    CHECK_THROWS_AS(SqliteStageCache(f.store, f.device, kDevice, StageCacheBatching{-1.0, 10}),
                    Error);
    CHECK_THROWS_AS(SqliteStageCache(f.store, f.device, kDevice, StageCacheBatching{1.0, 0}),
                    Error);
}

TEST_CASE("a search killed mid-way loses at most its pending batch; the next reuses the rest",
          "[stagecache]") {
    constexpr int kBatch = 10;
    constexpr int kCommittedBeforeKill = 30;
    constexpr int kPendingAtKill = 5;
    Fixture f;
    const Graph graph = test::inception_like();
    const CacheScope scope{kDevice, "tf32"};

    // The child measures stage after stage through the cached model, as a search does; once
    // kCommittedBeforeKill are committed and kPendingAtKill more are pending, it reports and
    // waits to be killed.
    int report[2];
    REQUIRE(pipe(report) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        close(report[0]);
        int code = 0;
        try {
            ScheduleStore store = ScheduleStore::open(f.path, OpenMode::MustExist);
            SqliteStageCache cache(store, f.device, kDevice, StageCacheBatching{3600.0, kBatch});
            CountingModel inner;
            CachedCostModel cost(inner, cache, scope);
            for (int op = 0; op < kCommittedBeforeKill + kPendingAtKill; ++op)
                cost.measure(graph, single(op));
            const std::int64_t committed = cache.committed();
            if (write(report[1], &committed, sizeof committed) != sizeof committed) code = 1;
            pause();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "child failed: %s\n", e.what());
            code = 1;
        }
        _exit(code);
    }
    close(report[1]);
    std::int64_t committed = -1;
    REQUIRE(read(report[0], &committed, sizeof committed) == sizeof committed);
    close(report[0]);
    REQUIRE(kill(child, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));
    CHECK(committed == kCommittedBeforeKill);

    CHECK(f.store.integrity_check() == "ok");
    CHECK(committed_rows(f.path, f.device) == size_t(kCommittedBeforeKill));

    // The next search asks the model only about what was pending at the kill.
    SqliteStageCache cache(f.store, f.device, kDevice);
    CountingModel inner;
    CachedCostModel cost(inner, cache, scope);
    for (int op = 0; op < kCommittedBeforeKill + kPendingAtKill; ++op) {
        const StageMeasurement m = cost.measure(graph, single(op));
        CHECK(m.latency_ms == Approx(0.01 * (op + 1)));
    }
    CHECK(cost.hits() == kCommittedBeforeKill);
    CHECK(inner.calls == kPendingAtKill);
}
