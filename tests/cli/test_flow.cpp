// [cli] The `iostune` executable end to end without a GPU: search with the simulated cost model
// -> store -> report (every format, one schedule's stages and diagram), the stage cache reused by
// a second search, and the bad-input paths of search/replay/report: one clear message, a
// non-zero exit, and the database file byte-for-byte unchanged (or never created).
#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Run {
    int status = -1;
    std::string out;  // stdout
    std::string err;  // stderr
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path test_dir() {
    // One folder per process: CTest runs test cases in parallel processes.
    const fs::path dir =
        fs::temp_directory_path() / ("iostune_test_flow-" + std::to_string(getpid()));
    fs::create_directories(dir);
    return dir;
}

// A path in the test folder with no file (nor WAL files) behind it.
std::string fresh_path(const std::string& name) {
    const fs::path path = test_dir() / name;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
    return path.string();
}

Run iostune(const std::string& args) {
    const std::string err_path = (test_dir() / "stderr.txt").string();
    const std::string command = std::string(IOSTUNE_EXE) + " " + args + " 2>" + err_path;
    Run run;
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[4096];
    size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
    const int status = pclose(pipe);
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.err = read_file(err_path);
    return run;
}

// The CLI's failure shape: exit 1 and one "iostune: error:" message containing `what`.
void check_refused(const Run& run, const std::string& what) {
    INFO("stdout: " << run.out << "\nstderr: " << run.err);
    CHECK(run.status == 1);
    CHECK(run.err.rfind("iostune: error: ", 0) == 0);
    CHECK(run.err.find("iostune: error: ", 1) == std::string::npos);
    CHECK_THAT(run.err, Catch::Contains(what));
}

// A database with one simulated squeezenet1_1 schedule; returns the search's JSON summary.
nlohmann::json sim_search(const std::string& db, const std::string& model = "squeezenet1_1") {
    const Run run =
        iostune("search --model " + model + " --batch 1 --cost sim --format json --db " + db);
    INFO("stderr: " << run.err);
    REQUIRE(run.status == 0);
    return nlohmann::json::parse(run.out);
}

}  // namespace

TEST_CASE("search --cost sim stores a labelled estimate that report shows", "[cli]") {
    const std::string db = fresh_path("flow.db");
    const Run search =
        iostune("search --model squeezenet1_1 --batch 1 --cost sim --format json --db " + db);
    REQUIRE(search.status == 0);
    CHECK_THAT(search.err, Catch::Contains("ESTIMATE"));
    const nlohmann::json summary = nlohmann::json::parse(search.out);
    CHECK(summary["simulated"] == true);
    CHECK(summary["cost_model"].get<std::string>().find("sim:") != std::string::npos);
    CHECK(summary["measured_latency_ms"].is_null());
    const double predicted = summary["predicted_latency_ms"];
    CHECK(predicted > 0);
    CHECK(predicted <= summary["sequential_predicted_latency_ms"].get<double>());
    CHECK(summary["stages_costed"].get<int>() > 0);
    // Every second of the job is in one of its phases, the write to the store included.
    double phases = 0;
    for (const auto& [name, seconds] : summary["stats"]["phase_seconds"].items())
        phases += seconds.get<double>();
    CHECK(summary["stats"]["phase_seconds"].contains("store"));
    CHECK(phases == Approx(summary["total_seconds"].get<double>()).margin(0.005));
    const int id = summary["schedule_id"];

    const Run json = iostune("report --format json --db " + db);
    REQUIRE(json.status == 0);
    const nlohmann::json rows = nlohmann::json::parse(json.out);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["schedule_id"] == id);
    CHECK(rows[0]["model"] == "squeezenet1_1");
    CHECK(rows[0]["batch"] == 1);
    CHECK(rows[0]["simulated"] == true);
    CHECK(rows[0]["kind"] == "estimate");
    CHECK(rows[0]["device"] == "sim:h100");
    CHECK(rows[0]["measured_ms"].is_null());
    CHECK(rows[0]["predicted_ms"].get<double>() == Approx(predicted));
    CHECK(rows[0]["speedup"].get<double>() >= 1.0);
    // The schedule's memory plan, stored with it; show --memory --db plans the same on the CPU.
    const int64_t arena = rows[0]["arena_bytes"];
    CHECK(arena > 0);
    const Run memory = iostune("show squeezenet1_1 --memory --format json --db " + db);
    INFO(memory.err);
    REQUIRE(memory.status == 0);
    const nlohmann::json shown = nlohmann::json::parse(memory.out);
    CHECK(shown["activation_bytes"] == arena);
    CHECK_THAT(shown["schedule"].get<std::string>(), Catch::Contains(fmt::format("#{}", id)));

    const Run table = iostune("report --db " + db);
    REQUIRE(table.status == 0);
    CHECK_THAT(table.out, Catch::Contains("squeezenet1_1") && Catch::Contains("(est)") &&
                              Catch::Contains("estimate (simulated)") &&
                              Catch::Contains("arena MiB"));
    const Run csv = iostune("report --format csv --db " + db);
    REQUIRE(csv.status == 0);
    CHECK(csv.out.rfind("id,model,device,batch", 0) == 0);
    CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 2);
    const Run md = iostune("report --format md --db " + db);
    REQUIRE(md.status == 0);
    CHECK(md.out.rfind("| id", 0) == 0);

    // A second search answers every stage from the store: nothing is costed twice.
    const nlohmann::json again = sim_search(db);
    CHECK(again["stages_costed"] == 0);
    CHECK(again["cache_hits"].get<int>() >= summary["stages_costed"].get<int>());
    CHECK(again["schedule"] == summary["schedule"]);
    const Run still_one = iostune("report --format json --db " + db);
    CHECK(nlohmann::json::parse(still_one.out).size() == 1);

    const std::string dot = fresh_path("flow.dot");
    const Run stages = iostune(fmt::format("report --db {} --schedule {} --dot {}", db, id, dot));
    REQUIRE(stages.status == 0);
    CHECK_THAT(stages.out, Catch::Contains("stage") && Catch::Contains("features.3.expand3x3"));
    const std::string diagram = read_file(dot);
    CHECK(diagram.rfind("digraph", 0) == 0);
    CHECK_THAT(diagram, Catch::Contains("cluster_0") && Catch::Contains("input -> op0"));
}

TEST_CASE("search --dp-share gives the DP its share of the time budget", "[cli]") {
    const auto dp_budget = [](const std::string& share) {
        const Run search = iostune("search --model googlenet --cost sim --format json --db " +
                                   fresh_path("share.db") + share);
        INFO(search.err);
        REQUIRE(search.status == 0);
        return nlohmann::json::parse(search.out)["stats"]["dp_time_budget_s"].get<double>();
    };
    // Simulated, the layout choice takes no time: the share is of (almost) the whole 60 s.
    const double by_default = dp_budget(""), smaller = dp_budget(" --dp-share 0.2");
    CHECK(by_default == Approx(0.4 * 60).epsilon(0.02));
    CHECK(smaller == Approx(0.2 * 60).epsilon(0.02));
    for (const char* bad : {"0", "1", "-0.3", "half"}) {
        const Run refused = iostune(fmt::format("search --model googlenet --cost sim --dp-share {} "
                                                "--db {}",
                                                bad, fresh_path("share_bad.db")));
        CHECK(refused.status == 2);
        CHECK_THAT(refused.err, Catch::Contains("--dp-share"));
    }
}

TEST_CASE("search's kernel-move options take their ranges and refuse the rest", "[cli]") {
    // --kernel-move-turn: samples a turn, 1-25; --kernel-runners-up: 0 to kMostRunnersUp.
    const Run good = iostune("search --model squeezenet1_1 --cost sim --kernel-move-turn 1 "
                             "--kernel-runners-up 6 --db " + fresh_path("turn.db"));
    INFO(good.err);
    CHECK(good.status == 0);
    const std::vector<std::pair<const char*, const char*>> refusals = {
        {"--kernel-move-turn", "0"},  {"--kernel-move-turn", "26"},
        {"--kernel-move-turn", "-1"}, {"--kernel-move-turn", "five"},
        {"--kernel-runners-up", "7"}, {"--kernel-runners-up", "-1"},
        {"--kernel-runners-up", "two"}};
    for (const auto& [option, bad] : refusals) {
        const Run refused = iostune(fmt::format("search --model squeezenet1_1 --cost sim {} {} "
                                                "--db {}",
                                                option, bad, fresh_path("turn_bad.db")));
        INFO(option << " " << bad);
        CHECK(refused.status == 2);
        CHECK_THAT(refused.err, Catch::Contains(option));
    }
}

TEST_CASE("every precision is its own key: search, report and replay keep them apart", "[cli]") {
    const std::string db = fresh_path("precisions.db");
    const Run fp16 = iostune("search --model squeezenet1_1 --cost sim --precision fp16 --format "
                             "json --db " + db);
    REQUIRE(fp16.status == 0);
    const nlohmann::json summary = nlohmann::json::parse(fp16.out);
    CHECK(summary["precision"] == "fp16");
    CHECK(summary["layout"] == "nhwc");  // the precision's default: nothing is timed here
    CHECK(summary["layout_sequential_ms"].empty());
    // --math is the option's earlier name; --layout forces a layout.
    const Run bf16 = iostune("search --model squeezenet1_1 --cost sim --math bf16 --layout nchw "
                             "--format json --db " + db);
    REQUIRE(bf16.status == 0);
    CHECK(nlohmann::json::parse(bf16.out)["layout"] == "nchw");
    // The simulated model sees half the bytes: the fp16 estimate is below the TF32 one.
    const Run tf32 = iostune("search --model squeezenet1_1 --cost sim --format json --db " + db);
    REQUIRE(tf32.status == 0);
    CHECK(summary["predicted_latency_ms"].get<double>() <
          nlohmann::json::parse(tf32.out)["predicted_latency_ms"].get<double>());

    const Run report = iostune("report --format json --db " + db);
    REQUIRE(report.status == 0);
    const nlohmann::json rows = nlohmann::json::parse(report.out);
    REQUIRE(rows.size() == 3);  // one best row per precision
    std::vector<std::string> keys;
    for (const auto& row : rows)
        keys.push_back(row["precision"].get<std::string>() + " " + row["layout"].get<std::string>());
    std::sort(keys.begin(), keys.end());
    CHECK(keys == std::vector<std::string>{"bf16 nchw", "fp16 nhwc", "tf32 nhwc"});
    // --precision and --batch narrow the rows; a filter nothing matches names itself and what
    // the database has.
    const Run fp16_only = iostune("report --format json --precision fp16 --db " + db);
    REQUIRE(fp16_only.status == 0);
    const nlohmann::json fp16_rows = nlohmann::json::parse(fp16_only.out);
    REQUIRE(fp16_rows.size() == 1);
    CHECK(fp16_rows[0]["precision"] == "fp16");
    CHECK(nlohmann::json::parse(iostune("report --format json --batch 1 --db " + db).out).size() ==
          3);
    const Run no_batch = iostune("report --batch 16 --precision fp16 --db " + db);
    check_refused(no_batch, "matches --batch 16 --precision fp16");
    CHECK_THAT(no_batch.err, Catch::Contains("squeezenet1_1"));
    CHECK(iostune("report --precision fp8 --db " + db).status == 2);
    CHECK(iostune("report --batch 0 --db " + db).status == 2);
    const Run one = iostune(fmt::format("report --db {} --schedule {}", db,
                                        summary["schedule_id"].get<int>()));
    REQUIRE(one.status == 0);
    CHECK_THAT(one.out, Catch::Contains("batch 1, fp16 nhwc") &&
                            Catch::Contains("plan        fp16 activations in nhwc"));

    // Nothing measured, so nothing may replay; the refusal names the precision to search in.
    const Run replay = iostune("replay --model squeezenet1_1 --precision fp16 --db " + db);
    check_refused(replay, "precision fp16");
    CHECK_THAT(replay.err, Catch::Contains("1 schedule, 0 measured"));
    // A bad precision or layout is a command line iostune cannot parse.
    CHECK(iostune("search --model squeezenet1_1 --precision fp8 --db " + db).status == 2);
    CHECK(iostune("profile --model squeezenet1_1 --layout chwn").status == 2);
}

TEST_CASE("bad input: one message, non-zero exit, the DB file unchanged", "[cli]") {
    SECTION("missing database: nothing is created") {
        const std::string db = fresh_path("missing.db");
        check_refused(iostune("report --db " + db), "does not exist");
        check_refused(iostune("replay --model squeezenet1_1 --db " + db), "does not exist");
        CHECK_FALSE(fs::exists(db));
    }
    SECTION("a file that is not SQLite") {
        const std::string db = fresh_path("not_sqlite.db");
        std::ofstream(db) << "model,latency\nresnet50,1.0\n";
        const std::string before = read_file(db);
        check_refused(iostune("report --db " + db), "not an SQLite database");
        check_refused(iostune("replay --model squeezenet1_1 --db " + db), "not an SQLite database");
        check_refused(iostune("search --model squeezenet1_1 --cost sim --db " + db),
                      "not an SQLite database");
        CHECK(read_file(db) == before);
    }
    SECTION("a database from a newer iostune") {
        const std::string db = fresh_path("newer.db");
        sim_search(db);
        // PRAGMA user_version lives at byte 60 of the header (big-endian); the search closed
        // its connection, so the WAL was checkpointed into the file.
        REQUIRE_FALSE(fs::exists(db + "-wal"));
        {
            std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
            file.seekp(60);
            const char version[4] = {0, 0, 0, 99};
            file.write(version, 4);
        }
        const std::string before = read_file(db);
        check_refused(iostune("report --db " + db), "newer");
        check_refused(iostune("replay --model squeezenet1_1 --db " + db), "newer");
        check_refused(iostune("search --model squeezenet1_1 --cost sim --db " + db), "newer");
        CHECK(read_file(db) == before);
    }
    SECTION("no schedule for the key: the message lists what exists") {
        const std::string db = fresh_path("keys.db");
        sim_search(db);
        const std::string before = read_file(db);
        // Only an estimate exists for batch 1: it cannot be replayed, and the message says why.
        // No schedule for the key: the sequential schedule is the way out offered.
        const Run estimate = iostune("replay --model squeezenet1_1 --batch 1 --db " + db);
        check_refused(estimate, "No measured schedule");
        CHECK_THAT(estimate.err, Catch::Contains("simulated") && Catch::Contains("sim:h100") &&
                                     Catch::Contains("--fallback-sequential"));
        const Run other_batch = iostune("replay --model squeezenet1_1 --batch 4 --db " + db);
        check_refused(other_batch, "batch 4");
        CHECK_THAT(other_batch.err, Catch::Contains("squeezenet1_1 (fingerprint") &&
                                        Catch::Contains("--fallback-sequential"));
        const Run other_model = iostune("report --model resnet50 --db " + db);
        check_refused(other_model, "matches --model resnet50");
        CHECK_THAT(other_model.err, Catch::Contains("squeezenet1_1"));
        check_refused(iostune("report --schedule 999 --db " + db), "no schedule #999");
        // One schedule by id: a missing id, or an estimate, is refused before the GPU is needed,
        // pointing to the list of ids rather than to the sequential fallback.
        auto check_refused_by_id = [&db](const Run& run, const std::string& what) {
            check_refused(run, what);
            CHECK_THAT(run.err, Catch::Contains("Run `iostune report --db " + db + "` to list the "
                                                "schedule ids") &&
                                    !Catch::Contains("--fallback-sequential"));
        };
        check_refused_by_id(iostune("replay --model squeezenet1_1 --schedule-id 999 --db " + db),
                            "Schedule #999 is not in '" + db + "'.");
        check_refused_by_id(iostune("replay --model squeezenet1_1 --schedule-id 1 --db " + db),
                            "never measured on a GPU");
        check_refused_by_id(iostune("replay --model googlenet --schedule-id 1 --db " + db),
                            "searched for model 'squeezenet1_1'");
        check_refused(iostune("replay --model squeezenet1_1 --schedule-id 1 --schedule-source "
                              "greedy --db " + db),
                      "cannot be combined");
        CHECK(read_file(db) == before);
    }
    SECTION("a count that is not a whole number from 1") {
        // Rejected while parsing the command line (exit 2, a usage error), before any file is
        // opened.
        auto check_bad_count = [](const Run& run, const std::string& what) {
            INFO("stderr: " << run.err);
            CHECK(run.status == 2);
            CHECK_THAT(run.err, Catch::StartsWith("iostune: error: " + what) &&
                                    !Catch::Contains("1.79769"));
        };
        const std::string fresh = fresh_path("bad_count.db");
        check_bad_count(iostune("search --model squeezenet1_1 --batch 0 --cost sim --db " + fresh),
                        "--batch: must be a whole number from 1, got '0'");
        check_bad_count(iostune("search --model squeezenet1_1 --r 2.5 --cost sim --db " + fresh),
                        "--r: must be a whole number from 1, got '2.5'");
        CHECK_FALSE(fs::exists(fresh));
        const std::string db = fresh_path("bad_id.db");
        sim_search(db);
        const std::string before = read_file(db);
        check_bad_count(iostune("replay --model squeezenet1_1 --schedule-id -3 --db " + db),
                        "--schedule-id: must be a whole number from 1, got '-3'");
        CHECK(read_file(db) == before);
    }
    SECTION("--contenders: an unknown baseline, or none with others") {
        const std::string fresh = fresh_path("bad_contenders.db");
        const Run unknown =
            iostune("search --model squeezenet1_1 --cost sim --contenders greedy,ios --db " + fresh);
        INFO("stderr: " << unknown.err);
        CHECK(unknown.status == 2);  // a usage error, caught while parsing
        CHECK_THAT(unknown.err, Catch::StartsWith("iostune: error: --contenders: ios not in"));
        check_refused(
            iostune("search --model squeezenet1_1 --cost sim --contenders none,nimble --db " +
                    fresh),
            "'none' cannot be combined");
        check_refused(
            iostune("search --model squeezenet1_1 --cost sim --contenders greedy,greedy --db " +
                    fresh),
            "'greedy' is listed twice");
        CHECK_FALSE(fs::exists(fresh));
    }
    SECTION("unknown model") {
        const std::string fresh = fresh_path("unknown_model.db");
        check_refused(iostune("search --model no_such_net --cost sim --db " + fresh),
                      "no_such_net");
        CHECK_FALSE(fs::exists(fresh));
        const std::string db = fresh_path("unknown_model_replay.db");
        sim_search(db);
        const std::string before = read_file(db);
        check_refused(iostune("replay --model no_such_net --db " + db), "no_such_net");
        CHECK(read_file(db) == before);
    }
}

TEST_CASE("replay --batch-sizes and the tuned sizes report lists, without a GPU", "[cli][batch]") {
    const std::string db = fresh_path("batch_sizes.db");
    sim_search(db);
    const Run four = iostune("search --model squeezenet1_1 --batch 4 --cost sim --db " + db);
    REQUIRE(four.status == 0);
    const Run table = iostune("report --db " + db);
    REQUIRE(table.status == 0);
    CHECK_THAT(table.out, Catch::Contains("tuned batch sizes") &&
                              Catch::Contains("squeezenet1_1 on sim:h100, tf32: batch 1, 4"));
    const nlohmann::json rows = nlohmann::json::parse(iostune("report --format json --db " + db).out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[1]["tuned_batches"] == nlohmann::json({1, 4}));

    const std::string before = read_file(db);
    // Estimates are never replayed: refused on the key, before any GPU is asked for.
    check_refused(iostune("replay --model squeezenet1_1 --batch-sizes 1,4 --db " + db),
                  "simulated cost model");
    check_refused(iostune("replay --model squeezenet1_1 --model resnet50 --batch-sizes 1,4 --db " + db),
                  "--batch-sizes replays one model");
    check_refused(iostune("replay --model squeezenet1_1 --batch-sizes 1,4 --schedule-source greedy"),
                  "not the baseline 'greedy'");
    check_refused(iostune("replay --model squeezenet1_1 --batch-sizes 1,4 --schedule-id 1 --db " + db),
                  "cannot serve the batch sizes [1, 4]");
    CHECK(read_file(db) == before);
    for (const char* usage : {"--batch-sizes 1,0", "--batch-sizes 1,4 --batch 2", "--requests 3"}) {
        const Run bad = iostune(fmt::format("replay --model squeezenet1_1 {} --db {}", usage, db));
        INFO(usage << ": " << bad.err);
        CHECK(bad.status == 2);
    }
}
