// Which schedule a tuning job keeps (tuning/schedule_contest.h): pure logic, no GPU.
#include <catch2/catch.hpp>

#include "tuning/schedule_contest.h"
#include "src/error.h"

using namespace iostune;

TEST_CASE("the fastest end-to-end schedule is kept; the searched one wins ties",
          "[measure][contest]") {
    CHECK(fastest_entry({{"ios-both", 1.262}, {"sequential", 2.11}, {"greedy", 1.30},
                         {"nimble", 1.162}}) == 3);
    CHECK(fastest_entry({{"ios-both", 1.0}, {"sequential", 2.0}, {"greedy", 1.5}}) == 0);
    CHECK(fastest_entry({{"ios-merge", 1.5}, {"sequential", 1.5}, {"nimble", 1.5}}) == 0);
    CHECK(fastest_entry({{"ios-parallel", 1.0}}) == 0);
    CHECK_THROWS_AS(fastest_entry({}), Error);
}

TEST_CASE("contender lists: baselines by name, sequential implied, none alone",
          "[measure][contest]") {
    using List = std::vector<std::string>;
    CHECK(contender_list({"greedy", "nimble"}) == List{"greedy", "nimble"});
    CHECK(contender_list({"sequential", "opara"}) == List{"opara"});
    CHECK(contender_list({"none"}).empty());
    CHECK(contender_list({}).empty());
    CHECK_THROWS_WITH(contender_list({"none", "greedy"}), Catch::Contains("cannot be combined"));
    CHECK_THROWS_WITH(contender_list({"greedy", "greedy"}), Catch::Contains("listed twice"));
    CHECK_THROWS_WITH(contender_list({"ios-both"}),
                      Catch::Contains("unknown baseline 'ios-both'") &&
                          Catch::Contains("greedy, nimble and opara"));
}
