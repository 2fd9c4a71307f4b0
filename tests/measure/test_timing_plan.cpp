// The arithmetic of measure_graph that needs no GPU: how many launches a repeat needs.
#include <catch2/catch.hpp>

#include "src/engine/timing.h"

using namespace iostune;

TEST_CASE("launches per repeat reach the minimum window with 10% to spare", "[timing]") {
    CHECK(launches_per_repeat(0.06, 1, 0.05) == 1);   // one launch is long enough
    CHECK(launches_per_repeat(0.02, 1, 0.05) == 3);   // 0.05 / 0.02 * 1.1 = 2.75
    CHECK(launches_per_repeat(0.01, 2, 0.05) == 6);   // 5.5, more than the 2 asked for
    CHECK(launches_per_repeat(0.02, 5, 0.05) == 5);   // the given number already suffices
    CHECK(launches_per_repeat(0.05, 1, 0.05) == 1);   // exactly at the minimum
    CHECK(launches_per_repeat(0.0, 1, 0.05) == 550);  // a zero time counts as 0.1 us
    CHECK(launches_per_repeat(-1.0, 1, 0.05) == 550);
    CHECK(launches_per_repeat(0.02, 4, 0.0) == 4);  // no minimum: as given
}

TEST_CASE("the default of a measurement keeps per-repeat synchronisation", "[timing]") {
    // End-to-end replay timings were published with EachRepeat; only the search opts out.
    CHECK(MeasureOptions{}.mode == RepeatMode::EachRepeat);
    const MeasureOptions aggregate{3, 15, 1, 0.05};
    CHECK(aggregate.mode == RepeatMode::EachRepeat);
}
