// Priority levels from each op's slack (search/critical_priorities.h).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "search/critical_priorities.h"
#include "src/error.h"
#include "src/schedule.h"
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
    for (const std::string model : {"googlenet", "inception_v3", "randwire", "nasnet_a_large"}) {
        INFO(model);
        const Graph g = build_zoo_model(model, 1);
        std::vector<double> ms;
        for (int id = 0; id < g.size(); ++id) ms.push_back(0.01 + 0.001 * double((id * 37) % 11));
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
