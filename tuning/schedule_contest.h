// Which schedule a tuning job stores as the best for its key. The IOS search ranks stages by
// latencies measured one stage at a time; end to end a cheap baseline can still win (measured
// on the H100: Inception V3 b1, nimble 1.162 ms vs ios-both 1.262; RandWire b1, greedy 1.529 vs
// 1.906). So the job times the searched schedule and a few baselines as the CUDA Graphs replay
// will run, and the fastest of them is what replay gets.
#pragma once

#include <string>
#include <vector>

namespace iostune {

struct ContestEntry {
    std::string strategy;  // "ios-both", "sequential", "greedy", ...
    double median_ms = 0;  // end to end, CUDA Graph
};

// Index of the fastest entry. Entry 0 is the searched schedule: it wins ties, so a baseline is
// only kept when it measured strictly faster. Throws iostune::Error for no entries.
size_t fastest_entry(const std::vector<ContestEntry>& entries);

// A close contest's entrants: when the fastest baseline timed faster than the searched schedule
// (entry 0) by at most `close` (0.02: 2%), the searched schedule and every entry timed faster
// than it, entry 0 first; none when no baseline was faster, or one was faster by more. Timed
// again together, in turns at every placement, they decide among themselves: the fastest's
// lead can be a placement's or the GPU's drift between one timing and the next, and an entry
// left out was slower than the searched schedule when all were timed alike. (Before, only the
// fastest baseline was timed again; in call161 on f8dec1a it slowed by 2.4% in turns and greedy,
// never timed again, was kept on its first timing against the in-turns times of the others.)
std::vector<size_t> close_contest_entrants(const std::vector<ContestEntry>& entries, double close);

// Index of the fastest entry among `among` (indices into `entries`; entry 0 wins ties as above).
// Throws iostune::Error when `among` is empty or names no entry.
size_t fastest_entry(const std::vector<ContestEntry>& entries, const std::vector<size_t>& among);

// The baselines a tuning job may time beside its searched schedule: greedy, nimble, opara
// (sequential is always timed: its output is the reference every schedule is checked against).
// "none" alone means sequential only. Throws iostune::Error naming a bad or repeated entry.
std::vector<std::string> contender_list(const std::vector<std::string>& names);

}  // namespace iostune
