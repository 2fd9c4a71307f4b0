// Tuning plans (tuning/tuning_plan.h, docs/fleet.md): the keys a plan names, the `iostune
// search` words of each, chunks, and one clear message for each kind of malformed plan.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "src/error.h"
#include "tests/fleet/fleet_test_support.h"
#include "tuning/tuning_plan.h"

using iostune::chunk_count;
using iostune::chunk_keys;
using iostune::KeyChunk;
using iostune::load_tuning_plan;
using iostune::PlanKey;
using iostune::tuning_plan_from_json;
using iostune::TuningPlan;
using iostune::testing::TempDir;
using iostune::testing::write_text;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

TuningPlan plan_of(const std::string& text) {
    return tuning_plan_from_json(json::parse(text), "/plans", "test-plan.json");
}

std::string plan_error(const std::string& text) {
    try {
        plan_of(text);
    } catch (const iostune::Error& e) {
        return e.what();
    }
    FAIL("the plan was accepted: " << text);
    return "";
}

std::vector<std::string> labels(const TuningPlan& plan) {
    std::vector<std::string> out;
    for (const PlanKey& key : plan.keys) out.push_back(key.label());
    return out;
}

}  // namespace

TEST_CASE("a plan's keys: models, then batches, then precisions", "[fleet][plan]") {
    const TuningPlan plan = plan_of(R"({
        "models": ["inception_v3", "nets/densenet121.onnx"],
        "batches": [1, 16],
        "precisions": ["tf32", "fp16"],
        "search": {"r": 2, "s": 4, "contenders": ["greedy", "nimble"]},
        "timeout_s": 120})");
    CHECK(labels(plan) == std::vector<std::string>{
                              "inception_v3 b1 tf32", "inception_v3 b1 fp16",
                              "inception_v3 b16 tf32", "inception_v3 b16 fp16",
                              "densenet121 b1 tf32", "densenet121 b1 fp16",
                              "densenet121 b16 tf32", "densenet121 b16 fp16"});
    // A model file is found next to the plan; a zoo name stays a name.
    CHECK(plan.keys[0].model == "inception_v3");
    CHECK(plan.keys[4].model == "/plans/nets/densenet121.onnx");
    CHECK(plan.document["models"][1] == "/plans/nets/densenet121.onnx");
    // Options in name order, lists joined as `search --contenders` takes them.
    CHECK(plan.keys[5].search_args ==
          std::vector<std::string>{"--contenders", "greedy,nimble", "--r", "2", "--s", "4"});
    CHECK(plan.keys[7].timeout_s == 120);
}

TEST_CASE("a model's own fields override the plan's, extra_args pass through", "[fleet][plan]") {
    const TuningPlan plan = plan_of(R"({
        "models": ["googlenet",
                   {"model": "randwire", "batches": [4], "timeout_s": 0,
                    "search": {"r": 1, "no_prune": false, "reference_endings": true,
                               "extra_args": ["--time-budget", "30"]}}],
        "search": {"r": 3, "cost": "sim", "extra_args": ["--layout", "nhwc"]}})");
    REQUIRE(plan.keys.size() == 2);
    const PlanKey& googlenet = plan.keys[0];
    CHECK(googlenet.label() == "googlenet b1 tf32");  // batch 1 and tf32 unless the plan says
    CHECK(googlenet.timeout_s == iostune::kDefaultKeyTimeoutS);
    CHECK(googlenet.search_args ==
          std::vector<std::string>{"--cost", "sim", "--r", "3", "--layout", "nhwc"});
    const PlanKey& randwire = plan.keys[1];
    CHECK(randwire.label() == "randwire b4 tf32");
    CHECK(randwire.timeout_s == 0);
    // false leaves a flag out, true gives it bare; an underscore is the option's dash.
    CHECK(randwire.search_args ==
          std::vector<std::string>{"--cost", "sim", "--r", "1", "--reference-endings", "--layout",
                                   "nhwc", "--time-budget", "30"});
}

TEST_CASE("a malformed plan gets one message naming the entry", "[fleet][plan]") {
    CHECK_THAT(plan_error(R"({"models": []})"), Contains("test-plan.json") && Contains("models"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "batch": [1]})"),
               Contains("unknown field 'batch'"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "batches": [0]})"),
               Contains("batches") && Contains("not a positive integer"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "batches": [1.5]})"),
               Contains("not a positive integer"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "precisions": ["fp8"]})"),
               Contains("precisions") && Contains("fp8"));
    CHECK_THAT(plan_error(R"({"models": [{"batches": [1]}]})"),
               Contains("models[0]") && Contains("needs \"model\""));
    CHECK_THAT(plan_error(R"({"models": [{"model": "resnet50", "batch": 2}]})"),
               Contains("models[0]") && Contains("unknown field 'batch'"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "search": {"batch": 4}})"),
               Contains("search.batch") && Contains("--batch is set by the plan"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "search": {"extra_args": ["--db=x.db"]}})"),
               Contains("--db is set"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "search": {"extra_args": ["-b", "4"]}})"),
               Contains("-b is set"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "search": {"R value": 4}})"),
               Contains("not an option name"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "search": {"r": {"max": 4}}})"),
               Contains("search.r") && Contains("not an option value"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50"], "timeout_s": -1})"), Contains("timeout_s"));
    CHECK_THAT(plan_error(R"({"models": ["resnet50", {"model": "resnet50", "batches": [1, 2]}]})"),
               Contains("'resnet50 b1 tf32' appears twice"));
    CHECK_THAT(plan_error(R"(["resnet50"])"), Contains("must be a JSON object"));
}

TEST_CASE("a plan file: read, resolved next to itself, refused when unreadable", "[fleet][plan]") {
    TempDir dir;
    write_text(dir.file("plan.json"), R"({"models": ["m.json"], "precisions": ["fp16"]})");
    const TuningPlan plan = load_tuning_plan(dir.file("plan.json"));
    REQUIRE(plan.keys.size() == 1);
    CHECK(plan.keys[0].model == dir.file("m.json"));
    CHECK(plan.path == dir.file("plan.json"));

    write_text(dir.file("broken.json"), R"({"models": ["m.json")");
    CHECK_THROWS_WITH(load_tuning_plan(dir.file("broken.json")),
                      Contains("broken.json") && Contains("not valid JSON"));
    CHECK_THROWS_WITH(load_tuning_plan(dir.file("missing.json")),
                      Contains("cannot read tuning plan") && Contains("missing.json"));
}

TEST_CASE("chunks cut the plan's keys in order, a chunk past the end is refused",
          "[fleet][plan]") {
    const TuningPlan plan = plan_of(R"({"models": ["a", "b", "c", "d", "e"]})");
    CHECK(chunk_count(plan, 1) == 5);
    CHECK(chunk_count(plan, 2) == 3);
    CHECK(chunk_count(plan, 10) == 1);
    CHECK(chunk_keys(plan, KeyChunk{0, 2}) == std::vector<std::size_t>{0, 1});
    CHECK(chunk_keys(plan, KeyChunk{2, 2}) == std::vector<std::size_t>{4});
    CHECK_THROWS_WITH(chunk_keys(plan, KeyChunk{3, 2}), Contains("no chunk 3"));
    CHECK_THROWS_WITH(chunk_count(plan, 0), Contains("chunk size 0"));
}
