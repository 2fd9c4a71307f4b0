// [replay] The schedule diagram (replay/schedule_dot.h): stages as clusters, data edges, and an
// op's raised priority level (Schedule::priorities) on its node.
#include <catch2/catch.hpp>

#include <string>

#include "replay/schedule_dot.h"
#include "src/schedule.h"
#include "src/zoo/zoo.h"

using namespace iostune;

TEST_CASE("the schedule diagram names each raised op's priority level, and only those",
          "[replay][dot]") {
    const Graph g = build_zoo_model("googlenet", 1);
    Schedule s = sequential_schedule(g);
    const std::string plain = schedule_to_dot(g, s, "plain");
    CHECK(plain.rfind("digraph", 0) == 0);
    CHECK_THAT(plain, Catch::Contains("cluster_0") && Catch::Contains("input -> op0"));
    CHECK_THAT(plain, !Catch::Contains("priority"));
    CHECK(prioritised_ops(s) == 0);

    s.priorities.assign(size_t(g.size()), 0);
    s.priorities[3] = 2;
    s.priorities[5] = 1;
    CHECK(prioritised_ops(s) == 2);
    const std::string raised = schedule_to_dot(g, s, "raised");
    CHECK_THAT(raised, Catch::Contains("priority 2") && Catch::Contains("priority 1"));
    const auto node = [&](int id) {
        const size_t at = raised.find("    op" + std::to_string(id) + " [");
        return raised.substr(at, raised.find('\n', at) - at);
    };
    CHECK_THAT(node(3), Catch::Contains("priority 2") && Catch::Contains("penwidth=2"));
    CHECK_THAT(node(4), !Catch::Contains("priority"));
}
