// Placements of an engine's activation arena, for timing a schedule where its buffers lie
// elsewhere: a schedule's latency can move a few percent with where its buffers land (call164:
// GoogLeNet TF32 3.7-4.2% over ten offsets, in fresh processes that agree to 0.2% at one).
// A search times the schedules it compares at several (the engine's arena moved between them,
// Engine::place_arena, each schedule's samples pooled over all), so that no gain owed to one
// placement decides; `replay --placements` reports a latency pooled the same way.
// docs/search-log.md, "Placement".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "src/engine/engine.h"
#include "src/engine/timing.h"
#include "src/schedule.h"

namespace iostune {

// Offsets of `count` placements (the first 0; count <= 1: just that one), and the room an
// engine needs to be moved among them (EngineOptions::arena_room). Consecutive ones are a
// little over 1 MiB apart, so they differ both within a 2 MiB page and across pages.
std::vector<size_t> arena_placements(int count);
size_t arena_room(int count);
constexpr int kMaxPlacements = 8;  // what `search` and `replay --placements` accept

struct PlacedTimings {
    std::vector<std::optional<LatencyStats>> stats;  // per schedule; none when it could not run
    std::vector<std::string> errors;                 // per schedule: why not ("" when it ran)
};

// `schedules` captured on `engine` and timed in turns (measure_interleaved, `per_turn` samples
// a turn) at each of `offsets`: the repeats shared among the placements (each at least one
// turn's), every schedule's samples pooled over them, the engine back at offsets.front() after.
// With one offset (or none) the engine is not moved: one timing in turns, as before.
PlacedTimings time_placed_in_turns(Engine& engine, const std::vector<Schedule>& schedules,
                                   const MeasureOptions& options, int per_turn,
                                   const std::vector<size_t>& offsets);

// The repeats time_placed_in_turns times each schedule at every one of `places` placements:
// whole turns of `per_turn` (at least one) when it moves the arena; all of them at one.
int placement_share(int repeats, int per_turn, size_t places);

// Seconds time_placed_in_turns takes for `schedules` graphs of about `per_launch_ms` a launch,
// captures not counted: at each placement a warm-up of them all, the share's samples and, in
// turns of more than one sample, a launch not timed before each turn of each.
double placed_in_turns_seconds(const MeasureOptions& options, int schedules, int per_turn,
                               size_t places, double per_launch_ms);

// `options` with its repeats cut (repeats_within's bounds: never below `min_repeats` nor above
// options.repeats) so that `graphs` plain timings and then `in_turns` schedules timed in turns
// at `places` placements fit `budget_s`. A search's final timings and its close contest: the
// contest's warm-ups at each placement and its whole turns took 1.6 s past the budget on
// NASNet-A at batch 16 (call167) when they were counted as two plain timings.
MeasureOptions repeats_within_placed(MeasureOptions options, double budget_s, int graphs,
                                     int in_turns, int per_turn, size_t places,
                                     double per_launch_ms, int min_repeats);

}  // namespace iostune
