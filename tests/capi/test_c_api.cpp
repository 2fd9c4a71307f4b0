// [capi] The C API (libiostune.so) as a C program sees it, through iostune.h alone and without a
// GPU: models, the simulated search and the report, and every refusal with its status code and
// one-line message, leaving no database behind when the input was bad.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "iostune/iostune.h"

namespace fs = std::filesystem;

namespace {

std::string fresh_db(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("iostune_test_capi-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const fs::path path = dir / (name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
    return path.string();
}

bool has_gpu() { return iostune_gpu_check() == IOSTUNE_OK; }

// A model handle freed at the end of the scope.
struct Model {
    iostune_model* handle = nullptr;
    explicit Model(const char* spec, int batch = 1) {
        REQUIRE(iostune_model_load(spec, batch, &handle) == IOSTUNE_OK);
    }
    ~Model() { iostune_model_free(handle); }
};

struct SearchResult {
    iostune_search_result* handle = nullptr;
    ~SearchResult() { iostune_search_result_free(handle); }
};

iostune_search_options sim_options(const std::string& db, int batch = 1) {
    iostune_search_options o;
    iostune_search_options_init(&o);
    o.cost = "sim";
    o.db_path = db.c_str();
    o.batch = batch;
    o.progress = 0;
    o.notice = [](const char*, void*) {};
    return o;
}

std::string take(char* text) {
    std::string copy = text != nullptr ? text : "";
    iostune_free_string(text);
    return copy;
}

}  // namespace

TEST_CASE("the library says what it is", "[capi]") {
    CHECK(iostune_api_version() == IOSTUNE_API_VERSION);
    CHECK_THAT(iostune_version(), Catch::Contains("commit"));
    CHECK(std::string(iostune_status_name(IOSTUNE_ERROR_MISSING_SCHEDULE)) ==
          "IOSTUNE_ERROR_MISSING_SCHEDULE");
    CHECK(iostune_has_feature("no such feature") == 0);
    CHECK(iostune_has_feature(nullptr) == 0);
}

TEST_CASE("a model loads with its name, fingerprint and shapes", "[capi]") {
    Model model("squeezenet1_1", 2);
    CHECK(std::string(iostune_model_name(model.handle)) == "squeezenet1_1");
    CHECK(std::string(iostune_model_fingerprint(model.handle)).size() == 16);
    CHECK(iostune_model_batch(model.handle) == 2);
    CHECK(iostune_model_input_count(model.handle) == 1);
    CHECK(iostune_model_output_count(model.handle) == 1);
    int dims[4] = {};
    REQUIRE(iostune_model_input_shape(model.handle, 0, dims) == IOSTUNE_OK);
    CHECK(std::vector<int>(dims, dims + 4) == std::vector<int>{2, 3, 224, 224});
    REQUIRE(iostune_model_output_shape(model.handle, 0, dims) == IOSTUNE_OK);
    CHECK(std::vector<int>(dims, dims + 4) == std::vector<int>{2, 1000, 1, 1});
    CHECK(iostune_model_output_shape(model.handle, 1, dims) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK_THAT(iostune_last_error(), Catch::Contains("there is no output 1"));
}

TEST_CASE("bad models and arguments are bad input, with the library's message", "[capi]") {
    iostune_model* model = reinterpret_cast<iostune_model*>(0x1);
    CHECK(iostune_model_load("no_such_model", 1, &model) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK(model == nullptr);
    CHECK_THAT(iostune_last_error(), Catch::Contains("no_such_model") && Catch::Contains("resnet50"));
    CHECK(iostune_model_load("squeezenet1_1", 0, &model) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK_THAT(iostune_last_error(), Catch::Contains("batch size must be positive"));
    CHECK(iostune_model_load(nullptr, 1, &model) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK(iostune_model_load("squeezenet1_1", 1, nullptr) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK(std::string(iostune_model_name(nullptr)).empty());

    iostune_search_options options;
    iostune_search_options_init(&options);
    iostune_search_result* result = nullptr;
    CHECK(iostune_search(nullptr, &options, &result) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK_THAT(iostune_last_error(), Catch::Contains("the model is NULL"));
}

TEST_CASE("each thread keeps its own last error", "[capi]") {
    iostune_model* model = nullptr;
    REQUIRE(iostune_model_load("no_such_model", 1, &model) == IOSTUNE_ERROR_BAD_INPUT);
    const std::string mine = iostune_last_error();
    std::string theirs;
    std::thread([&] {
        CHECK(std::string(iostune_last_error()).empty());
        iostune_model_load("squeezenet1_1", -3, &model);
        theirs = iostune_last_error();
    }).join();
    CHECK_THAT(theirs, Catch::Contains("-3"));
    CHECK(std::string(iostune_last_error()) == mine);
}

TEST_CASE("a simulated search is stored and the report lists its tuned batch sizes", "[capi]") {
    const std::string db = fresh_db("sim");
    Model model("squeezenet1_1");
    SearchResult one, two;
    iostune_search_options options = sim_options(db, 1);
    REQUIRE(iostune_search(model.handle, &options, &one.handle) == IOSTUNE_OK);
    options.batch = 2;
    REQUIRE(iostune_search(model.handle, &options, &two.handle) == IOSTUNE_OK);
    CHECK(iostune_search_result_simulated(one.handle) == 1);
    CHECK(iostune_search_result_latency_ms(one.handle) > 0);
    CHECK(std::string(iostune_search_result_strategy(one.handle)) == "ios-both");
    const nlohmann::json summary = nlohmann::json::parse(iostune_search_result_json(one.handle));
    CHECK(summary["schedule_id"] == iostune_search_result_schedule_id(one.handle));
    CHECK(summary["predicted_latency_ms"].get<double>() ==
          Approx(iostune_search_result_latency_ms(one.handle)));
    CHECK(summary["batch"] == 1);

    char* text = nullptr;
    REQUIRE(iostune_report_json(db.c_str(), &text) == IOSTUNE_OK);
    const nlohmann::json rows = nlohmann::json::parse(take(text));
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["schedule_id"] == iostune_search_result_schedule_id(one.handle));
    CHECK(rows[1]["schedule_id"] == iostune_search_result_schedule_id(two.handle));
    for (const auto& row : rows) {
        CHECK(row["tuned_batches"] == nlohmann::json({1, 2}));
        CHECK(row["kind"] == "estimate");
    }
}

TEST_CASE("bad search options are refused before the database is touched", "[capi]") {
    const std::string db = fresh_db("refused");
    Model model("squeezenet1_1");
    SearchResult result;
    iostune_search_options options = sim_options(db);
    options.precision = "fp8";
    CHECK(iostune_search(model.handle, &options, &result.handle) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK(std::string(iostune_last_error()) == "unknown precision 'fp8'; use fp32, tf32, fp16 or bf16");
    options = sim_options(db);
    options.strategy = "ios-all";
    CHECK(iostune_search(model.handle, &options, &result.handle) == IOSTUNE_ERROR_BAD_INPUT);
    options = sim_options(db);
    options.contenders = "greedy,fastest";
    CHECK(iostune_search(model.handle, &options, &result.handle) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK_THAT(iostune_last_error(), Catch::Contains("unknown baseline 'fastest'"));
    options = sim_options(db);
    options.struct_size -= 8;
    CHECK(iostune_search(model.handle, &options, &result.handle) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK_THAT(iostune_last_error(), Catch::Contains("built against another iostune.h"));
    options = sim_options(db);
    options.batch = -1;
    CHECK(iostune_search(model.handle, &options, &result.handle) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK(result.handle == nullptr);
    CHECK_FALSE(fs::exists(db));
}

TEST_CASE("the time budget is passed on, or reported as ignored", "[capi]") {
    const std::string db = fresh_db("budget");
    Model model("squeezenet1_1");
    SearchResult result;
    iostune_search_options options = sim_options(db);
    std::vector<std::string> notices;
    options.notice = [](const char* line, void* user) {
        static_cast<std::vector<std::string>*>(user)->push_back(line);
    };
    options.notice_user_data = &notices;
    options.time_budget_s = 30;
    REQUIRE(iostune_search(model.handle, &options, &result.handle) == IOSTUNE_OK);
    bool ignored = false;
    for (const std::string& line : notices) ignored = ignored || line.find("ignored") != std::string::npos;
    CHECK(ignored == (iostune_has_feature("time_budget") == 0));
    options.time_budget_s = -1;
    SearchResult refused;
    CHECK(iostune_search(model.handle, &options, &refused.handle) == IOSTUNE_ERROR_BAD_INPUT);
}

TEST_CASE("the schedule database: missing, estimates only, no GPU", "[capi]") {
    const std::string missing = fresh_db("missing");
    char* text = nullptr;
    CHECK(iostune_report_json(missing.c_str(), &text) == IOSTUNE_ERROR_MISSING_SCHEDULE);
    CHECK_THAT(iostune_last_error(), Catch::Contains("does not exist"));
    CHECK(text == nullptr);
    CHECK_FALSE(fs::exists(missing));

    const std::string db = fresh_db("estimates");
    Model model("squeezenet1_1");
    SearchResult result;
    iostune_search_options options = sim_options(db);
    REQUIRE(iostune_search(model.handle, &options, &result.handle) == IOSTUNE_OK);
    // Estimates are never replayed: the key is checked before the GPU is asked.
    CHECK(iostune_schedule_lookup(model.handle, db.c_str(), 1, "tf32", 0, &text) ==
          IOSTUNE_ERROR_MISSING_SCHEDULE);
    CHECK_THAT(iostune_last_error(), Catch::Contains("simulated cost model"));
    iostune_replay_options replay;
    iostune_replay_options_init(&replay);
    replay.db_path = db.c_str();
    iostune_replayer* replayer = nullptr;
    CHECK(iostune_replayer_open(model.handle, &replay, &replayer) == IOSTUNE_ERROR_MISSING_SCHEDULE);
    CHECK(replayer == nullptr);
    const int sizes[] = {1, 0};
    replay.batch_sizes = sizes;
    replay.batch_size_count = 2;
    CHECK(iostune_replayer_open(model.handle, &replay, &replayer) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK_THAT(iostune_last_error(), Catch::Contains("must be positive"));
    replay.batch_size_count = 1;
    replay.schedule_source = "greedy";
    CHECK(iostune_replayer_open(model.handle, &replay, &replayer) == IOSTUNE_ERROR_BAD_INPUT);
    const void* inputs[] = {nullptr};
    void* outputs[] = {nullptr};
    CHECK(iostune_replayer_submit(nullptr, 1, inputs, nullptr) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK_THAT(iostune_last_error(), Catch::Contains("iostune_replayer_submit"));
    CHECK(iostune_replayer_collect(nullptr, outputs, nullptr) == IOSTUNE_ERROR_BAD_INPUT);
    CHECK_THAT(iostune_last_error(), Catch::Contains("iostune_replayer_collect"));
    if (!has_gpu()) {
        options.cost = "measured";
        SearchResult measured;
        CHECK(iostune_search(model.handle, &options, &measured.handle) == IOSTUNE_ERROR_NO_GPU);
        replay.schedule_source = "sequential";
        CHECK(iostune_replayer_open(model.handle, &replay, &replayer) == IOSTUNE_ERROR_NO_GPU);
        CHECK_THAT(iostune_last_error(), Catch::Contains("needs an NVIDIA GPU"));
    }
}
