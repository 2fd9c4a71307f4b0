#include "src/engine/arena_placements.h"

#include <algorithm>

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
    const int turn = std::max(per_turn, 1);
    // Each placement's share of the repeats, whole turns, at least one (one placement: all).
    if (move)
        share.repeats = std::max(turn, (options.repeats / int(places) + turn - 1) / turn * turn);
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

}  // namespace iostune
