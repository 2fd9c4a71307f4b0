// The arena placements a search may time its comparisons at (src/engine/arena_placements.h): where
// they lie and the room an engine needs for them, on the CPU.
#include <catch2/catch.hpp>

#include <limits>
#include <set>

#include "src/engine/engine.h"
#include "src/engine/arena_placements.h"

using namespace iostune;

TEST_CASE("arena placements: the first where the arena lies, the rest apart, all aligned",
          "[placement]") {
    CHECK(arena_placements(1) == std::vector<size_t>{0});
    CHECK(arena_placements(0) == std::vector<size_t>{0});  // one at least
    CHECK(arena_room(1) == 0);
    const std::vector<size_t> four = arena_placements(4);
    REQUIRE(four.size() == 4);
    CHECK(four.front() == 0);
    CHECK(std::set<size_t>(four.begin(), four.end()).size() == 4);
    for (size_t k = 0; k < four.size(); ++k) {
        CHECK(four[k] % EngineOptions::kArenaOffsetAlignment == 0);
        if (k > 0) {
            // Past a 1 MiB step and not a multiple of 4 KiB: page and sub-page address bits move.
            CHECK(four[k] - four[k - 1] > (size_t(1) << 20));
            CHECK((four[k] - four[k - 1]) % 4096 != 0);
        }
    }
    CHECK(arena_room(4) == four.back());  // the farthest placement fits in the room
}

TEST_CASE("a timing in turns at several placements: its share, its cost, the repeats that fit",
          "[placement]") {
    // Each placement's share: whole turns, at least one; one placement times every repeat.
    CHECK(placement_share(35, 10, 1) == 35);
    CHECK(placement_share(35, 10, 3) == 20);  // 11.7 a placement, rounded up to two turns
    CHECK(placement_share(200, 10, 3) == 70);
    CHECK(placement_share(2, 10, 3) == 10);   // one turn at least
    CHECK(placement_share(30, 1, 3) == 10);

    // NASNet-A at batch 16 (call167): 13.87 ms a launch, the search's final timing options.
    const MeasureOptions timing{20, 35, 1, 0, 300};
    const double launch_ms = 13.87;
    // One placement, turns of one sample: exactly two plain timings' worth (the warm-up launches
    // both graphs, so it lasts 40 launches rather than 2 x 300 ms).
    CHECK(placed_in_turns_seconds(timing, 2, 1, 1, launch_ms) ==
          Approx((40 * launch_ms + 2 * 35 * launch_ms) / 1e3));
    // Three placements in turns of ten: three warm-ups, 20 samples of each at each, and an
    // untimed launch before each of the two turns.
    const double three = placed_in_turns_seconds(timing, 2, 10, 3, launch_ms);
    CHECK(three == Approx(3 * (40 * launch_ms + 2 * (20 + 2) * launch_ms) / 1e3));
    // What was reserved before (two plain timings) is 1.9 s short of it: the overrun seen.
    CHECK(three - timing_seconds(timing, 2, launch_ms) > 1.5);
    CHECK(placed_in_turns_seconds(timing, 0, 10, 3, launch_ms) == 0);

    // The repeats that fit seven plain timings and the contest in the 7.1 s call167 had for them
    // (7.8 s left, its captures taken off): the total fits, one more repeat would not.
    const MeasureOptions most{20, 200, 1, 0, 300};
    const auto cost = [&](int repeats) {
        MeasureOptions o = most;
        o.repeats = repeats;
        return timing_seconds(o, 7, launch_ms) + placed_in_turns_seconds(o, 2, 10, 3, launch_ms);
    };
    const MeasureOptions cut = repeats_within_placed(most, 7.1, 7, 2, 10, 3, launch_ms, 20);
    CHECK(cut.repeats < 35);  // fewer than the plain count gave (35, and 1.6 s over)
    CHECK(cut.repeats >= 20);
    CHECK(cost(cut.repeats) <= 7.1);
    CHECK(cost(cut.repeats + 1) > 7.1);
    // Room to spare: every repeat; none: the least; no budget: unchanged.
    CHECK(repeats_within_placed(most, 60.0, 7, 2, 10, 3, launch_ms, 20).repeats == 200);
    CHECK(repeats_within_placed(most, 1.0, 7, 2, 10, 3, launch_ms, 20).repeats == 20);
    CHECK(repeats_within_placed(most, std::numeric_limits<double>::infinity(), 7, 2, 10, 3,
                                launch_ms, 20)
              .repeats == 200);
    // Batch 1's short graphs (GoogLeNet, 0.24 ms) keep all 200 in a few seconds.
    CHECK(repeats_within_placed(most, 5.0, 9, 2, 10, 3, 0.24, 20).repeats == 200);
}
