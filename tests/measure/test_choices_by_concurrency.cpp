// Kernels chosen by where each op runs (tuning/choices_by_concurrency.h): pure logic, no GPU.
#include <catch2/catch.hpp>

#include "tuning/choices_by_concurrency.h"

using namespace iostune;

namespace {

ConvChoice choice(const std::string& algorithm, ConvObjective objective) {
    return ConvChoice{algorithm, "TENSOR_OP_MATH", "graph", 0.01, objective};
}

OpPlan plan(int op, std::vector<std::string> signatures) {
    OpPlan p;
    p.op_id = op;
    p.conv_signatures = std::move(signatures);
    return p;
}

Stage concurrent(std::vector<std::vector<int>> groups) {
    return Stage{StageStrategy::Concurrent, std::move(groups)};
}

}  // namespace

TEST_CASE("the ops of one-group stages run alone, in either form", "[measure][objective]") {
    Schedule s;
    s.blocks = {{concurrent({{0, 1}}), concurrent({{2}, {3, 4}}), concurrent({{5}})},
                {Stage{StageStrategy::Merge, {{6, 7}}}}};
    CHECK(ops_run_alone(s) == std::set<int>{0, 1, 5, 6, 7});
    s.form = ScheduleForm::Dataflow;
    CHECK(ops_run_alone(s) == std::set<int>{0, 1, 5, 6, 7});
}

TEST_CASE("each signature takes the alone choice only where every op holding it runs alone",
          "[measure][objective]") {
    // Ops 0 and 5 run alone; 2 and 3 beside each other. "a" is held by 0 and 5 (alone), "b" by 2
    // and 5 (one of them beside another op), "c" by 3 alone (beside 2); "m" is a merged
    // convolution's (no op's): it keeps the current choice, as does "d", which the alone
    // engine never chose.
    Schedule s;
    s.blocks = {{concurrent({{0}}), concurrent({{2}, {3}}), concurrent({{5}})}};
    const std::vector<OpPlan> plans = {plan(0, {"a"}), plan(2, {"b"}), plan(3, {"c", "d"}),
                                       plan(5, {"a", "b"}), plan(9, {})};
    const ConvChoices alone = {{"a", choice("GRAPH_0", ConvObjective::Alone)},
                               {"b", choice("GRAPH_1", ConvObjective::Alone)},
                               {"c", choice("GRAPH_2", ConvObjective::Alone)}};
    const ConvChoices corun = {{"a", choice("GRAPH_3", ConvObjective::CoRun)},
                               {"b", choice("GRAPH_4", ConvObjective::CoRun)},
                               {"c", choice("GRAPH_5", ConvObjective::CoRun)},
                               {"d", choice("GRAPH_6", ConvObjective::CoRun)}};
    ConvChoices current = corun;
    current["m"] = choice("GEMM_0", ConvObjective::CoRun);
    const ConvChoices mixed = choices_by_concurrency(s, plans, alone, corun, current);
    CHECK(mixed.size() == 5);
    CHECK(mixed.at("a") == alone.at("a"));
    CHECK(mixed.at("b") == corun.at("b"));
    CHECK(mixed.at("c") == corun.at("c"));
    CHECK(mixed.at("d") == corun.at("d"));
    CHECK(mixed.at("m") == current.at("m"));

    // Everything in one stage of one group: every op alone, every signature the alone engine
    // chose takes its choice; "d" has none there and keeps the current one.
    Schedule sequential;
    sequential.blocks = {{concurrent({{0, 2, 3, 5}})}};
    const ConvChoices lone = choices_by_concurrency(sequential, plans, alone, corun, current);
    CHECK(lone.at("a") == alone.at("a"));
    CHECK(lone.at("b") == alone.at("b"));
    CHECK(lone.at("c") == alone.at("c"));
    CHECK(lone.at("d") == current.at("d"));
}
