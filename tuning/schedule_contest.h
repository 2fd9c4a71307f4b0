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

// The baselines a tuning job may time beside its searched schedule: greedy, nimble, opara
// (sequential is always timed: its output is the reference every schedule is checked against).
// "none" alone means sequential only. Throws iostune::Error naming a bad or repeated entry.
std::vector<std::string> contender_list(const std::vector<std::string>& names);

}  // namespace iostune
