#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "src/conv_choices.h"
#include "src/engine/tensor_view.h"
#include "src/error.h"

using iostune::ConvChoice;
using iostune::ConvChoices;

namespace {

std::string error_of(const nlohmann::json& json) {
    try {
        iostune::conv_choices_from_json(json, "schedule #7");
    } catch (const iostune::Error& e) {
        return e.what();
    }
    FAIL("no iostune::Error for " << json.dump());
    return {};
}

}  // namespace

TEST_CASE("convolution choices round-trip through JSON", "[conv_choices]") {
    ConvChoices choices;
    choices["tf32|x1x192x35x35/235200|w64x192x1x1"] = {"IMPLICIT_PRECOMP_GEMM", "TENSOR_OP_MATH",
                                                       "fused", 0.0123};
    choices["tf32|x1x48x35x35/58800|w64x48x5x5"] = {"WINOGRAD_NONFUSED", "DEFAULT_MATH",
                                                    "conv+epilogue", 0.031};
    choices["fp32|x1x3x8x8/192|w4x3x3x3"] = {"GEMM", "FMA_MATH", "conv", 0.002};
    choices["fp16/nhwc|x1x154x8x8/154|w77x154x1x1"] = {"GEMM_2", "TENSOR_OP_MATH", "gemm", 0.004};
    choices["tf32/nhwc|x16x384x8x8/384|w384x384x3x1"] = {"GRAPH_1", "DEFAULT_MATH", "graph", 0.016};
    choices["fp16/nhwc|x16x24x14x14/128|w64x24x3x3|align 32/256/256"] = {
        "GRAPH_3", "TENSOR_OP_MATH", "graph+epilogue", 0.008};
    const nlohmann::json json = iostune::conv_choices_to_json(choices);
    CHECK(json.size() == 6);
    CHECK(json["fp32|x1x3x8x8/192|w4x3x3x3"]["algorithm"] == "GEMM");
    CHECK(iostune::conv_choices_from_json(json, "test") == choices);
    // Through text, as the schedule store keeps it.
    CHECK(iostune::conv_choices_from_json(nlohmann::json::parse(json.dump()), "test") == choices);
    CHECK(iostune::conv_choices_from_json(nlohmann::json::object(), "test").empty());
}

TEST_CASE("a graph-API choice names its engine configuration, which outranks its rank",
          "[conv_choices]") {
    ConvChoices choices;
    choices["old"] = {"GRAPH_4", "TENSOR_OP_MATH", "graph+epilogue", 0.01};
    choices["new"] = {"GRAPH_4", "TENSOR_OP_MATH", "graph+epilogue", 0.01};
    choices["new"].engine = "engine 51 setting 2";
    const nlohmann::json json = iostune::conv_choices_to_json(choices);
    CHECK_FALSE(json["old"].contains("engine"));  // stored before engines were named: as then
    CHECK(json["new"]["engine"] == "engine 51 setting 2");
    CHECK(iostune::conv_choices_from_json(nlohmann::json::parse(json.dump()), "t") == choices);
    // One rank, two configurations: two kernels (the runners-up keep both).
    ConvChoice other = choices["new"];
    other.engine = "engine 26";
    CHECK_FALSE(iostune::same_kernel(choices["new"], other));
    CHECK(iostune::same_kernel(choices["new"], choices["new"]));
    // Only a graph-API choice has one, and it is text.
    CHECK_THAT(error_of({{"k", {{"algorithm", "GEMM_1"}, {"math", "TENSOR_OP_MATH"},
                                {"path", "gemm"}, {"engine", "engine 3"}}}}),
               Catch::Contains("only a graph-API choice"));
    CHECK_THAT(error_of({{"k", {{"algorithm", "GRAPH_1"}, {"math", "TENSOR_OP_MATH"},
                                {"path", "graph"}, {"engine", 51}}}}),
               Catch::Contains("\"engine\": 51"));
}

TEST_CASE("a choice made to co-run says so; a search keeps the two kinds apart",
          "[conv_choices]") {
    ConvChoices choices;
    choices["a"] = {"IMPLICIT_PRECOMP_GEMM", "TENSOR_OP_MATH", "fused", 0.0123};
    choices["b"] = {"GRAPH_2", "TENSOR_OP_MATH", "graph", 0.02, iostune::ConvObjective::CoRun};
    const nlohmann::json json = iostune::conv_choices_to_json(choices);
    CHECK_FALSE(json["a"].contains("objective"));  // rows stored before objectives read the same
    CHECK(json["b"]["objective"] == "corun");
    CHECK(iostune::conv_choices_from_json(nlohmann::json::parse(json.dump()), "t") == choices);
    const ConvChoices alone = iostune::conv_choices_for(choices, iostune::ConvObjective::Alone);
    const ConvChoices corun = iostune::conv_choices_for(choices, iostune::ConvObjective::CoRun);
    REQUIRE(alone.size() == 1);
    REQUIRE(corun.size() == 1);
    CHECK(alone.count("a") == 1);
    CHECK(corun.count("b") == 1);
    CHECK(iostune::conv_objective_from_string("corun") == iostune::ConvObjective::CoRun);
    CHECK(std::string(iostune::to_string(iostune::ConvObjective::Alone)) == "alone");
    CHECK_THROWS_WITH(iostune::conv_objective_from_string("together"),
                      Catch::Contains("'together'") && Catch::Contains("alone or corun"));
    CHECK_THAT(error_of({{"k", {{"algorithm", "GEMM"}, {"math", "FMA_MATH"}, {"path", "conv"},
                                {"objective", "fastest"}}}}),
               Catch::Contains("'k'") && Catch::Contains("objective \"fastest\""));
}

TEST_CASE("a choice made in a hurry says so; a later search does not pin it", "[conv_choices]") {
    ConvChoices choices;
    choices["timed"] = {"IMPLICIT_PRECOMP_GEMM", "TENSOR_OP_MATH", "fused", 0.0123};
    choices["hurried"] = {"DEPTHWISE_NHWC", "FMA_MATH", "depthwise", 0.004};
    choices["hurried"].quick = true;
    const nlohmann::json json = iostune::conv_choices_to_json(choices);
    CHECK_FALSE(json["timed"].contains("quick"));  // rows stored before it read the same
    CHECK(json["hurried"]["quick"] == true);
    // A replay pins both, quick or not.
    const ConvChoices read = iostune::conv_choices_from_json(nlohmann::json::parse(json.dump()), "t");
    CHECK(read == choices);
    const ConvChoices pinned = iostune::timed_in_full(read);
    REQUIRE(pinned.size() == 1);
    CHECK(pinned.count("timed") == 1);
    CHECK_THAT(error_of({{"k", {{"algorithm", "GEMM"}, {"math", "FMA_MATH"}, {"path", "conv"},
                                {"quick", "yes"}}}}),
               Catch::Contains("'k'") && Catch::Contains("\"quick\": \"yes\""));
}

TEST_CASE("choices combined from several schedules: the first part's kernel per signature",
          "[conv_choices]") {
    const ConvChoice gemm{"GEMM_1", "TENSOR_OP_MATH", "gemm", 0.004};
    const ConvChoice graph{"GRAPH_0", "TENSOR_OP_MATH", "graph", 0.003};
    ConvChoice graph_timed_again = graph;  // the same kernel, another time and objective
    graph_timed_again.time_ms = 0.005;
    graph_timed_again.objective = iostune::ConvObjective::CoRun;
    const ConvChoices first{{"a", gemm}, {"b", graph}};
    const ConvChoices second{{"b", graph_timed_again}, {"c", graph}};
    const ConvChoices third{{"a", graph}, {"c", gemm}};
    int differing = -1;
    const ConvChoices combined = iostune::combined_choices({first, second, third}, &differing);
    CHECK(combined.size() == 3);
    CHECK(combined.at("a") == gemm);    // third's other kernel for "a" is not run
    CHECK(combined.at("b") == graph);   // second's is the same kernel
    CHECK(combined.at("c") == graph);   // second has it first; third's other kernel is not run
    CHECK(differing == 2);
    CHECK(iostune::combined_choices({}).empty());
    CHECK(iostune::combined_choices({second, first}).at("b") == graph_timed_again);
}

TEST_CASE("a convolution's runners-up: the next fastest other kernels within the slack",
          "[conv_choices]") {
    using iostune::ConvChoice;
    const auto c = [](const char* algorithm, const char* path, double ms) {
        return ConvChoice{algorithm, "TENSOR_OP_MATH", path, ms};
    };
    // Timed in no order; one kernel timed twice (two paths name two kernels, one is a repeat).
    const std::vector<ConvChoice> ran = {
        c("GRAPH_1", "graph", 0.0110), c("GRAPH_0", "graph", 0.0100),
        c("IMPLICIT_GEMM", "fused", 0.0140), c("GRAPH_1", "graph", 0.0105),
        c("GRAPH_1", "graph+epilogue", 0.0120), c("FFT", "conv+epilogue", 0.0500)};
    const std::vector<ConvChoice> next = iostune::runners_up(ran, ran[1]);
    REQUIRE(next.size() == iostune::kRunnersUp);
    CHECK(next[0] == ran[3]);  // GRAPH_1 graph at its faster timing, once
    CHECK(next[1] == ran[4]);
    // Chosen to co-run, not the fastest: the fastest alone is the first runner-up.
    const std::vector<ConvChoice> corun = iostune::runners_up(ran, ran[2]);
    REQUIRE(corun.size() == 2);
    CHECK(corun[0] == ran[1]);
    CHECK(corun[1] == ran[3]);
    // More asked for: every other kernel within the slack, each once, fastest first
    // (IMPLICIT_GEMM, 40% slower, and FFT never); fewer: the first of them; none: none.
    std::vector<ConvChoice> wider = ran;
    wider.push_back(c("WINOGRAD", "fused", 0.0115));
    const std::vector<ConvChoice> all =
        iostune::runners_up(wider, ran[1], iostune::kMostRunnersUp);
    REQUIRE(all.size() == 3);
    CHECK(all[0] == ran[3]);
    CHECK(all[1] == wider.back());
    CHECK(all[2] == ran[4]);
    CHECK(iostune::runners_up(wider, ran[1], 1) == std::vector<ConvChoice>{ran[3]});
    CHECK(iostune::runners_up(wider, ran[1], 0).empty());
    // Nothing within the slack (FFT is 5x slower), or nothing else ran: none.
    CHECK(iostune::runners_up({ran[1], ran[5]}, ran[1]).empty());
    CHECK(iostune::runners_up({ran[1]}, ran[1]).empty());
    CHECK(iostune::runners_up({}, ran[1]).empty());
    CHECK(iostune::same_kernel(ran[0], ran[3]));
    CHECK_FALSE(iostune::same_kernel(ran[0], ran[4]));
}

TEST_CASE("malformed convolution choices are refused with where and what", "[conv_choices]") {
    CHECK_THAT(error_of(nlohmann::json::array()),
               Catch::Contains("schedule #7") && Catch::Contains("must be a JSON object"));
    CHECK_THAT(error_of({{"k", {{"algorithm", "WARP_SPEED"}, {"math", "FMA_MATH"}, {"path", "conv"}}}}),
               Catch::Contains("'k'") && Catch::Contains("unknown cuDNN algorithm 'WARP_SPEED'"));
    for (const char* bad : {"GEMM_", "GEMM_x", "GEMM_-1", "GEMM_1234", "GRAPH_", "GRAPH_1x"})
        CHECK_THAT(error_of({{"k", {{"algorithm", bad}, {"math", "FMA_MATH"}, {"path", "gemm"}}}}),
                   Catch::Contains("unknown cuDNN algorithm"));
    CHECK(iostune::gemm_algorithm_rank("GEMM_3") == 3);
    CHECK(iostune::gemm_algorithm_rank("GEMM") == -1);
    CHECK(iostune::graph_algorithm_rank("GRAPH_12") == 12);
    CHECK(iostune::graph_algorithm_rank("GEMM_1") == -1);
    CHECK(iostune::gemm_algorithm_rank("GRAPH_1") == -1);
    CHECK(iostune::is_conv_algorithm_name("DEPTHWISE_NHWC_NARROW"));
    CHECK(iostune::is_conv_algorithm_name("DEPTHWISE_NHWC_TILED"));
    CHECK_FALSE(iostune::is_conv_algorithm_name("DEPTHWISE_NHWC_TILE"));
    CHECK_THAT(error_of({{"k", {{"algorithm", "GEMM"}, {"math", "FP8"}, {"path", "conv"}}}}),
               Catch::Contains("unknown math type 'FP8'"));
    CHECK_THAT(error_of({{"k", {{"algorithm", "GEMM"}, {"math", "FMA_MATH"}, {"path", "magic"}}}}),
               Catch::Contains("unknown path 'magic'"));
    CHECK_THAT(error_of({{"k", {{"algorithm", "GEMM"}, {"path", "conv"}}}}),
               Catch::Contains("lacks the string field 'math'"));
    CHECK_THAT(error_of({{"k", 3}}), Catch::Contains("must be an object"));
}

TEST_CASE("a channel slice's byte alignment, as convolution keys and the heuristics see it",
          "[conv_choices]") {
    alignas(256) static char buffer[1024];
    CHECK(iostune::byte_alignment(buffer, 256) == 256);
    CHECK(iostune::byte_alignment(buffer, 16) == 16);
    CHECK(iostune::byte_alignment(buffer + 96, 256) == 32);  // 24 fp32 channels in
    CHECK(iostune::byte_alignment(buffer + 84, 16) == 4);    // 42 fp16 channels in
    CHECK(iostune::byte_alignment(buffer + 6, 256) == 2);
    CHECK(iostune::byte_alignment(buffer + 1, 256) == 1);
}
