// `iostune tune --plan` end to end with the built binary and the simulated cost model, as a
// user runs it: progress and summary, a rerun that skips what is stored, a failing key and a
// key past its timeout that stop nothing else, several workers writing one DB, a search or the
// whole tune killed with SIGKILL and the rerun that finishes the job, and bad plans refused
// before anything runs.
#include <catch2/catch.hpp>

#include <signal.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/schedule_store.h"
#include "tests/fleet/fleet_test_support.h"

using iostune::db::OpenMode;
using iostune::db::ScheduleKey;
using iostune::db::ScheduleStore;
using iostune::testing::children_of;
using iostune::testing::run_iostune;
using iostune::testing::IostuneProcess;
using iostune::testing::process_gone;
using iostune::testing::Run;
using iostune::testing::TempDir;
using iostune::testing::wait_for_child;
using iostune::testing::write_text;
using Catch::Matchers::Contains;

namespace {

// The sim cost model everywhere, so the test means the same on a machine with a GPU.
constexpr const char* kSimSearch = R"("search": {"cost": "sim", "r": 2, "s": 4})";

std::string write_plan(const TempDir& dir, const std::string& models,
                       const std::string& more = "") {
    write_text(dir.file("plan.json"),
               fmt::format(R"({{"models": [{}], "precisions": ["tf32", "fp16"], {}{}}})", models,
                           kSimSearch, more));
    return dir.file("plan.json");
}

// Schedules per key in the DB, checked whole first.
std::vector<ScheduleKey> stored_keys(const std::string& db) {
    const ScheduleStore store = ScheduleStore::open(db, OpenMode::MustExist);
    REQUIRE(store.integrity_check() == "ok");
    REQUIRE(store.foreign_key_check().empty());
    return store.list_keys();
}

// Every key once, with one schedule (a simulated search stores exactly one row).
void check_each_key_once(const std::string& db, std::size_t keys) {
    const std::vector<ScheduleKey> stored = stored_keys(db);
    CHECK(stored.size() == keys);
    for (const ScheduleKey& key : stored) {
        INFO(key.model_name << " b" << key.batch << " " << key.precision);
        CHECK(key.schedules == 1);
    }
}

int count_of(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("tune runs every key, prints a line per key and a table, a rerun skips them all",
          "[fleet][tune]") {
    TempDir dir;
    const std::string plan = write_plan(dir, R"("squeezenet1_1", "googlenet")");
    const std::string db = dir.file("fleet.db");
    const Run first = run_iostune(dir, {"tune", "--plan", plan, "--db", db});
    INFO(first.out << first.err);
    REQUIRE(first.status.success());
    CHECK_THAT(first.out, Contains("[1/4] squeezenet1_1 b1 tf32: tuned, ios-both") &&
                              Contains("[4/4] googlenet b1 fp16: tuned"));
    CHECK_THAT(first.out, Contains("key") && Contains("strategy") && Contains("latency ms") &&
                              Contains("speedup") && Contains("search s") && Contains("status"));
    CHECK_THAT(first.out, Contains("4 keys: 4 tuned, 0 stored before, 0 failed, 0 timed out"));
    CHECK(count_of(first.out, "(est)") >= 8);  // every simulated number says so
    check_each_key_once(db, 4);

    const Run again = run_iostune(dir, {"tune", "--plan", plan, "--db", db});
    REQUIRE(again.status.success());
    CHECK_THAT(again.out, Contains("4 keys: 0 tuned, 4 stored before"));
    CHECK_THAT(again.out, Contains("googlenet b1 tf32: stored, ios-both"));
    check_each_key_once(db, 4);

    // --force searches them again: each key then holds two schedules.
    REQUIRE(run_iostune(dir, {"tune", "--plan", plan, "--db", db, "--force"}).status.success());
    for (const ScheduleKey& key : stored_keys(db)) CHECK(key.schedules == 2);
}

TEST_CASE("a rerun searches again a key whose best ran convolutions chosen quickly",
          "[fleet][tune]") {
    TempDir dir;
    const std::string plan = write_plan(dir, R"("squeezenet1_1")");
    const std::string db = dir.file("fleet.db");
    REQUIRE(run_iostune(dir, {"tune", "--plan", plan, "--db", db}).status.success());
    {
        // As a GPU search past its share of the budget stores it: a faster row whose choices
        // include one made in a hurry (the simulated search stores no choices of its own).
        ScheduleStore store = ScheduleStore::open(db, OpenMode::MustExist);
        iostune::db::ScheduleRecord hurried;
        for (const iostune::db::ReportRow& row : store.report_estimates())
            if (row.schedule.precision == "tf32") hurried = row.schedule;
        REQUIRE(hurried.id > 0);
        hurried.predicted_ms = *hurried.predicted_ms / 2;
        hurried.conv_choices = {{"tf32|x1x3x8x8/192|w4x3x3x3",
                                 {{"algorithm", "GEMM"}, {"math", "FMA_MATH"}, {"path", "conv"},
                                  {"quick", true}}}};
        store.add_schedule(hurried);
    }
    const Run again = run_iostune(dir, {"tune", "--plan", plan, "--db", db});
    INFO(again.out << again.err);
    REQUIRE(again.status.success());
    CHECK_THAT(again.out, Contains("2 keys: 1 tuned, 1 stored before"));
    CHECK_THAT(again.out, Contains("squeezenet1_1 b1 tf32: tuned") &&
                              Contains("squeezenet1_1 b1 fp16: stored"));
    {
        // A later search on this device timed that shape in full (a row of the other precision
        // will do: the device's merged choices count, whatever key stored them).
        ScheduleStore store = ScheduleStore::open(db, OpenMode::MustExist);
        iostune::db::ScheduleRecord timed;
        for (const iostune::db::ReportRow& row : store.report_estimates())
            if (row.schedule.precision == "fp16") timed = row.schedule;
        REQUIRE(timed.id > 0);
        timed.conv_choices = {{"tf32|x1x3x8x8/192|w4x3x3x3",
                               {{"algorithm", "GEMM"}, {"math", "FMA_MATH"}, {"path", "conv"}}}};
        store.add_schedule(timed);
    }
    const Run done = run_iostune(dir, {"tune", "--plan", plan, "--db", db});
    INFO(done.out << done.err);
    REQUIRE(done.status.success());
    CHECK_THAT(done.out, Contains("2 keys: 0 tuned, 2 stored before"));
}

TEST_CASE("a key that fails or runs past its timeout is reported, the others are stored",
          "[fleet][tune]") {
    TempDir dir;
    write_text(dir.file("broken.json"), R"({"name": "broken", "ops": [)");
    // nasnet_a_large at r=3 s=8 takes seconds of simulated search and refinement: past a
    // one-second limit.
    const std::string plan = write_plan(
        dir, R"("squeezenet1_1", "broken.json",
                {"model": "nasnet_a_large", "precisions": ["fp16"], "timeout_s": 1,
                 "search": {"r": 3, "s": 8}})");
    const std::string db = dir.file("fleet.db");
    const Run run = run_iostune(dir, {"tune", "--plan", plan, "--db", db});
    INFO(run.out << run.err);
    CHECK(run.status.code == 1);
    CHECK_THAT(run.out, Contains("broken b1 tf32: failed:") && Contains("malformed JSON") &&
                            Contains("broken b1 fp16: failed:"));
    CHECK_THAT(run.out, Contains("nasnet_a_large b1 fp16: timeout: no result within 1 s"));
    CHECK_THAT(run.out, Contains("5 keys: 2 tuned, 0 stored before, 2 failed, 1 timed out"));
    CHECK_THAT(run.err, Contains("3 of 5 keys did not finish") && Contains("run the same command again"));
    // Each failure's log holds the search's own words.
    CHECK_THAT(iostune::testing::read_text(db + ".logs/002-broken_b1_tf32.log"),
               Contains("iostune: error:"));
    check_each_key_once(db, 2);
}

TEST_CASE("workers on several GPUs share the plan's keys and one DB, losing nothing",
          "[fleet][tune]") {
    TempDir dir;
    const std::string plan =
        write_plan(dir, R"("squeezenet1_1", "googlenet", "resnet50")", R"(, "batches": [1, 2])");
    const std::string db = dir.file("fleet.db");
    const Run run = run_iostune(dir, {"tune", "--plan", plan, "--db", db, "--devices", "0,1,2"});
    INFO(run.out << run.err);
    REQUIRE(run.status.success());
    // The first three keys start at once, one per worker, each pinned to its GPU.
    for (const char* gpu : {"on GPU 0: tuned", "on GPU 1: tuned", "on GPU 2: tuned"})
        CHECK_THAT(run.out, Contains(gpu));
    CHECK_THAT(run.out, Contains("12 keys: 12 tuned"));
    check_each_key_once(db, 12);

    CHECK_THAT(run_iostune(dir, {"tune", "--plan", plan, "--db", db, "--devices", "0,0"}).err,
               Contains("GPU 0 is listed twice"));
}

TEST_CASE("tune --devices all: a worker per GPU that CUDA_VISIBLE_DEVICES lists, as it names them",
          "[fleet][tune]") {
    TempDir dir;
    const std::string plan = write_plan(dir, R"("squeezenet1_1", "googlenet")");
    const std::string db = dir.file("fleet.db");
    const std::vector<std::string> args = {"tune", "--plan", plan, "--db", db, "--devices", "all"};
    // Slurm (or a user) gave this process GPUs 5 and 7: the workers are pinned to those, not to
    // the host's GPUs 0 and 1.
    const Run run = IostuneProcess(dir, args, "all", {{"CUDA_VISIBLE_DEVICES", "5, 7"}}).wait();
    INFO(run.out << run.err);
    REQUIRE(run.status.success());
    CHECK_THAT(run.out, Contains("a worker on each of GPUs 5,7"));
    CHECK_THAT(run.out, Contains("on GPU 5: tuned"));
    CHECK_THAT(run.out, Contains("on GPU 7: tuned"));
    check_each_key_once(db, 4);

    // Set but naming no GPU, and 'all' beside a GPU: one error each, before anything runs.
    const Run none = IostuneProcess(dir, args, "none", {{"CUDA_VISIBLE_DEVICES", ""}}).wait();
    CHECK(none.status.code == 1);
    CHECK_THAT(none.err, Contains("CUDA_VISIBLE_DEVICES is set but names no GPU"));
    const Run mixed = run_iostune(dir, {"tune", "--plan", plan, "--db", dir.file("mixed.db"),
                                        "--devices", "all,0"});
    CHECK(mixed.status.code == 1);
    CHECK_THAT(mixed.err, Contains("'all' stands alone"));
    CHECK_FALSE(std::filesystem::exists(dir.file("mixed.db")));
}

TEST_CASE("a search killed with SIGKILL fails its key alone, the rerun finishes it",
          "[fleet][tune]") {
    TempDir dir;
    const std::string plan = write_plan(
        dir, R"("squeezenet1_1", {"model": "nasnet_a_large", "precisions": ["tf32"],
                                  "search": {"r": 1, "s": 2}})");
    const std::string db = dir.file("fleet.db");
    IostuneProcess tune(dir, {"tune", "--plan", plan, "--db", db, "--devices", "0,1"});
    const pid_t search = wait_for_child(tune.pid(), "nasnet_a_large");
    REQUIRE(search > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // mid-search
    REQUIRE(kill(search, SIGKILL) == 0);
    const Run run = tune.wait();
    INFO(run.out << run.err);
    CHECK(run.status.code == 1);
    CHECK_THAT(run.out, Contains("nasnet_a_large b1 tf32 on GPU") &&
                            Contains("failed: killed by signal 9"));
    CHECK_THAT(run.out, Contains("3 keys: 2 tuned"));
    check_each_key_once(db, 2);

    const Run rerun = run_iostune(dir, {"tune", "--plan", plan, "--db", db, "--devices", "0,1"});
    INFO(rerun.out << rerun.err);
    REQUIRE(rerun.status.success());
    CHECK_THAT(rerun.out, Contains("3 keys: 1 tuned, 2 stored before"));
    check_each_key_once(db, 3);
}

TEST_CASE("tune itself killed with SIGKILL leaves no search running and a whole DB, the rerun "
          "finishes",
          "[fleet][tune]") {
    TempDir dir;
    const std::string plan = write_plan(
        dir, R"({"model": "nasnet_a_large", "precisions": ["tf32"], "search": {"r": 1, "s": 2}},
                {"model": "randwire", "precisions": ["tf32"], "search": {"r": 1, "s": 2}},
                "squeezenet1_1")");
    const std::string db = dir.file("fleet.db");
    IostuneProcess tune(dir, {"tune", "--plan", plan, "--db", db, "--devices", "0,1"});
    const pid_t nasnet = wait_for_child(tune.pid(), "nasnet_a_large");
    const pid_t randwire = wait_for_child(tune.pid(), "randwire");
    REQUIRE(nasnet > 0);
    REQUIRE(randwire > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    tune.kill();
    CHECK(tune.wait().status.signal == SIGKILL);
    // Both searches die with their parent (PR_SET_PDEATHSIG), mid-way through their writes.
    CHECK(process_gone(nasnet));
    CHECK(process_gone(randwire));
    if (std::filesystem::exists(db)) stored_keys(db);  // whole, whatever it holds

    const Run rerun = run_iostune(dir, {"tune", "--plan", plan, "--db", db, "--devices", "0,1"});
    INFO(rerun.out << rerun.err);
    REQUIRE(rerun.status.success());
    check_each_key_once(db, 4);
}

TEST_CASE("a bad plan or a misspelt search option stops tune before anything runs",
          "[fleet][tune]") {
    TempDir dir;
    const std::string db = dir.file("fleet.db");
    write_text(dir.file("typo.json"),
               R"({"models": ["googlenet"], "search": {"cost": "sim", "rr": 3}})");
    Run run = run_iostune(dir, {"tune", "--plan", dir.file("typo.json"), "--db", db});
    CHECK(run.status.code == 1);
    CHECK_THAT(run.err, Contains("typo.json") && Contains("googlenet b1 tf32") &&
                            Contains("--rr") && Contains("not what `iostune search` takes"));
    write_text(dir.file("bad.json"), R"({"models": ["googlenet"], "batches": ["one"]})");
    run = run_iostune(dir, {"tune", "--plan", dir.file("bad.json"), "--db", db});
    CHECK(run.status.code == 1);
    CHECK_THAT(run.err, Contains("bad.json") && Contains("batches"));
    run = run_iostune(dir, {"tune", "--plan", dir.file("none.json"), "--db", db});
    CHECK(run.status.code == 1);
    CHECK_THAT(run.err, Contains("cannot read tuning plan"));
    run = run_iostune(dir, {"tune", "--plan", dir.file("bad.json"), "--db", db, "--emit-slurm",
                        dir.file("array")});
    CHECK(run.status.code == 2);  // --emit-slurm runs nothing, so it takes no --db
    CHECK_FALSE(std::filesystem::exists(db));
    CHECK_FALSE(std::filesystem::exists(db + ".logs"));

    // A --db that is no schedule DB: one error for the plan, not one per key; the file as it was.
    const std::string junk = dir.file("junk.db"), bytes(4096, '\x5a');
    write_text(junk, bytes);
    write_text(dir.file("good.json"), R"({"models": ["googlenet"], "search": {"cost": "sim"}})");
    run = run_iostune(dir, {"tune", "--plan", dir.file("good.json"), "--db", junk});
    CHECK(run.status.code == 1);
    CHECK_THAT(run.err, Contains("is not an SQLite database"));
    CHECK_THAT(run.out, !Contains("googlenet b1 tf32"));
    CHECK(iostune::testing::read_text(junk) == bytes);
    CHECK_FALSE(std::filesystem::exists(junk + ".logs"));
}

TEST_CASE("the example plans are valid, the H100 one has 12 keys: 6 models, TF32 and fp16, b1",
          "[fleet][tune]") {
    TempDir dir;
    const std::string examples = std::string(IOSTUNE_SOURCE_DIR) + "/examples/fleet/";
    // --emit-slurm checks every key's search options as `iostune search` parses them.
    const Run h100 = run_iostune(dir, {"tune", "--plan", examples + "h100_12keys.json",
                                       "--emit-slurm", dir.file("h100")});
    INFO(h100.out << h100.err);
    REQUIRE(h100.status.success());
    CHECK_THAT(h100.out, Contains("12 keys in 12 array tasks"));
    const std::string keys = iostune::testing::read_text(dir.file("h100/keys.tsv"));
    std::set<std::string> models;
    for (const char* model : {"nasnet_a_large", "randwire", "inception_v3", "googlenet",
                              "resnet50", "squeezenet1_1"}) {
        CHECK_THAT(keys, Contains(std::string(model) + " b1 tf32") &&
                             Contains(std::string(model) + " b1 fp16"));
        models.insert(model);
    }
    CHECK(models.size() == 6);
    CHECK(count_of(keys, "\n") == 13);  // a header and 12 keys

    const Run sim = run_iostune(dir, {"tune", "--plan", examples + "sim_plan.json", "--db",
                                      dir.file("sim.db")});
    CHECK(sim.status.success());
}
