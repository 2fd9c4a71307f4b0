// `iostune db merge` and `iostune report` over merged parts, with the built binary: two fleets
// tuned on different (simulated) GPU types, the keys stored per GPU (a key done on one type is
// not done on another), merged, reported by device type; a damaged part refused with exit
// code 1 and the target left as it was.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/fleet/fleet_test_support.h"

using iostune::testing::read_text;
using iostune::testing::Run;
using iostune::testing::run_iostune;
using iostune::testing::TempDir;
using iostune::testing::write_text;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

// A part as an array task leaves it: `tune` over two keys on one simulated GPU type.
std::string tune_part(const TempDir& dir, const std::string& name, const std::string& gpu) {
    const std::string plan = dir.file(name + ".json");
    write_text(plan, fmt::format(R"({{"models": ["squeezenet1_1", "googlenet"],
                                       "search": {{"cost": "sim", "device": "{}", "r": 2}}}})",
                                 gpu));
    const std::string db = dir.file(name + ".db");
    const Run run = run_iostune(dir, {"tune", "--plan", plan, "--db", db});
    INFO(run.out << run.err);
    REQUIRE(run.status.success());
    CHECK_THAT(run.out, Contains("2 keys: 2 tuned"));
    return db;
}

}  // namespace

TEST_CASE("parts of two GPU types merge into one DB that reports one table per type",
          "[fleet][merge]") {
    TempDir dir;
    const std::string h100 = tune_part(dir, "h100", "h100");
    // The same keys on another GPU type are not done yet: tuned, not skipped.
    const std::string a100 = tune_part(dir, "a100", "a100");
    const std::string all = dir.file("all.db");

    const Run merge = run_iostune(dir, {"db", "merge", "--into", all, h100, a100});
    INFO(merge.out << merge.err);
    REQUIRE(merge.status.success());
    CHECK_THAT(merge.out, Contains("merged 2 parts") && Contains("4 schedules added") &&
                              Contains("holds 4 keys"));

    const Run table = run_iostune(dir, {"report", "--db", all});
    REQUIRE(table.status.success());
    CHECK_THAT(table.out, Contains("sim:a100: 2 keys\n") && Contains("sim:h100: 2 keys\n"));
    CHECK(table.out.find("sim:a100: 2 keys") < table.out.find("sim:h100: 2 keys"));

    const Run rows = run_iostune(dir, {"report", "--db", all, "--format", "json"});
    REQUIRE(rows.status.success());
    std::set<std::string> types;
    for (const json& row : json::parse(rows.out)) types.insert(row["device_type"]);
    CHECK(types == std::set<std::string>{"sim:a100", "sim:h100"});

    // A rerun of one plan against the merged DB finds its keys done.
    const Run rerun = run_iostune(dir, {"tune", "--plan", dir.file("a100.json"), "--db", all});
    CHECK_THAT(rerun.out, Contains("2 keys: 0 tuned, 2 stored before"));
}

TEST_CASE("db merge refuses a damaged part with exit code 1, the target untouched",
          "[fleet][merge]") {
    TempDir dir;
    const std::string good = tune_part(dir, "good", "h100");
    const std::string all = dir.file("all.db");
    REQUIRE(run_iostune(dir, {"db", "merge", "--into", all, good}).status.success());
    const std::string report_before = run_iostune(dir, {"report", "--db", all, "--format", "json"}).out;

    std::string bytes = read_text(good);
    REQUIRE(bytes.size() > 8192);
    for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = char(i * 7);
    write_text(dir.file("damaged.db"), bytes);
    const Run refused = run_iostune(dir, {"db", "merge", "--into", all, dir.file("damaged.db")});
    CHECK(refused.status.code == 1);
    CHECK_THAT(refused.err, Contains("iostune: error: part '" + dir.file("damaged.db") +
                                     "' refused, nothing was merged"));
    CHECK(run_iostune(dir, {"report", "--db", all, "--format", "json"}).out == report_before);

    CHECK(run_iostune(dir, {"db", "merge", "--into", all}).status.code == 2);  // no parts
    CHECK(run_iostune(dir, {"db", "merge", good}).status.code == 2);           // no --into
    CHECK(run_iostune(dir, {"db"}).status.code == 2);                          // no operation
}
