// The arithmetic of measure_graph that needs no GPU: how many launches a repeat needs, how many
// repeats fit a time budget.
#include <catch2/catch.hpp>

#include <limits>

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

TEST_CASE("a search's last timings fit what its budget left, within a floor and the asked repeats",
          "[timing]") {
    const MeasureOptions base{20, 200, 1, 0, 300};
    // Seven graphs of 14.1 ms (NASNet-A b16): warm-ups 7 x 300 ms, then 200 repeats 19.7 s more.
    CHECK(timing_seconds(base, 7, 14.1) == Approx(7 * (0.3 + 200 * 0.0141)));
    // 6.7 s left: 2.1 s of warm-ups, (6.7 - 2.1) / (7 x 14.1 ms) = 46.6 repeats.
    const MeasureOptions cut = repeats_within(base, 6.7, 7, 14.1, 20);
    CHECK(cut.repeats == 46);
    CHECK(timing_seconds(cut, 7, 14.1) <= 6.7);
    CHECK(cut.warmup == base.warmup);
    CHECK(cut.min_warmup_ms == base.min_warmup_ms);
    // Small graphs keep every repeat asked for; no budget changes nothing.
    CHECK(repeats_within(base, 6.7, 7, 0.4, 20).repeats == 200);
    CHECK(repeats_within(base, std::numeric_limits<double>::infinity(), 7, 14.1, 20).repeats ==
          200);
    // Past the budget: the floor, never below it, and never above what was asked.
    CHECK(repeats_within(base, 1.0, 7, 14.1, 20).repeats == 20);
    CHECK(repeats_within(base, -5.0, 7, 14.1, 20).repeats == 20);
    CHECK(repeats_within({3, 10, 1, 0, 0}, 0.0, 7, 14.1, 20).repeats == 10);
    // Launches per repeat count: two per repeat halve the repeats that fit.
    CHECK(repeats_within({0, 200, 2, 0, 0}, 7 * 0.0141 * 2 * 50.5, 7, 14.1, 1).repeats == 50);
}
