#include "src/engine/arena_placements.h"

#include <algorithm>
#include <limits>

#include "src/error.h"

namespace iostune {

namespace {
// 1 MiB and 4.25 KiB: a multiple of 256 that moves every buffer across a page boundary's worth
// of address bits and within one.
constexpr size_t kPlacementStride = (size_t(1) << 20) + 17 * 256;
}  // namespace

std::vector<size_t> arena_placements(int count) {
    std::vector<size_t> offsets;
    for (int k = 0; k < std::max(count, 1); ++k) offsets.push_back(size_t(k) * kPlacementStride);
    return offsets;
}

size_t arena_room(int count) { return arena_placements(count).back(); }

PlacedTimings time_placed_in_turns(Engine& engine, const std::vector<Schedule>& schedules,
                                   const MeasureOptions& options, int per_turn,
                                   const std::vector<size_t>& offsets) {
    const size_t places = std::max<size_t>(offsets.size(), 1);
    const bool move = offsets.size() > 1;
    PlacedTimings out;
    out.stats.resize(schedules.size());
    out.errors.resize(schedules.size());
    std::vector<std::vector<double>> samples(schedules.size()), enqueue(schedules.size());
    MeasureOptions share = options;
    share.repeats = placement_share(options.repeats, per_turn, offsets.size());
    int number = options.number;
    for (size_t p = 0; p < places; ++p) {
        if (move) engine.place_arena(offsets[p]);
        std::vector<CudaGraphExec> execs(schedules.size());
        std::vector<const CudaGraphExec*> timed;
        std::vector<size_t> which;
        for (size_t k = 0; k < schedules.size(); ++k) {
            if (!out.errors[k].empty()) continue;
            try {
                execs[k] = engine.capture(schedules[k]);
                timed.push_back(&execs[k]);
                which.push_back(k);
            } catch (const Error& e) {
                // A schedule the engine cannot run (a merge cuDNN refuses, say) is no candidate.
                out.errors[k] = e.what();
                samples[k].clear();
            }
        }
        if (timed.empty()) break;
        const std::vector<LatencyStats> stats =
            measure_interleaved(timed, engine.origin_stream(), share, per_turn);
        for (size_t t = 0; t < which.size(); ++t) {
            const size_t k = which[t];
            samples[k].insert(samples[k].end(), stats[t].samples_ms.begin(),
                              stats[t].samples_ms.end());
            enqueue[k].insert(enqueue[k].end(), stats[t].enqueue_ms.begin(),
                              stats[t].enqueue_ms.end());
            number = stats[t].number;
        }
    }
    if (move) engine.place_arena(offsets.front());
    for (size_t k = 0; k < schedules.size(); ++k)
        if (out.errors[k].empty() && !samples[k].empty())
            out.stats[k] = summarize(std::move(samples[k]), std::move(enqueue[k]), number);
    return out;
}

int placement_share(int repeats, int per_turn, size_t places) {
    if (places <= 1) return repeats;
    const int turn = std::max(per_turn, 1);
    return std::max(turn, (repeats / int(places) + turn - 1) / turn * turn);
}

double placed_in_turns_seconds(const MeasureOptions& options, int schedules, int per_turn,
                               size_t places, double per_launch_ms) {
    if (schedules <= 0) return 0;
    const size_t where = std::max<size_t>(places, 1);
    const double per_launch = std::max(per_launch_ms, 1e-4);  // as timing_seconds
    const int share = placement_share(options.repeats, per_turn, where);
    const int turn = std::max(per_turn, 1);
    // measure_interleaved's warm-up launches every graph, then lasts at least min_warmup_ms.
    const double warmup_ms =
        std::max(options.warmup * schedules * per_launch, options.min_warmup_ms);
    const int untimed = turn > 1 ? (share + turn - 1) / turn : 0;  // one before each turn
    const double launches = double(schedules) * (share * std::max(options.number, 1) + untimed);
    return double(where) * (warmup_ms + launches * per_launch) / 1e3;
}

MeasureOptions repeats_within_placed(MeasureOptions options, double budget_s, int graphs,
                                     int in_turns, int per_turn, size_t places,
                                     double per_launch_ms, int min_repeats) {
    if (!(budget_s < std::numeric_limits<double>::infinity())) return options;
    const int most = options.repeats, least = std::min(min_repeats, most);
    const auto seconds = [&](int repeats) {
        MeasureOptions o = options;
        o.repeats = repeats;
        return timing_seconds(o, graphs, per_launch_ms) +
               placed_in_turns_seconds(o, in_turns, per_turn, places, per_launch_ms);
    };
    // The cost grows with the repeats in steps (whole turns): the most that fit, counted down.
    int repeats = most;
    while (repeats > least && seconds(repeats) > budget_s) --repeats;
    options.repeats = repeats;
    return options;
}

}  // namespace iostune
