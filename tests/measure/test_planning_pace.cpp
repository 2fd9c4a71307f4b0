// When a probe engine gives up before its deadline (src/engine/planning_pace.h): pure logic,
// no GPU.
#include <catch2/catch.hpp>

#include "src/engine/planning_pace.h"

using namespace iostune;

TEST_CASE("a probe stops at half its time only when its pace says it cannot finish",
          "[measure][pace]") {
    // NASNet-A's NCHW probe (488 convolutions, about 165 s in all, call90): at that average
    // pace 13 are chosen by 4.5 s of its 9.
    CHECK(planning_cannot_finish(4.5, 9.0, 13, 488));
    // Inception V3's (94, about 4 s): done before half its time; on pace if not.
    CHECK_FALSE(planning_cannot_finish(4.5, 9.0, 94, 94));
    CHECK_FALSE(planning_cannot_finish(4.5, 9.0, 60, 94));
    // Too early to judge, however slow the start (large early convolutions).
    CHECK_FALSE(planning_cannot_finish(4.4, 9.0, 1, 94));
    // Twice the allowance is the line: 18 s projected goes on, 18.1 s stops.
    CHECK_FALSE(planning_cannot_finish(6.0, 9.0, 1, 3));
    CHECK(planning_cannot_finish(6.0, 9.0, 100, 302));
    // Nothing planned by half the time: it cannot finish.
    CHECK(planning_cannot_finish(5.0, 9.0, 0, 10));
    CHECK_FALSE(planning_cannot_finish(100.0, 9.0, 0, 0));  // no convolutions to plan
    // A deadline already past when planning began: left to the deadline (choices cached or
    // pinned still plan, tests/gpu/test_planning_deadline.cpp).
    CHECK_FALSE(planning_cannot_finish(0.001, -1.0, 1, 2));
    CHECK(projected_planning_seconds(4.5, 13, 488) == Approx(168.9).epsilon(0.01));
}
