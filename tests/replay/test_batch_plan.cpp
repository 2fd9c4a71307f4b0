// [replay] Replay at any batch size, without a GPU: how a request is planned on the tuned batch
// sizes (iostune/batch_plan.h), and the errors a Replayer, a BatchReplayer and the model loader
// give before anything touches the GPU, with the kind the C API and the Python package act on.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "iostune/batch_plan.h"
#include "iostune/batch_replayer.h"
#include "iostune/replay.h"
#include "replay/model_spec.h"
#include "src/error.h"

using namespace iostune;
namespace fs = std::filesystem;

namespace {

// The chunks as (tuned, offset, count) triples, for readable comparisons.
std::vector<std::vector<int>> triples(const std::vector<BatchChunk>& chunks) {
    std::vector<std::vector<int>> out;
    for (const BatchChunk& c : chunks) out.push_back({c.tuned, c.offset, c.count});
    return out;
}

// The kind of the iostune::Error that `call` throws, and its message in `message`.
template <class Call>
ErrorKind kind_of(Call call, std::string& message) {
    try {
        call();
    } catch (const Error& e) {
        message = e.what();
        return e.kind();
    }
    FAIL("no iostune::Error was thrown");
    return ErrorKind::General;
}

}  // namespace

TEST_CASE("tuned batch sizes are sorted, deduplicated and positive", "[replay][batch]") {
    CHECK(tuned_batch_sizes({16, 1, 4, 4}) == std::vector<int>{1, 4, 16});
    std::string message;
    CHECK(kind_of([] { tuned_batch_sizes({}); }, message) == ErrorKind::BadInput);
    CHECK_THAT(message, Catch::Contains("no batch sizes"));
    CHECK(kind_of([] { tuned_batch_sizes({4, 0}); }, message) == ErrorKind::BadInput);
    CHECK_THAT(message, Catch::Contains("must be positive, got 0"));
}

TEST_CASE("a request runs on the smallest tuned size that holds it", "[replay][batch]") {
    const std::vector<int> tuned = {1, 4, 16};
    CHECK(triples(plan_batch_request(tuned, 1)) == std::vector<std::vector<int>>{{1, 0, 1}});
    CHECK(triples(plan_batch_request(tuned, 3)) == std::vector<std::vector<int>>{{4, 0, 3}});
    CHECK(plan_batch_request(tuned, 3).front().padding() == 1);
    CHECK(triples(plan_batch_request(tuned, 4)) == std::vector<std::vector<int>>{{4, 0, 4}});
    CHECK(triples(plan_batch_request(tuned, 5)) == std::vector<std::vector<int>>{{16, 0, 5}});
    CHECK(triples(plan_batch_request(tuned, 16)) == std::vector<std::vector<int>>{{16, 0, 16}});
}

TEST_CASE("a request above the largest tuned size runs in chunks", "[replay][batch]") {
    const std::vector<int> tuned = {1, 4, 16};
    CHECK(triples(plan_batch_request(tuned, 17)) ==
          std::vector<std::vector<int>>{{16, 0, 16}, {1, 16, 1}});
    CHECK(triples(plan_batch_request(tuned, 37)) ==
          std::vector<std::vector<int>>{{16, 0, 16}, {16, 16, 16}, {16, 32, 5}});
    CHECK(triples(plan_batch_request({4}, 9)) ==
          std::vector<std::vector<int>>{{4, 0, 4}, {4, 4, 4}, {4, 8, 1}});
    // Every item exactly once, in order, whatever the size.
    for (int n = 1; n <= 70; ++n) {
        int next = 0;
        for (const BatchChunk& c : plan_batch_request(tuned, n)) {
            CHECK(c.offset == next);
            CHECK(c.count >= 1);
            CHECK(c.count <= c.tuned);
            next += c.count;
        }
        CHECK(next == n);
    }
    std::string message;
    CHECK(kind_of([&] { plan_batch_request(tuned, 0); }, message) == ErrorKind::BadInput);
    CHECK_THAT(message, Catch::Contains("at least one item"));
}

TEST_CASE("a BatchReplayer refuses bad options before touching the GPU", "[replay][batch]") {
    std::string message;
    ReplayOptions options;
    options.schedule_id = 7;
    CHECK(kind_of([&] { BatchReplayer("squeezenet1_1", {1, 4}, options); }, message) ==
          ErrorKind::BadInput);
    CHECK_THAT(message, Catch::Contains("#7") && Catch::Contains("[1, 4]"));
    options.schedule_id = 0;
    options.placements = 3;
    CHECK(kind_of([&] { BatchReplayer("squeezenet1_1", {1, 4}, options); }, message) ==
          ErrorKind::BadInput);
    CHECK_THAT(message, Catch::Contains("3 arena placements"));
    options.placements = 1;

    options.schedule_id = 0;
    options.db_path = (fs::temp_directory_path() / "iostune_no_such_dir" / "none.db").string();
    CHECK(kind_of([&] { BatchReplayer("squeezenet1_1", {1, 4}, options); }, message) ==
          ErrorKind::MissingSchedule);
    CHECK_THAT(message, Catch::Contains("does not exist"));
    CHECK_FALSE(fs::exists(options.db_path));
}

TEST_CASE("a Replayer refuses a count of arena placements out of range before the GPU",
          "[replay][errors]") {
    std::string message;
    ReplayOptions options;
    options.schedule_source = "sequential";
    for (const int count : {0, 9}) {
        options.placements = count;
        CHECK(kind_of([&] { Replayer("squeezenet1_1", options); }, message) ==
              ErrorKind::BadInput);
        CHECK_THAT(message, Catch::Contains(fmt::format("{} arena placements", count)) &&
                                Catch::Contains("give 1 to 8"));
    }
}

TEST_CASE("errors loading a model are bad input", "[replay][errors]") {
    std::string message;
    CHECK(kind_of([] { load_model_spec("no_such_model", 1); }, message) == ErrorKind::BadInput);
    CHECK_THAT(message, Catch::Contains("no_such_model"));
    CHECK(kind_of([] { load_model_spec("squeezenet1_1", 0); }, message) == ErrorKind::BadInput);
    const std::string missing = (fs::temp_directory_path() / "iostune_missing_model.onnx").string();
    CHECK(kind_of([&] { load_model_spec(missing, 1); }, message) == ErrorKind::BadInput);
    CHECK(kind_of([] { load_models({}, 1, false); }, message) == ErrorKind::BadInput);
}
