// `iostune db merge`'s library: parts written separately (Slurm array tasks) merged into one
// store. Every schedule and its provenance kept, the measured-fastest the best, stage
// measurements merged (newer wins), merging twice adds nothing, and a conflicting, damaged or
// other-schema part refused with nothing merged.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "db/schedule_store.h"
#include "db/sqlite_handle.h"
#include "db/store_merge.h"
#include "src/error.h"
#include "tests/db/db_test_support.h"

using iostune::db::Connection;
using iostune::db::DeviceRecord;
using iostune::db::merge_stores;
using iostune::db::MergeSummary;
using iostune::db::OpenMode;
using iostune::db::ScheduleRecord;
using iostune::db::ScheduleStore;
using iostune::db::StageRecord;
using iostune::db::testing::read_bytes;
using iostune::db::testing::TempDir;
using iostune::db::testing::write_bytes;
using Catch::Matchers::Contains;

namespace {

DeviceRecord h100() { return {0, "NVIDIA H100 80GB HBM3", 9, 0, 132, "580.65", "13.0", "9.19"}; }
DeviceRecord a100() { return {0, "NVIDIA A100-SXM4-80GB", 8, 0, 108, "580.65", "13.0", "9.19"}; }

nlohmann::json graph(const std::string& name, int ops) {
    return {{"name", name}, {"ops", ops}};
}

struct Row {
    std::string model = "inception_v3";
    std::string fingerprint = "fp-inception";
    DeviceRecord device = h100();
    std::string precision = "tf32";
    std::string strategy = "ios-both";
    std::optional<double> measured_ms;
    std::string commit = "abc1234";
};

// A part as one array task writes it: the key's model, device and schedule, plus a stage.
std::int64_t add_row(ScheduleStore& store, const Row& row) {
    ScheduleRecord record;
    record.model_id = store.upsert_model({0, row.model, row.fingerprint, graph(row.model, 7)});
    record.device_id = store.upsert_device(row.device);
    record.batch = 1;
    record.precision = row.precision;
    record.strategy = row.strategy;
    record.r = 3;
    record.s = 8;
    record.predicted_ms = 0.9;
    record.measured_ms = row.measured_ms;
    record.sequential_ms = 1.5;
    record.schedule = {{"blocks", nlohmann::json::array()}, {"by", row.commit}};
    record.git_commit = row.commit;
    return store.add_schedule(record);
}

void add_stage(ScheduleStore& store, const DeviceRecord& device, const std::string& key,
               double latency_ms) {
    StageRecord stage;
    stage.device_id = store.upsert_device(device);
    stage.batch = 1;
    stage.precision = "tf32";
    stage.layout = "nhwc";
    stage.stage_key = key;
    stage.latency_ms = latency_ms;
    stage.repeats = 5;
    store.put_stage_measurement(stage);
    // Measurement times have millisecond resolution: the next one is later, whatever the part.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

std::string merge_error(const std::string& into, const std::vector<std::string>& parts) {
    try {
        merge_stores(into, parts);
    } catch (const iostune::Error& e) {
        return e.what();
    }
    FAIL("the merge was not refused");
    return "";
}

struct Counts {
    std::size_t schedules, stages, models, devices;
    bool operator==(const Counts&) const = default;
};

Counts counts(const std::string& path) {
    const ScheduleStore store = ScheduleStore::open(path, OpenMode::MustExist);
    return {store.schedules().size(), store.stage_measurements().size(), store.models().size(),
            store.devices().size()};
}

// Two parts that disagree on inception_v3's best (0.80 vs 0.75 ms) and on one stage's latency,
// plus a key of their own each, one of them on another GPU.
struct TwoParts {
    TempDir dir;
    std::string a = dir.file("part-0.db");
    std::string b = dir.file("part-1.db");
    std::string all = dir.file("all.db");

    TwoParts() {
        ScheduleStore part_a = ScheduleStore::open(a, OpenMode::CreateIfMissing);
        ScheduleStore part_b = ScheduleStore::open(b, OpenMode::CreateIfMissing);
        add_row(part_a, {.measured_ms = 0.80, .commit = "aaaa111"});
        add_stage(part_a, h100(), "fp-inception:stage-1", 0.30);
        add_row(part_b, {.measured_ms = 0.75, .commit = "bbbb222"});
        add_stage(part_b, h100(), "fp-inception:stage-1", 0.25);  // measured after part a's
        add_row(part_a, {.model = "googlenet", .fingerprint = "fp-googlenet", .measured_ms = 0.4});
        add_row(part_b, {.model = "googlenet", .fingerprint = "fp-googlenet", .device = a100(),
                         .measured_ms = 0.6});
        add_stage(part_b, a100(), "fp-googlenet:stage-9", 0.11);
    }
};

}  // namespace

TEST_CASE("merge keeps every schedule with its provenance, the measured-fastest is the best",
          "[db][merge]") {
    TwoParts parts;
    // Merged newest part first: the newer stage measurement still wins over the older one.
    const MergeSummary summary = merge_stores(parts.all, {parts.b, parts.a});
    CHECK(summary.parts == 2);
    CHECK(summary.schedules_added == 4);
    CHECK(summary.schedules_present == 0);
    CHECK(summary.stages_added == 2);
    CHECK(summary.devices_added == 2);
    CHECK(summary.models_added == 2);
    CHECK(summary.keys == 3);  // inception_v3 on the H100, googlenet on the H100 and the A100

    const ScheduleStore all = ScheduleStore::open(parts.all, OpenMode::MustExist);
    CHECK(all.integrity_check() == "ok");
    const std::int64_t h100_id = *all.find_device(h100());
    const auto best = all.best_schedule("fp-inception", h100_id, 1, "tf32");
    REQUIRE(best);
    CHECK(*best->measured_ms == Approx(0.75));
    CHECK(best->git_commit == "bbbb222");  // provenance travels with the row
    std::vector<std::string> commits;
    for (const ScheduleRecord& s : all.schedules()) commits.push_back(s.git_commit);
    CHECK_THAT(commits, Catch::Matchers::UnorderedEquals(std::vector<std::string>{
                            "aaaa111", "bbbb222", "abc1234", "abc1234"}));
    // Creation times are the parts' own, not the merge's.
    const ScheduleStore part_b = ScheduleStore::open(parts.b, OpenMode::ReadOnly);
    CHECK(best->created_at == part_b.schedules().front().created_at);

    const auto stage = all.stage_measurement(h100_id, 1, "tf32", "nhwc", "fp-inception:stage-1");
    REQUIRE(stage);
    CHECK(stage->latency_ms == Approx(0.25));  // part b measured it later
    CHECK(all.stage_measurement(*all.find_device(a100()), 1, "tf32", "nhwc",
                                "fp-googlenet:stage-9"));
    CHECK(all.report_best().size() == 3);
}

TEST_CASE("merging the same parts again adds nothing", "[db][merge]") {
    TwoParts parts;
    merge_stores(parts.all, {parts.a, parts.b});
    const Counts before = counts(parts.all);
    const MergeSummary again = merge_stores(parts.all, {parts.a, parts.b, parts.a});
    CHECK(again.schedules_added == 0);
    CHECK(again.schedules_present == 6);
    CHECK(again.stages_added == 0);
    CHECK(again.stages_replaced == 0);
    CHECK(counts(parts.all) == before);
}

TEST_CASE("a newer measurement of a stage the target holds replaces it", "[db][merge]") {
    TwoParts parts;
    merge_stores(parts.all, {parts.a});
    {
        ScheduleStore later = ScheduleStore::open(parts.dir.file("later.db"),
                                                  OpenMode::CreateIfMissing);
        add_stage(later, h100(), "fp-inception:stage-1", 0.20);
    }
    const MergeSummary summary = merge_stores(parts.all, {parts.dir.file("later.db")});
    CHECK(summary.stages_replaced == 1);
    CHECK(summary.stages_added == 0);
    const ScheduleStore all = ScheduleStore::open(parts.all, OpenMode::MustExist);
    CHECK(all.stage_measurement(*all.find_device(h100()), 1, "tf32", "nhwc",
                                "fp-inception:stage-1")
              ->latency_ms == Approx(0.20));
    // ...and an older one does not (part b's 0.25 was measured before 0.20).
    CHECK(merge_stores(parts.all, {parts.b}).stages_replaced == 0);
}

TEST_CASE("a part whose fingerprint names another graph is refused, nothing merged",
          "[db][merge]") {
    TwoParts parts;
    const std::string other = parts.dir.file("other-build.db");
    {
        ScheduleStore store = ScheduleStore::open(other, OpenMode::CreateIfMissing);
        store.upsert_model({0, "inception_v3", "fp-inception", graph("inception_v3", 9)});
        add_row(store, {.measured_ms = 0.1});
    }
    // Between the parts themselves: refused before the target exists.
    std::string message = merge_error(parts.all, {parts.a, other});
    CHECK_THAT(message, Contains("conflicts with") && Contains("fp-inception") &&
                            Contains("two different graphs") && Contains("Nothing was merged"));
    CHECK_FALSE(std::filesystem::exists(parts.all));

    // Against the target: the target keeps exactly what it held.
    merge_stores(parts.all, {parts.a, parts.b});
    const Counts before = counts(parts.all);
    message = merge_error(parts.all, {other});
    CHECK_THAT(message, Contains(other) && Contains(parts.all) && Contains("two different graphs"));
    CHECK(counts(parts.all) == before);
}

TEST_CASE("a part with an edited schedule row is refused, nothing merged", "[db][merge]") {
    TwoParts parts;
    const std::string edited = parts.dir.file("edited.db");
    std::filesystem::copy_file(parts.a, edited);
    {
        Connection connection(edited, SQLITE_OPEN_READWRITE);
        connection.exec("UPDATE schedules SET measured_ms = 0.01 WHERE git_commit = 'aaaa111'");
    }
    merge_stores(parts.all, {parts.b});
    const Counts before = counts(parts.all);
    const std::string message = merge_error(parts.all, {parts.a, edited});
    CHECK_THAT(message, Contains("different values") && Contains("0.8000 ms") &&
                            Contains("0.0100 ms"));
    CHECK(counts(parts.all) == before);
}

TEST_CASE("a damaged, foreign, missing or other-schema part is refused, nothing merged",
          "[db][merge]") {
    TwoParts parts;
    merge_stores(parts.all, {parts.a});
    const Counts before = counts(parts.all);

    SECTION("damaged: pages overwritten after the header") {
        const std::string damaged = parts.dir.file("damaged.db");
        std::vector<char> bytes = read_bytes(parts.b);
        REQUIRE(bytes.size() > 8192);
        for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = char(0xA5 ^ (i * 31));
        write_bytes(damaged, std::string(bytes.begin(), bytes.end()));
        const std::string message = merge_error(parts.all, {parts.b, damaged});
        CHECK_THAT(message, Contains("part '" + damaged + "' refused") &&
                                Contains("nothing was merged"));
    }
    SECTION("not SQLite at all") {
        const std::string text = parts.dir.file("notes.db");
        write_bytes(text, "key,latency\ninception_v3,0.5\n");
        CHECK_THAT(merge_error(parts.all, {parts.b, text}), Contains("not an SQLite database"));
    }
    SECTION("missing") {
        CHECK_THAT(merge_error(parts.all, {parts.b, parts.dir.file("part-7.db")}),
                   Contains("does not exist"));
    }
    SECTION("another schema version") {
        {
            Connection connection(parts.b, SQLITE_OPEN_READWRITE);
            connection.exec("PRAGMA user_version = 3");
        }
        CHECK_THAT(merge_error(parts.all, {parts.b}),
                   Contains("schema version 3") && Contains("left untouched"));
    }
    SECTION("the target itself") {
        CHECK_THAT(merge_error(parts.all, {parts.b, parts.all}), Contains("both the merge target"));
    }
    CHECK(counts(parts.all) == before);
}

TEST_CASE("merging only reads the parts", "[db][merge]") {
    TwoParts parts;
    const std::vector<char> before = read_bytes(parts.a);
    merge_stores(parts.all, {parts.a, parts.b});
    CHECK(read_bytes(parts.a) == before);
    CHECK_THAT(merge_error(parts.all, {}), Contains("no parts"));
}
