// The arena placements a search may time its comparisons at (src/engine/arena_placements.h): where
// they lie and the room an engine needs for them, on the CPU.
#include <catch2/catch.hpp>

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
