// The store's API: devices, models, schedules, the best-schedule rule, the stage cache, reports.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "db/report_rows.h"
#include "db/schedule_store.h"
#include "iostune/version.h"
#include "src/error.h"
#include "tests/db/db_test_support.h"

using iostune::db::DeviceRecord;
using iostune::db::ModelRecord;
using iostune::db::OpenMode;
using iostune::db::ReportRow;
using iostune::db::ScheduleRecord;
using iostune::db::ScheduleStore;
using iostune::db::StageRecord;
using iostune::db::testing::TempDir;
using Catch::Matchers::Contains;

namespace {

DeviceRecord h100() { return {0, "NVIDIA H100 80GB HBM3", 9, 0, 132, "580.65", "13.0", "9.19"}; }

ModelRecord model(const std::string& name, const std::string& fingerprint) {
    return {0, name, fingerprint, {{"name", name}, {"ops", nlohmann::json::array()}}};
}

ScheduleRecord schedule_row(std::int64_t model_id, std::int64_t device_id, std::optional<double> measured,
                            std::optional<double> predicted = std::nullopt) {
    ScheduleRecord record;
    record.model_id = model_id;
    record.device_id = device_id;
    record.batch = 1;
    record.precision = "fp32";
    record.strategy = "ios-both";
    record.r = 3;
    record.s = 8;
    record.predicted_ms = predicted;
    record.measured_ms = measured;
    record.sequential_ms = 2.0;
    record.search_stats = {{"seconds", 12.5}, {"stages_measured", 340}};
    record.schedule = {{"blocks", nlohmann::json::array({nlohmann::json::array()})}};
    return record;
}

}  // namespace

TEST_CASE("devices and models are upserted by their identifying fields", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);

    const auto device = store.upsert_device(h100());
    CHECK(store.upsert_device(h100()) == device);
    DeviceRecord upgraded = h100();
    upgraded.cudnn_version = "9.20";
    CHECK(store.upsert_device(upgraded) != device);

    const auto stored = store.device(device);
    REQUIRE(stored);
    CHECK(stored->name == "NVIDIA H100 80GB HBM3");
    CHECK(stored->cc_major == 9);
    CHECK(stored->sm_count == 132);
    CHECK(stored->cudnn_version == "9.19");
    CHECK_FALSE(store.device(device + 100));

    const auto inception = store.upsert_model(model("inception_v3", "fp-inception"));
    CHECK(store.upsert_model(model("inception_renamed", "fp-inception")) == inception);
    CHECK(store.upsert_model(model("resnet50", "fp-resnet")) != inception);
    const auto loaded = store.model_by_fingerprint("fp-inception");
    REQUIRE(loaded);
    CHECK(loaded->id == inception);
    CHECK(loaded->name == "inception_v3");  // an existing model keeps its name
    CHECK(loaded->graph["name"] == "inception_v3");
    CHECK_FALSE(store.model_by_fingerprint("fp-unknown"));
}

TEST_CASE("a schedule round-trips with provenance stamped", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    const auto model_id = store.upsert_model(model("inception_v3", "fp-inception"));

    ScheduleRecord record = schedule_row(model_id, device, 1.5, 1.4);
    record.conv_choices = {{"tf32|x1x3x8x8/192|w4x3x3x3", {{"algorithm", "GEMM"}, {"path", "conv"}}}};
    record.layout = "nhwc";
    record.arena_bytes = int64_t(123) << 20;
    const auto id = store.add_schedule(record);
    const auto loaded = store.schedule(id);
    REQUIRE(loaded);
    CHECK(loaded->id == id);
    CHECK(loaded->model_id == model_id);
    CHECK(loaded->device_id == device);
    CHECK(loaded->strategy == "ios-both");
    CHECK(loaded->r == 3);
    CHECK(loaded->s == 8);
    CHECK(loaded->predicted_ms == Approx(1.4));
    CHECK(loaded->measured_ms == Approx(1.5));
    CHECK(loaded->search_stats == record.search_stats);
    CHECK(loaded->schedule == record.schedule);
    CHECK(loaded->conv_choices == record.conv_choices);
    CHECK(loaded->layout == "nhwc");
    CHECK(loaded->arena_bytes == record.arena_bytes);
    CHECK(loaded->tool_version == iostune::kVersion);
    CHECK(loaded->git_commit == iostune::kGitCommit);
    CHECK(loaded->created_at.size() == std::string("2025-01-01T00:00:00.000Z").size());
    CHECK_FALSE(store.schedule(id + 1));

    record.measured_ms.reset();
    record.tool_version = "0.0.1";
    record.arena_bytes.reset();
    const auto unmeasured = store.add_schedule(record);
    CHECK_FALSE(store.schedule(unmeasured)->measured_ms);
    CHECK_FALSE(store.schedule(unmeasured)->arena_bytes);
    CHECK(store.schedule(unmeasured)->tool_version == "0.0.1");
}

TEST_CASE("a schedule for an unknown model or device is rejected and nothing is written", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    REQUIRE_THROWS_WITH(store.add_schedule(schedule_row(42, device, 1.0)),
                        Contains("FOREIGN KEY") && Contains("iostune.db"));
    CHECK(store.list_keys().empty());
    // The failed transaction was rolled back: the next write works.
    const auto model_id = store.upsert_model(model("resnet50", "fp-resnet"));
    store.add_schedule(schedule_row(model_id, device, 1.0));
    CHECK(store.list_keys().size() == 1);
}

TEST_CASE("best_schedule is the lowest measured latency of exactly that key", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    const auto model_id = store.upsert_model(model("inception_v3", "fp-inception"));

    store.add_schedule(schedule_row(model_id, device, 1.30));
    const auto fastest = store.add_schedule(schedule_row(model_id, device, 1.10));
    store.add_schedule(schedule_row(model_id, device, 1.20));
    // A lower prediction alone never wins: it was not measured.
    store.add_schedule(schedule_row(model_id, device, std::nullopt, 0.5));
    // Faster rows under other keys must not leak in.
    ScheduleRecord other_batch = schedule_row(model_id, device, 0.9);
    other_batch.batch = 8;
    store.add_schedule(other_batch);
    ScheduleRecord other_precision = schedule_row(model_id, device, 0.8);
    other_precision.precision = "fp16";
    store.add_schedule(other_precision);
    DeviceRecord a100 = h100();
    a100.name = "NVIDIA A100";
    store.add_schedule(schedule_row(model_id, store.upsert_device(a100), 0.7));

    const auto best = store.best_schedule("fp-inception", device, 1, "fp32");
    REQUIRE(best);
    CHECK(best->id == fastest);
    CHECK(best->measured_ms == Approx(1.10));

    // Ties go to the newest row.
    const auto newer_tie = store.add_schedule(schedule_row(model_id, device, 1.10));
    CHECK(store.best_schedule("fp-inception", device, 1, "fp32")->id == newer_tie);
}

TEST_CASE("an unknown key gives no schedule, and list_keys says what exists", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    CHECK(iostune::db::describe_keys(store.list_keys()) == "  (none)");

    const auto device = store.upsert_device(h100());
    const auto model_id = store.upsert_model(model("inception_v3", "fp-inception"));
    store.add_schedule(schedule_row(model_id, device, 1.2));
    store.add_schedule(schedule_row(model_id, device, std::nullopt, 1.0));

    CHECK_FALSE(store.best_schedule("fp-inception", device, 4, "fp32"));
    CHECK_FALSE(store.best_schedule("fp-resnet", device, 1, "fp32"));
    CHECK_FALSE(store.best_schedule("fp-inception", device, 1, "fp16"));

    const auto keys = store.list_keys();
    REQUIRE(keys.size() == 1);
    CHECK(keys[0].model_name == "inception_v3");
    CHECK(keys[0].fingerprint == "fp-inception");
    CHECK(keys[0].device_id == device);
    CHECK(keys[0].device_name == "NVIDIA H100 80GB HBM3");
    CHECK(keys[0].batch == 1);
    CHECK(keys[0].precision == "fp32");
    CHECK(keys[0].schedules == 2);
    CHECK(keys[0].measured == 1);
    CHECK(iostune::db::describe_keys(keys) ==
          fmt::format("  inception_v3 (fingerprint fp-inception) on device {} 'NVIDIA H100 80GB "
                      "HBM3', batch 1, fp32: 2 schedules, 1 measured",
                      device));
}

TEST_CASE("stage measurements are cached per device, batch, precision, layout and key", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());

    StageRecord record;
    record.device_id = device;
    record.batch = 1;
    record.precision = "fp32";
    record.stage_key = "fp-inception/c:[1,2][3]";
    record.latency_ms = 0.42;
    record.spread_ms = 0.02;
    record.repeats = 20;
    store.put_stage_measurement(record);

    auto loaded = store.stage_measurement(device, 1, "fp32", "nchw", record.stage_key);
    REQUIRE(loaded);
    CHECK(loaded->latency_ms == Approx(0.42));
    CHECK(loaded->spread_ms == Approx(0.02));
    CHECK(loaded->repeats == 20);
    CHECK(loaded->ok);
    CHECK_FALSE(loaded->simulated);
    CHECK(loaded->tool_version == iostune::kVersion);
    CHECK_FALSE(loaded->measured_at.empty());
    CHECK_FALSE(store.stage_measurement(device, 2, "fp32", "nchw", record.stage_key));
    CHECK_FALSE(store.stage_measurement(device, 1, "fp16", "nchw", record.stage_key));
    CHECK_FALSE(store.stage_measurement(device, 1, "fp32", "nhwc", record.stage_key));

    // put replaces: a re-measurement (here: a failure) overwrites the cached row.
    record.ok = false;
    record.error = "CUDNN_STATUS_NOT_SUPPORTED";
    record.latency_ms = 0.0;
    store.put_stage_measurement(record);
    loaded = store.stage_measurement(device, 1, "fp32", "nchw", record.stage_key);
    REQUIRE(loaded);
    CHECK_FALSE(loaded->ok);
    CHECK(loaded->error == "CUDNN_STATUS_NOT_SUPPORTED");

    record.stage_key = "fp-inception/m:[4,5]";
    record.ok = true;
    record.error.clear();
    record.simulated = true;
    store.put_stage_measurement(record);
    const auto all = store.stage_measurements(device, 1, "fp32", "nchw");
    REQUIRE(all.size() == 2);
    CHECK(all[0].stage_key == "fp-inception/c:[1,2][3]");
    CHECK(all[1].stage_key == "fp-inception/m:[4,5]");
    CHECK(all[1].simulated);
    CHECK(store.stage_measurements(device, 1, "fp16", "nchw").empty());
    CHECK(store.stage_measurements(device, 1, "fp32", "nhwc").empty());
}

TEST_CASE("a batch of stage measurements is written in one call and every row reads back", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    // A cached row the batch replaces, and one of another precision it leaves alone.
    StageRecord old;
    old.device_id = device;
    old.precision = "fp32";
    old.stage_key = "stage03";
    old.latency_ms = 99.0;
    store.put_stage_measurement(old);
    old.precision = "tf32";
    store.put_stage_measurement(old);

    // Rows whose values differ in every column, so a value left over from the previous row (a
    // statement reused without its bindings cleared) or a row skipped would show.
    constexpr int kRows = 7;
    std::vector<StageRecord> batch;
    for (int i = 0; i < kRows; ++i) {
        StageRecord r;
        r.device_id = device;
        r.batch = 1;
        r.precision = "fp32";
        r.stage_key = fmt::format("stage{:02}", i);
        r.latency_ms = 0.1 * (i + 1);
        r.spread_ms = 0.01 * i;
        r.repeats = 10 + i;
        r.ok = i % 3 != 1;
        if (!r.ok) r.error = fmt::format("failure {}", i);
        r.simulated = i % 2 == 1;
        if (i == 4) r.tool_version = "0.0.1-test";
        batch.push_back(r);
    }
    store.put_stage_measurements(batch);

    const std::vector<StageRecord> all = store.stage_measurements(device, 1, "fp32", "nchw");
    REQUIRE(all.size() == kRows);
    for (int i = 0; i < kRows; ++i) {
        INFO("row " << i);
        CHECK(all[i].stage_key == batch[i].stage_key);
        CHECK(all[i].latency_ms == Approx(batch[i].latency_ms));
        CHECK(all[i].spread_ms == Approx(batch[i].spread_ms));
        CHECK(all[i].repeats == batch[i].repeats);
        CHECK(all[i].ok == batch[i].ok);
        CHECK(all[i].error == batch[i].error);
        CHECK(all[i].simulated == batch[i].simulated);
        CHECK(all[i].tool_version == (i == 4 ? "0.0.1-test" : iostune::kVersion));
        CHECK_FALSE(all[i].measured_at.empty());
    }
    CHECK(store.stage_measurement(device, 1, "tf32", "nchw", "stage03")->latency_ms == Approx(99.0));

    // An empty batch writes nothing and is no error.
    store.put_stage_measurements({});
    CHECK(store.stage_measurements(device, 1, "fp32", "nchw").size() == kRows);
}

TEST_CASE("report_best gives one best measured row per key with speedup and prediction error", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    const auto inception = store.upsert_model(model("inception_v3", "fp-inception"));
    const auto resnet = store.upsert_model(model("resnet50", "fp-resnet"));

    store.add_schedule(schedule_row(inception, device, 1.6, 1.5));
    const auto best_inception = store.add_schedule(schedule_row(inception, device, 1.6 * 0.5, 1.0));
    ScheduleRecord batch8 = schedule_row(inception, device, 4.0, 4.4);
    batch8.batch = 8;
    batch8.sequential_ms = 5.0;
    const auto best_batch8 = store.add_schedule(batch8);
    store.add_schedule(schedule_row(resnet, device, std::nullopt, 0.3));  // unmeasured: no row

    const auto rows = store.report_best();
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].schedule.id == best_inception);
    CHECK(rows[0].model_name == "inception_v3");
    CHECK(rows[0].device.name == "NVIDIA H100 80GB HBM3");
    REQUIRE(rows[0].speedup);
    CHECK(*rows[0].speedup == Approx(2.0 / 0.8));
    REQUIRE(rows[0].prediction_error);
    CHECK(*rows[0].prediction_error == Approx(1.0 / 0.8 - 1.0));
    CHECK(rows[0].schedule.search_stats["stages_measured"] == 340);

    CHECK(rows[1].schedule.id == best_batch8);
    CHECK(rows[1].schedule.batch == 8);
    CHECK(*rows[1].speedup == Approx(1.25));
    CHECK(*rows[1].prediction_error == Approx(0.1));
}

TEST_CASE("convolution choices of one device merge across its schedules, newest first",
          "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    DeviceRecord other_cudnn = h100();
    other_cudnn.cudnn_version = "9.20";
    const auto other = store.upsert_device(other_cudnn);
    const auto m = store.upsert_model(model("resnet50", "fp-resnet"));
    CHECK(store.conv_choices_on(h100()) == nlohmann::json::object());

    const auto choice = [](const char* algorithm) {
        return nlohmann::json{{"algorithm", algorithm}, {"math", "DEFAULT_MATH"}, {"path", "conv"},
                              {"time_ms", 0.1}};
    };
    ScheduleRecord older = schedule_row(m, device, 1.0);
    older.conv_choices = {{"a", choice("GEMM")}, {"b", choice("FFT")}};
    ScheduleRecord newer = schedule_row(m, device, 2.0);
    newer.conv_choices = {{"b", choice("WINOGRAD")}, {"c", choice("IMPLICIT_GEMM")}};
    ScheduleRecord elsewhere = schedule_row(m, other, 0.5);
    elsewhere.conv_choices = {{"a", choice("DIRECT")}, {"d", choice("DIRECT")}};
    store.add_schedule(older);
    store.add_schedule(newer);
    store.add_schedule(elsewhere);

    const nlohmann::json merged = store.conv_choices_on(h100());
    CHECK(merged.size() == 3);
    CHECK(merged["a"]["algorithm"] == "GEMM");
    CHECK(merged["b"]["algorithm"] == "WINOGRAD");  // the newer row's
    CHECK(merged["c"]["algorithm"] == "IMPLICIT_GEMM");
    CHECK_FALSE(merged.contains("d"));  // another cuDNN's choices are not this device's
    CHECK(store.conv_choices_on(other_cudnn).size() == 2);
    DeviceRecord unknown = h100();
    unknown.driver_version = "999";
    CHECK(store.conv_choices_on(unknown) == nlohmann::json::object());

    // A choice made in a hurry never hides one timed in full, however new; it stands alone.
    const auto quick = [&](const char* algorithm) {
        nlohmann::json c = choice(algorithm);
        c["quick"] = true;
        return c;
    };
    ScheduleRecord hurried = schedule_row(m, device, 3.0);
    hurried.conv_choices = {{"a", quick("DIRECT")}, {"e", quick("GEMM")}};
    store.add_schedule(hurried);
    ScheduleRecord timed_later = schedule_row(m, device, 4.0);
    timed_later.conv_choices = {{"e", choice("FFT")}};
    const nlohmann::json before = store.conv_choices_on(h100());
    CHECK(before["a"]["algorithm"] == "GEMM");  // the older row's, timed in full
    CHECK(before["e"]["algorithm"] == "GEMM");  // quick, and the only one
    CHECK(iostune::db::is_quick_choice(before["e"]));
    store.add_schedule(timed_later);
    const nlohmann::json after = store.conv_choices_on(h100());
    CHECK(after["e"]["algorithm"] == "FFT");
    CHECK_FALSE(iostune::db::is_quick_choice(after["e"]));
}

TEST_CASE("a report row counts the convolutions its search chose in a hurry", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    const auto m = store.upsert_model(model("efficientnet_b1", "fp-effnet"));
    const auto choice = [](bool quick) {
        nlohmann::json c{{"algorithm", "GEMM"}, {"math", "DEFAULT_MATH"}, {"path", "conv"}};
        if (quick) c["quick"] = true;
        return c;
    };
    ScheduleRecord hurried = schedule_row(m, device, 1.0);
    hurried.conv_choices = {{"a", choice(false)}, {"b", choice(true)}, {"c", choice(true)}};
    store.add_schedule(hurried);
    const std::vector<ReportRow> rows = iostune::db::report_rows(store);
    REQUIRE(rows.size() == 1);
    CHECK(iostune::db::quick_convolutions(rows[0].schedule) == 2);
    CHECK(iostune::db::report_json(rows)[0]["quick_convolutions"] == 2);
    ScheduleRecord timed = schedule_row(m, device, 1.0);
    timed.conv_choices = {{"a", choice(false)}};
    CHECK(iostune::db::quick_convolutions(timed) == 0);
    timed.conv_choices = nlohmann::json::object();
    CHECK(iostune::db::quick_convolutions(timed) == 0);
}

TEST_CASE("a report row says where its schedule came from, read back from the store",
          "[db][origin]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    const auto m = store.upsert_model(model("hrnet", "fp-hrnet"));
    ScheduleRecord kept = schedule_row(m, device, 0.678);
    kept.search_stats["refine"] = {
        {"start", "nimble (dataflow)"},
        {"kept", nlohmann::json::array({{{"move", "start"}, {"ms", 0.69}}})}};
    kept.search_stats["conv_objective"] = {{"chosen", "corun"}};
    store.add_schedule(kept);
    const std::vector<ReportRow> rows = iostune::db::report_rows(store);
    REQUIRE(rows.size() == 1);
    const nlohmann::json origin = iostune::db::report_json(rows)[0]["origin"];
    CHECK(origin["kind"] == "search_kernels");
    CHECK(origin["refined_from"] == "nimble (dataflow)");
    CHECK(origin["conv_objective"] == "corun");
}

TEST_CASE("a contest-kept baseline row reports its key's search time from the searched row",
          "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto device = store.upsert_device(h100());
    const auto m = store.upsert_model(model("hrnet", "fp-hrnet"));
    ScheduleRecord searched = schedule_row(m, device, 0.70);
    searched.search_stats["search_seconds"] = 51.5;
    const auto searched_id = store.add_schedule(searched);
    ScheduleRecord baseline = schedule_row(m, device, 0.68);  // faster: the key's best
    baseline.strategy = "greedy";
    baseline.search_stats = {{"baseline_of_schedule", searched_id}};
    store.add_schedule(baseline);
    const std::vector<ReportRow> rows = iostune::db::report_rows(store);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].schedule.strategy == "greedy");
    REQUIRE(rows[0].search_seconds);
    CHECK(*rows[0].search_seconds == 51.5);
    CHECK(iostune::db::report_json(rows)[0]["search_seconds"] == 51.5);
    CHECK(iostune::db::search_seconds(store, searched) == 51.5);
    CHECK_FALSE(iostune::db::search_seconds(store, schedule_row(m, device, 1.0)));
}

TEST_CASE("report_key: a key's best measured row, else its best estimate, else nothing", "[db]") {
    TempDir dir;
    ScheduleStore store = ScheduleStore::open(dir.file("iostune.db"), OpenMode::CreateIfMissing);
    const auto gpu = store.upsert_device(h100());
    const auto m = store.upsert_model(model("resnet50", "fp-resnet"));
    CHECK_FALSE(store.report_key("fp-resnet", gpu, 1, "fp32"));

    store.add_schedule(schedule_row(m, gpu, std::nullopt, 0.7));  // an estimate only
    auto row = store.report_key("fp-resnet", gpu, 1, "fp32");
    REQUIRE(row);
    CHECK_FALSE(row->schedule.measured_ms);
    CHECK(*row->speedup == Approx(2.0 / 0.7));  // sequential / predicted, both estimates

    store.add_schedule(schedule_row(m, gpu, 1.6, 1.2));
    const auto fastest = store.add_schedule(schedule_row(m, gpu, 1.25, 1.5));
    row = store.report_key("fp-resnet", gpu, 1, "fp32");
    REQUIRE(row);
    CHECK(row->schedule.id == fastest);  // measured beats any estimate; the fastest of them
    CHECK(*row->speedup == Approx(2.0 / 1.25));
    CHECK(*row->prediction_error == Approx(1.5 / 1.25 - 1.0));
    CHECK(row->model_name == "resnet50");
    CHECK(row->device.name == h100().name);
    CHECK_FALSE(store.report_key("fp-resnet", gpu, 2, "fp32"));
    CHECK_FALSE(store.report_key("fp-resnet", gpu, 1, "fp16"));
    CHECK(store.find_device(h100()) == gpu);
    DeviceRecord other = h100();
    other.driver_version = "999";
    CHECK_FALSE(store.find_device(other));
}

TEST_CASE("a store opened read-only reads everything and writes nothing", "[db]") {
    TempDir dir;
    const std::string path = dir.file("iostune.db");
    {
        ScheduleStore store = ScheduleStore::open(path, OpenMode::CreateIfMissing);
        const auto m = store.upsert_model(model("resnet50", "fp-resnet"));
        store.add_schedule(schedule_row(m, store.upsert_device(h100()), 1.0));
    }
    const std::vector<char> before = iostune::db::testing::read_bytes(path);
    {
        ScheduleStore store = ScheduleStore::open(path, OpenMode::ReadOnly);
        CHECK(store.schedules().size() == 1);
        CHECK(store.devices().size() == 1);
        CHECK(store.models().size() == 1);
        DeviceRecord other = h100();
        other.cudnn_version = "9.20";
        CHECK_THROWS_WITH(store.upsert_device(other), Contains("readonly"));
    }
    CHECK(iostune::db::testing::read_bytes(path) == before);
    CHECK_THROWS_WITH(ScheduleStore::open(dir.file("missing.db"), OpenMode::ReadOnly),
                      Contains("does not exist"));
    CHECK_FALSE(std::filesystem::exists(dir.file("missing.db")));
}
