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

TEST_CASE("a close contest: the searched schedule and every baseline timed faster than it",
          "[measure][contest]") {
    using Indices = std::vector<size_t>;
    // GoogLeNet TF32 (call161 on f8dec1a): nimble and greedy both timed ahead of the refined
    // schedule, nimble by 1.7%. Both go in, so greedy is not kept on a timing taken another way.
    const std::vector<ContestEntry> googlenet = {
        {"refined", 0.23939}, {"sequential", 0.43936}, {"greedy", 0.23869}, {"nimble", 0.23536}};
    CHECK(close_contest_entrants(googlenet, 0.02) == Indices{0, 2, 3});
    // No baseline faster: no contest. One faster by more than 2%: it wins as timed.
    CHECK(close_contest_entrants({{"refined", 1.0}, {"greedy", 1.0}, {"nimble", 1.1}}, 0.02)
              .empty());
    CHECK(close_contest_entrants({{"refined", 1.03}, {"greedy", 1.0}, {"nimble", 1.01}}, 0.02)
              .empty());
    // 1.9% is close; a baseline slower than the searched schedule stays out, even inside it.
    CHECK(close_contest_entrants({{"refined", 1.019}, {"greedy", 1.0}, {"nimble", 1.0195}},
                                 0.02) == Indices{0, 1});
    CHECK(close_contest_entrants({}, 0.02).empty());

    // After it, the fastest among the entrants only; the searched schedule wins ties.
    const std::vector<ContestEntry> after = {
        {"refined", 0.2420}, {"sequential", 0.4394}, {"greedy", 0.2430}, {"nimble", 0.2409}};
    CHECK(fastest_entry(after, {0, 2, 3}) == 3);
    CHECK(fastest_entry(after, {0, 2}) == 0);
    CHECK(fastest_entry({{"refined", 1.0}, {"greedy", 1.0}}, {1, 0}) == 0);
    // An entry left out cannot win, however it was timed.
    CHECK(fastest_entry({{"refined", 1.0}, {"greedy", 0.5}, {"nimble", 0.9}}, {0, 2}) == 2);
    CHECK_THROWS_AS(fastest_entry(after, {}), Error);
    CHECK_THROWS_WITH(fastest_entry(after, {0, 7}), Catch::Contains("does not exist"));
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
