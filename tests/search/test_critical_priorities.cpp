// Priority levels from each op's slack (search/critical_priorities.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "search/critical_priorities.h"
#include "src/error.h"
#include "src/schedule.h"
#include "src/stream_program.h"
#include "src/zoo/zoo.h"
#include "tests/search/search_fixtures.h"

using namespace iostune;
using iostune::test::conv;

namespace {

// A chain of three convolutions beside one convolution, both read by a concat.
Graph chain_and_branch() {
    Graph g("chain_and_branch", Shape{1, 8, 8, 8});
    int x = kGraphInput;
    for (const char* name : {"c0", "c1", "c2"}) x = conv(g, x, 8, 3, 3, 1, 1, name);
    const int b = conv(g, kGraphInput, 8, 1, 1, 0, 0, "branch");
    g.add(OpKind::Concat, ConcatAttrs{}, {x, b}, "concat");
    return g;
}

const std::vector<std::string> kBranchingModels = {"googlenet", "inception_v3", "randwire",
                                                   "nasnet_a_large"};

// 10-20 µs per op, uneven, so paths differ in length.
std::vector<double> uneven_times(const Graph& g) {
    std::vector<double> ms;
    for (int id = 0; id < g.size(); ++id) ms.push_back(0.01 + 0.001 * double((id * 37) % 11));
    return ms;
}

}  // namespace

TEST_CASE("critical priorities: the critical path gets every level, an op's slack fewer",
          "[search][priorities]") {
    const Graph g = chain_and_branch();
    const std::vector<double> ms = {1.0, 1.0, 1.0, 0.5, 0.1};  // path 3.1 ms; branch slack 2.5
    const std::vector<double> slack = op_slack_ms(g, ms);
    for (int id : {0, 1, 2, 4}) CHECK(slack[size_t(id)] == Approx(0.0).margin(1e-12));
    CHECK(slack[3] == Approx(2.5));

    CHECK(critical_priorities(g, ms, {0.02}) == std::vector<int>{1, 1, 1, 0, 1});
    // 2.5 / 3.1 = 0.81 of the path: within 0.9, not within 0.5.
    CHECK(critical_priorities(g, ms, {0.9, 0.5, 0.02}) == std::vector<int>{3, 3, 3, 1, 3});
    CHECK(critical_priorities(g, ms, {}) == std::vector<int>(5, 0));

    // A heavier branch takes over the path.
    const std::vector<double> heavy = {1.0, 1.0, 1.0, 5.0, 0.1};
    CHECK(critical_priorities(g, heavy, {0.02}) == std::vector<int>{0, 0, 0, 1, 1});

    CHECK_THROWS_WITH(critical_priorities(g, {1.0}, {0.02}), Catch::Contains("1 op times"));
    CHECK_THROWS_WITH(critical_priorities(g, ms, {0.0}), Catch::Contains("not in (0, 1]"));
    CHECK_THROWS_WITH(critical_priorities(g, ms, {0.5, 0.4, 0.3, 0.2}),
                      Catch::Contains("at most 3"));
}

TEST_CASE("critical priorities: on zoo models the levels fall as slack grows and validate",
          "[search][priorities][zoo]") {
    for (const std::string& model : kBranchingModels) {
        INFO(model);
        const Graph g = build_zoo_model(model, 1);
        const std::vector<double> ms = uneven_times(g);
        const std::vector<double> slack = op_slack_ms(g, ms);
        const std::vector<int> levels = critical_priorities(g, ms, {0.25, 0.1, 0.02});
        int on_path = 0;
        for (int a = 0; a < g.size(); ++a) {
            CHECK(slack[size_t(a)] >= 0);
            if (slack[size_t(a)] == 0) {
                CHECK(levels[size_t(a)] == 3);
                ++on_path;
            }
            for (int b = 0; b < g.size(); b += 7)
                if (slack[size_t(a)] < slack[size_t(b)]) CHECK(levels[size_t(a)] >= levels[size_t(b)]);
        }
        CHECK(on_path > 0);
        CHECK(on_path < g.size());  // every zoo model here branches
        Schedule s = sequential_schedule(g);
        s.priorities = levels;
        CHECK_NOTHROW(validate(g, s));
    }
}

TEST_CASE("scheduled critical priorities: lane order and barriers join the data, so levels change "
          "along a lane only where the path enters or leaves it",
          "[search][priorities]") {
    const Graph g = chain_and_branch();
    const std::vector<double> ms = {1.0, 1.0, 1.0, 0.5, 0.1};
    const auto handovers = [&](Schedule s, const std::vector<int>& levels) {
        s.priorities = levels;
        return priority_handovers(StreamProgram(g, s));
    };

    // One lane (c0 c1 c2 branch concat): the data's levels hop 1 1 1 0 1, two hand-overs; on the
    // lane every op delays the end, so one level and none.
    const Schedule one_lane = sequential_schedule(g);
    const std::vector<int> data = critical_priorities(g, ms, {0.02});
    CHECK(handovers(one_lane, data) == 2);
    const std::vector<int> on_lane = scheduled_critical_priorities(g, one_lane, ms, {0.02});
    CHECK(on_lane == std::vector<int>(5, 1));
    CHECK(handovers(one_lane, on_lane) == 0);

    // The chain on lane 0 beside the branch on lane 1: as the data says.
    Schedule two_lanes;
    two_lanes.blocks = {{Stage{StageStrategy::Concurrent, {{0, 1, 2}, {3}}},
                         Stage{StageStrategy::Concurrent, {{4}}}}};
    validate(g, two_lanes);
    CHECK(scheduled_critical_priorities(g, two_lanes, ms, {0.02}) == data);
    const std::vector<double> heavy = {1.0, 1.0, 1.0, 5.0, 0.1};
    CHECK(scheduled_critical_priorities(g, two_lanes, heavy, {0.02}) ==
          std::vector<int>{0, 0, 0, 1, 1});

    // Staged: c0 beside the branch, then c1, c2, concat. The barrier after the first stage leaves
    // the branch 0.5 ms of slack (0.16 of the path), where the data left it 2.5 (0.81).
    Schedule barred;
    barred.blocks = {{Stage{StageStrategy::Concurrent, {{0}, {3}}},
                      Stage{StageStrategy::Concurrent, {{1}}},
                      Stage{StageStrategy::Concurrent, {{2}}},
                      Stage{StageStrategy::Concurrent, {{4}}}}};
    validate(g, barred);
    CHECK(critical_priorities(g, ms, {0.9, 0.5, 0.02})[3] == 1);
    CHECK(scheduled_critical_priorities(g, barred, ms, {0.9, 0.5, 0.02}) ==
          std::vector<int>{3, 3, 3, 2, 3});
    // The same in dataflow form: no barrier, so the data's slack again.
    barred.form = ScheduleForm::Dataflow;
    CHECK(scheduled_critical_priorities(g, barred, ms, {0.9, 0.5, 0.02})[3] == 1);

    // The schedule's own levels are ignored; a schedule of another graph is an error.
    Schedule levelled = one_lane;
    levelled.priorities = {0, 0, 0, 3, 0};
    CHECK(scheduled_critical_priorities(g, levelled, ms, {0.02}) == on_lane);
    const Graph other = build_zoo_model("googlenet", 1);
    CHECK_THROWS_AS(scheduled_critical_priorities(other, one_lane,
                                                  std::vector<double>(size_t(other.size()), 1.0),
                                                  {0.02}),
                    Error);
}

TEST_CASE("scheduled critical priorities: on zoo models one lane is one level, and levels validate",
          "[search][priorities][zoo]") {
    for (const std::string& model : kBranchingModels) {
        INFO(model);
        const Graph g = build_zoo_model(model, 1);
        const std::vector<double> ms = uneven_times(g);
        const std::vector<double> graded{0.25, 0.1, 0.02};
        Schedule s = sequential_schedule(g);
        s.priorities = scheduled_critical_priorities(g, s, ms, graded);
        CHECK(s.priorities == std::vector<int>(size_t(g.size()), 3));
        CHECK(priority_handovers(StreamProgram(g, s)) == 0);

        // As soon as its data is ready, on up to eight lanes: some ops get slack, every level
        // is valid, and the ops at the top level include the data's critical path's end.
        s.form = ScheduleForm::Dataflow;
        s.priorities = scheduled_critical_priorities(g, s, ms, graded);
        CHECK_NOTHROW(validate(g, s));
        CHECK(s.priorities.back() == 3);
        CHECK(*std::min_element(s.priorities.begin(), s.priorities.end()) < 3);
    }
}
